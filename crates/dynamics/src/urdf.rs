//! URDF → [`Model`]: parse with `urdf-rs`, check the description is a tree, merge links
//! welded by fixed joints into their parent body, and order the bodies topologically.
//!
//! What is read:
//! - `<link>`: `name` and `<inertial>` (`<origin xyz rpy>` of the centre-of-mass frame,
//!   `<mass value>`, `<inertia ixx ixy ixz iyy iyz izz>` about the centre of mass in that
//!   rotated frame). A link without `<inertial>` is massless. Zero mass, zero inertia, a
//!   point mass (zero tensor) and semi-definite tensors (rods) are accepted — sensor frames,
//!   cameras and tiny grippers carry them — wherever the joint-space inertia M(q) stays
//!   positive definite (checked once on the model, below). A tensor that is not
//!   semi-definite or whose principal moments violate the triangle inequality (CAD exports
//!   carry both) is loaded as written, with a warning naming the link
//!   ([`Model::warnings`](super::Model::warnings)), as Pinocchio loads it.
//! - `<joint>`: `name`, `type` (revolute, continuous, prismatic, fixed), `<parent link>`,
//!   `<child link>`, `<origin xyz rpy>` (rotation `Rz(y)·Ry(p)·Rx(r)`), `<axis xyz>`
//!   (normalised; default `1 0 0`), and `<limit lower upper velocity effort>`, which is
//!   stored in [`Model::limits`](super::Model::limits) but does not change the dynamics.
//!   Limits on fixed joints are ignored (descriptions often carry `effort="0"` there).
//!
//! Effort limits of movable joints, by entry point ([`EffortLimits`]):
//! - [`Model::from_urdf_file`](super::Model::from_urdf_file) and `from_urdf_str` (dynamics
//!   only): a usable `effort` (finite, > 0) is stored; a missing, zero, negative or infinite
//!   one is stored as "none" (`+∞`); NaN is an error.
//! - [`Model::from_urdf_file_with_effort_limits`](super::Model::from_urdf_file_with_effort_limits)
//!   and `from_urdf_str_with_effort_limits` (anything that commands torques): with no values
//!   given, every movable joint must have a usable `effort`, else [`RobotError::NoEffortLimit`]
//!   names the joint. Given values (the node's `control.effort_limits_nm`: one for every
//!   movable joint, or one per movable joint in joint order, each finite and > 0) replace the
//!   URDF's, which may then be missing.
//!
//! Before any parsing, text longer than [`MAX_URDF_BYTES`] (64 MiB) or with elements nested
//! deeper than [`MAX_URDF_DEPTH`] (256; a URDF needs fewer than 10) is refused: the XML
//! parsers below urdf-rs recurse once per level, and a file nested 20 000 deep would overflow
//! the stack and abort the process.
//!
//! Fixed joints merge their child link into the parent's body: frames are composed and the
//! inertia is moved into the body frame and added (Featherstone 2008 §2.13 and §4.2). Links
//! welded to the root are fixed to the world and carry no dynamics. Bodies are numbered in
//! depth-first order from the root, children in file order, so `parent(i) < i`.
//!
//! Ignored (no effect on the model): `<visual>`, `<collision>` and their geometry (mesh files
//! are never opened), `<material>`, `<dynamics>` (damping, friction), `<mimic>` (every
//! movable joint is an independent coordinate), `<safety_controller>`, `<calibration>`, the
//! URDF 1.2 `<limit>` attributes `acceleration`, `deceleration` and `jerk`, and any other
//! element (`<transmission>`, `<gazebo>`, ...). Mimic joints: the `<mimic>` element is ignored
//! and the joint is an independent coordinate, as Pinocchio's `buildModelFromUrdf` does by
//! default (its `mimic=False`); the reference values in `testing/robots/` are made that way.
//!
//! Rejected with an error naming the element: floating, planar and spherical joints (the root
//! is fixed to the world), unknown joint types, joints whose parent or child link is missing,
//! links with two parents, cycles, several root links, duplicate names, zero-length axes,
//! non-finite numbers, negative mass, and a model whose joint-space inertia M(q) is
//! singular at the check pose (each joint at 0 clamped to its limits; the error names the
//! first joint that adds no inertia, e.g. one whose moving links are all massless).

