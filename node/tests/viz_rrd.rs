//! `gp-node sim --rrd FILE` writes a recording that the rerun SDK's own reader (PyPI
//! `rerun-sdk`, the version of the crate, run from `$GPN_PYTHON` by `viz_read_rrd.py`) reads
//! back with every entity of the `viz` module doc and plausible row counts.
//!
//! Without `$GPN_PYTHON` the test says so and passes, except in CI (`CI=true`), where it
//! fails: `.ci/run` creates the venv from `ci/requirements.txt` and exports the variable.
#![cfg(feature = "rerun")]

use std::path::Path;
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

#[test]
fn the_rrd_of_a_run_reads_back_with_every_entity() {
    let Some(python) = gpn_test_support::python("viz_rrd") else {
        return;
    };
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("viz_rrd");
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let rrd = dir.join("run.rrd");
    let _ = std::fs::remove_file(&rrd);

    let out = gp_node_sim(
        &[
            "--learned-only",
            "--json",
            "--duration",
            &DURATION_SECS.to_string(),
            "--rrd",
            rrd.to_str().expect("utf-8 path"),
        ],
        None,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "gp-node sim failed:\n{stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).expect("sim JSON");
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

    let joints: Vec<String> = report["joints"]
        .as_array()
        .expect("joints")
        .iter()
        .map(|j| j.as_str().expect("name").to_owned())
        .collect();
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

    check_layout(&summary["blueprints"], &joints, &|path| {
        entities.contains_key(path)
    });
}

/// The blueprint sent with the recording: one view per question, every joint, each view's
/// origin an entity the run logged (so no view is empty), and the ±η_cal band in the
/// residual views.
fn check_layout(blueprints: &Value, joints: &[String], logged: &dyn Fn(&str) -> bool) {
    let stores = blueprints.as_array().expect("blueprint stores");
    assert_eq!(stores.len(), 1, "one blueprint per recording: {blueprints}");
    let store = stores[0].as_object().expect("blueprint entities");
    // (class, origin) of every view.
    let views: Vec<(String, String)> = store
        .values()
        .filter_map(|c| {
            let class = c.get("ViewBlueprint:class_identifier")?.as_str()?;
            let origin = c.get("ViewBlueprint:space_origin")?.as_str()?;
            Some((class.to_owned(), origin.trim_start_matches('/').to_owned()))
        })
        .collect();
    let has_view = |class: &str, origin: &str| {
        views
            .iter()
            .any(|(c, o)| c == class && o == origin.trim_start_matches('/'))
    };
    let mut expected = vec![
        ("3D", "robot".to_owned()),
        ("TimeSeries", "dynamics/coverage".to_owned()),
        ("TimeSeries", "tick".to_owned()),
        ("TimeSeries", "model".to_owned()),
        ("TextLog", "dynamics/events".to_owned()),
    ];
    for joint in joints {
        for part in ["position", "residual", "tracking_error"] {
            expected.push(("TimeSeries", format!("joints/{joint}/{part}")));
        }
        // The views' series exist: q with q_d, the residual with μ and both band edges.
        for rest in [
            "position/q",
            "position/q_d",
            "residual/true",
            "residual/predicted",
            "residual/upper",
            "residual/lower",
            "tracking_error",
        ] {
            let path = format!("/joints/{joint}/{rest}");
            assert!(logged(&path), "{path} is in a view but was not logged");
        }
    }
    for (class, origin) in &expected {
        assert!(
            has_view(class, origin),
            "no {class} view of {origin}; views: {views:#?}"
        );
    }
    assert_eq!(views.len(), expected.len(), "views: {views:#?}");
    // Three per-joint tabs, each a grid (rerun's ContainerKind 4) whose views are exactly
    // one quantity's, one per joint.
    let origin_of = |view: &Value| -> String {
        let path = view.as_str().expect("a content path");
        store[path]["ViewBlueprint:space_origin"]
            .as_str()
            .expect("a view's origin")
            .trim_start_matches('/')
            .to_owned()
    };
    let mut grids: Vec<Vec<String>> = store
        .values()
        .filter(|c| c["ContainerBlueprint:container_kind"] == 4)
        .map(|c| {
            let mut origins: Vec<String> = c["ContainerBlueprint:contents"]
                .as_array()
                .expect("a grid's contents")
                .iter()
                .map(origin_of)
                .collect();
            origins.sort();
            origins
        })
        .collect();
    grids.sort();
    let mut want: Vec<Vec<String>> = ["position", "residual", "tracking_error"]
        .iter()
        .map(|part| {
            let mut v: Vec<String> = joints
                .iter()
                .map(|j| format!("joints/{j}/{part}"))
                .collect();
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
