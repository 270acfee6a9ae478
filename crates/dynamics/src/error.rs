//! [`RobotError`]: everything that can go wrong when loading a robot description, calling a
//! dynamics algorithm, or checking the engine against a reference fixture.
//!
//! Every variant names the file (`file`: the URDF path, the name given to
//! [`Model::from_urdf_str`](super::Model::from_urdf_str), or the fixture path) and the element
//! (link, joint, argument or fixture field) at fault; messages put the file last.

use std::path::PathBuf;

/// `Result` with [`RobotError`].
pub type Result<T, E = RobotError> = std::result::Result<T, E>;

/// An error of the rigid-body dynamics module.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RobotError {
    /// A file could not be read.
    #[error("cannot read {what}: {error}: {}", path.display())]
    Io {
        /// What the file was supposed to be ("URDF", "dynamics fixture").
        what: &'static str,
        /// The operating-system error.
        error: std::io::Error,
        /// The file.
        path: PathBuf,
    },
    /// The text is not well-formed XML.
    #[error("malformed XML: {message}, in {file}")]
    Xml {
        /// The parser's message (with line and column).
        message: String,
        /// The URDF file.
        file: String,
    },
    /// The XML is well formed, but an element is not valid URDF.
    #[error("{element}: {message}, in {file}")]
    InvalidElement {
        /// The element at fault, e.g. `joint 'elbow' <axis>`.
        element: String,
        /// What is wrong with it.
        message: String,
        /// The URDF file.
        file: String,
    },
    /// urdf-rs rejected the file for a reason the element-level diagnosis did not pin down.
    #[error("invalid URDF (robot element): {message}, in {file}")]
    Urdf {
        /// urdf-rs's message.
        message: String,
        /// The URDF file.
        file: String,
    },
    /// The text is larger than the loader accepts (see the `urdf` module doc).
    #[error("the URDF is larger than {limit_bytes} bytes (the loader's limit), in {file}")]
    TooLarge {
        /// The largest accepted size, bytes.
        limit_bytes: usize,
        /// The URDF file.
        file: String,
    },
    /// Elements nested deeper than the loader accepts (the XML parsers recurse once per level).
    #[error(
        "<{element}> at line {line} is nested more than {limit} elements deep (the loader's \
         limit; a URDF needs fewer than 10), in {file}"
    )]
    TooDeep {
        /// The first element past the limit.
        element: String,
        /// Its line (1-based).
        line: usize,
        /// The deepest accepted nesting.
        limit: usize,
        /// The URDF file.
        file: String,
    },
    /// A movable joint has no usable effort limit (missing, ≤ 0, infinite or NaN) and the
    /// loader was asked to require one
    /// ([`Model::from_urdf_file_with_effort_limits`](super::Model::from_urdf_file_with_effort_limits)).
    /// The message says how to give the limits instead: the node's parameter
    /// `control.effort_limits_nm`.
    #[error(
        "joint '{joint}' <limit>: no usable effort limit ({found}){}; a movable joint needs a \
         finite effort > 0 (N·m, N for a prismatic joint) in the URDF, or give the limits as the \
         parameter control.effort_limits_nm (one value for all movable joints or one per \
         movable joint, N·m), in {file}",
        also(.others)
    )]
    NoEffortLimit {
        /// The first movable joint (in joint order) without a usable effort limit.
        joint: String,
        /// What the file gives, e.g. `effort="-30" is negative`.
        found: String,
        /// The other movable joints without one.
        others: Vec<String>,
        /// The URDF file.
        file: String,
    },
    /// The robot has no `<link>`.
    #[error("robot has no <link> element, in {file}")]
    NoLinks {
        /// The URDF file.
        file: String,
    },
    /// Two links or two joints share a name.
    #[error("two <{element}> elements are named '{name}', in {file}")]
    DuplicateName {
        /// `"link"` or `"joint"`.
        element: &'static str,
        /// The repeated name.
        name: String,
        /// The URDF file.
        file: String,
    },
    /// A joint refers to a link that is not defined.
    #[error("joint '{joint}': {role} link '{link}' is not defined, in {file}")]
    MissingLink {
        /// The joint.
        joint: String,
        /// `"parent"` or `"child"`.
        role: &'static str,
        /// The undefined link name.
        link: String,
        /// The URDF file.
        file: String,
    },
    /// A link is the child of two joints (the description is not a tree).
    #[error(
        "link '{link}' has two parents: it is the child of joints '{first_joint}' and \
         '{second_joint}', in {file}"
    )]
    TwoParents {
        /// The link.
        link: String,
        /// The first joint naming it as child.
        first_joint: String,
        /// The second joint naming it as child.
        second_joint: String,
        /// The URDF file.
        file: String,
    },
    /// The joints form a closed loop.
    #[error("links {} form a cycle (joints must form a tree), in {file}", chain(.links))]
    Cycle {
        /// The links on the loop, parent to child, the first repeated at the end.
        links: Vec<String>,
        /// The URDF file.
        file: String,
    },
    /// More than one link has no parent joint (the description is not one connected tree).
    #[error(
        "links {} have no parent joint; exactly one root link is allowed, in {file}",
        quoted(.roots)
    )]
    MultipleRoots {
        /// The parentless links.
        roots: Vec<String>,
        /// The URDF file.
        file: String,
    },
    /// A joint type that the engine does not model (floating, planar, spherical).
    #[error(
        "joint '{joint}': type '{joint_type}' is not supported (only revolute, continuous, \
         prismatic and fixed; the root is fixed to the world), in {file}"
    )]
    UnsupportedJoint {
        /// The joint.
        joint: String,
        /// Its type attribute.
        joint_type: String,
        /// The URDF file.
        file: String,
    },
    /// A joint `type` attribute that URDF does not define.
    #[error(
        "joint '{joint}': unknown type '{joint_type}' (expected revolute, continuous, \
         prismatic or fixed), in {file}"
    )]
    UnknownJointType {
        /// The joint.
        joint: String,
        /// Its type attribute.
        joint_type: String,
        /// The URDF file.
        file: String,
    },
    /// A joint axis of zero length.
    #[error("joint '{joint}' <axis xyz=\"{} {} {}\">: the axis has zero length, in {file}", axis[0], axis[1], axis[2])]
    ZeroAxis {
        /// The joint.
        joint: String,
        /// The axis as read.
        axis: [f64; 3],
        /// The URDF file.
        file: String,
    },
    /// A NaN or infinite number where a finite one is required.
    #[error("{element}: {attribute} is not finite, in {file}")]
    NonFinite {
        /// The element, e.g. `link 'hand' <inertial><origin>`.
        element: String,
        /// The attribute, e.g. `xyz`.
        attribute: &'static str,
        /// The URDF file.
        file: String,
    },
    /// A negative mass.
    #[error("link '{link}' <inertial><mass value=\"{mass_kg}\">: {reason}, in {file}")]
    InvalidMass {
        /// The link.
        link: String,
        /// The mass as read (kg).
        mass_kg: f64,
        /// Why it is rejected.
        reason: &'static str,
        /// The URDF file.
        file: String,
    },
    /// A movable joint adds no inertia of its own to the joint-space inertia M(q) (the links
    /// it moves are massless, or their mass lies on its axis), so M is singular and forward
    /// dynamics is undefined.
    #[error(
        "joint '{joint}': the joint-space inertia matrix is singular at the check pose (each \
         joint at 0 clamped to its limits): the links this joint moves (child '{child_link}' and \
         beyond) carry no inertia about its axis that other joints do not already have; give \
         them an <inertial> with mass and inertia, or fix the joint, in {file}"
    )]
    SingularInertia {
        /// The joint.
        joint: String,
        /// Its child link.
        child_link: String,
        /// The URDF file.
        file: String,
    },
    /// An inertia tensor that is not physical.
    #[error("link '{link}' <inertial><inertia>: {reason} (principal moments {:e}, {:e}, {:e} kg·m²), in {file}", principal_moments[0], principal_moments[1], principal_moments[2])]
    InvalidInertia {
        /// The link (or payload description).
        link: String,
        /// Principal moments about the centre of mass, ascending (kg·m²).
        principal_moments: [f64; 3],
        /// Why it is rejected.
        reason: &'static str,
        /// The URDF file (or model source).
        file: String,
    },
    /// A link name that the model does not know.
    #[error("link '{link}' is not in the robot description, in {file}")]
    UnknownLink {
        /// The name asked for.
        link: String,
        /// The model's source file.
        file: String,
    },
    /// An invalid argument to a model builder ([`Model::with_added_inertia`](super::Model::with_added_inertia),
    /// [`Model::with_armature`](super::Model::with_armature), gravity).
    #[error("{argument}: {reason}, model from {file}")]
    InvalidArgument {
        /// The argument at fault, e.g. `armature[3] (joint 'elbow')`.
        argument: String,
        /// Why it is rejected.
        reason: String,
        /// The model's source file.
        file: String,
    },
    /// An input slice or a [`Data`](super::Data) buffer of the wrong length.
    #[error("{argument}: expected {expected} entries, found {found}, model from {file}")]
    SizeMismatch {
        /// The argument (`q`, `v`, `a`, `tau`, `data`, ...).
        argument: &'static str,
        /// The length the model requires.
        expected: usize,
        /// The length passed.
        found: usize,
        /// The model's source file.
        file: String,
    },
    /// A body index past the last body.
    #[error(
        "body index {body} is out of range (the model has {nbodies} bodies), model from {file}"
    )]
    BodyOutOfRange {
        /// The index passed.
        body: usize,
        /// The number of bodies (= nv).
        nbodies: usize,
        /// The model's source file.
        file: String,
    },
    /// A reference fixture that is not in the documented format.
    #[error("{element}: {message}, in {file}")]
    Fixture {
        /// The element at fault, e.g. `samples[3].M row 2`.
        element: String,
        /// What is wrong.
        message: String,
        /// The fixture file.
        file: String,
    },
    /// The fixture's joints are not the URDF's movable joints.
    #[error(
        "fixture joints do not match the URDF's movable joints: missing from the URDF: [{}]; \
         missing from the fixture: [{}], in {file} (URDF {urdf})",
        quoted(.missing_in_urdf), quoted(.missing_in_fixture)
    )]
    FixtureJoints {
        /// Joints named in the fixture that the URDF does not have (as movable joints).
        missing_in_urdf: Vec<String>,
        /// Movable URDF joints the fixture does not name.
        missing_in_fixture: Vec<String>,
        /// The URDF file.
        urdf: String,
        /// The fixture file.
        file: String,
    },
}

fn chain(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(" -> ")
}

fn also(others: &[String]) -> String {
    if others.is_empty() {
        String::new()
    } else {
        let noun = if others.len() == 1 { "joint" } else { "joints" };
        format!(", nor on {noun} {}", quoted(others))
    }
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ")
}
