//! After `Data::new`, no dynamics algorithm allocates: a counting global allocator watches
//! every algorithm on the Panda (pinocchio `test_crba_malloc`).
//!
//! Only allocations made by this test's own thread while the counter is armed are counted, so
//! the test harness's threads cannot disturb the count.

use gpn_dynamics::{
    Data, Model, aba, crba, forward_kinematics, gravity, nonlinear_effects, regressor, rnea,
    world_from_link,
};
use nalgebra::{Matrix3, Vector3};

use gpn_alloc_count::count_allocations;

#[global_allocator]
static GLOBAL: gpn_alloc_count::Counting = gpn_alloc_count::Counting;

#[test]
fn no_algorithm_allocates_after_data_new() {
    let urdf = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/fixtures/dynamics/panda.urdf"
    );
    let model = Model::from_urdf_file(urdf).expect("panda loads");
    // Also with armature and a payload: the variants use the same code paths.
    let model = model
        .with_armature(&vec![0.1; model.nv()])
        .and_then(|m| {
            m.with_added_inertia(
                "panda_hand_tcp",
                0.8,
                Vector3::new(0.0, 0.01, 0.02),
                Matrix3::from_diagonal_element(1e-3),
            )
        })
        .expect("variants");
    let mut data = Data::new(&model);
    let n = model.nv();
    let q: Vec<f64> = (0..n).map(|i| 0.1 * i as f64).collect();
    let v: Vec<f64> = (0..n).map(|i| 0.3 - 0.05 * i as f64).collect();
    let a: Vec<f64> = (0..n).map(|i| -0.2 + 0.07 * i as f64).collect();

    // Sanity check that the counter works.
    assert!(count_allocations(|| drop(std::hint::black_box(vec![1u8; 16]))) >= 1);

    let mut checksum = 0.0;
    let tau: Vec<f64> = rnea(&model, &mut data, &q, &v, &a).expect("rnea").to_vec();
    let allocations = count_allocations(|| {
        for _ in 0..3 {
            checksum += forward_kinematics(&model, &mut data, &q).expect("fk")[n - 1]
                .translation
                .x;
            checksum += world_from_link(&model, &data, "panda_leftfinger")
                .expect("link")
                .translation
                .z;
            checksum += rnea(&model, &mut data, &q, &v, &a).expect("rnea")[1];
            checksum += crba(&model, &mut data, &q).expect("crba")[(1, 1)];
            checksum += gravity(&model, &mut data, &q).expect("gravity")[1];
            checksum += nonlinear_effects(&model, &mut data, &q, &v).expect("nle")[1];
            checksum += aba(&model, &mut data, &q, &v, &tau).expect("aba")[1];
            for body in 0..n {
                checksum +=
                    regressor(&model, &mut data, body, &q, &v, &a).expect("regressor")[(0, 0)];
            }
        }
    });
    assert_eq!(
        allocations, 0,
        "the dynamics hot path allocated {allocations} times"
    );
    assert!(checksum.is_finite());
}
