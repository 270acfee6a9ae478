//! `gp-node sim --rrd FILE` writes a recording that the rerun SDK's own reader (PyPI
//! `rerun-sdk`, the version of the crate, run from `$GPN_PYTHON` by `viz_read_rrd.py`) reads
//! back with every entity of the `viz` module doc and plausible row counts.
//!
//! Without `$GPN_PYTHON` the test says so and passes, except in CI (`CI=true`), where it
//! fails: `.ci/run` creates the venv from `ci/requirements.txt` and exports the variable.
#![cfg(feature = "rerun")]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

mod viz_support;

use viz_support::{check_layout, read_back};

const DURATION_SECS: f64 = 4.0;
const RATE_HZ: f64 = 1000.0;

fn gp_node_sim(args: &[&str], path_env: Option<&str>) -> std::process::Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gp-node"));
    cmd.arg("sim").args(args);
    if let Some(path) = path_env {
        cmd.env("PATH", path);
    }
    cmd.output().expect("run gp-node")
}

fn number_before(text: &str, marker: &str) -> u64 {
    let line = text
        .lines()
        .find(|l| l.starts_with("viz: ") && l.contains(marker))
        .unwrap_or_else(|| panic!("no 'viz: … {marker}' line in:\n{text}"));
    line["viz: ".len()..]
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {line:?}"))
}

/// Runs `gp-node sim --json --rrd DIR/run.rrd ARGS` in a fresh directory `name` of the
/// test tmp dir; returns the file, the stderr and the JSON report.
fn record(name: &str, args: &[&str]) -> (PathBuf, String, Value) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let rrd = dir.join("run.rrd");
    let _ = std::fs::remove_file(&rrd);
    let mut all = vec!["--json", "--rrd", rrd.to_str().expect("utf-8 path")];
    all.extend_from_slice(args);
    let out = gp_node_sim(&all, None);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "gp-node sim failed:\n{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).expect("sim JSON");
    (rrd, stderr, report)
}

/// The report's joint names.
fn joint_names(report: &Value) -> Vec<String> {
    report["joints"]
        .as_array()
        .expect("joints")
        .iter()
        .map(|j| j.as_str().expect("name").to_owned())
        .collect()
}

