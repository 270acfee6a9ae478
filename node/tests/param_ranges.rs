//! Issue 16: every number from outside is range-checked where it comes in, with the key and
//! the allowed range in the message, and nothing it feeds can panic. Regression tests of the
//! reported values: `ros.watchdog_timeout_s = 1e20` (a parameter set used to panic the
//! operations thread; in a file or as `--duration` the process exited 101),
//! `ros.diagnostics_period_s = 1e20` (killed the publisher thread), `learn.fit_max_points:
//! 1e8` (stalled the first fit 248 s) and `control.epsilon = 1e-300` (a bang-bang law).

use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::AtomicU32;
use std::sync::mpsc::sync_channel;

use gp_node::app;
use gp_node::app::param_ranges;
use gp_node::app::param_schema::ParamValue;
use gp_node::app::{DEFAULT_PARAMS_YAML, NodeParams};
use gp_node::control_loop::{ControlCommand, ControlReply};
use gp_node::plugin_host::SearchPath;
use gp_node::ros::ops::{self, Ops, SharedStatus};

/// The default parameter text with `from` replaced by `to`.
fn yaml_with(from: &str, to: &str) -> String {
    assert!(
        DEFAULT_PARAMS_YAML.contains(from),
        "{from:?} is in the defaults"
    );
    DEFAULT_PARAMS_YAML.replacen(from, to, 1)
}

/// The reported values, as (key, text in the defaults, replacement).
const HOSTILE: &[(&str, &str, &str)] = &[
    (
        "ros.watchdog_timeout_s",
        "watchdog_timeout_s: 0.1",
        "watchdog_timeout_s: 1e20",
    ),
    (
        "ros.diagnostics_period_s",
        "diagnostics_period_s: 1.0",
        "diagnostics_period_s: 1e20",
    ),
    (
        "learn.fit_max_points",
        "fit_max_points: 150",
        "fit_max_points: 100000000",
    ),
    ("control.epsilon", "epsilon: 0.0", "epsilon: 1e-300"),
    ("run.duration_s", "duration_s: 30.0", "duration_s: 1e20"),
    ("sim.rate_hz", "rate_hz: 1000.0", "rate_hz: .nan"),
];

#[test]
fn the_defaults_have_a_range_for_every_number_and_lie_in_it() {
    let params = NodeParams::from_yaml(DEFAULT_PARAMS_YAML).expect("the defaults load");
    let json = serde_json::to_value(&params).expect("json");
    param_ranges::check_json(&json).expect("every number declared and in range");
    // The check can fail: a key nobody declared is reported.
    let mut extra = json.clone();
    extra["learn"]["undeclared_number"] = serde_json::json!(1.0);
    let err = param_ranges::check_json(&extra).expect_err("undeclared");
    assert!(err.contains("learn.undeclared_number"), "{err}");
}

/// The optional parts a scenario switches on (a payload step, a friction drift, glitches)
/// are numbers too: every scenario's parameters pass the check (`--scenario payload-step`
/// was refused for its undeclared `sim.payload.step.at_secs`).
#[test]
fn every_scenario_has_its_numbers_declared() {
    use clap::ValueEnum as _;
    for scenario in gp_node::simulate::Scenario::value_variants() {
        let mut params = NodeParams::from_yaml(DEFAULT_PARAMS_YAML).expect("the defaults load");
        scenario.apply(&mut params);
        params
            .check_ranges()
            .unwrap_or_else(|e| panic!("{}: {e}", scenario.name()));
    }
}

#[test]
fn parameter_files_with_out_of_range_numbers_are_refused_naming_key_and_range() {
    for (key, from, to) in HOSTILE {
        let err = NodeParams::from_yaml(&yaml_with(from, to)).expect_err(key);
        assert!(
            err.contains(key) && err.contains(" must be ") && err.contains(" in "),
            "{key}: the error names the key and the range: {err}"
        );
    }
}

/// Operations over a control loop that is not running (the parameter checks come first).
fn ops() -> (Ops, std::sync::mpsc::Receiver<ControlCommand>) {
    let params = app::resolved_default_params().expect("parameters");
    let robot = app::load_robot(&params).expect("robot");
    let (commands, command_rx) = sync_channel::<ControlCommand>(8);
    let (_replies_tx, replies) = sync_channel::<ControlReply>(8);
    let shared = SharedStatus {
        model_label: Arc::default(),
        residual_every: Arc::new(AtomicU32::new(1)),
        refusals: Arc::default(),
    };
    let ops = Ops::new(
        params,
        robot,
        SearchPath::default(),
        commands,
        replies,
        shared,
    );
    (ops, command_rx)
}

#[test]
fn parameter_sets_out_of_range_are_refused_and_the_operations_go_on() {
    let (mut ops, commands) = ops();
    for (name, value) in [
        ("ros.watchdog_timeout_s", ParamValue::Double(1e20)),
        ("ros.watchdog_timeout_s", ParamValue::Double(f64::INFINITY)),
        ("control.epsilon", ParamValue::Double(1e-300)),
        ("control.supervisor.budget_micros", ParamValue::Double(-1.0)),
        ("learn.admit_every", ParamValue::Integer(i64::MAX)),
    ] {
        let err = ops.set_param(name, &value).expect_err(name);
        assert!(err.contains(name), "{name}: {err}");
        assert!(
            commands.try_recv().is_err(),
            "{name}: nothing reached the loop"
        );
    }
    ops.set_param("ros.watchdog_timeout_s", &ParamValue::Double(0.5))
        .expect("a sensible value after the refused ones");
    assert!(matches!(
        commands.try_recv(),
        Ok(ControlCommand::Watchdog { timeout, .. }) if timeout.as_secs_f64() == 0.5
    ));
    assert_eq!(ops.params().ros.watchdog_timeout_s, 0.5);
}

#[test]
fn a_panicking_handler_answers_with_an_error_and_the_operations_go_on() {
    let (mut ops, _commands) = ops();
    let answer = ops::guarded(&mut ops, "test_handler", |_| panic!("a defect"));
    let err = answer.expect_err("the panic is the call's error");
    assert!(
        err.contains("test_handler") && err.contains("a defect"),
        "{err}"
    );
    ops.set_param("ros.residual_every", &ParamValue::Integer(2))
        .expect("the operations still work");
}

/// The binary: out-of-range numbers from the command line and files end in a clear error
/// (exit 2, never a panic's 101) before anything runs.
#[test]
fn the_command_line_refuses_out_of_range_numbers_without_panicking() {
    let bin = env!("CARGO_BIN_EXE_gp-node");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("param_ranges");
    std::fs::create_dir_all(&dir).expect("scratch");
    let urdf = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../urdf/panda.urdf");
    let mut runs: Vec<(Vec<String>, &str)> = vec![(
        ["sim", "--duration", "1e20", "--no-viz"]
            .map(String::from)
            .to_vec(),
        "run.duration_s",
    )];
    for (key, from, to) in HOSTILE {
        let file = dir.join(format!("{key}.yaml"));
        let text = yaml_with(from, to).replacen(
            "urdf: \"\"",
            &format!("urdf: {:?}", urdf.to_string_lossy()),
            1,
        );
        std::fs::write(&file, text).expect("write");
        let path = file.to_string_lossy().into_owned();
        for job in ["sim", "run"] {
            runs.push((vec![job.into(), "--params".into(), path.clone()], key));
        }
    }
    for (args, key) in runs {
        let out = Command::new(bin).args(&args).output().expect("run gp-node");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(key), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