use std::collections::HashMap;

use nalgebra::Matrix3;
use urdf_rs::{Joint, JointType as UrdfJointType, Link, Robot};

use super::error::{Result, RobotError};
use super::model::{
    Body, BodyRef, DEFAULT_GRAVITY_MPS2, JointLimits, JointType, LinkFrame, Model,
    check_inertia_tensor,
};
use super::spatial::{RigidInertia, Transform, rotation_from_rpy};

/// The largest URDF text accepted, bytes (64 MiB; the Panda's is 20 kB).
pub(crate) const MAX_URDF_BYTES: usize = 64 << 20;

/// The deepest element nesting accepted (a URDF needs fewer than 10 levels). The XML parsers
/// below urdf-rs recurse once per level: 256 levels parse in a 256 KiB stack, 4 000 overflow
/// a test thread's 2 MiB.
pub(crate) const MAX_URDF_DEPTH: usize = 256;

/// Where the effort limits of the movable joints come from.
#[derive(Clone, Copy, Debug)]
pub(crate) enum EffortLimits<'a> {
    /// The URDF's where usable (finite, > 0), else none (`+∞`): enough for dynamics.
    Optional,
    /// The URDF's; a movable joint without a usable one is an error.
    Required,
    /// These: one value for every movable joint, or one per movable joint in joint order
    /// (N·m, N for prismatic joints); the URDF's are not read.
    Given(&'a [f64]),
}

impl<'a> EffortLimits<'a> {
    /// Required from the URDF when `values` is empty, else given.
    pub(crate) fn required_unless_given(values: &'a [f64]) -> Self {
        if values.is_empty() {
            Self::Required
        } else {
            Self::Given(values)
        }
    }
}

/// Which movable joints a model keeps. The others are *locked*: fixed at a position and
/// merged into their parent body, as Pinocchio's `buildReducedModel` does (one arm of a
/// two-arm robot, say).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JointSelection {
    /// The movable joints kept, by URDF name; empty: all of them.
    pub controlled: Vec<String>,
    /// Positions of locked joints (rad, m for prismatic joints) by name; a locked joint not
    /// listed is locked at 0 clamped to its limits.
    pub locked_at: Vec<(String, f64)>,
}

impl JointSelection {
    /// Every movable joint kept.
    pub const ALL: JointSelection = JointSelection {
        controlled: Vec::new(),
        locked_at: Vec::new(),
    };

    /// The position joint `joint` is locked at, or `None` when it is kept.
    fn lock(&self, joint: &Joint) -> Option<f64> {
        if self.controlled.is_empty() || self.controlled.contains(&joint.name) {
            return None;
        }
        let given = self
            .locked_at
            .iter()
            .find(|(name, _)| *name == joint.name)
            .map(|(_, q)| *q);
        // max/min, not clamp: a locked joint's limits are never checked, and clamp panics on
        // NaN or lower > upper.
        Some(given.unwrap_or_else(|| match joint.joint_type {
            UrdfJointType::Continuous => 0.0,
            _ => 0.0_f64.max(joint.limit.lower).min(joint.limit.upper),
        }))
    }

    /// Refuses names that are not movable joints of the robot, a locked position for a kept
    /// joint, and non-finite positions; errors name the parameter (`robot.joints`,
    /// `robot.locked_positions`) and list the movable joints.
    fn check(&self, joints: &[Joint], file: &str) -> Result<()> {
        let movable: Vec<&str> = joints
            .iter()
            .filter(|j| !matches!(j.joint_type, UrdfJointType::Fixed))
            .map(|j| j.name.as_str())
            .collect();
        let error = |argument: &str, reason: String| RobotError::InvalidArgument {
            argument: argument.to_owned(),
            reason: format!("{reason}; the movable joints are: {}", movable.join(", ")),
            file: file.to_owned(),
        };
        for name in &self.controlled {
            if !movable.contains(&name.as_str()) {
                return Err(error(
                    "robot.joints",
                    format!("'{name}' is not a movable joint"),
                ));
            }
        }
        for (name, q) in &self.locked_at {
            if !movable.contains(&name.as_str()) {
                return Err(error(
                    "robot.locked_positions",
                    format!("'{name}' is not a movable joint"),
                ));
            }
            if self.controlled.is_empty() || self.controlled.contains(name) {
                return Err(error(
                    "robot.locked_positions",
                    format!("'{name}' is controlled (robot.joints), not locked"),
                ));
            }
            if !q.is_finite() {
                return Err(error(
                    "robot.locked_positions",
                    format!("'{name}' = {q} is not finite"),
                ));
            }
        }
        Ok(())
    }
}