#[test]
fn the_rrd_of_a_run_reads_back_with_every_entity() {
    let Some(python) = gpn_test_support::python("viz_rrd") else {
        return;
    };
    let (rrd, stderr, report) = record(
        "viz_rrd",
        &["--learned-only", "--duration", &DURATION_SECS.to_string()],
    );
    assert!(
        stderr.contains(&format!("open it with: rerun {}", rrd.display())),
        "{stderr}"
    );
    let dropped = number_before(&stderr, "frames dropped");

    let summary = read_back(&python, &rrd);
    assert_eq!(
        summary["version"],
        gp_node::viz::RERUN_VERSION,
        "rerun-sdk pin"
    );
    assert_eq!(summary["application_ids"][0], "gp-node");
    let entities = summary["entities"].as_object().expect("entities");
    let entity = |path: &str| -> &Value {
        entities.get(path).unwrap_or_else(|| {
            let mut known: Vec<_> = entities.keys().collect();
            known.sort();
            panic!("no entity {path}; the file has {known:#?}")
        })
    };
    let rows = |path: &str| entity(path)["rows"].as_u64().expect("rows");
    let has = |path: &str, component: &str| {
        entity(path)["components"]
            .as_array()
            .expect("components")
            .iter()
            .any(|c| c == component)
    };

    let ticks = (DURATION_SECS * RATE_HZ).round() as u64;
    let logged = ticks - dropped;
    assert!(
        logged >= ticks / 2,
        "{dropped} of {ticks} ticks dropped: the logger cannot keep up"
    );
    let poses = (DURATION_SECS * gp_node::viz::POSE_RATE_HZ).round() as u64;

    let joints = joint_names(&report);
    assert_eq!(joints.len(), 7);
    for joint in &joints {
        let j = |rest: &str| format!("/joints/{joint}/{rest}");
        // Logged every tick, always finite.
        for rest in [
            "position/q",
            "position/q_d",
            "tracking_error",
            "torque/applied",
            "torque/rbd",
            "residual/true",
            "residual/predicted",
            "sigma",
        ] {
            let path = j(rest);
            assert_eq!(rows(&path), logged, "{path}");
            assert!(has(&path, "Scalars:scalars"), "{path}");
            assert!(has(&path, "SeriesLines:names"), "{path}");
            let e = entity(&path);
            assert_eq!(
                e["timelines"],
                serde_json::json!(["sim_time", "tick"]),
                "{path}"
            );
            let span = &e["time_secs"];
            assert!(span[0].as_f64().expect("t0") < 0.1, "{path}: {span}");
            assert!(
                span[1].as_f64().expect("t1") > DURATION_SECS - 0.1,
                "{path}: {span}"
            );
        }
        // The learner's measured residual, at the ticks that formed a learning sample.
        let measured = j("residual/measured");
        assert!(
            (logged / 2..=logged).contains(&rows(&measured)),
            "{measured}: {} rows of {logged}",
            rows(&measured)
        );
        // The ±η_cal band exists once calibration ends (half-way through the run).
        let (upper, lower) = (j("residual/upper"), j("residual/lower"));
        assert!(rows(&upper) > 0, "{upper}: no band");
        assert!(rows(&upper) <= logged, "{upper}");
        assert_eq!(rows(&upper), rows(&lower));
        let q = &entity(&j("position/q"))["scalars"];
        assert!(q["min"].as_f64().expect("min") > -3.1 && q["max"].as_f64().expect("max") < 3.8);
        let err = &entity(&j("tracking_error"))["scalars"];
        assert!(
            err["max"].as_f64().expect("max").abs() < 0.5,
            "{joint}: {err}"
        );
    }

    assert_eq!(rows("/tick/latency_us"), logged);
    let latency = &entity("/tick/latency_us")["scalars"];
    assert!(latency["min"].as_f64().expect("min") > 0.0, "{latency}");
    let experts = &entity("/model/experts")["scalars"];
    assert!(rows("/model/experts") > 0);
    assert!(experts["min"].as_f64().expect("min") >= 1.0, "{experts}");
    // Events: the first model going live and the law switching to it, at least.
    assert!(
        rows("/dynamics/events") >= 2,
        "{}",
        entity("/dynamics/events")
    );
    assert!(has("/dynamics/events", "TextLog:text"));

    // The robot: a transform per body at POSE_RATE_HZ, the skeleton, static visuals.
    assert!(has("/robot", "ViewCoordinates:xyz"));
    for i in 1..=7 {
        let body = format!("/robot/links/panda_link{i}");
        assert!(has(&body, "Transform3D:translation"), "{body}");
        assert!(has(&body, "Transform3D:mat3x3"), "{body}");
        // A pose per 1/POSE_RATE_HZ window that kept at least one tick.
        let expected = if dropped == 0 { poses - 2 } else { poses / 2 };
        assert!(
            (expected..=poses + 2).contains(&rows(&body)),
            "{body}: {} poses, {dropped} ticks dropped",
            rows(&body)
        );
        let visual = format!("{body}/panda_link{i}_0");
        assert!(
            entity(&visual)["static_rows"].as_u64().expect("static") >= 1,
            "{visual}"
        );
        assert!(has(&visual, "Cylinders3D:radii"), "{visual}");
    }
    assert!(has("/robot/skeleton", "LineStrips3D:strips"));
    assert_eq!(rows("/robot/skeleton"), rows("/robot/links/panda_link1"));
    // The payload (the default scenario's, on the tool link): placed once, drawn once (no step).
    let payload: Vec<&String> = entities
        .keys()
        .filter(|p| p.ends_with("/payload"))
        .collect();
    assert_eq!(payload.len(), 1, "{payload:?}");
    assert!(payload[0].starts_with("/robot/links/"), "{payload:?}");
    assert!(has(payload[0], "Ellipsoids3D:half_sizes"), "{payload:?}");
    assert!(has(payload[0], "Transform3D:translation"), "{payload:?}");
    assert_eq!(rows(payload[0]), 1, "{payload:?}");
}

#[test]
fn both_runs_go_to_one_recording_with_the_layout() {
    let Some(python) = gpn_test_support::python("viz_rrd") else {
        return;
    };
    // The payload-step scenario: the payload's mass doubles half-way.
    let (rrd, _, report) = record(
        "viz_rrd_both",
        &["--duration", "4", "--scenario", "payload-step"],
    );
    let joints = joint_names(&report);
    let summary = read_back(&python, &rrd);
    let entities = summary["entities"].as_object().expect("entities");
    let rows = |path: &str| {
        entities
            .get(path)
            .and_then(|e| e["rows"].as_u64())
            .unwrap_or(0)
    };
    // One recording: the nominal run beside the learned one, on the same timelines.
    assert_eq!(summary["application_ids"].as_array().map(Vec::len), Some(1));
    for joint in &joints {
        for rest in ["position/q", "tracking_error", "torque/applied"] {
            let (learned, nominal) = (
                format!("/joints/{joint}/{rest}"),
                format!("/nominal/joints/{joint}/{rest}"),
            );
            assert!(rows(&nominal) > 500, "{nominal}: {} rows", rows(&nominal));
            assert!(rows(&learned) > 500, "{learned}: {} rows", rows(&learned));
            assert_eq!(
                entities[&nominal]["timelines"],
                serde_json::json!(["sim_time", "tick"]),
                "{nominal}"
            );
        }
        // The nominal law has no model: no residual, σ or band under nominal/.
        let prefix = format!("/nominal/joints/{joint}/residual");
        let model_paths = entities.keys().filter(|p| p.starts_with(&prefix)).count();
        assert_eq!(model_paths, 0, "{joint}: nominal residual entities");
    }
    assert!(
        !entities.keys().any(|p| p.starts_with("/nominal/robot")),
        "the 3-D robot shows the learned run only"
    );
    // The payload is drawn at the start and again at the step.
    let payload = entities
        .iter()
        .find(|(p, _)| p.ends_with("/payload"))
        .expect("a payload entity");
    assert_eq!(payload.1["rows"], 2, "{}", payload.0);
    check_layout(&summary["blueprints"], &joints, true, &|path| {
        entities.contains_key(path)
    });
}

