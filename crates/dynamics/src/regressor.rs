//! The inertial-parameter regressor of one body: the nv × 10 matrix Y(q, q̇, q̈) with
//! `τ_k = Y · π_k`, the part of the inverse-dynamics torque that body k's inertia causes
//! (used to identify a payload).
//!
//! Featherstone 2008 §5.3 (RNEA) and §2.13: body k's net force `f_k = I_k a_k + v_k ×* I_k v_k`
//! is linear in its ten parameters, so column p of the 6 × 10 map is the force of the unit
//! parameter vector e_p; each column is then carried to every ancestor j and projected on
//! its joint, `Y[j, p] = S_jᵀ ʲX_k* f_k(e_p)`, exactly as the RNEA backward pass does. Rows of
//! joints that do not support body k are zero.
//!
//! Parameters, in this order (body k's frame, inertia about the BODY FRAME ORIGIN, tensor
//! entries as in URDF): `π = [m, m·cx, m·cy, m·cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`, see
//! [`RigidInertia::params`]. Rotor inertia (armature) is not part of Y.
//!
//! Inputs: body index k (< nv), `q`, `v`, `a` (nv each). Output: [`Data::regressor`] (nv × 10).
//! No allocation.

use nalgebra::DMatrix;

use super::data::{Data, N_INERTIAL_PARAMS};
use super::error::{Result, RobotError};
use super::model::Model;
use super::rnea::forward_pass;
use super::spatial::{Force, RigidInertia};

/// The regressor Y (nv × 10) of body `body` at (q, q̇, q̈), so that the torque its inertia
/// causes is `Y · π` with `π = model.body_inertia(body).params()` (see the module doc for the
/// order), gravity included. Written to [`Data::regressor`] and returned.
///
/// Find the body of a URDF link with [`Model::body_of_link`]; parameters of mass fixed to a
/// link map into the body frame with [`Transform::apply_rigid_inertia`](super::Transform::apply_rigid_inertia).
///
/// Errors if `body >= nv` or a slice or `data` does not have the model's size.
pub fn regressor<'d>(
    model: &Model,
    data: &'d mut Data,
    body: usize,
    q: &[f64],
    v: &[f64],
    a: &[f64],
) -> Result<&'d DMatrix<f64>> {
    data.check(model)?;
    model.check_len("q", q.len())?;
    model.check_len("v", v.len())?;
    model.check_len("a", a.len())?;
    if body >= model.nv() {
        return Err(RobotError::BodyOutOfRange {
            body,
            nbodies: model.nv(),
            file: model.file.clone(),
        });
    }
    forward_pass(model, &mut data.state, q, Some(v), Some(a));
    let vk = data.state.v[body];
    let ak = data.state.a[body];
    let mut forces = [Force::ZERO; N_INERTIAL_PARAMS];
    for (p, force) in forces.iter_mut().enumerate() {
        let mut unit = [0.0; N_INERTIAL_PARAMS];
        unit[p] = 1.0;
        let inertia = RigidInertia::from_params(&unit);
        *force = inertia.mul_motion(&ak) + vk.cross_force(&inertia.mul_motion(&vk));
    }
    let y = &mut data.regressor;
    y.fill(0.0);
    let mut j = body;
    loop {
        let joint = &model.bodies[j];
        for (p, force) in forces.iter().enumerate() {
            y[(j, p)] = joint.project(force);
        }
        let Some(parent) = joint.parent else { break };
        let x = &data.state.parent_from_body[j];
        for force in forces.iter_mut() {
            *force = x.apply_force(force);
        }
        j = parent;
    }
    Ok(&data.regressor)
}