/// Parses URDF text and builds the model; `file` names the source in errors.
pub(crate) fn model_from_urdf_str(
    xml: &str,
    file: &str,
    effort_limits: EffortLimits<'_>,
) -> Result<Model> {
    model_from_urdf_str_selected(xml, file, effort_limits, &JointSelection::ALL)
}

/// [`model_from_urdf_str`] keeping the joints `selection` keeps.
pub(crate) fn model_from_urdf_str_selected(
    xml: &str,
    file: &str,
    effort_limits: EffortLimits<'_>,
    selection: &JointSelection,
) -> Result<Model> {
    check_size_and_depth(xml, file)?;
    let robot = urdf_rs::read_from_string(xml)
        .map_err(|e| super::urdf_diagnose::explain(xml, file, &e.to_string()))?;
    // urdf-rs accepts any root element name.
    match super::urdf_diagnose::root_element_name(xml) {
        Some("robot") => build_model(&robot, file, effort_limits, selection),
        other => Err(RobotError::InvalidElement {
            element: format!("<{}>", other.unwrap_or("")),
            message: "the root element must be <robot>".into(),
            file: file.to_owned(),
        }),
    }
}

/// Refuses text longer than [`MAX_URDF_BYTES`] or nested deeper than [`MAX_URDF_DEPTH`],
/// before a recursive parser sees it. Counts start and end tags, skipping comments, CDATA,
/// processing instructions, declarations and quoted attribute values; text it cannot follow
/// (an unterminated tag) is left for the parser to report.
fn check_size_and_depth(xml: &str, file: &str) -> Result<()> {
    if xml.len() > MAX_URDF_BYTES {
        return Err(RobotError::TooLarge {
            limit_bytes: MAX_URDF_BYTES,
            file: file.to_owned(),
        });
    }
    let mut depth = 0usize;
    let mut at = 0usize;
    while let Some(offset) = xml[at..].find('<') {
        let start = at + offset;
        let rest = &xml[start..];
        // Byte index just past `end`, searched from `from` within `rest`.
        let past =
            |from: usize, end: &str| rest[from..].find(end).map(|k| start + from + k + end.len());
        let next = if rest.starts_with("<!--") {
            past(4, "-->")
        } else if rest.starts_with("<![CDATA[") {
            past(9, "]]>")
        } else if rest.starts_with("<?") {
            past(2, "?>")
        } else if rest.starts_with("<!") {
            past(2, ">")
        } else if rest.starts_with("</") {
            depth = depth.saturating_sub(1);
            past(2, ">")
        } else {
            let Some(end) = start_tag_end(rest) else {
                return Ok(());
            };
            if !rest[..end].trim_end().ends_with('/') {
                depth += 1;
                if depth > MAX_URDF_DEPTH {
                    let name = &rest[1..end];
                    let name_end = name
                        .find(|c: char| c.is_whitespace() || c == '/')
                        .unwrap_or(name.len());
                    return Err(RobotError::TooDeep {
                        element: name[..name_end].to_owned(),
                        line: xml[..start].matches('\n').count() + 1,
                        limit: MAX_URDF_DEPTH,
                        file: file.to_owned(),
                    });
                }
            }
            Some(start + end + 1)
        };
        match next {
            Some(next) => at = next,
            None => return Ok(()),
        }
    }
    Ok(())
}