#[test]
fn spawn_without_a_viewer_says_how_to_get_one() {
    let out = gp_node_sim(
        &["--learned-only", "--duration", "0.1", "--spawn"],
        Some("/nonexistent"),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("spawn a rerun viewer"), "{stderr}");
    assert!(
        stderr.contains(&format!("rerun-sdk=={}", gp_node::viz::RERUN_VERSION)),
        "{stderr}"
    );
}

#[test]
fn no_viz_writes_no_recording() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("viz_no_viz");
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let default_rrd = dir.join("gp-node-sim.rrd");
    let _ = std::fs::remove_file(&default_rrd);
    let out = Command::new(env!("CARGO_BIN_EXE_gp-node"))
        .current_dir(&dir)
        .args([
            "sim",
            "--learned-only",
            "--json",
            "--duration",
            "0.1",
            "--no-viz",
        ])
        .output()
        .expect("run gp-node");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!default_rrd.exists());
    assert!(!stderr.contains("viz:"), "{stderr}");
}

/// A URDF whose visuals are meshes: an STL beside it (relative path, scaled), an OBJ through
/// `package://` (found in `$AMENT_PREFIX_PATH`), and a Collada file rerun cannot read.
#[test]
fn mesh_visuals_are_drawn_where_rerun_reads_them() {
    let Some(python) = gpn_test_support::python("viz_rrd") else {
        return;
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("viz_meshes");
    let share = dir.join("prefix/share/arm_meshes/meshes");
    std::fs::create_dir_all(dir.join("meshes")).expect("dirs");
    std::fs::create_dir_all(&share).expect("dirs");
    std::fs::write(
        dir.join("meshes/link1.stl"),
        "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\n\
         endloop\nendfacet\nendsolid t\n",
    )
    .expect("stl");
    std::fs::write(
        share.join("link2.obj"),
        "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n",
    )
    .expect("obj");
    let panda =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../urdf/panda.urdf"))
            .expect("panda.urdf");
    let urdf = panda
        .replacen(
            r#"<cylinder radius="0.06" length="0.14"/>"#,
            r#"<mesh filename="meshes/link1.stl" scale="0.1 0.1 0.1"/>"#,
            1,
        )
        .replacen(
            r#"<cylinder radius="0.06" length="0.28"/>"#,
            r#"<mesh filename="package://arm_meshes/meshes/link2.obj"/>"#,
            1,
        )
        .replacen(
            r#"<cylinder radius="0.06" length="0.12"/>"#,
            r#"<mesh filename="package://arm_meshes/meshes/link3.dae"/>"#,
            1,
        );
    assert_eq!(
        urdf.matches("<mesh ").count(),
        3,
        "the Panda's visuals changed"
    );
    let urdf_path = dir.join("arm.urdf");
    std::fs::write(&urdf_path, urdf).expect("urdf");
    let rrd = dir.join("run.rrd");
    let _ = std::fs::remove_file(&rrd);
    let out = Command::new(env!("CARGO_BIN_EXE_gp-node"))
        .env("AMENT_PREFIX_PATH", dir.join("prefix"))
        .args(["sim", "--learned-only", "--duration", "0.2", "--rrd"])
        .arg(&rrd)
        .arg("--urdf")
        .arg(&urdf_path)
        .output()
        .expect("run gp-node");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("viz: 2 mesh visuals drawn, 1 skipped") && stderr.contains("not .dae"),
        "{stderr}"
    );
    let summary = read_back(&python, &rrd);
    let entities = summary["entities"].as_object().expect("entities");
    let assets: Vec<&String> = entities
        .iter()
        .filter(|(_, e)| {
            e["components"]
                .as_array()
                .is_some_and(|c| c.iter().any(|c| c == "Asset3D:blob"))
        })
        .map(|(p, _)| p)
        .collect();
    assert_eq!(assets.len(), 2, "{assets:?}");
    for asset in assets {
        let components = &entities[asset]["components"];
        assert!(
            components
                .as_array()
                .is_some_and(|c| c.iter().any(|c| c == "Asset3D:media_type")),
            "{asset}: {components}"
        );
    }
}
