//! ROS-node issue over real DDS: `gp-node run` (ros2-client / RustDDS) against a Cyclone DDS
//! peer (`ros_peer.py`, PyPI `cyclonedds`) playing the robot — valid states in lock-step
//! (round-trip latency), every kind of malformed and hostile input, a burst, an undecodable
//! sample, silence (the watchdog) and recovery; our messages decode with the peer's types.

mod ros_support;

use std::process::Command;

use ros_support::{domain_id, params_file, python, repo_root, scratch, start_node, stop_node};

#[test]
fn a_cyclone_peer_gets_answers_to_valid_states_only_and_the_node_survives_everything() {
    let Some(python) = python("ros_interop") else {
        return;
    };
    let dir = scratch("ros_interop");
    let params = params_file(
        &dir,
        &[("watchdog_timeout_s: 0.1", "watchdog_timeout_s: 1.0")],
    );
    let domain = domain_id(1).to_string();
    let node = start_node(&[
        "--params",
        params.to_str().expect("utf-8 path"),
        "--domain-id",
        &domain,
        "--nominal",
        "--json",
    ]);
    let peer = Command::new(&python)
        .arg(repo_root().join("node/tests/ros_peer.py"))
        .arg(&domain)
        .output()
        .expect("run ros_peer.py");
    let summary = stop_node(node);
    assert!(
        peer.status.success(),
        "ros_peer.py failed:\n{}",
        String::from_utf8_lossy(&peer.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&peer.stdout).unwrap_or_else(|e| {
        panic!(
            "peer output is not JSON ({e}): {}",
            String::from_utf8_lossy(&peer.stdout)
        )
    });
    eprintln!("peer: {r}\nnode: {summary}");
    assert!(r.get("error").is_none(), "{r}");

    assert_eq!(r["lockstep_answered"], 300, "every valid state answered");
    assert_eq!(r["lockstep_commands_finite"], true);
    for (case, answers) in r["hostile_answers"].as_object().expect("hostile") {
        assert_eq!(answers, 0, "{case} was answered");
    }
    assert_eq!(r["older_stamp_answers"], 0);
    assert_eq!(
        r["repeated_stamp_answers"], 1,
        "the last command repeated once"
    );
    assert!(r["burst_answers"].as_u64().expect("burst") >= 1);
    assert_eq!(r["burst_commands_finite"], true);
    assert_eq!(r["undecodable_answers"], 0);
    assert!(
        r["silence_commands"].as_u64().expect("silence") >= 2,
        "safe output repeated while silent"
    );
    assert_eq!(r["silence_commands_finite"], true);
    assert_eq!(
        r["stale_diagnostic_seen"], true,
        "an ERROR on joint states while silent"
    );
    assert_eq!(
        r["resumed_answers"], r["resumed_sent"],
        "commands resume when data returns"
    );
    assert_eq!(r["recovered_diagnostic_seen"], true);
    assert!(r["residuals"].as_u64().expect("residuals") >= 300);
    assert_eq!(
        r["residual_bad"].as_array().map(Vec::len),
        Some(0),
        "{}",
        r["residual_bad"]
    );
    assert_eq!(
        r["diagnostic_names"],
        serde_json::json!([
            "gp_learning_node: control",
            "gp_learning_node: dynamics",
            "gp_learning_node: joint states",
            "gp_learning_node: model"
        ])
    );

    assert!(summary["joint_states_refused"].as_u64().expect("refused") >= 7);
    assert!(summary["out_of_order"].as_u64().expect("ooo") >= 1);
    assert!(summary["repeated"].as_u64().expect("repeated") >= 1);
    assert!(
        summary["joint_states_undecodable"]
            .as_u64()
            .expect("undecodable")
            >= 1
    );
    assert!(summary["watchdog_trips"].as_u64().expect("trips") >= 2);
    eprintln!(
        "loopback latency, joint state in -> command out inside the node: p50 {} us, p99 {} us; \
         peer round trip (publish -> command received): p50 {} us, p99 {} us",
        summary["latency_us"]["p50"],
        summary["latency_us"]["p99"],
        r["roundtrip_us"]["p50"],
        r["roundtrip_us"]["p99"]
    );
}
