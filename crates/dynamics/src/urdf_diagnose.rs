//! Names the offending element when `urdf-rs` rejects a file.
//!
//! urdf-rs reports serde messages such as "unknown variant `ball`" without saying which joint
//! or link they come from. On that error path only, the text is parsed again as plain XML and
//! walked for the problems it can pin down: malformed XML (with line and column), a root that
//! is not `<robot>`, links and joints without a name, unknown joint types, joints without
//! `<parent link>` or `<child link>`, `<inertial>` without `<mass value>` or a complete
//! `<inertia>`, and numbers that do not parse. Anything else keeps urdf-rs's own message.
//! No Featherstone reference: this is input checking only.

use rusty_xml::{Element, Xml};

use super::error::RobotError;

const JOINT_TYPES: [&str; 7] = [
    "revolute",
    "continuous",
    "prismatic",
    "fixed",
    "floating",
    "planar",
    "spherical",
];

/// The most precise error for a file urdf-rs rejected with `urdf_rs_message`.
pub(crate) fn explain(xml: &str, file: &str, urdf_rs_message: &str) -> RobotError {
    let root: Element = match xml.parse() {
        Ok(root) => root,
        Err(e) => {
            return RobotError::Xml {
                message: e.to_string(),
                file: file.to_owned(),
            };
        }
    };
    match diagnose(&root) {
        Some(Problem::UnknownJointType { joint, joint_type }) => RobotError::UnknownJointType {
            joint,
            joint_type,
            file: file.to_owned(),
        },
        Some(Problem::Element(element, message)) => RobotError::InvalidElement {
            element,
            message,
            file: file.to_owned(),
        },
        None if urdf_rs_message.contains("unknown variant") => RobotError::Urdf {
            message: format!("{urdf_rs_message} (a joint type or geometry is misspelled)"),
            file: file.to_owned(),
        },
        None => RobotError::Urdf {
            message: urdf_rs_message.to_owned(),
            file: file.to_owned(),
        },
    }
}

/// The name of the root element, skipping the XML declaration, processing instructions,
/// comments and the doctype (`None` if there is no element).
pub(crate) fn root_element_name(xml: &str) -> Option<&str> {
    let mut rest = xml;
    loop {
        rest = &rest[rest.find('<')?..];
        if let Some(after) = rest.strip_prefix("<!--") {
            rest = &after[after.find("-->")? + 3..];
        } else if let Some(after) = rest.strip_prefix("<?") {
            rest = &after[after.find("?>")? + 2..];
        } else if let Some(after) = rest.strip_prefix("<!") {
            rest = &after[after.find('>')? + 1..];
        } else {
            let name = &rest[1..];
            let end = name
                .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
                .unwrap_or(name.len());
            return Some(&name[..end]);
        }
    }
}

/// A problem found by the walk.
enum Problem {
    /// A joint `type` that URDF does not define.
    UnknownJointType { joint: String, joint_type: String },
    /// (element, message).
    Element(String, String),
}

impl From<(String, String)> for Problem {
    fn from((element, message): (String, String)) -> Self {
        Problem::Element(element, message)
    }
}

/// The first problem found.
fn diagnose(root: &Element) -> Option<Problem> {
    if root.name != "robot" {
        return Some(Problem::Element(
            format!("<{}>", root.name),
            "the root element must be <robot>".into(),
        ));
    }
    let version_1_2_or_later = root
        .get_attribute("version", None)
        .and_then(|v| v.trim().split_once('.'))
        .and_then(|(major, minor)| Some((major.parse::<u32>().ok()?, minor.parse::<u32>().ok()?)))
        .is_some_and(|version| version >= (1, 2));
    for element in child_elements(root) {
        let problem = match element.name.as_str() {
            "link" => diagnose_link(element).map(Problem::from),
            "joint" => diagnose_joint(element, version_1_2_or_later),
            _ => None,
        };
        if problem.is_some() {
            return problem;
        }
    }
    None
}

fn child_elements(element: &Element) -> impl Iterator<Item = &Element> {
    element.children.iter().filter_map(|c| match c {
        Xml::ElementNode(e) => Some(e),
        _ => None,
    })
}

