//! The joint-space inertia matrix M(q) by the composite-rigid-body algorithm (CRBA).
//!
//! Featherstone 2008 §6.2, Table 6.2: a backward pass accumulates composite inertias
//! (`Iᶜ_p += ᵖX_i* Iᶜ_i ⁱX_p`); for each body, `F = Iᶜ_i S_i` gives `M_ii = S_iᵀ F`, and `F`
//! carried towards the root gives the off-diagonal entries `M_ij = M_ji = S_jᵀ ʲX_i* F` for
//! every ancestor j. Rotor inertia adds `armature_i` to `M_ii`. Composite inertias stay
//! rigid-body inertias, so they are kept as ten parameters, not 6×6 matrices.
//!
//! Input: `q` (nv). Output: [`Data::m`] (nv × nv, both triangles filled). No allocation.

use nalgebra::DMatrix;

use super::data::Data;
use super::error::Result;
use super::kinematics::update_joint_placements;
use super::model::Model;

/// Joint-space inertia M(q) (kg·m², kg or kg·m for mixed entries), written to [`Data::m`]
/// (nv × nv, symmetric, both triangles) and returned. `q` has nv entries.
///
/// Errors if `q` or `data` does not have the model's size.
pub fn crba<'d>(model: &Model, data: &'d mut Data, q: &[f64]) -> Result<&'d DMatrix<f64>> {
    data.check(model)?;
    model.check_len("q", q.len())?;
    let n = model.nv();
    let parent_from_body = &mut data.state.parent_from_body;
    update_joint_placements(model, parent_from_body, q);
    let composite = &mut data.composite;
    for (c, body) in composite.iter_mut().zip(&model.bodies) {
        *c = body.inertia;
    }
    let m = &mut data.m;
    for i in (0..n).rev() {
        let body = &model.bodies[i];
        if let Some(p) = body.parent {
            let in_parent = parent_from_body[i].apply_rigid_inertia(&composite[i]);
            composite[p] += in_parent;
        }
        let mut force = composite[i].mul_motion(&body.motion(1.0));
        m[(i, i)] = body.project(&force) + model.armature[i];
        let mut j = i;
        while let Some(p) = model.bodies[j].parent {
            force = parent_from_body[j].apply_force(&force);
            j = p;
            let mij = model.bodies[j].project(&force);
            m[(i, j)] = mij;
            m[(j, i)] = mij;
        }
        // Entries (i, k) with k neither an ancestor nor a descendant of i are zero.
        let mut ancestor = body.parent;
        for k in (0..i).rev() {
            if ancestor == Some(k) {
                ancestor = model.bodies[k].parent;
            } else {
                m[(i, k)] = 0.0;
                m[(k, i)] = 0.0;
            }
        }
    }
    Ok(&data.m)
}