/// The index of the `>` closing the start tag at the beginning of `tag`, skipping quoted
/// attribute values.
fn start_tag_end(tag: &str) -> Option<usize> {
    let mut quote: Option<char> = None;
    for (i, c) in tag.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '>') => return Some(i),
            (None, _) => {}
        }
    }
    None
}

fn build_model(
    robot: &Robot,
    file: &str,
    effort_limits: EffortLimits<'_>,
    selection: &JointSelection,
) -> Result<Model> {
    let links = &robot.links;
    let joints = &robot.joints;
    if links.is_empty() {
        return Err(RobotError::NoLinks {
            file: file.to_owned(),
        });
    }
    let link_index = index_by_name(links, |l| &l.name, "link", file)?;
    index_by_name(joints, |j| &j.name, "joint", file)?;
    let mut warnings = Vec::new();
    let link_inertias = links
        .iter()
        .map(|link| link_inertia(link, file, &mut warnings))
        .collect::<Result<Vec<_>>>()?;

    let tree = Tree::new(links, joints, &link_index, file)?;
    selection.check(joints, file)?;
    let mut walk = Walk::from_root(&tree, links, joints, effort_limits, selection, file)?;
    let link_frames = walk.place_links(&tree, links, &link_inertias, file)?;
    apply_effort_limits(effort_limits, &mut walk, file)?;

    let Walk {
        bodies,
        joint_names,
        limits,
        ..
    } = walk;
    let nv = bodies.len();
    let model = Model {
        name: robot.name.clone(),
        file: file.to_owned(),
        joint_index: joint_names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect(),
        joint_names,
        bodies,
        limits,
        armature: vec![0.0; nv],
        gravity: DEFAULT_GRAVITY_MPS2,
        link_names: links.iter().map(|l| l.name.clone()).collect(),
        links: link_frames,
        warnings,
    };
    check_inertia_matrix_positive_definite(&model, file)?;
    Ok(model)
}

/// The index of each item by its name; a repeated name is an error naming `element`.
fn index_by_name<'a, T>(
    items: &'a [T],
    name: impl Fn(&'a T) -> &'a String,
    element: &'static str,
    file: &str,
) -> Result<HashMap<&'a str, usize>> {
    let mut index: HashMap<&str, usize> = HashMap::with_capacity(items.len());
    for (k, item) in items.iter().enumerate() {
        let item_name = name(item);
        if index.insert(item_name.as_str(), k).is_some() {
            return Err(RobotError::DuplicateName {
                element,
                name: item_name.clone(),
                file: file.to_owned(),
            });
        }
    }
    Ok(index)
}

/// The tree structure: the joint above each link, the joints below it, each joint's
/// (parent, child) links, and the one root link.
struct Tree {
    parent_joint: Vec<Option<usize>>,
    child_joints: Vec<Vec<usize>>,
    joint_links: Vec<(usize, usize)>,
    root: usize,
}

