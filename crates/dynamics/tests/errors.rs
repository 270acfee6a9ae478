//! Bad input gives a clear error naming the problem, the element and the file — never a
//! panic: malformed URDFs, broken trees, unphysical inertias, unsupported joints, and wrong
//! slice lengths or arguments passed to the algorithms and model builders.

use gpn_dynamics::{
    Data, Model, RobotError, aba, crba, forward_kinematics, gravity, nonlinear_effects, regressor,
    rnea, world_from_link,
};
use gpn_test_support::urdf::{self, link};
use nalgebra::{Matrix3, Vector3};

const FILE: &str = "bad_robot.urdf";

/// A joint about z with limits ±1 rad, 10 N·m, 1 rad/s.
fn joint(name: &str, kind: &str, parent: &str, child: &str) -> String {
    let limit = r#"<limit lower="-1" upper="1" effort="10" velocity="1"/>"#;
    urdf::joint(name, kind, parent, child, "0 0 1", limit)
}

/// The robot of these elements, in order.
fn robot_of(elements: &[String]) -> String {
    urdf::robot("bad", elements)
}

/// Loads `xml`, expects an error, checks its message names the file and every `needles`.
fn load_error(xml: &str, needles: &[&str]) -> RobotError {
    let err = Model::from_urdf_str(xml, FILE).expect_err("the URDF is invalid");
    let message = err.to_string();
    assert!(message.contains(FILE), "no file in: {message}");
    for needle in needles {
        assert!(
            message.contains(needle),
            "'{needle}' missing from: {message}"
        );
    }
    err
}

fn good_two_link() -> String {
    robot_of(&[
        link("base"),
        link("arm"),
        joint("j1", "revolute", "base", "arm"),
    ])
}

#[test]
fn the_reference_robot_of_these_tests_loads() {
    let model = Model::from_urdf_str(&good_two_link(), FILE).expect("valid");
    assert_eq!(model.nv(), 1);
}

#[test]
fn malformed_xml_is_reported_with_position() {
    let xml = r#"<robot name="x"><link name="a"></robot>"#;
    let err = load_error(xml, &[]);
    assert!(matches!(err, RobotError::Xml { .. }), "{err:?}");
    let err = load_error("this is not xml", &[]);
    assert!(
        matches!(err, RobotError::Xml { .. } | RobotError::Urdf { .. }),
        "{err:?}"
    );
    let err = load_error(
        r#"<model name="x"><link name="a"/></model>"#,
        &["<model>", "<robot>"],
    );
    assert!(
        matches!(
            err,
            RobotError::InvalidElement { .. } | RobotError::Urdf { .. }
        ),
        "{err:?}"
    );
}

#[test]
fn missing_parent_or_child_link_names_joint_and_link() {
    // (role, the joint's parent and child, what the message names)
    for (role, parent, child, named) in [
        ("parent", "nowhere", "base", "parent link 'nowhere'"),
        ("child", "base", "ghost", "child link 'ghost'"),
    ] {
        let xml = robot_of(&[link("base"), joint("j1", "revolute", parent, child)]);
        let err = load_error(&xml, &["'j1'", named]);
        assert!(
            matches!(err, RobotError::MissingLink { role: r, .. } if r == role),
            "{role}: {err:?}"
        );
    }
    // A joint element without <parent>.
    let xml = robot_of(&[
        link("base"),
        link("arm"),
        r#"<joint name="j1" type="revolute"><child link="arm"/><limit effort="1" velocity="1"/></joint>"#.into(),
    ]);
    load_error(&xml, &["'j1'", "parent"]);
}

