//! Outputs split by kinematic branch (`learn.split_branches`).
//!
//! Joint i's torque depends only on the motion of the bodies it carries and of those that
//! carry it: the inertia entry M_ik is zero unless i is an ancestor or a descendant of k (or
//! k itself), and so are the velocity and gravity couplings (Featherstone, *Rigid Body
//! Dynamics Algorithms*, §6.1, the branch-induced sparsity of M). So the residual of
//! joint i is a function of (q, q̇, q̈) on its *support* S_i = ancestors ∪ {i} ∪ descendants.
//! On a serial arm every S_i is every joint and nothing changes. On a tree with independent
//! branches — the fingers of a hand on a fixed palm, the arms of a two-arm robot — a single
//! model sees each output through every branch's inputs: with lengthscales shared across
//! outputs, the other fingers' motion is noise in the distances and the model generalises
//! poorly. One model per class of outputs with the same support learns each torque from the
//! inputs it depends on, in a space of a few dimensions.
//!
//! The split is written into the `"hyper"` value, so a model file and a hot swap rebuild the
//! same split: `{"parts": [{"outputs": [o…], "inputs": [i…], "hyper": <that part's per-output
//! array>}, …]}`. A plain `"hyper"` (an object or an array) builds one model, as before.

use crate::robot::Model;
use gpn_gp_core::model::OnlineModel;

use super::branch_model::BranchModel;

/// One part of the split: the outputs of one support class and the inputs they depend on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// Output (joint) indices, ascending.
    pub outputs: Vec<usize>,
    /// Input indices into x = [q, q̇, q̈] (length 3·nv), or [q, q̇, q̈, friction features]
    /// (4·nv): the support's q, then its q̇, then its q̈ (then its friction features).
    pub inputs: Vec<usize>,
}

impl Part {
    /// Every one of `p` outputs on every one of `d` inputs: an unsplit model.
    pub fn whole(d: usize, p: usize) -> Self {
        Self {
            outputs: (0..p).collect(),
            inputs: (0..d).collect(),
        }
    }
}

/// The robot's outputs grouped by support (see the module doc), ordered by first output.
/// One part holding every output and input on a serial robot. `blocks` is the number of
/// nv-long blocks of the input ([`super::InputLayout::blocks`]).
pub fn kinematic_parts(robot: &Model, blocks: usize) -> Vec<Part> {
    let nv = robot.nv();
    let ancestor = |a: usize, mut b: usize| {
        while let Some(p) = robot.parent(b) {
            if p == a {
                return true;
            }
            b = p;
        }
        false
    };
    let support: Vec<Vec<bool>> = (0..nv)
        .map(|i| {
            (0..nv)
                .map(|k| i == k || ancestor(i, k) || ancestor(k, i))
                .collect()
        })
        .collect();
    let mut parts: Vec<(Vec<bool>, Part)> = Vec::new();
    for (i, s) in support.into_iter().enumerate() {
        match parts.iter_mut().find(|(key, _)| *key == s) {
            Some((_, part)) => part.outputs.push(i),
            None => {
                let joints: Vec<usize> = (0..nv).filter(|&k| s[k]).collect();
                let inputs = (0..blocks)
                    .flat_map(|block| joints.iter().map(move |&k| block * nv + k))
                    .collect();
                parts.push((
                    s,
                    Part {
                        outputs: vec![i],
                        inputs,
                    },
                ));
            }
        }
    }
    parts.into_iter().map(|(_, part)| part).collect()
}

/// The `"hyper"` value of a split model: each part with its own per-output hyperparameters.
pub fn parts_hyper(parts: &[Part], hypers: Vec<serde_json::Value>) -> serde_json::Value {
    serde_json::json!({
        "parts": parts
            .iter()
            .zip(hypers)
            .map(|(part, hyper)| serde_json::json!({
                "outputs": part.outputs,
                "inputs": part.inputs,
                "hyper": hyper,
            }))
            .collect::<Vec<_>>()
    })
}

/// The parts of a split `"hyper"` value with each part's hyperparameters; `None` for a plain
/// one. Checks that the outputs are 0..p, each once, and the inputs below d.
pub fn parse_parts(
    hyper: &serde_json::Value,
    d: usize,
    p: usize,
) -> Option<Result<Vec<(Part, serde_json::Value)>, String>> {
    let list = hyper.as_object()?.get("parts")?;
    Some(parse_list(list, d, p))
}

fn parse_list(
    list: &serde_json::Value,
    d: usize,
    p: usize,
) -> Result<Vec<(Part, serde_json::Value)>, String> {
    let indices = |v: Option<&serde_json::Value>, what: &str, k: usize, below: usize| {
        let items = v
            .and_then(|v| v.as_array())
            .filter(|a| !a.is_empty())
            .ok_or_else(|| format!("hyper.parts[{k}].{what} must be a non-empty array"))?;
        items
            .iter()
            .map(|i| {
                i.as_u64()
                    .map(|i| i as usize)
                    .filter(|&i| i < below)
                    .ok_or_else(|| {
                        format!("hyper.parts[{k}].{what}: {i} is not an index below {below}")
                    })
            })
            .collect::<Result<Vec<usize>, String>>()
    };
    let items = list
        .as_array()
        .filter(|a| !a.is_empty())
        .ok_or("hyper.parts must be a non-empty array")?;
    let mut seen = vec![false; p];
    let mut parts = Vec::with_capacity(items.len());
    for (k, item) in items.iter().enumerate() {
        let outputs = indices(item.get("outputs"), "outputs", k, p)?;
        let inputs = indices(item.get("inputs"), "inputs", k, d)?;
        for &o in &outputs {
            if std::mem::replace(&mut seen[o], true) {
                return Err(format!("hyper.parts: output {o} is in two parts"));
            }
        }
        let hyper = item
            .get("hyper")
            .cloned()
            .ok_or_else(|| format!("hyper.parts[{k}].hyper is missing"))?;
        parts.push((Part { outputs, inputs }, hyper));
    }
    match seen.iter().position(|s| !s) {
        Some(o) => Err(format!("hyper.parts: output {o} is in no part")),
        None => Ok(parts),
    }
}

