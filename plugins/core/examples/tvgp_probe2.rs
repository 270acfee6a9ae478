use gpn_gp_core::kernel::ArdKernel;
use gpn_gp_core::tvgp::bandit::{BanditConfig, Method, run};
use gpn_gp_core::tvgp::problem::{Synthetic1d, TimeVaryingProblem, fit_hyperparameters};

fn main() {
    let p = Synthetic1d::with_horizon(500);
    let t0 = std::time::Instant::now();
    let h = fit_hyperparameters(&p, 200, 0).unwrap();
    println!("fit {:?} in {:?}", h, t0.elapsed());
    let args: Vec<String> = std::env::args().collect();
    let horizon: usize = args.get(1).map_or(500, |s| s.parse().unwrap());
    let step: f64 = args.get(2).map_or(0.25, |s| s.parse().unwrap());
    let mut c = BanditConfig::with_kernel(ArdKernel::se(h.sigma_f, &[h.lengthscale]).unwrap(), h.m0, horizon);
    c.grid_step = step;
    let m = Method::sparq(p.noise_var());
    let t0 = std::time::Instant::now();
    let log = run(&p, &m, &c, 1).unwrap();
    println!("{:?}", t0.elapsed());
    for s in log.steps.iter().filter(|s| s.t % 25 == 0 || s.t < 6) {
        println!("{:?} avg {:.3}", s, log.average_regret_at(s.t));
    }
}