#[test]
fn cycles_are_reported_with_their_links() {
    // No root at all.
    let xml = robot_of(&[
        link("a"),
        link("b"),
        joint("ab", "revolute", "a", "b"),
        joint("ba", "revolute", "b", "a"),
    ]);
    let err = load_error(&xml, &["cycle", "'a'", "'b'"]);
    assert!(matches!(err, RobotError::Cycle { .. }), "{err:?}");
    // A loop beside a valid tree.
    let xml = robot_of(&[
        link("root"),
        link("x"),
        link("b"),
        link("c"),
        joint("rx", "revolute", "root", "x"),
        joint("bc", "revolute", "b", "c"),
        joint("cb", "fixed", "c", "b"),
    ]);
    let err = load_error(&xml, &["cycle", "'b'", "'c'"]);
    match err {
        RobotError::Cycle { links, .. } => assert_eq!(links.len(), 3, "{links:?}"),
        other => panic!("{other:?}"),
    }
    // A self-loop.
    let xml = robot_of(&[link("a"), joint("aa", "revolute", "a", "a")]);
    load_error(&xml, &["cycle", "'a'"]);
}

#[test]
fn a_link_with_two_parents_is_rejected() {
    let xml = robot_of(&[
        link("base"),
        link("a"),
        link("b"),
        joint("j1", "revolute", "base", "b"),
        joint("j2", "revolute", "a", "b"),
    ]);
    let err = load_error(&xml, &["'b'", "two parents", "'j1'", "'j2'"]);
    assert!(matches!(err, RobotError::TwoParents { .. }), "{err:?}");
}

#[test]
fn several_roots_are_rejected() {
    let xml = robot_of(&[link("base"), link("floating_thing")]);
    let err = load_error(&xml, &["'base'", "'floating_thing'", "root"]);
    assert!(matches!(err, RobotError::MultipleRoots { .. }), "{err:?}");
}

#[test]
fn duplicate_names_are_rejected() {
    let xml = robot_of(&[link("base"), link("base")]);
    load_error(&xml, &["<link>", "'base'"]);
    let xml = robot_of(&[
        link("base"),
        link("a"),
        link("b"),
        joint("j", "revolute", "base", "a"),
        joint("j", "revolute", "a", "b"),
    ]);
    load_error(&xml, &["<joint>", "'j'"]);
}

#[test]
fn zero_or_negative_mass_is_rejected() {
    let bad = |mass: &str, inertia: &str| {
        robot_of(&[
            link("base"),
            format!(
                r#"<link name="arm"><inertial><mass value="{mass}"/><inertia {inertia}/></inertial></link>"#
            ),
            joint("j1", "revolute", "base", "arm"),
        ])
    };
    let diag = r#"ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1""#;
    let zero = r#"ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0""#;
    let err = load_error(
        &bad("-1.5", diag),
        &["link 'arm'", "<mass", "-1.5", "negative"],
    );
    assert!(matches!(err, RobotError::InvalidMass { .. }), "{err:?}");
    // Zero mass with a rotational inertia (a rotor idealised) moves about the axis: accepted,
    // as Pinocchio does.
    Model::from_urdf_str(&bad("0", diag), FILE).expect("zero mass, inertia about the axis");
    // Zero mass and zero inertia is a massless frame, fine in the middle of a chain but not
    // as everything a joint moves: M is singular.
    let err = load_error(
        &bad("0", zero),
        &["joint 'j1'", "'arm'", "singular", "check pose"],
    );
    assert!(matches!(err, RobotError::SingularInertia { .. }), "{err:?}");
    // A link without <inertial> at the end of a chain: same.
    let xml = robot_of(&[
        link("base"),
        r#"<link name="arm"/>"#.into(),
        joint("j1", "prismatic", "base", "arm"),
    ]);
    load_error(&xml, &["joint 'j1'", "singular"]);
    // A point mass on a revolute joint's axis gives that joint no inertia either; the same
    // point mass on a prismatic joint moves with it.
    let point = r#"ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0""#;
    load_error(&bad("1", point), &["joint 'j1'", "singular"]);
    let prismatic = bad("1", point).replace("\"revolute\"", "\"prismatic\"");
    assert!(prismatic.contains("prismatic"));
    let model = Model::from_urdf_str(&prismatic, FILE).expect("a point mass on a slider");
    assert_eq!(model.nv(), 1);
}

