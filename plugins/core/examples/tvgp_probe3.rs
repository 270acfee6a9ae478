use gpn_gp_core::hyperfit::nlml;
use gpn_gp_core::kernel::ArdKernel;
fn main() {
    let x: Vec<f64> = (0..200).map(|i| -50.0 + i as f64 * 0.5).collect();
    let y: Vec<f64> = x.iter().map(|v| (0.2 * v).cos()).collect();
    let k = ArdKernel::se(0.5, &[6.0]).unwrap();
    let t0 = std::time::Instant::now();
    for _ in 0..20 { let mut g = [0.0; 3]; nlml(&k, 0.1, &x, &y, Some(&mut g)).unwrap(); }
    println!("{:?} per eval", t0.elapsed() / 20);
}
