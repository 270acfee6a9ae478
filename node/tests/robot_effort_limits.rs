//! Issue 16 item 5: a movable joint without a usable effort limit (missing, ≤ 0, infinite,
//! NaN) used to run with no torque limit and no warning. Loading such a robot for the node is
//! now an error naming the joint and the parameter `control.effort_limits_nm`, which gives
//! the limits instead; limits on fixed joints are ignored. And a URDF nested 20 000 elements
//! deep used to abort the process with a stack overflow: the loader now refuses text nested
//! more than 256 deep, or larger than 64 MiB, before any parser sees it.

use gp_node::app;
use gp_node::app::{DEFAULT_PARAMS_YAML, NodeParams};
use gp_node::control::{ControlLaw, ControlParams};
use gp_node::embedded_sim::JointValues;
use gp_node::robot::{Model, RobotError};
use gpn_test_support::urdf::{self, link};

const FILE: &str = "limits.urdf";
const KEY: &str = "control.effort_limits_nm";

/// A joint about y followed by `limit` (may be empty: no `<limit>`).
fn joint(name: &str, kind: &str, parent: &str, child: &str, limit: &str) -> String {
    urdf::joint(name, kind, parent, child, "0 1 0", limit)
}

fn limit(effort: &str) -> String {
    format!(r#"<limit lower="-2" upper="2" effort="{effort}" velocity="2"/>"#)
}

/// base -(fixed, `fixed_limit`)- plate -(`kind` "j1", `j1_limit`)- arm -(revolute "j2",
/// `j2_limit`)- hand.
fn arm(kind: &str, j1_limit: &str, j2_limit: &str, fixed_limit: &str) -> String {
    urdf::robot(
        "arm",
        &[
            link("base"),
            link("plate"),
            link("arm"),
            link("hand"),
            joint("weld", "fixed", "base", "plate", fixed_limit),
            joint("j1", kind, "plate", "arm", j1_limit),
            joint("j2", "revolute", "arm", "hand", j2_limit),
        ],
    )
}

/// Loads `xml` for a controller with no limits given; expects a missing-limit error naming
/// every `joints` (the first as the one at fault), the parameter and the file.
fn assert_no_effort_limit(xml: &str, joints: &[&str], found: &str) {
    let err = Model::from_urdf_str_with_effort_limits(xml, FILE, &[])
        .expect_err("a movable joint has no usable effort limit");
    let message = err.to_string();
    match &err {
        RobotError::NoEffortLimit { joint, others, .. } => {
            assert_eq!(joint, joints[0], "{message}");
            assert_eq!(others, &joints[1..], "{message}");
        }
        other => panic!("expected NoEffortLimit, got {other:?}"),
    }
    for needle in [KEY, FILE, found, "N·m"] {
        assert!(
            message.contains(needle),
            "'{needle}' missing from: {message}"
        );
    }
    for joint in joints {
        assert!(
            message.contains(&format!("'{joint}'")),
            "joint '{joint}' missing from: {message}"
        );
    }
}

#[test]
fn unusable_effort_on_a_movable_joint_is_an_error_naming_joint_and_parameter() {
    let good = limit("10");
    for (effort, found) in [
        ("-30", "negative"),
        ("inf", "infinite"),
        ("nan", "not a number"),
        ("0", "0 or missing"),
        ("-inf", "negative"),
    ] {
        for kind in ["revolute", "continuous", "prismatic"] {
            let xml = arm(kind, &limit(effort), &good, "");
            assert_no_effort_limit(&xml, &["j1"], found);
        }
    }
    // No effort attribute, and no <limit> at all.
    let xml = arm(
        "revolute",
        r#"<limit lower="-2" upper="2" velocity="2"/>"#,
        &good,
        "",
    );
    assert_no_effort_limit(&xml, &["j1"], "missing");
    let xml = arm("continuous", "", &good, "");
    assert_no_effort_limit(&xml, &["j1"], "no <limit>");
    // Every joint at fault is named.
    let xml = arm("revolute", &limit("-30"), "", "");
    assert_no_effort_limit(&xml, &["j1", "j2"], "negative");
}

#[test]
fn a_urdf_1_2_negative_effort_is_an_error_naming_the_joint() {
    // urdf-rs refuses negative limits itself from URDF 1.2 on.
    let xml = arm("revolute", &limit("-30"), &limit("10"), "").replace(
        r#"<robot name="arm">"#,
        r#"<robot name="arm" version="1.2">"#,
    );
    for result in [
        Model::from_urdf_str_with_effort_limits(&xml, FILE, &[]),
        Model::from_urdf_str_with_effort_limits(&xml, FILE, &[5.0]),
        Model::from_urdf_str(&xml, FILE),
    ] {
        let message = result.expect_err("negative effort").to_string();
        assert!(
            message.contains("j1") && message.contains("effort") && message.contains(FILE),
            "{message}"
        );
    }
    // A missing effort reads as infinite there: an error for the node, as in URDF 1.0.
    let xml = arm("revolute", r#"<limit velocity="2"/>"#, &limit("10"), "").replace(
        r#"<robot name="arm">"#,
        r#"<robot name="arm" version="1.2">"#,
    );
    assert_no_effort_limit(&xml, &["j1"], "infinite");
}

#[test]
fn limits_on_fixed_joints_are_ignored() {
    for fixed in [
        limit("0"),
        limit("-30"),
        limit("nan"),
        limit("inf"),
        r#"<limit effort="0" velocity="0"/>"#.to_owned(),
        String::new(),
    ] {
        let xml = arm("revolute", &limit("10"), &limit("20"), &fixed);
        let model = Model::from_urdf_str_with_effort_limits(&xml, FILE, &[])
            .unwrap_or_else(|e| panic!("fixed joint {fixed:?}: {e}"));
        let efforts: Vec<f64> = model.limits().iter().map(|l| l.effort).collect();
        assert_eq!(efforts, [10.0, 20.0]);
    }
}

#[test]
fn given_limits_replace_the_urdfs_and_need_none_there() {
    let without = arm("revolute", "", r#"<limit velocity="1"/>"#, "");
    let efforts =
        |m: &Model| -> Vec<f64> { m.limits().iter().map(|l| l.effort).collect::<Vec<_>>() };
    let one = Model::from_urdf_str_with_effort_limits(&without, FILE, &[7.5]).expect("one value");
    assert_eq!(efforts(&one), [7.5, 7.5]);
    let each =
        Model::from_urdf_str_with_effort_limits(&without, FILE, &[3.0, 4.0]).expect("per joint");
    assert_eq!(efforts(&each), [3.0, 4.0]);
    // Usable URDF limits are replaced too, and unusable ones (NaN) are not read.
    let with = arm("prismatic", &limit("nan"), &limit("20"), "");
    let each = Model::from_urdf_str_with_effort_limits(&with, FILE, &[3.0, 4.0]).expect("given");
    assert_eq!(efforts(&each), [3.0, 4.0]);
    // Nothing else changes.
    let urdf = Model::from_urdf_str_with_effort_limits(
        &arm("revolute", &limit("3"), &limit("4"), ""),
        FILE,
        &[],
    )
    .expect("URDF limits");
    assert_eq!(efforts(&urdf), [3.0, 4.0]);
    assert_eq!(urdf.limits(), each.limits());
    assert_eq!(urdf.joint_names(), each.joint_names());
}

#[test]
fn bad_given_limits_are_errors_naming_the_key() {
    let xml = arm("revolute", &limit("10"), &limit("20"), "");
    for values in [
        vec![0.0],
        vec![-1.0],
        vec![f64::NAN],
        vec![f64::INFINITY],
        vec![5.0, -5.0],
        vec![5.0, f64::NAN],
    ] {
        let err = Model::from_urdf_str_with_effort_limits(&xml, FILE, &values)
            .expect_err("invalid value");
        let message = err.to_string();
        assert!(
            matches!(err, RobotError::InvalidArgument { .. })
                && message.contains(KEY)
                && message.contains("finite and > 0")
                && message.contains(FILE),
            "{values:?}: {message}"
        );
        if values.len() == 2 {
            assert!(message.contains("[1] (joint 'j2')"), "{message}");
        }
    }
    let message = Model::from_urdf_str_with_effort_limits(&xml, FILE, &[1.0, 2.0, 3.0])
        .expect_err("three values for two joints")
        .to_string();
    assert!(
        message.contains(KEY)
            && message.contains("one value")
            && message.contains("'j1', 'j2'")
            && message.contains("found 3"),
        "{message}"
    );
}

#[test]
fn the_dynamics_loader_still_reads_urdfs_without_effort_limits() {
    // `gp-node dynamics check` and the Pinocchio fixtures need no effort limits: "none" is +∞.
    let xml = arm("revolute", "", &limit("-30"), &limit("0"));
    let model = Model::from_urdf_str(&xml, FILE).expect("dynamics only");
    assert!(model.limits().iter().all(|l| l.effort == f64::INFINITY));
    // NaN stays an error there, naming the joint.
    let xml = arm("revolute", &limit("nan"), &limit("10"), "");
    let err = Model::from_urdf_str(&xml, FILE).expect_err("NaN");
    assert!(matches!(err, RobotError::NonFinite { .. }), "{err:?}");
    assert!(err.to_string().contains("joint 'j1' <limit>"), "{err}");
}

/// The default parameters with `robot.urdf` pointing at `xml` written to a scratch file, and
/// `effort_limits_nm` set.
fn params_with(name: &str, xml: &str, effort_limits_nm: JointValues) -> NodeParams {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("robot_effort_limits");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join(name);
    std::fs::write(&path, xml).expect("write URDF");
    let mut params = NodeParams::from_yaml(DEFAULT_PARAMS_YAML).expect("default parameters");
    params.robot.urdf = path;
    params.control.effort_limits_nm = effort_limits_nm;
    params
}

#[test]
fn the_node_loader_requires_limits_and_applies_the_parameter() {
    let defaults = NodeParams::from_yaml(DEFAULT_PARAMS_YAML).expect("default parameters");
    assert_eq!(defaults.control, ControlParams::default());
    assert!(defaults.control.given_effort_limits_nm().is_empty());
    // The built-in Panda has its limits.
    let panda = app::load_robot(&defaults).expect("built-in Panda");
    assert_eq!(panda.limits()[0].effort, 87.0);

    let xml = arm("revolute", &limit("-30"), r#"<limit velocity="1"/>"#, "");
    let none = JointValues::Each(Vec::new());
    let message = app::load_robot(&params_with("negative.urdf", &xml, none))
        .expect_err("no usable limits")
        .to_string();
    for needle in ["'j1'", "'j2'", KEY, "negative.urdf"] {
        assert!(
            message.contains(needle),
            "'{needle}' missing from: {message}"
        );
    }
    let robot = app::load_robot(&params_with("one.urdf", &xml, JointValues::All(6.0)))
        .expect("one value for every joint");
    assert!(robot.limits().iter().all(|l| l.effort == 6.0));
    let each = JointValues::Each(vec![6.0, 2.0]);
    let robot = app::load_robot(&params_with("each.urdf", &xml, each)).expect("per joint");
    let efforts: Vec<f64> = robot.limits().iter().map(|l| l.effort).collect();
    assert_eq!(efforts, [6.0, 2.0]);
    let bad = JointValues::Each(vec![6.0, -2.0]);
    let message = app::load_robot(&params_with("bad.urdf", &xml, bad))
        .expect_err("negative value")
        .to_string();
    assert!(
        message.contains(KEY) && message.contains("'j2'"),
        "{message}"
    );

    // The parameter file takes one value or a list.
    for (text, expected) in [
        ("effort_limits_nm: 5.0", JointValues::All(5.0)),
        (
            "effort_limits_nm: [1.0, 2.0]",
            JointValues::Each(vec![1.0, 2.0]),
        ),
    ] {
        let yaml = DEFAULT_PARAMS_YAML.replacen("effort_limits_nm: []", text, 1);
        assert_ne!(
            yaml, DEFAULT_PARAMS_YAML,
            "the defaults list effort_limits_nm: []"
        );
        let params = NodeParams::from_yaml(&yaml).expect("parameters");
        assert_eq!(params.control.effort_limits_nm, expected);
    }
}

#[test]
fn the_control_law_saturates_at_the_given_limits() {
    let mut params = app::resolved_default_params().expect("default parameters");
    params.control.effort_limits_nm = JointValues::All(1.5);
    let robot = app::load_robot(&params).expect("Panda with given limits");
    let mut law = ControlLaw::new(&robot, &params.control).expect("law");
    // Arm stretched out horizontally: gravity needs tens of N·m at the shoulder.
    let mut q = vec![0.0; robot.nv()];
    q[1] = 1.5;
    let mut u = vec![0.0; robot.nv()];
    law.hold(&robot, &q, &mut u).expect("gravity hold");
    assert_eq!(u[1].abs(), 1.5, "{u:?}");
    assert!(u.iter().all(|t| t.abs() <= 1.5), "{u:?}");
}

#[test]
fn every_urdf_in_the_repository_loads_for_the_node() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../urdf");
    let mut count = 0;
    for entry in std::fs::read_dir(dir).expect("urdf/") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "urdf") {
            let model = Model::from_urdf_file_with_effort_limits(&path, &[])
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(
                model
                    .limits()
                    .iter()
                    .all(|l| l.effort.is_finite() && l.effort > 0.0),
                "{}",
                path.display()
            );
            count += 1;
        }
    }
    assert!(count >= 2, "found {count} URDFs in {dir}");
}

