//! The learner's query beyond the accelerations it has learned: q̈ of the query (the law's
//! command) is clamped into the range of the q̈ of the samples formed so far, so the model is
//! never asked where an SE kernel bends back to its mean; inside the range the model is
//! asked as it is.

mod loop_support;

use gp_node::app;
use gp_node::learn::Learner;
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
fn learner() -> Learner {
    let params = app::resolved_default_params().expect("parameters");
    let robot = app::load_robot(&params).expect("robot");
    let mut learner = Learner::new(
        &robot,
        params.learn.clone(),
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
fn a_query_beyond_the_learned_accelerations_is_held_at_their_edge() {
    let mut learner = learner();
    // Inside the learned range: the model's own answer.
    let (inside, inside_var) = predict_at_accel(&mut learner, 0.5);
    for j in 0..7 {
        assert!((inside[j] - 2.0).abs() < 1e-12, "joint {j}: {}", inside[j]);
        assert!((inside_var[j] - 0.01).abs() < 1e-12);
    }
    // Beyond it, on either side: the model at the edge (≈ ±1, from velocity differences),
    // where asking the model itself would give 7 and −5.
    let (above, var) = predict_at_accel(&mut learner, 3.0);
    let (below, _) = predict_at_accel(&mut learner, -3.0);
    for j in 0..7 {
        assert!(
            above[j] > 2.9 && above[j] < 3.0 + 1e-9,
            "joint {j}: {}",
            above[j]
        );
        assert!(
            below[j] < -0.9 && below[j] > -1.0 - 1e-9,
            "joint {j}: {}",
            below[j]
        );
        assert!((var[j] - 0.01).abs() < 1e-12);
    }
}
