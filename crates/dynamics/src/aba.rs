//! Forward dynamics q̈ = M(q)⁻¹ (τ − C(q, q̇)q̇ − g(q)) by the articulated-body algorithm (ABA),
//! in O(nv) without forming M.
//!
//! Featherstone 2008 §7.3, Table 7.1, three passes:
//! 1. outwards: velocities `v_i`, velocity-product accelerations `c_i = v_i × S_i q̇_i`,
//!    `Iᴬ_i = I_i`, `pᴬ_i = v_i ×* I_i v_i`;
//! 2. inwards: `U_i = Iᴬ_i S_i`, `D_i = S_iᵀ U_i + armature_i`, `u_i = τ_i − S_iᵀ pᴬ_i`, and the
//!    parent receives `Iᵃ = Iᴬ_i − U_i U_iᵀ / D_i` and `pᵃ = pᴬ_i + Iᵃ c_i + U_i u_i / D_i`
//!    (eqs. 7.37–7.38);
//! 3. outwards: `a'_i = ⁱX_p a_p + c_i` (with `a_0 = −g`), `q̈_i = (u_i − U_iᵀ a'_i) / D_i`,
//!    `a_i = a'_i + S_i q̈_i`.
//!
//! Articulated inertias are kept as three 3×3 blocks. Inputs: `q`, `v` (= q̇), `tau` (nv
//! each). Output: [`Data::ddq`] (nv). No allocation.

use super::data::Data;
use super::error::Result;
use super::kinematics::update_joint_placements;
use super::model::Model;
use super::spatial::{ArticulatedInertia, Motion};

/// Forward dynamics: the joint accelerations q̈ (rad/s² or m/s²) produced by joint
/// torques/forces `tau` at state (`q`, `v`), written to [`Data::ddq`] and returned. All
/// slices have nv entries, in joint order.
///
/// Errors if a slice or `data` does not have the model's size.
pub fn aba<'d>(
    model: &Model,
    data: &'d mut Data,
    q: &[f64],
    v: &[f64],
    tau: &[f64],
) -> Result<&'d [f64]> {
    data.check(model)?;
    model.check_len("q", q.len())?;
    model.check_len("v", v.len())?;
    model.check_len("tau", tau.len())?;
    let n = model.nv();
    let state = &mut data.state;
    let aba = &mut data.aba;
    update_joint_placements(model, &mut state.parent_from_body, q);

    // Pass 1: velocities, bias accelerations, rigid inertias and bias forces.
    for (i, body) in model.bodies.iter().enumerate() {
        let joint_velocity = body.motion(v[i]);
        let vi = match body.parent {
            Some(p) => state.parent_from_body[i].inverse_apply_motion(&state.v[p]) + joint_velocity,
            None => joint_velocity,
        };
        state.v[i] = vi;
        aba.c[i] = vi.cross_motion(&joint_velocity);
        aba.inertia[i] = ArticulatedInertia::from_rigid(&body.inertia);
        aba.bias[i] = vi.cross_force(&body.inertia.mul_motion(&vi));
    }

    // Pass 2: articulated inertias and bias forces, leaves to root.
    for i in (0..n).rev() {
        let body = &model.bodies[i];
        let u_force = aba.inertia[i].mul_motion(&body.motion(1.0));
        let d = body.project(&u_force) + model.armature[i];
        debug_assert!(d > 0.0, "D_{i} = {d}: the loader rejects massless subtrees");
        let d_inv = 1.0 / d;
        let u = tau[i] - body.project(&aba.bias[i]);
        aba.u_force[i] = u_force;
        aba.d_inv[i] = d_inv;
        aba.u[i] = u;
        if let Some(p) = body.parent {
            let mut ia = aba.inertia[i];
            ia.sub_scaled_outer(&u_force, d_inv);
            let pa = aba.bias[i] + ia.mul_motion(&aba.c[i]) + u_force * (u * d_inv);
            let x = &state.parent_from_body[i];
            let ia_parent = x.apply_articulated_inertia(&ia);
            aba.inertia[p] += ia_parent;
            aba.bias[p] += x.apply_force(&pa);
        }
    }

    // Pass 3: accelerations, root to leaves.
    let base_acceleration = Motion::new(nalgebra::Vector3::zeros(), -model.gravity);
    for (i, body) in model.bodies.iter().enumerate() {
        let a_parent = match body.parent {
            Some(p) => state.a[p],
            None => base_acceleration,
        };
        let a_prime = state.parent_from_body[i].inverse_apply_motion(&a_parent) + aba.c[i];
        let u_force = &aba.u_force[i];
        let qdd = (aba.u[i]
            - (a_prime.angular.dot(&u_force.angular) + a_prime.linear.dot(&u_force.linear)))
            * aba.d_inv[i];
        data.ddq[i] = qdd;
        state.a[i] = a_prime + body.motion(qdd);
    }
    Ok(data.ddq.as_slice())
}
