//! The learner's query beyond the accelerations it has learned: a residual affine in q̈ (an
//! inertia error) is carried out linearly from inside the learned range, not held at the
//! edge (`learn.accel_extrapolation`), and inside the range the model is asked as it is.

mod loop_support;

use gp_node::app;
use gp_node::learn::{LearnParams, Learner};
use gpn_gp_core::model::ModelError;
use loop_support::{Script, scripted_factory};

/// μ_j = 2·q̈_j + 1 with variance 0.01: the residual of a 2 kg·m² inertia error plus a
/// constant torque.
struct Affine;

impl Script for Affine {
    fn predict(&mut self, x: &[f64], mean: &mut [f64], var: &mut [f64]) -> Result<(), ModelError> {
        for j in 0..7 {
            mean[j] = 2.0 * x[14 + j] + 1.0;
        }
        var.fill(0.01);
        Ok(())
    }
}

/// A learner with the affine model that has learned 2 s of motion around the reference's
/// centre with q̈_j = cos(10 t) (so the q̈ learned span about [−1, 1]).
fn learner(extrapolate: bool) -> Learner {
    let params = app::resolved_default_params().expect("parameters");
    let robot = app::load_robot(&params).expect("robot");
    let learn = LearnParams {
        accel_extrapolation: extrapolate,
        ..params.learn.clone()
    };
    let mut learner = Learner::new(
        &robot,
        learn,
        Some(serde_json::json!({})),
        scripted_factory(|| Affine),
    )
    .expect("learner");
    let center = params.run.reference.center_rad.clone();
    let (mut q, mut v, tau) = (vec![0.0; 7], vec![0.0; 7], vec![0.0; 7]);
    for k in 0..2000 {
        let t = k as f64 * 1e-3;
        for j in 0..7 {
            q[j] = center[j] - 0.01 * (10.0 * t).cos();
            v[j] = 0.1 * (10.0 * t).sin();
        }
        learner.observe(t, &q, &v, &tau);
    }
    learner
}

fn predict_at_accel(learner: &mut Learner, qdd: f64) -> (Vec<f64>, Vec<f64>) {
    let mut x = vec![0.0; 21];
    x[14..].fill(qdd);
    let (mut mean, mut var) = (vec![0.0; 7], vec![0.0; 7]);
    assert!(learner.predict(&x, &mut mean, &mut var).expect("predict"));
    (mean, var)
}

#[test]
fn beyond_the_learned_accelerations_an_affine_residual_is_extrapolated_linearly() {
    let mut learner = learner(true);
    // Inside the learned range: the model's own answer.
    let (inside, inside_var) = predict_at_accel(&mut learner, 0.5);
    for j in 0..7 {
        assert!((inside[j] - 2.0).abs() < 1e-12, "joint {j}: {}", inside[j]);
        assert!((inside_var[j] - 0.01).abs() < 1e-12);
    }
    // 1.5 beyond the edge: 2·2.5 + 1, where holding the edge value would give ≈ 3.
    let (beyond, beyond_var) = predict_at_accel(&mut learner, 2.5);
    let (below, _) = predict_at_accel(&mut learner, -2.5);
    // Beyond one range's width (≈ 2) out, the value there is held: 2·(1 + 2) + 1.
    let (far, _) = predict_at_accel(&mut learner, 10.0);
    for j in 0..7 {
        assert!((beyond[j] - 6.0).abs() < 1e-9, "joint {j}: {}", beyond[j]);
        assert!((below[j] + 4.0).abs() < 1e-9, "joint {j}: {}", below[j]);
        assert!((far[j] - 7.0).abs() < 1e-3, "joint {j}: {}", far[j]);
        // The reach is uncertain: the variance grows with it.
        assert!(beyond_var[j] > inside_var[j], "joint {j}");
    }
}

#[test]
fn without_extrapolation_the_query_is_held_at_the_edge_of_the_learned_range() {
    let mut learner = learner(false);
    let (beyond, var) = predict_at_accel(&mut learner, 3.0);
    for j in 0..7 {
        // The edge is the largest q̈ learned, ≈ 1 (from a velocity difference).
        assert!(
            beyond[j] > 2.9 && beyond[j] < 3.0 + 1e-9,
            "joint {j}: {}",
            beyond[j]
        );
        assert!((var[j] - 0.01).abs() < 1e-12);
    }
}