/// `<robot>` with a joint holding `depth` nested `<x>` elements, each wrapped in `wrap`.
fn nested(depth: usize) -> String {
    format!(
        r#"<robot name="deep">{}{}{}</robot>"#,
        link("base"),
        link("arm"),
        joint(
            "j1",
            "revolute",
            "base",
            "arm",
            &format!(
                "{}{}{}",
                limit("10"),
                "<x>".repeat(depth),
                "</x>".repeat(depth)
            )
        )
    )
}

#[test]
fn nesting_20000_deep_is_a_clean_error_not_a_crash() {
    // Before the fix, this aborted the test process (stack overflow in the XML parsers).
    let deep = nested(20_000);
    for result in [
        Model::from_urdf_str(&deep, FILE),
        Model::from_urdf_str_with_effort_limits(&deep, FILE, &[]),
    ] {
        let err = result.expect_err("too deep");
        let message = err.to_string();
        assert!(
            matches!(err, RobotError::TooDeep { limit: 256, .. }),
            "{err:?}"
        );
        assert!(
            message.contains("<x>") && message.contains("256") && message.contains(FILE),
            "{message}"
        );
    }
    // Unclosed, at the root, and after a line break: the line is given.
    let unclosed = format!("<robot name=\"r\">\n{}", "<link>".repeat(20_000));
    let message = Model::from_urdf_str(&unclosed, FILE)
        .expect_err("too deep")
        .to_string();
    assert!(message.contains("<link> at line 2"), "{message}");
}

