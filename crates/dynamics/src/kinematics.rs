//! Forward kinematics: the placement of every body, and of any URDF link, in the world frame.
//!
//! Featherstone 2008 §4.1 and §4.4: `ᵖX_i(q) = X_tree,i · X_J,i(q)` per body, composed from
//! the root outwards, `world_from_body[i] = world_from_body[parent(i)] · parent_from_body[i]`.
//!
//! Input: `q` (nv, rad or m). Output: [`Data::world_from_body`] (nv transforms). No allocation.

use super::data::Data;
use super::error::{Result, RobotError};
use super::model::{BodyRef, Model};
use super::spatial::Transform;

/// Writes `parent_from_body[i]` for every body at configuration `q` (the first step of every
/// recursion). Sizes are the caller's responsibility.
#[inline]
pub(crate) fn update_joint_placements(
    model: &Model,
    parent_from_body: &mut [Transform],
    q: &[f64],
) {
    debug_assert_eq!(parent_from_body.len(), model.nv());
    debug_assert_eq!(q.len(), model.nv());
    for ((x, body), &qi) in parent_from_body.iter_mut().zip(&model.bodies).zip(q) {
        *x = body.parent_from_body(qi);
    }
}

/// Forward kinematics: computes [`Data::world_from_body`] (nv transforms, body frame → world
/// frame) at `q` (nv) and returns it.
///
/// Errors if `q` or `data` do not have the model's size.
pub fn forward_kinematics<'d>(
    model: &Model,
    data: &'d mut Data,
    q: &[f64],
) -> Result<&'d [Transform]> {
    data.check(model)?;
    model.check_len("q", q.len())?;
    update_joint_placements(model, &mut data.state.parent_from_body, q);
    for i in 0..model.nv() {
        let parent_from_body = data.state.parent_from_body[i];
        data.world_from_body[i] = match model.bodies[i].parent {
            Some(p) => data.world_from_body[p] * parent_from_body,
            None => parent_from_body,
        };
    }
    Ok(&data.world_from_body)
}

/// The placement of URDF link `link_name` in the world frame, from the bodies' placements of
/// the last [`forward_kinematics`] call (`world_from_link = world_from_body · body_from_link`).
///
/// Errors if the model has no such link. No allocation on success.
pub fn world_from_link(model: &Model, data: &Data, link_name: &str) -> Result<Transform> {
    data.check(model)?;
    let frame = model
        .links
        .get(link_name)
        .ok_or_else(|| RobotError::UnknownLink {
            link: link_name.to_owned(),
            file: model.file.clone(),
        })?;
    Ok(match frame.body {
        BodyRef::World => frame.body_from_link,
        BodyRef::Body(i) => data.world_from_body[i] * frame.body_from_link,
    })
}