fn diagnose_link(link: &Element) -> Option<(String, String)> {
    let Some(name) = link.get_attribute("name", None) else {
        return Some(("<link>".into(), "missing attribute 'name'".into()));
    };
    let here = format!("link '{name}'");
    if let Some(problem) = diagnose_origins(link, &here) {
        return Some(problem);
    }
    let inertial = link.get_child("inertial", None)?;
    let here = format!("{here} <inertial>");
    let Some(mass) = inertial.get_child("mass", None) else {
        return Some((here, "missing <mass value=\"...\"/>".into()));
    };
    if let Some(problem) = number(mass, "value", &format!("{here}<mass>"), true) {
        return Some(problem);
    }
    let Some(inertia) = inertial.get_child("inertia", None) else {
        return Some((here, "missing <inertia ixx ixy ixz iyy iyz izz/>".into()));
    };
    ["ixx", "ixy", "ixz", "iyy", "iyz", "izz"]
        .iter()
        .find_map(|attr| number(inertia, attr, &format!("{here}<inertia>"), true))
}

fn diagnose_joint(joint: &Element, version_1_2_or_later: bool) -> Option<Problem> {
    let Some(name) = joint.get_attribute("name", None) else {
        return Some(Problem::Element(
            "<joint>".into(),
            "missing attribute 'name'".into(),
        ));
    };
    match joint.get_attribute("type", None) {
        None => {
            return Some(Problem::Element(
                format!("joint '{name}'"),
                "missing attribute 'type'".into(),
            ));
        }
        Some(t) if !JOINT_TYPES.contains(&t) => {
            return Some(Problem::UnknownJointType {
                joint: name.to_owned(),
                joint_type: t.to_owned(),
            });
        }
        Some(_) => {}
    }
    diagnose_joint_children(joint, &format!("joint '{name}'"), version_1_2_or_later)
        .map(Problem::from)
}

fn diagnose_joint_children(
    joint: &Element,
    here: &str,
    version_1_2_or_later: bool,
) -> Option<(String, String)> {
    for role in ["parent", "child"] {
        if joint
            .get_child(role, None)
            .and_then(|e| e.get_attribute("link", None))
            .is_none()
        {
            return Some((here.to_owned(), format!("missing <{role} link=\"...\"/>")));
        }
    }
    if let Some(problem) = diagnose_origins(joint, here) {
        return Some(problem);
    }
    if let Some(axis) = joint.get_child("axis", None)
        && let Some(problem) = vector3(axis, "xyz", &format!("{here} <axis>"), true)
    {
        return Some(problem);
    }
    let limit = joint.get_child("limit", None)?;
    let at = format!("{here} <limit>");
    ["lower", "upper", "effort"]
        .iter()
        .find_map(|attr| number(limit, attr, &at, false))
        .or_else(|| number(limit, "velocity", &at, !version_1_2_or_later))
}

/// Checks `xyz` and `rpy` of every `<origin>` below `element`.
fn diagnose_origins(element: &Element, here: &str) -> Option<(String, String)> {
    for child in child_elements(element) {
        if child.name == "origin" {
            let at = format!("{here} <origin>");
            if let Some(problem) =
                vector3(child, "xyz", &at, false).or_else(|| vector3(child, "rpy", &at, false))
            {
                return Some(problem);
            }
        } else if let Some(problem) = diagnose_origins(child, &format!("{here} <{}>", child.name)) {
            return Some(problem);
        }
    }
    None
}

fn number(element: &Element, attr: &str, at: &str, required: bool) -> Option<(String, String)> {
    match element.get_attribute(attr, None) {
        None if required => Some((at.to_owned(), format!("missing attribute '{attr}'"))),
        None => None,
        Some(text) => text
            .trim()
            .parse::<f64>()
            .is_err()
            .then(|| (at.to_owned(), format!("{attr}=\"{text}\" is not a number"))),
    }
}

fn vector3(element: &Element, attr: &str, at: &str, required: bool) -> Option<(String, String)> {
    match element.get_attribute(attr, None) {
        None if required => Some((at.to_owned(), format!("missing attribute '{attr}'"))),
        None => None,
        Some(text) => {
            let parsed = text
                .split_whitespace()
                .filter(|s| s.parse::<f64>().is_ok())
                .count();
            let tokens = text.split_whitespace().count();
            (parsed != 3 || tokens != 3).then(|| {
                (
                    at.to_owned(),
                    format!("{attr}=\"{text}\" is not three numbers"),
                )
            })
        }
    }
}
