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

/// The summary `viz_read_rrd.py` prints for `rrd`.
fn read_back(python: &Path, rrd: &Path) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/viz_read_rrd.py");
    gpn_test_support::json_stdout(
        Command::new(python).arg(&script).arg(rrd),
        "viz_read_rrd.py",
    )
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
            let span = &e["sim_time_secs"];
            assert!(span[0].as_f64().expect("t0") < 0.1, "{path}: {span}");
            assert!(
                span[1].as_f64().expect("t1") > DURATION_SECS - 0.1,
                "{path}: {span}"
            );
        }
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
        &["--duration", "1", "--scenario", "payload-step"],
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
    check_layout(&summary["blueprints"], &joints, &|path| {
        entities.contains_key(path)
    });
}

/// The blueprint sent with the recording: one view per question, every joint, each view
/// showing entities the run logged (so no view is empty), the ±η_cal band in the residual
/// views, and the nominal run overlaid where it has the quantity.
fn check_layout(blueprints: &Value, joints: &[String], logged: &dyn Fn(&str) -> bool) {
    let stores = blueprints.as_array().expect("blueprint stores");
    assert_eq!(stores.len(), 1, "one blueprint per recording: {blueprints}");
    let store = stores[0].as_object().expect("blueprint entities");
    let queries_of = |view: &str| -> Vec<String> {
        store
            .get(&format!("{view}/ViewContents"))
            .and_then(|c| c.get("ViewContents:query"))
            .map(|q| match q {
                Value::Array(items) => items
                    .iter()
                    .map(|i| i.as_str().expect("a query").to_owned())
                    .collect(),
                Value::String(one) => vec![one.clone()],
                _ => panic!("{view}: queries {q}"),
            })
            .unwrap_or_default()
    };
    // (class, origin, queries) of every view, by its blueprint path.
    let views: std::collections::BTreeMap<String, (String, String, Vec<String>)> = store
        .iter()
        .filter_map(|(path, c)| {
            let class = c.get("ViewBlueprint:class_identifier")?.as_str()?;
            let origin = c.get("ViewBlueprint:space_origin")?.as_str()?;
            Some((
                path.clone(),
                (class.to_owned(), origin.to_owned(), queries_of(path)),
            ))
        })
        .collect();
    let has_view = |class: &str, origin: &str, queries: &[String]| {
        views
            .values()
            .any(|(c, o, q)| c == class && o == origin && q.as_slice() == queries)
    };
    // The overview's views show their origin's subtree (rerun's default query).
    let subtree = || vec!["$origin/**".to_owned()];
    let mut expected: Vec<(&str, &str, Vec<String>)> = vec![
        ("3D", "/robot", subtree()),
        ("TimeSeries", "/dynamics/coverage", subtree()),
        ("TimeSeries", "/tick", subtree()),
        ("TimeSeries", "/model", subtree()),
        ("TextLog", "/dynamics/events", subtree()),
    ];
    let per_joint = |joint: &str| -> [Vec<String>; 3] {
        [
            vec![
                format!("/joints/{joint}/position/**"),
                format!("/nominal/joints/{joint}/position/q"),
            ],
            vec![format!("/joints/{joint}/residual/**")],
            vec![
                format!("/joints/{joint}/tracking_error"),
                format!("/nominal/joints/{joint}/tracking_error"),
            ],
        ]
    };
    for joint in joints {
        for queries in per_joint(joint) {
            expected.push(("TimeSeries", "/", queries));
        }
        // The views' series exist: q with q_d and the nominal q, the residual with μ and
        // both band edges, both runs' tracking errors.
        for rest in [
            "joints/J/position/q",
            "joints/J/position/q_d",
            "nominal/joints/J/position/q",
            "joints/J/residual/true",
            "joints/J/residual/predicted",
            "joints/J/residual/upper",
            "joints/J/residual/lower",
            "joints/J/tracking_error",
            "nominal/joints/J/tracking_error",
        ] {
            let path = format!("/{}", rest.replace('J', joint));
            assert!(logged(&path), "{path} is in a view but was not logged");
        }
    }
    for (class, origin, queries) in &expected {
        assert!(
            has_view(class, origin, queries),
            "no {class} view of {origin} {queries:?}; views: {views:#?}"
        );
    }
    assert_eq!(views.len(), expected.len(), "views: {views:#?}");
    // Three per-joint tabs, each a grid (rerun's ContainerKind 4) whose views are exactly
    // one quantity's, one per joint.
    let mut grids: Vec<Vec<Vec<String>>> = store
        .values()
        .filter(|c| c["ContainerBlueprint:container_kind"] == 4)
        .map(|c| {
            let mut contents: Vec<Vec<String>> = c["ContainerBlueprint:contents"]
                .as_array()
                .expect("a grid's contents")
                .iter()
                .map(|v| views[v.as_str().expect("a view path")].2.clone())
                .collect();
            contents.sort();
            contents
        })
        .collect();
    grids.sort();
    let mut want: Vec<Vec<Vec<String>>> = (0..3)
        .map(|k| {
            let mut v: Vec<Vec<String>> = joints.iter().map(|j| per_joint(j)[k].clone()).collect();
            v.sort();
            v
        })
        .collect();
    want.sort();
    assert_eq!(grids, want, "per-joint grids");
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
