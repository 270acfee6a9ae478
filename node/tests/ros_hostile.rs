//! The hostile-input suite: `gp-node run` (the learned law, SkyGP) against an rclpy robot
//! (`ros_hostile_peer.py`, ROS 2 Jazzy on Fast DDS) that feeds it, one case at a time, broken
//! and hostile joint states (lengths, names, NaN/Inf, stamps, an absurd position, 2.6 MB and
//! 22 MB messages, 10 and 20 kHz bursts, silence), references (every refused kind, absurd,
//! 2.6 MB) and model operations (missing and path-like plugin names, the failure doubles of
//! `testing/doubles/`, bad configurations, corrupted and escaping model files). Every case
//! must leave the node ticking (the valid states after it answered), every command finite and
//! within the URDF effort limits, and its refusal counted by reason in `/diagnostics`.
//!
//! The same kinds of states from a Cyclone DDS peer, plus samples the middleware cannot
//! decode, are in `ros_interop.rs`. A plugin that crashes the process (a segfault) is not a
//! case: plugins run in-process and such a plugin ends the node (see the README's plugin
//! section).
#![cfg(feature = "ros")] // `gp-node run` joins the graph only when built with ROS 2

mod model_support;
mod ros_support;

use gpn_test_support::repo_root;
use ros_support::{domain_id, params_file, rclpy_peer, ros_python, scratch, start_node};

/// The failure doubles the peer swaps to, as workspace crates (their libraries go in the
/// node's plugin directory under their crate name).
const DOUBLES: [&str; 7] = [
    "gpn_double_not_a_plugin",
    "gpn_double_wrong_abi",
    "gpn_double_short_table",
    "gpn_double_fails_create",
    "gpn_double_panics_update",
    "gpn_double_returns_nan",
    "gpn_double_slow",
];

/// Valid states after a case (of the peer's 30) that must be answered with a command.
const ANSWERED_AFTER: u64 = 20;

#[test]
fn hostile_inputs_never_stop_the_node_nor_move_the_robot_wrongly() {
    let Some(python) = ros_python("ros_hostile") else {
        return;
    };
    let dir = scratch("ros_hostile");
    let plugins = dir.join("plugins");
    let models = dir.join("models");
    for d in [&plugins, &models] {
        let _ = std::fs::remove_dir_all(d);
        std::fs::create_dir_all(d).expect("scratch directory");
    }
    for double in DOUBLES {
        let library = model_support::cdylib(double);
        let name = library.file_name().expect("a file name").to_owned();
        std::fs::copy(&library, plugins.join(name)).expect("copy a double");
    }
    let model_dir = format!("model_dir: {:?}", models.to_string_lossy());
    let params = params_file(
        &dir,
        &[
            ("model_dir: \"\"", &model_dir),
            // The model in use within 3 s of streaming, so that the swaps have one to replace.
            ("fit_samples: 1000 ", "fit_samples: 300 "),
            // The peer stops streaming only in the silence case (2 s).
            ("watchdog_timeout_s: 0.1", "watchdog_timeout_s: 1.0"),
            // A fresh diagnostics message soon after each case.
            ("diagnostics_period_s: 1.0", "diagnostics_period_s: 0.2"),
        ],
    );
    let domain = domain_id(41).to_string();
    let node = start_node(&[
        "--params",
        params.to_str().expect("utf-8 path"),
        "--domain-id",
        &domain,
        "--plugin-path",
        plugins.to_str().expect("utf-8 path"),
        "--json",
    ]);
    let urdf = repo_root().join("urdf/panda.urdf");
    let peer = rclpy_peer(
        &python,
        "ros_hostile_peer.py",
        &[
            &domain,
            urdf.to_str().expect("utf-8 path"),
            models.to_str().expect("utf-8 path"),
        ],
    )
    .output()
    .expect("run ros_hostile_peer.py");
    let (summary, log) = ros_support::stop_node_with_log(node);
    let r = gpn_test_support::json_output(&peer, "ros_hostile_peer.py");
    assert!(r.get("error").is_none(), "{r}");

    let cases = r["cases"].as_array().expect("cases");
    let mut failures = Vec::new();
    for case in cases {
        let name = case["case"].as_str().expect("case name");
        let counters = case["counters"].as_array().expect("counters");
        eprintln!(
            "{name}: {} commands, largest {:.2} of the limit, {} of 30 answered after; {}; {}",
            case["commands"],
            case["largest_command_fraction"]
                .as_f64()
                .unwrap_or(f64::NAN),
            case["answered_after"],
            counters
                .iter()
                .map(|c| format!("{} {} (wanted {})", c["counter"], c["change"], c["wanted"]))
                .collect::<Vec<_>>()
                .join(", "),
            case["detail"]
        );
        if case["finite"] != true {
            failures.push(format!("{name}: a command was not finite"));
        }
        if case["within_limits"] != true {
            failures.push(format!(
                "{name}: a command beyond the effort limits ({} of the limit)",
                case["largest_command_fraction"]
            ));
        }
        if case["answered_after"].as_u64().unwrap_or(0) < ANSWERED_AFTER {
            failures.push(format!(
                "{name}: only {} of the 30 valid states after it answered",
                case["answered_after"]
            ));
        }
        if case["detail"].get("exception").is_some() {
            failures.push(format!("{name}: {}", case["detail"]["exception"]));
        }
        for c in counters.iter().filter(|c| c["ok"] != true) {
            failures.push(format!(
                "{name}: {} changed by {}, wanted {}",
                c["counter"], c["change"], c["wanted"]
            ));
        }
    }
    assert!(cases.len() >= 45, "{} cases ran", cases.len());
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );

    // The run summary counts the refused operations as /diagnostics did.
    let operations = &summary["refused"]["operations"];
    for (key, n) in [
        ("swap refused: not_found", 1),
        ("swap refused: abi_mismatch", 1),
        ("swap refused: config_json", 2),
        ("load refused: outside_model_dir", 2),
        ("load refused: not_a_model_file", 3),
    ] {
        assert_eq!(operations[key], n, "{key} in {operations}");
    }
    assert!(!log.contains("panicked"), "{log}");
}
