//! Inverse dynamics by the recursive Newton–Euler algorithm (RNEA), and its two special
//! cases: generalised gravity g(q) and nonlinear effects C(q, q̇)q̇ + g(q).
//!
//! Featherstone 2008 §5.3, Table 5.1: a forward pass computes each body's velocity and
//! acceleration (`v_i = ⁱX_p v_p + S_i q̇_i`, `a_i = ⁱX_p a_p + S_i q̈_i + v_i × S_i q̇_i`), with
//! gravity entering as the base acceleration `a_0 = −g`; each body's net force is
//! `f_i = I_i a_i + v_i ×* I_i v_i`; a backward pass accumulates forces towards the root
//! (`f_p += ᵖX_i* f_i`) and projects them on the joint axes (`τ_i = S_iᵀ f_i`). Rotor inertia
//! adds `armature_i · q̈_i`.
//!
//! | function | inputs (each nv long) | output |
//! |---|---|---|
//! | [`rnea`] | q, q̇, q̈ | [`Data::tau`] = M(q)q̈ + C(q,q̇)q̇ + g(q) |
//! | [`gravity`] | q | [`Data::g`] = g(q) |
//! | [`nonlinear_effects`] | q, q̇ | [`Data::nle`] = C(q,q̇)q̇ + g(q) |
//!
//! No allocation.

use super::data::{BodyState, Data};
use super::error::Result;
use super::kinematics::update_joint_placements;
use super::model::Model;
use super::spatial::Motion;

/// Inverse dynamics: τ = M(q)q̈ + C(q, q̇)q̇ + g(q) (N·m or N), written to [`Data::tau`] and
/// returned. `q`, `v` (= q̇), `a` (= q̈) have nv entries each, in joint order.
///
/// Errors if a slice or `data` does not have the model's size.
pub fn rnea<'d>(
    model: &Model,
    data: &'d mut Data,
    q: &[f64],
    v: &[f64],
    a: &[f64],
) -> Result<&'d [f64]> {
    data.check(model)?;
    model.check_len("q", q.len())?;
    model.check_len("v", v.len())?;
    model.check_len("a", a.len())?;
    forward_pass(model, &mut data.state, q, Some(v), Some(a));
    backward_pass(model, &mut data.state, Some(a), data.tau.as_mut_slice());
    Ok(data.tau.as_slice())
}

/// Generalised gravity g(q) = RNEA(q, 0, 0) (N·m or N), written to [`Data::g`] and returned.
/// `q` has nv entries.
///
/// Errors if `q` or `data` does not have the model's size.
pub fn gravity<'d>(model: &Model, data: &'d mut Data, q: &[f64]) -> Result<&'d [f64]> {
    data.check(model)?;
    model.check_len("q", q.len())?;
    forward_pass(model, &mut data.state, q, None, None);
    backward_pass(model, &mut data.state, None, data.g.as_mut_slice());
    Ok(data.g.as_slice())
}

/// Nonlinear effects C(q, q̇)q̇ + g(q) = RNEA(q, q̇, 0) (N·m or N), written to [`Data::nle`] and
/// returned. `q`, `v` have nv entries.
///
/// Errors if a slice or `data` does not have the model's size.
pub fn nonlinear_effects<'d>(
    model: &Model,
    data: &'d mut Data,
    q: &[f64],
    v: &[f64],
) -> Result<&'d [f64]> {
    data.check(model)?;
    model.check_len("q", q.len())?;
    model.check_len("v", v.len())?;
    forward_pass(model, &mut data.state, q, Some(v), None);
    backward_pass(model, &mut data.state, None, data.nle.as_mut_slice());
    Ok(data.nle.as_slice())
}

/// RNEA forward pass: placements, velocities, accelerations (with the −g offset) and the net
/// force on each body. `None` velocity or acceleration means zero. Shared with the regressor.
pub(crate) fn forward_pass(
    model: &Model,
    state: &mut BodyState,
    q: &[f64],
    v: Option<&[f64]>,
    a: Option<&[f64]>,
) {
    let n = model.nv();
    debug_assert!(q.len() == n && v.is_none_or(|v| v.len() == n) && a.is_none_or(|a| a.len() == n));
    update_joint_placements(model, &mut state.parent_from_body, q);
    let base_acceleration = Motion::new(nalgebra::Vector3::zeros(), -model.gravity);
    for (i, body) in model.bodies.iter().enumerate() {
        let x = &state.parent_from_body[i];
        let (v_parent, a_parent) = match body.parent {
            Some(p) => (state.v[p], state.a[p]),
            None => (Motion::ZERO, base_acceleration),
        };
        let qd = v.map_or(0.0, |v| v[i]);
        let qdd = a.map_or(0.0, |a| a[i]);
        let joint_velocity = body.motion(qd);
        let vi = x.inverse_apply_motion(&v_parent) + joint_velocity;
        let ai =
            x.inverse_apply_motion(&a_parent) + body.motion(qdd) + vi.cross_motion(&joint_velocity);
        let inertia = &body.inertia;
        state.f[i] = inertia.mul_motion(&ai) + vi.cross_force(&inertia.mul_motion(&vi));
        state.v[i] = vi;
        state.a[i] = ai;
    }
}

/// RNEA backward pass: accumulates forces towards the root and projects them on the joints
/// into `tau`, adding `armature_i · a_i` when accelerations are given.
fn backward_pass(model: &Model, state: &mut BodyState, a: Option<&[f64]>, tau: &mut [f64]) {
    debug_assert_eq!(tau.len(), model.nv());
    for i in (0..model.nv()).rev() {
        let body = &model.bodies[i];
        let fi = state.f[i];
        tau[i] = body.project(&fi) + a.map_or(0.0, |a| model.armature[i] * a[i]);
        if let Some(p) = body.parent {
            let fp = state.parent_from_body[i].apply_force(&fi);
            state.f[p] += fp;
        }
    }
}
