//! The engine against the Pinocchio fixtures (shared `fixtures/dynamics/`): every quantity of
//! every robot agrees within 1e-8·max(1, max|ref|), through the library and through
//! `gp-node dynamics check`; joint matching by name; exit codes 0/1/2.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::{Command, Output};

use gp_node::robot::Model;
use gp_node::robot::RobotError;
use gp_node::robot::fixture_check::{Fixture, check_fixture};
use serde_json::Value;

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../shared/fixtures/dynamics"
);
const ROBOTS: [&str; 3] = ["panda", "ur5", "double_pendulum"];

fn urdf(robot: &str) -> PathBuf {
    PathBuf::from(format!("{FIXTURES}/{robot}.urdf"))
}

fn fixture(robot: &str) -> PathBuf {
    PathBuf::from(format!("{FIXTURES}/{robot}.json"))
}

/// `gp-node dynamics check` of `robot`'s URDF against the fixture at `fixture`.
fn binary_check(robot: &str, fixture: impl AsRef<OsStr>) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gp-node"))
        .args(["dynamics", "check", "--urdf"])
        .arg(urdf(robot))
        .arg("--fixture")
        .arg(fixture)
        .output()
        .expect("run gp-node")
}

/// A modified copy of a fixture, written under the test temp dir.
fn write_fixture(name: &str, json: &Value) -> PathBuf {
    let path =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("robot_fixtures_{name}.json"));
    std::fs::write(&path, serde_json::to_string(json).expect("serialise"))
        .expect("write temp fixture");
    path
}

fn fixture_json(robot: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture(robot)).expect("read fixture"))
        .expect("parse fixture")
}

fn assert_agrees(robot: &str) {
    let model = Model::from_urdf_file(urdf(robot)).expect("load URDF");
    let fixture = Fixture::from_file(fixture(robot)).expect("load fixture");
    let report = check_fixture(&model, &fixture).expect("fixture matches the URDF");
    assert_eq!(report.quantities.len(), 5);
    assert_eq!(report.n_samples, 25);
    for q in &report.quantities {
        eprintln!(
            "{robot} {:<10} max|Δ| {:.3e} tol {:.3e}",
            q.name, q.max_abs_diff, q.tolerance
        );
        assert!(q.passed, "{robot}: {} disagrees: {q:?}", q.name);
    }
    assert!(report.passed());
}

#[test]
fn panda_agrees_with_pinocchio_in_every_quantity() {
    assert_agrees("panda");
}

#[test]
fn ur5_agrees_with_pinocchio_in_every_quantity() {
    assert_agrees("ur5");
}

#[test]
fn double_pendulum_agrees_with_pinocchio_in_every_quantity() {
    assert_agrees("double_pendulum");
}

/// The pinned set of public robots with their Pinocchio 4.1.0 values (testing/robots).
const ROBOT_SET: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../testing/robots");

/// Every robot of the pinned set loads and agrees with Pinocchio (the set, with its
/// zero-inertia and inertial-less links per robot, is described in testing/robots/README.md):
/// at least 8 robots, trees among them, fixed frames merged.
#[test]
fn every_robot_of_the_pinned_set_agrees_with_pinocchio() {
    let mut robots = 0;
    let mut trees = 0;
    let mut with_welded_frames = 0;
    for entry in std::fs::read_dir(ROBOT_SET).expect("testing/robots") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let model = Model::from_urdf_file(path.with_extension("urdf"))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let fixture = Fixture::from_file(&path).expect("fixture");
        let report = check_fixture(&model, &fixture).expect("same joints");
        eprintln!(
            "{:<20} nv {:>2} cond(M) ≤ {:.2e}: {}",
            report.robot,
            report.nv,
            report.cond_m_max,
            report
                .quantities
                .iter()
                .map(|q| format!("{} {:.1e}/{:.1e}", q.name, q.max_abs_diff, q.tolerance))
                .collect::<Vec<_>>()
                .join(", ")
        );
        assert!(report.passed(), "{}: {report:?}", path.display());
        assert!(report.cond_m_max.is_finite() && report.cond_m_max >= 1.0);
        robots += 1;
        if (1..model.nv()).any(|i| {
            (1..model.nv())
                .any(|k| k != i && model.parent(i).is_some() && model.parent(i) == model.parent(k))
        }) {
            trees += 1;
        }
        // Frames welded by fixed joints (sensor frames, flanges, tool points) were merged.
        if model.link_names().len() > model.nv() + 1 {
            with_welded_frames += 1;
        }
    }
    assert!(robots >= 8, "{robots} robots in {ROBOT_SET}");
    assert!(trees >= 2, "{trees} trees");
    assert!(with_welded_frames >= 5, "{with_welded_frames}");
}