impl Tree {
    /// Links the joints to their links; refuses missing links, a link with two parents, no
    /// root (a cycle) and several roots.
    fn new(
        links: &[Link],
        joints: &[Joint],
        link_index: &HashMap<&str, usize>,
        file: &str,
    ) -> Result<Self> {
        let mut parent_joint: Vec<Option<usize>> = vec![None; links.len()];
        let mut child_joints: Vec<Vec<usize>> = vec![Vec::new(); links.len()];
        let mut joint_links: Vec<(usize, usize)> = Vec::with_capacity(joints.len());
        for (j, joint) in joints.iter().enumerate() {
            let lookup = |role: &'static str, name: &str| {
                link_index
                    .get(name)
                    .copied()
                    .ok_or_else(|| RobotError::MissingLink {
                        joint: joint.name.clone(),
                        role,
                        link: name.to_owned(),
                        file: file.to_owned(),
                    })
            };
            let parent = lookup("parent", &joint.parent.link)?;
            let child = lookup("child", &joint.child.link)?;
            if let Some(first) = parent_joint[child] {
                return Err(RobotError::TwoParents {
                    link: links[child].name.clone(),
                    first_joint: joints[first].name.clone(),
                    second_joint: joint.name.clone(),
                    file: file.to_owned(),
                });
            }
            parent_joint[child] = Some(j);
            child_joints[parent].push(j);
            joint_links.push((parent, child));
        }
        let mut tree = Tree {
            parent_joint,
            child_joints,
            joint_links,
            root: 0, // found below; the cycle error needs the rest of the tree
        };
        let roots: Vec<usize> = (0..links.len())
            .filter(|&k| tree.parent_joint[k].is_none())
            .collect();
        tree.root = match roots.as_slice() {
            [] => return Err(tree.cycle_error(0, links, file)),
            [root] => *root,
            _ => {
                return Err(RobotError::MultipleRoots {
                    roots: roots.iter().map(|&k| links[k].name.clone()).collect(),
                    file: file.to_owned(),
                });
            }
        };
        Ok(tree)
    }

    /// The error for a loop through link `start`: walks up the parent joints until a link
    /// repeats and lists the loop from parent to child.
    fn cycle_error(&self, start: usize, links: &[Link], file: &str) -> RobotError {
        let mut path = vec![start];
        let mut current = start;
        for _ in 0..=links.len() {
            let Some(j) = self.parent_joint[current] else {
                break;
            };
            current = self.joint_links[j].0;
            if let Some(pos) = path.iter().position(|&k| k == current) {
                path.drain(..pos);
                break;
            }
            path.push(current);
        }
        path.reverse();
        let mut names: Vec<String> = path.iter().map(|&k| links[k].name.clone()).collect();
        if let Some(first) = names.first().cloned() {
            names.push(first);
        }
        RobotError::Cycle {
            links: names,
            file: file.to_owned(),
        }
    }
}

/// What the depth-first walk from the root builds: each link's frame, the bodies (one per
/// movable joint, topologically sorted) with their joints' names and limits.
struct Walk {
    frames: Vec<Option<LinkFrame>>,
    bodies: Vec<Body>,
    joint_names: Vec<String>,
    limits: Vec<JointLimits>,
    /// (joint, what is wrong) of each movable joint without a usable URDF effort limit.
    unusable_effort: Vec<(String, String)>,
}

impl Walk {
    /// Walks depth-first from the root, joints in file order, so that bodies come out
    /// topologically sorted.
    fn from_root(
        tree: &Tree,
        links: &[Link],
        joints: &[Joint],
        effort_limits: EffortLimits<'_>,
        selection: &JointSelection,
        file: &str,
    ) -> Result<Self> {
        let mut walk = Walk {
            frames: vec![None; links.len()],
            bodies: Vec::new(),
            joint_names: Vec::new(),
            limits: Vec::new(),
            unusable_effort: Vec::new(),
        };
        walk.frames[tree.root] = Some(LinkFrame {
            body: BodyRef::World,
            body_from_link: Transform::IDENTITY,
        });
        let mut stack: Vec<usize> = tree.child_joints[tree.root].iter().rev().copied().collect();
        while let Some(j) = stack.pop() {
            let (parent, child) = tree.joint_links[j];
            let Some(parent_frame) = walk.frames[parent] else {
                // Unreachable: a joint is pushed only after its parent link got its frame.
                return Err(tree.cycle_error(parent, links, file));
            };
            let child_frame = match selection.lock(&joints[j]) {
                Some(q) => lock_joint(&joints[j], parent_frame, q, file)?,
                None => walk.add_joint(
                    &joints[j],
                    parent_frame,
                    &links[child].name,
                    effort_limits,
                    file,
                )?,
            };
            walk.frames[child] = Some(child_frame);
            stack.extend(tree.child_joints[child].iter().rev());
        }
        Ok(walk)
    }