#[test]
fn nesting_up_to_256_deep_loads_and_markup_that_nests_nothing_is_not_counted() {
    // <robot> and <joint> are two levels: 254 more reach the limit.
    Model::from_urdf_str(&nested(254), FILE).expect("256 levels load");
    let err = Model::from_urdf_str(&nested(255), FILE).expect_err("257 levels");
    assert!(matches!(err, RobotError::TooDeep { .. }), "{err:?}");
    // Self-closing elements, end tags, comments, CDATA, processing instructions, the doctype
    // and quoted '>' do not nest.
    let noise = format!(
        r#"<!-- {open} --><?pi {open} ?><![CDATA[{open}]]><y a="{gt}"/><y b='/'></y>"#,
        open = "<x>".repeat(1000),
        gt = "x>".repeat(1000)
    );
    let xml = nested(250).replacen(
        r#"<robot name="deep">"#,
        &format!(r#"<!DOCTYPE robot><robot name="deep">{}"#, noise.repeat(20)),
        1,
    );
    Model::from_urdf_str(&xml, FILE).expect("markup that nests nothing");
}

#[test]
fn text_over_64_mib_is_refused() {
    let limit = 64 << 20;
    let mut huge = String::from(r#"<robot name="big">"#);
    huge.push_str(&" ".repeat(limit));
    huge.push_str("</robot>");
    let err = Model::from_urdf_str(&huge, FILE).expect_err("too large");
    assert!(matches!(err, RobotError::TooLarge { .. }), "{err:?}");
    assert!(err.to_string().contains(FILE), "{err}");
    drop(huge);
    // A file is not read past the limit (a sparse file: no 64 MiB written).
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("robot_effort_limits");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join("huge.urdf");
    let file = std::fs::File::create(&path).expect("create");
    file.set_len(limit as u64 + 10).expect("sparse file");
    let err = Model::from_urdf_file_with_effort_limits(&path, &[]).expect_err("too large");
    assert!(matches!(err, RobotError::TooLarge { .. }), "{err:?}");
    assert!(err.to_string().contains("huge.urdf"), "{err}");
    std::fs::remove_file(&path).expect("remove");
}