/// A CAD export whose finger links violate the triangle inequality loads as Pinocchio does,
/// with one warning per such link naming it.
#[test]
fn unphysical_but_semi_definite_inertias_load_with_a_warning() {
    let model =
        Model::from_urdf_file(format!("{ROBOT_SET}/allegro_right_hand.urdf")).expect("load");
    assert_eq!(model.nv(), 16);
    assert_eq!(model.warnings().len(), 4, "{:?}", model.warnings());
    assert!(
        model
            .warnings()
            .iter()
            .all(|w| w.contains("triangle inequality"))
    );
    let out = Command::new(env!("CARGO_BIN_EXE_gp-node"))
        .args(["dynamics", "check", "--dir", ROBOT_SET])
        .output()
        .expect("run gp-node");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stderr.contains("warning: link 'link_3.0'"), "{stderr}");
    let summary = stdout.split("summary:").nth(1).expect("a summary table");
    assert!(
        summary.lines().filter(|l| l.ends_with("PASS")).count() >= 8,
        "{summary}"
    );
    assert!(summary.contains("cond(M)"), "{summary}");
}

#[test]
fn binary_check_passes_on_every_fixture() {
    for robot in ROBOTS {
        let out = binary_check(robot, fixture(robot));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{robot}: {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for quantity in ["tau_rnea", "M", "gravity", "nonlinear", "ddq_aba"] {
            let line = stdout
                .lines()
                .find(|l| l.split_whitespace().next() == Some(quantity))
                .unwrap_or_else(|| panic!("{robot}: no row for {quantity} in\n{stdout}"));
            assert!(line.contains("PASS"), "{robot}: {line}");
        }
        assert!(stdout.contains("PASS: all 5 quantities agree"), "{stdout}");
    }
}

#[test]
fn reordered_fixture_joints_are_matched_by_name() {
    // Reverse the joint order and every vector and matrix with it.
    let mut json = fixture_json("panda");
    let reverse = |v: &mut Value| {
        if let Value::Array(a) = v {
            a.reverse();
        }
    };
    reverse(&mut json["joints"]);
    for sample in json["samples"].as_array_mut().expect("samples") {
        for key in [
            "q",
            "v",
            "a",
            "tau_rnea",
            "gravity",
            "nonlinear",
            "tau_aba",
            "ddq_aba",
        ] {
            reverse(&mut sample[key]);
        }
        reverse(&mut sample["M"]);
        for row in sample["M"].as_array_mut().expect("M rows") {
            reverse(row);
        }
    }
    let fixture = Fixture::from_json_str(&json.to_string(), "reversed.json").expect("parse");
    let model = Model::from_urdf_file(urdf("panda")).expect("load");
    let report = check_fixture(&model, &fixture).expect("same joints");
    assert!(report.passed(), "{report:?}");

    // A mismatched order without renaming would fail: swap two joints' data only.
    let mut json = fixture_json("panda");
    json["joints"].as_array_mut().expect("joints").swap(0, 1);
    let fixture = Fixture::from_json_str(&json.to_string(), "swapped.json").expect("parse");
    let report = check_fixture(&model, &fixture).expect("same joint set");
    assert!(!report.passed());
}

#[test]
fn mismatched_joint_names_are_an_error_naming_them() {
    let mut json = fixture_json("ur5");
    json["joints"][2] = Value::from("elbow_joint_typo");
    let fixture = Fixture::from_json_str(&json.to_string(), "typo.json").expect("parse");
    let model = Model::from_urdf_file(urdf("ur5")).expect("load");
    let err = check_fixture(&model, &fixture).expect_err("names differ");
    match &err {
        RobotError::FixtureJoints {
            missing_in_urdf,
            missing_in_fixture,
            ..
        } => {
            assert_eq!(missing_in_urdf, &["elbow_joint_typo".to_owned()]);
            assert_eq!(missing_in_fixture, &["elbow_joint".to_owned()]);
        }
        other => panic!("unexpected error {other}"),
    }
    let message = err.to_string();
    assert!(
        message.contains("elbow_joint_typo")
            && message.contains("'elbow_joint'")
            && message.contains("typo.json"),
        "{message}"
    );

    // Through the binary: exit 2 and the names on stderr.
    let path = write_fixture("typo", &json);
    let out = binary_check("ur5", &path);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("elbow_joint_typo") && stderr.contains("'elbow_joint'"),
        "{stderr}"
    );
}

#[test]
fn a_fixture_for_another_robot_is_an_error() {
    let model = Model::from_urdf_file(urdf("double_pendulum")).expect("load");
    let fixture = Fixture::from_file(fixture("ur5")).expect("parse");
    let message = check_fixture(&model, &fixture)
        .expect_err("other robot")
        .to_string();
    assert!(
        message.contains("shoulder_pan_joint") && message.contains("'joint1'"),
        "{message}"
    );
}