/// Creates a model of `d` inputs and `p` outputs for `hyper`: one model from `make` for a
/// plain value, or a [`BranchModel`] of one model per part for a split one.
pub fn create_model(
    hyper: &serde_json::Value,
    d: usize,
    p: usize,
    mut make: impl FnMut(&serde_json::Value, usize, usize) -> Result<Box<dyn OnlineModel>, String>,
) -> Result<Box<dyn OnlineModel>, String> {
    match parse_parts(hyper, d, p) {
        None => make(hyper, d, p),
        Some(parts) => {
            let mut members = Vec::new();
            for (k, (part, h)) in parts?.into_iter().enumerate() {
                let model = make(&h, part.inputs.len(), part.outputs.len())
                    .map_err(|e| format!("part {k} (outputs {:?}): {e}", part.outputs))?;
                members.push((part, model));
            }
            Ok(Box::new(BranchModel::new(d, p, members)?))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A robot of revolute joints `(name, parent link, child link)` on link `base` (x axes,
    /// unit inertias; the dynamics do not matter here, the tree does).
    fn tree(joints: &[(&str, &str, &str)]) -> Model {
        let mut urdf = String::from("<robot name='t'><link name='base'/>");
        for (_, _, child) in joints {
            urdf.push_str(&format!(
                "<link name='{child}'><inertial><mass value='1'/><inertia ixx='0.1' iyy='0.1' izz='0.1' ixy='0' ixz='0' iyz='0'/></inertial></link>"
            ));
        }
        for (name, parent, child) in joints {
            urdf.push_str(&format!(
                "<joint name='{name}' type='revolute'><parent link='{parent}'/><child link='{child}'/><origin xyz='0 0 0.1'/><axis xyz='1 0 0'/><limit lower='-1' upper='1' effort='10' velocity='1'/></joint>"
            ));
        }
        urdf.push_str("</robot>");
        Model::from_urdf_str(&urdf, "test").expect("test tree")
    }

    #[test]
    fn a_serial_chain_is_one_part_of_every_input() {
        let chain = tree(&[("a", "base", "l1"), ("b", "l1", "l2"), ("c", "l2", "l3")]);
        let parts = kinematic_parts(&chain, 3);
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].outputs, [0, 1, 2]);
        assert_eq!(parts[0].inputs, (0..9).collect::<Vec<_>>());
    }

    #[test]
    fn independent_fingers_and_a_shared_trunk_split_by_support() {
        // Trunk t carries fingers (f1a → f1b) and (f2a → f2b).
        let robot = tree(&[
            ("t", "base", "trunk"),
            ("f1a", "trunk", "a1"),
            ("f1b", "a1", "b1"),
            ("f2a", "trunk", "a2"),
            ("f2b", "a2", "b2"),
        ]);
        let index = |n: &str| robot.joint_index(n).expect("joint");
        let parts = kinematic_parts(&robot, 4);
        assert_eq!(parts.len(), 3, "{parts:?}");
        let part_of = |j: usize| {
            parts
                .iter()
                .find(|p| p.outputs.contains(&j))
                .expect("every output in a part")
        };
        let nv = robot.nv();
        // The trunk depends on everything; a finger on the trunk and itself.
        assert_eq!(part_of(index("t")).inputs.len(), 4 * nv);
        let f1 = part_of(index("f1a"));
        assert_eq!(f1, part_of(index("f1b")));
        let mut joints = [index("t"), index("f1a"), index("f1b")];
        joints.sort();
        let expected: Vec<usize> = (0..4)
            .flat_map(|b| joints.iter().map(move |&k| b * nv + k))
            .collect();
        assert_eq!(f1.inputs, expected);
        assert!(!f1.outputs.contains(&index("f2a")));
    }

    #[test]
    fn split_hyper_round_trips_and_bad_ones_are_named() {
        let parts = vec![
            Part {
                outputs: vec![0],
                inputs: vec![0, 2],
            },
            Part {
                outputs: vec![1],
                inputs: vec![1, 3],
            },
        ];
        let h = parts_hyper(
            &parts,
            vec![serde_json::json!([1.0]), serde_json::json!([2.0])],
        );
        let back = parse_parts(&h, 4, 2).expect("split").expect("valid");
        assert_eq!(back[1].0, parts[1]);
        assert_eq!(back[1].1, serde_json::json!([2.0]));
        assert!(parse_parts(&serde_json::json!([{"sigma_f": 1.0}]), 4, 2).is_none());
        let missing = serde_json::json!({"parts": [{"outputs": [0], "inputs": [0], "hyper": []}]});
        assert_eq!(
            parse_parts(&missing, 4, 2).expect("split").unwrap_err(),
            "hyper.parts: output 1 is in no part"
        );
        let out_of_range =
            serde_json::json!({"parts": [{"outputs": [0, 1], "inputs": [4], "hyper": []}]});
        assert!(
            parse_parts(&out_of_range, 4, 2)
                .expect("split")
                .unwrap_err()
                .contains("inputs: 4 is not an index below 4")
        );
    }
}
