//! Operations issue, over DDS during a MuJoCo run: an rclpy peer (`ros_ops_peer.py`, ROS 2
//! Jazzy on Fast DDS) gets and sets parameters (valid and refused sets), swaps SkyGP-Fast →
//! SkyGP-Dense → back through the node's services, saves and loads the model by name
//! inside `ros.model_dir` (an absolute path and `..` are refused), announces a change and
//! reads the probing trajectory the node offers — while the MuJoCo driver (Cyclone DDS) runs
//! the robot in lock-step; everything takes effect and the run completes.
#![cfg(feature = "ros")] // `gp-node run` joins the graph only when built with ROS 2

mod ros_support;

use std::process::Stdio;

use ros_support::{
    domain_id, driver_result, mujoco_driver, params_file, python, rclpy_peer, ros_python, scratch,
    start_node, stop_node_with_log,
};

#[test]
fn parameters_swaps_save_and_load_from_an_rclpy_peer_during_a_mujoco_run() {
    let (Some(python), Some(ros_python)) = (python("ros_ops"), ros_python("ros_ops")) else {
        return;
    };
    let dir = scratch("ros_ops");
    // The node creates the model directory on the first save.
    let models = dir.join("models");
    let _ = std::fs::remove_dir_all(&models);
    let model_dir = format!("model_dir: {:?}", models.to_string_lossy());
    let params = params_file(
        &dir,
        &[
            ("model_dir: \"\"", &model_dir),
            ("variant: dense", "variant: fast"),
            ("watchdog_timeout_s: 0.1", "watchdog_timeout_s: 0.5"),
            (
                "enabled: false             # off: on a robot",
                "enabled: true             # on: the test reads the offer",
            ),
            // The probe is checked against the model just rebuilt without the older samples
            // (large σ): with the robot's defaults, when the change comes decides whether a
            // plan passes (9.6 N·m needed against 9.6 allowed was seen). This test is about
            // the offer reaching a peer, so the check is the URDF limit on |τ_nom + μ| (β = 0).
            ("effort_fraction: 0.8", "effort_fraction: 1.0"),
            (
                "beta: 3.0                  # β of the pessimistic",
                "beta: 0.0                  # β of the pessimistic",
            ),
            // Only the announced change may start a rebuild, so that exactly one probe
            // outcome follows it: a CUSUM alarm on the MuJoCo run (a loaded CI machine saw
            // one) would add a second.
            ("detect: true ", "detect: false"),
        ],
    );
    let params = params.to_str().expect("utf-8 path");
    let domain = domain_id(4).to_string();
    let node = start_node(&["--params", params, "--domain-id", &domain, "--json"]);
    let result_path = dir.join("result.json");
    let driver = mujoco_driver(&python, params, &domain, "30", &result_path)
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the MuJoCo driver");
    let escaped = dir.join("escaped.gpnmodel");
    let _ = std::fs::remove_file(&escaped);
    let peer = rclpy_peer(
        &ros_python,
        "ros_ops_peer.py",
        &[&domain, models.to_str().expect("utf-8 path")],
    )
    .output()
    .expect("run ros_ops_peer.py");
    let driver = driver.wait_with_output().expect("driver");
    let (summary, log) = stop_node_with_log(node);
    let r = gpn_test_support::json_output(&peer, "ros_ops_peer.py");
    eprintln!(
        "peer: {}",
        serde_json::to_string_pretty(&r).unwrap_or_default()
    );
    eprintln!("node: {summary}");
    let result = driver_result(&result_path, &driver.stderr);
    eprintln!("driver: {result}");
    assert_eq!(result["completed"], true, "the MuJoCo run completed");
    assert_eq!(r["services_discovered"], true);
    assert_eq!(r["model_in_use"], "skygp");

    let steps = r["steps"].as_array().expect("steps");
    let step = |name: &str| -> &serde_json::Value {
        steps
            .iter()
            .find(|s| s["step"] == name)
            .unwrap_or_else(|| panic!("no step {name}"))
    };
    assert_eq!(
        step("get")["values"]["control.kp_per_s2"],
        derived_kp(),
        "the gains the node derived from the robot"
    );
    assert_eq!(step("get")["values"]["model.plugin"], "skygp");
    assert_eq!(
        step("set kd 22")["successful"],
        true,
        "{}",
        step("set kd 22")
    );
    for refused in [
        "set kp -5 (refused)",
        "set joint_states topic (refused, read-only)",
        "set plugin to a missing one (refused)",
    ] {
        let s = step(refused);
        assert_eq!(s["successful"], false, "{s}");
        assert!(
            !s["reason"].as_str().unwrap_or("").is_empty(),
            "{s} gives a reason"
        );
    }
    assert!(
        step("set kp -5 (refused)")["reason"]
            .as_str()
            .unwrap_or("")
            .contains("> 0")
    );
    assert!(
        step("set joint_states topic (refused, read-only)")["reason"]
            .as_str()
            .unwrap_or("")
            .contains("read-only")
    );
    for swap in ["swap to skygp dense", "swap to skygp fast"] {
        assert_eq!(step(swap)["success"], true, "{}", step(swap));
        assert!(
            step(swap)["message"]
                .as_str()
                .unwrap_or("")
                .contains("adopted")
        );
    }
    assert_eq!(step("swap to a missing plugin (refused)")["success"], false);
    // A plugin is a name on the search path, never a path from the network.
    let s = step("swap to a plugin path (refused)");
    assert_eq!(s["success"], false, "{s}");
    assert!(
        s["message"]
            .as_str()
            .unwrap_or("")
            .contains("not by path, and only in the plugin directories"),
        "{s}"
    );
    assert_eq!(step("save")["success"], true, "{}", step("save"));
    assert_eq!(step("save")["exists"], true);
    assert_eq!(step("load")["success"], true, "{}", step("load"));
    assert_eq!(step("load a missing file (refused)")["success"], false);
    assert!(
        models.join("model.gpnmodel").is_file(),
        "saved inside the model directory"
    );
    // A path from the network is confined to ros.model_dir: an absolute path (even to the
    // file just saved) and `..` are refused, naming the directory; nothing is written outside.
    for (refused, why) in [
        (
            "load an absolute path (refused)",
            "absolute paths are not allowed",
        ),
        ("save to .. (refused)", "\"..\" is not allowed"),
    ] {
        let s = step(refused);
        assert_eq!(s["success"], false, "{s}");
        let message = s["message"].as_str().unwrap_or("");
        assert!(
            message.contains(why)
                && message.contains(&*models.to_string_lossy())
                && message.contains("ros.model_dir"),
            "{s}"
        );
    }
    assert!(
        !escaped.exists(),
        "nothing written outside the model directory"
    );
    let after = &step("get after")["values"];
    assert_eq!(
        after["control.kd_per_s"],
        serde_json::json!([22.0]),
        "the set took effect"
    );
    assert_eq!(
        after["control.kp_per_s2"],
        derived_kp(),
        "refused sets changed nothing"
    );
    assert!(
        after["model.config"]
            .as_str()
            .unwrap_or("")
            .contains("fast"),
        "{after}"
    );
    assert_eq!(r["model_after"], "skygp");
    assert_eq!(
        step("announce change")["success"],
        true,
        "{}",
        step("announce change")
    );
    assert!(
        summary["models_adopted"].as_u64().expect("adopted") >= 5,
        "fit, 2 swaps, load, the rebuild after the change"
    );
    // The rebuild after the change is followed by exactly one probe outcome; a plan that
    // passes the checks is on ~/probe_offer, whole and in the robot's joint names.
    let offered = summary["probes_offered"].as_u64().expect("probes_offered");
    let refused = summary["probes_refused"].as_u64().expect("probes_refused");
    let probe_lines: Vec<&str> = log.lines().filter(|l| l.contains("probe")).collect();
    assert_eq!((offered, refused), (1, 0), "{summary}\n{probe_lines:#?}");
    // The node's log names the change and the offer.
    assert!(
        log.contains("dynamics changed at t = ")
            && log.contains("announced: older samples dropped"),
        "{log}"
    );
    assert_eq!(
        log.matches("probe offered on ~/probe_offer").count(),
        1,
        "{log}"
    );
    let offer = &r["probe_offer"];
    let joints: Vec<String> = (1..=7).map(|i| format!("panda_joint{i}")).collect();
    assert_eq!(offer["joint_names"], serde_json::json!(joints), "{offer}");
    assert_eq!(offer["points"], 6, "start, 4 stale poses, back: {offer}");
    assert_eq!(offer["returns_to_start"], true);
    assert_eq!(offer["finite"], true);
    let duration = offer["duration_s"].as_f64().expect("duration");
    assert!(
        (duration - 7.5).abs() < 1e-6,
        "5 segments of 1.5 s: {duration}"
    );
}

/// K_p as the node derives it for the built-in Panda (what `gp-node sim --print-params` shows).
fn derived_kp() -> serde_json::Value {
    let params = gp_node::app::resolved_default_params().expect("built-in parameters");
    serde_json::to_value(&params.control.kp_per_s2).expect("JSON")
}
