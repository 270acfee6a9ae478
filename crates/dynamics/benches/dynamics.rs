//! Criterion benches of the dynamics engine on the node's 7-DoF Panda (`urdf/panda.urdf`,
//! fingers fixed): RNEA, CRBA, ABA (forward dynamics), nonlinear effects, and forward
//! kinematics and the regressor for reference. Setup (loading, `Data::new`, inputs) stays
//! outside the timed closures; nothing is written to disk.
//!
//! Run: `cargo bench -p gpn_dynamics --bench dynamics -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use gpn_dynamics::{
    Data, Model, aba, crba, forward_kinematics, nonlinear_effects, regressor, rnea,
};

const PANDA_URDF: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/panda.urdf");

fn state(nv: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let q = (0..nv).map(|i| 0.3 + 0.17 * i as f64).collect();
    let v = (0..nv).map(|i| -0.5 + 0.21 * i as f64).collect();
    let a = (0..nv).map(|i| 1.1 - 0.33 * i as f64).collect();
    (q, v, a)
}

fn dynamics(c: &mut Criterion) {
    let model = Model::from_urdf_file(PANDA_URDF).expect("urdf/panda.urdf loads");
    assert_eq!(model.nv(), 7, "the node's Panda has 7 dof");
    let mut data = Data::new(&model);
    let (q, v, a) = state(model.nv());
    let tau = rnea(&model, &mut data, &q, &v, &a).expect("rnea").to_vec();

    let mut group = c.benchmark_group("panda7");
    group.bench_function("rnea", |b| {
        b.iter(|| {
            rnea(
                &model,
                &mut data,
                black_box(&q),
                black_box(&v),
                black_box(&a),
            )
            .map(|t| t[0])
            .expect("rnea")
        })
    });
    group.bench_function("crba", |b| {
        b.iter(|| {
            crba(&model, &mut data, black_box(&q))
                .map(|m| m[(0, 0)])
                .expect("crba")
        })
    });
    group.bench_function("aba", |b| {
        b.iter(|| {
            aba(
                &model,
                &mut data,
                black_box(&q),
                black_box(&v),
                black_box(&tau),
            )
            .map(|d| d[0])
            .expect("aba")
        })
    });
    group.bench_function("nonlinear_effects", |b| {
        b.iter(|| {
            nonlinear_effects(&model, &mut data, black_box(&q), black_box(&v))
                .map(|n| n[0])
                .expect("nle")
        })
    });
    group.bench_function("forward_kinematics", |b| {
        b.iter(|| {
            forward_kinematics(&model, &mut data, black_box(&q))
                .map(|x| x[6].translation.x)
                .expect("fk")
        })
    });
    group.bench_function("regressor_body6", |b| {
        b.iter(|| {
            regressor(
                &model,
                &mut data,
                6,
                black_box(&q),
                black_box(&v),
                black_box(&a),
            )
            .map(|y| y[(0, 0)])
            .expect("regressor")
        })
    });
    group.finish();
}

criterion_group!(benches, dynamics);
criterion_main!(benches);