#[test]
fn unphysical_inertia_is_rejected() {
    let with_inertia = |inertia: &str| {
        robot_of(&[
            link("base"),
            format!(
                r#"<link name="arm"><inertial><mass value="1"/><inertia {inertia}/></inertial></link>"#
            ),
            joint("j1", "revolute", "base", "arm"),
        ])
    };
    // Not semi-definite (a CAD export's antenna): loaded as written with a warning naming
    // the link, as Pinocchio loads it; M(q) is what must be positive definite.
    for not_psd in [
        r#"ixx="0.1" ixy="0" ixz="0" iyy="-0.01" iyz="0" izz="0.1""#,
        // Positive diagonal, indefinite through the off-diagonal terms.
        r#"ixx="0.1" ixy="0.5" ixz="0" iyy="0.1" iyz="0" izz="0.1""#,
    ] {
        let model = Model::from_urdf_str(&with_inertia(not_psd), FILE).expect("loads, warned");
        assert!(
            model
                .warnings()
                .iter()
                .any(|w| w.contains("link 'arm'") && w.contains("not positive semi-definite")),
            "{:?}",
            model.warnings()
        );
    }
    // Unless M(q) is singular: a link whose only inertia about the axis is negative.
    let err = load_error(
        &with_inertia(r#"ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="-0.1""#),
        &["joint 'j1'", "singular"],
    );
    assert!(matches!(err, RobotError::SingularInertia { .. }), "{err:?}");
    // A rod (one zero principal moment) is semi-definite: accepted.
    Model::from_urdf_str(
        &with_inertia(r#"ixx="0" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1""#),
        FILE,
    )
    .expect("a rod along x, turning about z");
    // The triangle inequality violated (CAD exports do it): loaded as written, with a warning
    // naming the link.
    let triangle = r#"ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.3""#;
    let model = Model::from_urdf_str(&with_inertia(triangle), FILE).expect("loaded with a warning");
    assert_eq!(model.warnings().len(), 1, "{:?}", model.warnings());
    assert!(
        model.warnings()[0].contains("link 'arm'")
            && model.warnings()[0].contains("triangle inequality"),
        "{:?}",
        model.warnings()
    );
}

#[test]
fn unknown_and_unsupported_joint_types_are_rejected() {
    let xml = robot_of(&[
        link("base"),
        link("arm"),
        joint("ball_joint", "ball", "base", "arm"),
    ]);
    let err = load_error(&xml, &["joint 'ball_joint'", "unknown type 'ball'"]);
    assert!(
        matches!(err, RobotError::UnknownJointType { .. }),
        "{err:?}"
    );
    for kind in ["floating", "planar", "spherical"] {
        let xml = robot_of(&[
            link("base"),
            link("arm"),
            joint("free", kind, "base", "arm"),
        ]);
        let err = load_error(&xml, &["joint 'free'", kind, "not supported"]);
        assert!(
            matches!(err, RobotError::UnsupportedJoint { .. }),
            "{err:?}"
        );
    }
}

#[test]
fn bad_numbers_and_axes_are_rejected() {
    let xml = good_two_link().replace(r#"<axis xyz="0 0 1"/>"#, r#"<axis xyz="0 0 0"/>"#);
    let err = load_error(&xml, &["joint 'j1'", "<axis", "zero length"]);
    assert!(matches!(err, RobotError::ZeroAxis { .. }), "{err:?}");
    let xml = good_two_link().replace(
        r#"<origin xyz="0 0 0.2" rpy="0 0 0"/>"#,
        r#"<origin xyz="0 nan 0.2" rpy="0 0 0"/>"#,
    );
    let err = load_error(&xml, &["joint 'j1' <origin>", "xyz", "not finite"]);
    assert!(matches!(err, RobotError::NonFinite { .. }), "{err:?}");
    let xml = good_two_link().replacen(r#"<mass value="1"/>"#, r#"<mass value="one"/>"#, 2);
    load_error(
        &xml,
        &["link 'base' <inertial><mass>", "\"one\"", "not a number"],
    );
    let xml = good_two_link().replace(r#"<axis xyz="0 0 1"/>"#, r#"<axis xyz="0 1"/>"#);
    load_error(&xml, &["joint 'j1' <axis>", "three numbers"]);
    let xml = good_two_link().replacen(r#"izz="0.01""#, "", 2);
    load_error(&xml, &["link 'base' <inertial><inertia>", "izz"]);
}

#[test]
fn unreadable_files_name_the_path() {
    let err = Model::from_urdf_file("/nonexistent/robot.urdf").expect_err("no such file");
    assert!(matches!(err, RobotError::Io { .. }));
    assert!(err.to_string().contains("/nonexistent/robot.urdf"), "{err}");
}

fn fixture_panda() -> Model {
    Model::from_urdf_file(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/fixtures/dynamics/panda.urdf"
    ))
    .expect("panda loads")
}

/// Expects a size error naming `argument`, with expected and found counts.
fn assert_size_error<T: std::fmt::Debug>(
    result: Result<T, RobotError>,
    argument: &str,
    expected: usize,
    found: usize,
) {
    match result {
        Err(RobotError::SizeMismatch {
            argument: a,
            expected: e,
            found: f,
            file,
        }) => {
            assert!(a.starts_with(argument), "{a} vs {argument}");
            assert_eq!((e, f), (expected, found));
            assert!(file.ends_with("panda.urdf"), "{file}");
        }
        other => panic!("expected a size error for {argument}, got {other:?}"),
    }
}

#[test]
fn wrong_slice_lengths_are_errors_not_panics() {
    let model = fixture_panda();
    let n = model.nv();
    let mut data = Data::new(&model);
    let ok = vec![0.1; n];
    let short = vec![0.1; n - 1];
    let long = vec![0.1; n + 2];
    assert_size_error(rnea(&model, &mut data, &short, &ok, &ok), "q", n, n - 1);
    assert_size_error(rnea(&model, &mut data, &ok, &long, &ok), "v", n, n + 2);
    assert_size_error(rnea(&model, &mut data, &ok, &ok, &[]), "a", n, 0);
    assert_size_error(crba(&model, &mut data, &long), "q", n, n + 2);
    assert_size_error(gravity(&model, &mut data, &short), "q", n, n - 1);
    assert_size_error(
        nonlinear_effects(&model, &mut data, &ok, &short),
        "v",
        n,
        n - 1,
    );
    assert_size_error(aba(&model, &mut data, &ok, &ok, &short), "tau", n, n - 1);
    assert_size_error(aba(&model, &mut data, &short, &ok, &ok), "q", n, n - 1);
    assert_size_error(forward_kinematics(&model, &mut data, &short), "q", n, n - 1);
    assert_size_error(
        regressor(&model, &mut data, 0, &ok, &ok, &long),
        "a",
        n,
        n + 2,
    );
    let message = rnea(&model, &mut data, &short, &ok, &ok)
        .expect_err("short q")
        .to_string();
    assert!(
        message.contains("q: expected 9 entries, found 8") && message.contains("panda.urdf"),
        "{message}"
    );

    // A Data made for another model.
    let other = Model::from_urdf_str(&good_two_link(), FILE).expect("valid");
    let mut wrong_data = Data::new(&other);
    assert_size_error(crba(&model, &mut wrong_data, &ok), "data", n, 1);
    assert_size_error(
        world_from_link(&model, &wrong_data, "panda_hand"),
        "data",
        n,
        1,
    );
    // A public buffer replaced by one of another size.
    data.tau = nalgebra::DVector::zeros(3);
    assert_size_error(rnea(&model, &mut data, &ok, &ok, &ok), "data", n, 3);
    let mut data = Data::new(&model);
    // Body index out of range.
    let err = regressor(&model, &mut data, n, &ok, &ok, &ok).expect_err("no such body");
    assert!(matches!(err, RobotError::BodyOutOfRange { .. }), "{err:?}");
    assert!(err.to_string().contains("body index 9"), "{err}");
    // Everything still works afterwards.
    rnea(&model, &mut data, &ok, &ok, &ok).expect("valid call");
}

#[test]
fn bad_builder_arguments_are_errors() {
    let model = fixture_panda();
    let n = model.nv();
    assert_size_error(model.with_armature(&vec![0.1; n - 1]), "armature", n, n - 1);
    let mut armature = vec![0.1; n];
    armature[3] = -0.2;
    let message = model
        .with_armature(&armature)
        .expect_err("negative")
        .to_string();
    assert!(
        message.contains("armature[3]") && message.contains("panda_joint4"),
        "{message}"
    );
    armature[3] = f64::NAN;
    assert!(model.with_armature(&armature).is_err());

    let i = Matrix3::from_diagonal_element(1e-3);
    let err = model
        .with_added_inertia("no_such_link", 1.0, Vector3::zeros(), i)
        .expect_err("unknown link");
    assert!(
        matches!(err, RobotError::UnknownLink { .. }) && err.to_string().contains("no_such_link"),
        "{err}"
    );
    for mass in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        let message = model
            .with_added_inertia("panda_hand", mass, Vector3::zeros(), i)
            .expect_err("bad mass")
            .to_string();
        assert!(
            message.contains("payload on link 'panda_hand'"),
            "{message}"
        );
    }
    let not_psd = Matrix3::from_diagonal(&Vector3::new(1e-3, -1e-3, 1e-3));
    let message = model
        .with_added_inertia("panda_hand", 1.0, Vector3::zeros(), not_psd)
        .expect_err("not PSD")
        .to_string();
    assert!(
        message.contains("payload on link 'panda_hand'") && message.contains("semi-definite"),
        "{message}"
    );
    let mut asymmetric = i;
    asymmetric[(0, 1)] = 1e-4;
    assert!(
        model
            .with_added_inertia("panda_hand", 1.0, Vector3::zeros(), asymmetric)
            .is_err()
    );
    assert!(
        model
            .with_added_inertia("panda_hand", 1.0, Vector3::new(f64::NAN, 0.0, 0.0), i)
            .is_err()
    );

    let mut model = model;
    assert!(
        model
            .set_gravity(Vector3::new(0.0, f64::INFINITY, 0.0))
            .is_err()
    );
    let data = Data::new(&model);
    let err = world_from_link(&model, &data, "panda_foot").expect_err("unknown link");
    assert!(err.to_string().contains("panda_foot"), "{err}");
}

/// A locked joint's limits are never checked (it is not a joint of the model), so bad ones
/// must not panic when its lock position is taken from them: NaN or lower > upper.
#[test]
fn a_locked_joint_with_unusable_limits_loads_without_panicking() {
    use gpn_dynamics::JointSelection;
    for limit in [
        r#"<limit lower="nan" upper="1" effort="10" velocity="1"/>"#,
        r#"<limit lower="2" upper="1" effort="10" velocity="1"/>"#,
    ] {
        let xml = robot_of(&[
            link("base"),
            link("arm"),
            link("hand"),
            joint("j1", "revolute", "base", "arm"),
            urdf::joint("j2", "revolute", "arm", "hand", "1 0 0", limit),
        ]);
        let keep_j1 = JointSelection {
            controlled: vec!["j1".into()],
            locked_at: Vec::new(),
        };
        let model = Model::from_urdf_str_selected(&xml, FILE, &[], &keep_j1).expect(limit);
        assert_eq!(model.joint_names(), ["j1"]);
    }
}