#[test]
fn disagreement_exits_1_and_names_the_quantity() {
    let mut json = fixture_json("double_pendulum");
    let tau = &mut json["samples"][7]["tau_rnea"][1];
    *tau = Value::from(tau.as_f64().expect("number") + 1e-3);
    let path = write_fixture("perturbed", &json);
    let out = binary_check("double_pendulum", &path);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("tau_rnea"))
        .expect("tau_rnea row");
    assert!(
        line.contains("FAIL") && line.contains("#7 joint2"),
        "{line}"
    );
    assert!(stdout.contains("FAIL: tau_rnea disagree"), "{stdout}");
    let m_line = stdout.lines().find(|l| l.starts_with("M ")).expect("M row");
    assert!(m_line.contains("PASS"), "{m_line}");
}

/// The error of checking `model` against fixture `json` (read as file `name`), which parses
/// but must not check.
fn malformed_fixture_error(model: &Model, json: &Value, name: &str) -> String {
    let fixture = Fixture::from_json_str(&json.to_string(), name).expect("parse");
    check_fixture(model, &fixture).expect_err(name).to_string()
}

#[test]
fn malformed_fixtures_are_errors_naming_the_element() {
    let model = Model::from_urdf_file(urdf("double_pendulum")).expect("load");
    let mut json = fixture_json("double_pendulum");
    json["samples"][3]["v"] = Value::from(vec![0.0]);
    let message = malformed_fixture_error(&model, &json, "short.json");
    assert!(
        message.contains("samples[3].v")
            && message.contains("expected 2")
            && message.contains("short.json"),
        "{message}"
    );

    let mut json = fixture_json("double_pendulum");
    json["samples"][4]["M"][1] = Value::from(vec![1.0, 2.0, 3.0]);
    let message = malformed_fixture_error(&model, &json, "m.json");
    assert!(message.contains("samples[4].M row 1"), "{message}");

    let message = Fixture::from_json_str("{\"joints\": [", "truncated.json")
        .expect_err("bad JSON")
        .to_string();
    assert!(message.contains("truncated.json"), "{message}");

    // Missing files through the binary: exit 2 with the path.
    let out = binary_check("double_pendulum", "/nonexistent/fixture.json");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/fixture.json"));
}

/// A reduced model (Pinocchio's `buildReducedModel`): Baxter's left arm kept, its other 12
/// movable joints locked at 0 clamped to their limits and merged, against Pinocchio 4.1.0's
/// values of the same reduction (testing/robots/reduced, generate_reduced.py).
#[test]
fn a_reduced_model_agrees_with_pinocchios_reduced_model() {
    use gp_node::robot::JointSelection;
    let fixture =
        Fixture::from_file(format!("{ROBOT_SET}/reduced/baxter_left_arm.json")).expect("fixture");
    let selection = JointSelection {
        controlled: fixture.joints.clone(),
        locked_at: Vec::new(),
    };
    let model = Model::from_urdf_file_selected(format!("{ROBOT_SET}/baxter.urdf"), &[], &selection)
        .expect("the left arm of Baxter");
    assert_eq!(model.nv(), 7);
    let report = check_fixture(&model, &fixture).expect("same joints");
    for q in &report.quantities {
        eprintln!(
            "reduced {:<10} max|Δ| {:.3e} tol {:.3e}",
            q.name, q.max_abs_diff, q.tolerance
        );
    }
    assert!(report.passed(), "{report:?}");
    // The lock position is used: a joint locked beyond the arm (a finger) moved to its upper
    // limit changes the arm's dynamics; one on another branch does not.
    let full = Model::from_urdf_file(format!("{ROBOT_SET}/baxter.urdf")).expect("full");
    let changes: Vec<bool> = full
        .joint_names()
        .iter()
        .filter(|n| !fixture.joints.contains(n))
        .map(|n| {
            let upper = full.limits()[full.joint_index(n).expect("joint")].position_upper;
            let moved = JointSelection {
                controlled: fixture.joints.clone(),
                locked_at: vec![(n.clone(), upper.min(1.0))],
            };
            let other =
                Model::from_urdf_file_selected(format!("{ROBOT_SET}/baxter.urdf"), &[], &moved)
                    .expect("locked elsewhere");
            !check_fixture(&other, &fixture)
                .expect("same joints")
                .passed()
        })
        .collect();
    assert!(
        changes.iter().any(|c| *c) && changes.iter().any(|c| !*c),
        "{changes:?}"
    );
    // Names that are not movable joints, or a lock on a kept joint, are errors naming them.
    for (bad, needle) in [
        (
            JointSelection {
                controlled: vec!["no_such_joint".into()],
                locked_at: Vec::new(),
            },
            "'no_such_joint' is not a movable joint",
        ),
        (
            JointSelection {
                controlled: fixture.joints.clone(),
                locked_at: vec![(fixture.joints[0].clone(), 0.1)],
            },
            "is controlled",
        ),
    ] {
        let message = Model::from_urdf_file_selected(format!("{ROBOT_SET}/baxter.urdf"), &[], &bad)
            .expect_err("refused")
            .to_string();
        assert!(
            message.contains(needle) && message.contains("left_s0"),
            "{message}"
        );
    }
}