    /// The frame of the child link of `joint`: a fixed joint welds it to its parent's body,
    /// a movable one starts a new body (with its joint's name and limits).
    fn add_joint(
        &mut self,
        joint: &Joint,
        parent_frame: LinkFrame,
        child_link: &str,
        effort_limits: EffortLimits<'_>,
        file: &str,
    ) -> Result<LinkFrame> {
        let origin = joint_origin(joint, file)?;
        let body_from_joint = parent_frame.body_from_link * origin;
        let joint_type = match joint.joint_type {
            UrdfJointType::Fixed => {
                return Ok(LinkFrame {
                    body: parent_frame.body,
                    body_from_link: body_from_joint,
                });
            }
            UrdfJointType::Revolute => JointType::Revolute,
            UrdfJointType::Continuous => JointType::Continuous,
            UrdfJointType::Prismatic => JointType::Prismatic,
            UrdfJointType::Floating | UrdfJointType::Planar | UrdfJointType::Spherical => {
                return Err(RobotError::UnsupportedJoint {
                    joint: joint.name.clone(),
                    joint_type: format!("{:?}", joint.joint_type).to_lowercase(),
                    file: file.to_owned(),
                });
            }
        };
        let index = self.bodies.len();
        self.bodies.push(Body {
            parent: match parent_frame.body {
                BodyRef::World => None,
                BodyRef::Body(p) => Some(p),
            },
            joint_type,
            axis: joint_axis(joint, file)?,
            parent_from_joint: body_from_joint,
            inertia: RigidInertia::ZERO,
            link_name: child_link.to_owned(),
        });
        self.joint_names.push(joint.name.clone());
        let (joint_limits, effort_problem) = joint_limits(joint, joint_type, effort_limits, file)?;
        self.limits.push(joint_limits);
        if let Some(problem) = effort_problem {
            self.unusable_effort.push((joint.name.clone(), problem));
        }
        Ok(LinkFrame {
            body: BodyRef::Body(index),
            body_from_link: Transform::IDENTITY,
        })
    }

    /// Adds each link's inertia to its body and returns the links' frames by name. Every
    /// link has a frame unless it sits on a loop unreachable from the root.
    fn place_links(
        &mut self,
        tree: &Tree,
        links: &[Link],
        link_inertias: &[RigidInertia],
        file: &str,
    ) -> Result<HashMap<String, LinkFrame>> {
        let mut link_frames: HashMap<String, LinkFrame> = HashMap::with_capacity(links.len());
        for (k, link) in links.iter().enumerate() {
            let Some(frame) = self.frames[k] else {
                return Err(tree.cycle_error(k, links, file));
            };
            if let BodyRef::Body(i) = frame.body {
                self.bodies[i].inertia +=
                    frame.body_from_link.apply_rigid_inertia(&link_inertias[k]);
            }
            link_frames.insert(link.name.clone(), frame);
        }
        Ok(link_frames)
    }
}

/// The frame of the child link of a locked joint: welded to the parent's body at the joint's
/// motion for position `q` (rotation about the axis, or translation along it).
fn lock_joint(joint: &Joint, parent_frame: LinkFrame, q: f64, file: &str) -> Result<LinkFrame> {
    let body_from_joint = parent_frame.body_from_link * joint_origin(joint, file)?;
    let axis = joint_axis(joint, file)?;
    let motion = match joint.joint_type {
        UrdfJointType::Prismatic => Transform::new(nalgebra::Matrix3::identity(), axis * q),
        _ => Transform::new(
            super::spatial::rotation_about_axis(&axis, q),
            nalgebra::Vector3::zeros(),
        ),
    };
    Ok(LinkFrame {
        body: parent_frame.body,
        body_from_link: body_from_joint * motion,
    })
}

/// Refuses a model whose joint-space inertia M(q) is singular at the check pose (each joint
/// at 0 clamped to its limits): a movable joint that moves no inertia (all its links
/// massless, or a point mass on its axis) has no acceleration for a torque. Links with zero
/// mass or inertia are fine wherever M stays positive definite. Named: the first joint whose
/// Cholesky pivot vanishes, i.e. the first that adds no inertia of its own to the joints
/// before it.
fn check_inertia_matrix_positive_definite(model: &Model, file: &str) -> Result<()> {
    let q: Vec<f64> = model
        .limits()
        .iter()
        .map(|l| 0.0_f64.clamp(l.position_lower.min(l.position_upper), l.position_upper))
        .collect();
    let mut data = super::data::Data::new(model);
    let m = super::crba::crba(model, &mut data, &q)?;
    match super::model::first_vanishing_pivot(m) {
        None => Ok(()),
        Some(i) => Err(RobotError::SingularInertia {
            joint: model.joint_names()[i].clone(),
            child_link: model.bodies[i].link_name.clone(),
            file: file.to_owned(),
        }),
    }
}

