//! ROS-node issue over real DDS, across two DDS implementations: `gp-node run` (rcl through
//! r2r, on Fast DDS) against a Cyclone DDS peer (`ros_peer.py`, PyPI `cyclonedds`) playing
//! the robot — valid states in lock-step (round-trip latency), every kind of malformed and
//! hostile input, a burst, an undecodable sample (the middleware drops it: never answered),
//! silence (the watchdog) and recovery; our messages decode with the peer's types.
#![cfg(feature = "ros")] // `gp-node run` joins the graph only when built with ROS 2

mod ros_support;

use ros_support::nominal_node_with_peer;

#[test]
fn a_cyclone_peer_gets_answers_to_valid_states_only_and_the_node_survives_everything() {
    let Some((r, summary)) = nominal_node_with_peer(
        "ros_interop",
        1,
        &[("watchdog_timeout_s: 0.1", "watchdog_timeout_s: 1.0")],
        "ros_peer.py",
    ) else {
        return;
    };

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

    for (counter, at_least) in [
        ("joint_states_refused", 7),
        ("out_of_order", 1),
        ("repeated", 1),
        ("watchdog_trips", 2),
    ] {
        let count = summary[counter].as_u64();
        assert!(
            count.is_some_and(|n| n >= at_least),
            "{counter}: {count:?}, expected at least {at_least}"
        );
    }
    eprintln!(
        "loopback latency, joint state in -> command out inside the node: p50 {} us, p99 {} us; \
         peer round trip (publish -> command received): p50 {} us, p99 {} us",
        summary["latency_us"]["p50"],
        summary["latency_us"]["p99"],
        r["roundtrip_us"]["p50"],
        r["roundtrip_us"]["p99"]
    );
}