/// Where effort limits are required, refuses the first movable joint without a usable one
/// (naming the others); where they are given, sets them.
fn apply_effort_limits(effort_limits: EffortLimits<'_>, walk: &mut Walk, file: &str) -> Result<()> {
    match effort_limits {
        EffortLimits::Optional => Ok(()),
        EffortLimits::Required => match walk.unusable_effort.split_first() {
            Some(((joint, found), others)) => Err(RobotError::NoEffortLimit {
                joint: joint.clone(),
                found: found.clone(),
                others: others.iter().map(|(name, _)| name.clone()).collect(),
                file: file.to_owned(),
            }),
            None => Ok(()),
        },
        EffortLimits::Given(values) => {
            set_effort_limits(&mut walk.limits, values, &walk.joint_names, file)
        }
    }
}

fn finite3(
    v: &[f64; 3],
    element: impl FnOnce() -> String,
    attribute: &'static str,
    file: &str,
) -> Result<()> {
    if v.iter().all(|x| x.is_finite()) {
        Ok(())
    } else {
        Err(RobotError::NonFinite {
            element: element(),
            attribute,
            file: file.to_owned(),
        })
    }
}

fn joint_origin(joint: &Joint, file: &str) -> Result<Transform> {
    let element = || format!("joint '{}' <origin>", joint.name);
    finite3(&joint.origin.xyz, element, "xyz", file)?;
    finite3(&joint.origin.rpy, element, "rpy", file)?;
    Ok(Transform::from_xyz_rpy(
        *joint.origin.xyz,
        *joint.origin.rpy,
    ))
}

fn joint_axis(joint: &Joint, file: &str) -> Result<nalgebra::Vector3<f64>> {
    let axis = *joint.axis.xyz;
    finite3(
        &axis,
        || format!("joint '{}' <axis>", joint.name),
        "xyz",
        file,
    )?;
    let v = nalgebra::Vector3::from(axis);
    let norm = v.norm();
    if norm > 0.0 {
        Ok(v / norm)
    } else {
        Err(RobotError::ZeroAxis {
            joint: joint.name.clone(),
            axis,
            file: file.to_owned(),
        })
    }
}

/// The limits of a movable joint, and what is wrong with its effort limit if it is not
/// usable (missing, ≤ 0, infinite or NaN; stored as `+∞`). A NaN effort is an error only when
/// effort limits are optional (elsewhere the caller reports it or does not read it).
fn joint_limits(
    joint: &Joint,
    joint_type: JointType,
    effort_limits: EffortLimits<'_>,
    file: &str,
) -> Result<(JointLimits, Option<String>)> {
    let l = &joint.limit;
    let effort_nan_is_error = matches!(effort_limits, EffortLimits::Optional);
    for (value, attribute) in [
        (l.lower, "lower"),
        (l.upper, "upper"),
        (l.velocity, "velocity"),
        (l.effort, "effort"),
    ] {
        if value.is_nan() && (attribute != "effort" || effort_nan_is_error) {
            return Err(RobotError::NonFinite {
                element: format!("joint '{}' <limit>", joint.name),
                attribute,
                file: file.to_owned(),
            });
        }
    }
    let none_if_not_positive = |x: f64| if x > 0.0 { x } else { f64::INFINITY };
    let (position_lower, position_upper) = match joint_type {
        JointType::Continuous => (f64::NEG_INFINITY, f64::INFINITY),
        JointType::Revolute | JointType::Prismatic => (l.lower, l.upper),
    };
    let effort = l.effort;
    let effort_problem = if effort.is_nan() {
        Some("effort is not a number".to_owned())
    } else if effort == f64::INFINITY {
        Some("effort is infinite, or missing in URDF ≥ 1.2".to_owned())
    } else if effort == 0.0 {
        Some("effort is 0 or missing, or the joint has no <limit>".to_owned())
    } else if effort < 0.0 {
        Some(format!("effort=\"{effort}\" is negative"))
    } else {
        None
    };
    let limits = JointLimits {
        position_lower,
        position_upper,
        velocity: none_if_not_positive(l.velocity),
        effort: if effort_problem.is_some() {
            f64::INFINITY
        } else {
            effort
        },
    };
    Ok((limits, effort_problem))
}

/// Replaces the effort limits by `values`: one for every joint, or one per joint in joint
/// order; each finite and > 0. Errors name the node's parameter `control.effort_limits_nm`,
/// which is where these values come from.
fn set_effort_limits(
    limits: &mut [JointLimits],
    values: &[f64],
    joint_names: &[String],
    file: &str,
) -> Result<()> {
    const KEY: &str = "control.effort_limits_nm";
    let nv = limits.len();
    if values.len() != 1 && values.len() != nv {
        return Err(RobotError::InvalidArgument {
            argument: KEY.to_owned(),
            reason: format!(
                "expected one value (every movable joint) or {nv} (one per movable joint: {}), \
                 found {}",
                joint_names
                    .iter()
                    .map(|n| format!("'{n}'"))
                    .collect::<Vec<_>>()
                    .join(", "),
                values.len()
            ),
            file: file.to_owned(),
        });
    }
    for (j, limit) in limits.iter_mut().enumerate() {
        let k = if values.len() == 1 { 0 } else { j };
        let value = values[k];
        if !(value.is_finite() && value > 0.0) {
            let argument = if values.len() == 1 {
                KEY.to_owned()
            } else {
                format!("{KEY}[{k}] (joint '{}')", joint_names[k])
            };
            return Err(RobotError::InvalidArgument {
                argument,
                reason: format!("{value} N·m must be finite and > 0"),
                file: file.to_owned(),
            });
        }
        limit.effort = value;
    }
    Ok(())
}

/// A link's inertia in the link frame, after checking it is physical; an inertia accepted
/// with a reservation adds a line to `warnings`.
fn link_inertia(link: &Link, file: &str, warnings: &mut Vec<String>) -> Result<RigidInertia> {
    let inertial = &link.inertial;
    let origin = || format!("link '{}' <inertial><origin>", link.name);
    finite3(&inertial.origin.xyz, origin, "xyz", file)?;
    finite3(&inertial.origin.rpy, origin, "rpy", file)?;
    let i = &inertial.inertia;
    let tensor = Matrix3::new(
        i.ixx, i.ixy, i.ixz, i.ixy, i.iyy, i.iyz, i.ixz, i.iyz, i.izz,
    );
    let mass_kg = inertial.mass.value;
    if !mass_kg.is_finite() {
        return Err(RobotError::NonFinite {
            element: format!("link '{}' <inertial><mass>", link.name),
            attribute: "value",
            file: file.to_owned(),
        });
    }
    if !tensor.iter().all(|x| x.is_finite()) {
        return Err(RobotError::NonFinite {
            element: format!("link '{}' <inertial><inertia>", link.name),
            attribute: "ixx..izz",
            file: file.to_owned(),
        });
    }
    let invalid_mass = |reason| RobotError::InvalidMass {
        link: link.name.clone(),
        mass_kg,
        reason,
        file: file.to_owned(),
    };
    if mass_kg < 0.0 {
        return Err(invalid_mass("mass must not be negative"));
    }
    // Zero mass and zero inertia, or a point mass (zero tensor): frames, sensors, tiny
    // grippers. What matters is that M(q) stays positive definite, checked on the model.
    if let Some(warning) = check_inertia_tensor(&tensor, &link.name, file) {
        warnings.push(warning.to_string());
    }
    if mass_kg == 0.0 && tensor.iter().all(|&x| x == 0.0) {
        return Ok(RigidInertia::ZERO);
    }
    let rotation = rotation_from_rpy(*inertial.origin.rpy);
    let inertia_about_com = rotation * tensor * rotation.transpose();
    Ok(RigidInertia::from_mass_com_inertia(
        mass_kg,
        nalgebra::Vector3::from(*inertial.origin.xyz),
        inertia_about_com,
    ))
}
