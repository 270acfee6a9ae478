//! What a ROS 2 robot feeds the node, from a real ROS 2 client (`ros_inputs_peer.py`, rclpy on
//! rmw_fastrtps): the robot description from `/robot_description` (a transient-local writer
//! that published before the node started), references from a default (volatile) writer and
//! from a transient-local one (counted once although both of the node's readers get it), and
//! every kind of refused joint state and reference counted per reason in `/diagnostics` and
//! in the `--json` summary; a robot description that does not load refused, the next one
//! taken.
#![cfg(feature = "ros")] // `gp-node run` joins the graph only when built with ROS 2

mod ros_support;

use std::time::{Duration, Instant};

use gpn_test_support::repo_root;
use ros_support::{
    domain_id, params_file_with_urdf, rclpy_peer, ros_python, scratch, start_nominal_node,
};

#[test]
fn description_references_and_refusals_from_an_rclpy_robot() {
    let Some(python) = ros_python("ros_inputs") else {
        return;
    };
    let (r, summary, log) = run_with_description_peer(&python, "ros_inputs", 21, &[]);

    // The description, from the writer's history.
    assert!(
        log.contains("waiting for the robot description on /robot_description"),
        "{log}"
    );
    assert!(
        log.contains("robot description received on /robot_description"),
        "{log}"
    );
    assert_eq!(summary["robot"], "topic robot_description");
    assert_eq!(r["joints"], 7);

    // Joint states: every kind refused exactly as often as sent, in the summary and in
    // /diagnostics.
    let sent = r["sent_states"].as_object().expect("sent states");
    let refused = summary["refused"]["joint_states"]
        .as_object()
        .expect("refusals");
    let diag = &r["statuses"]["joint states"];
    for (reason, n) in refused {
        let want = sent.get(reason).and_then(|v| v.as_u64()).unwrap_or(0);
        assert_eq!(n.as_u64(), Some(want), "joint states refused for {reason}");
        assert_eq!(
            diag[format!("refused: {reason}")],
            want.to_string(),
            "/diagnostics joint states, refused: {reason}"
        );
    }
    assert!(sent.keys().all(|k| refused.contains_key(k)), "{sent:?}");

    // References: the latched one once, the volatile one once, each refused kind once.
    assert_eq!(summary["references_accepted"], 2, "{summary}");
    let refused = summary["refused"]["reference"]
        .as_object()
        .expect("refusals");
    let control = &r["statuses"]["control"];
    for reason in r["sent_references_refused"].as_array().expect("kinds") {
        let reason = reason.as_str().expect("reason");
        assert_eq!(refused[reason], 1, "reference refused for {reason}");
        assert_eq!(
            control[format!("reference refused: {reason}")],
            "1",
            "{control}"
        );
    }
    assert_eq!(refused.len(), 8, "{refused:?}");
    assert_eq!(control["reference trajectories accepted"], "2");
}

/// The peer started with `extra` arguments, the node started once it published its first
/// description; returns the peer's report, the node's summary and log.
fn run_with_description_peer(
    python: &std::path::Path,
    test: &str,
    salt: u32,
    extra: &[&str],
) -> (serde_json::Value, serde_json::Value, String) {
    let dir = scratch(test);
    // robot.urdf empty: the node reads the robot_description topic.
    let params = params_file_with_urdf(&dir, &[], None);
    let domain = domain_id(salt).to_string();
    let urdf = repo_root().join("urdf/panda.urdf");
    let ready = dir.join("description_published");
    let _ = std::fs::remove_file(&ready);
    let mut args = vec![
        domain.as_str(),
        urdf.to_str().expect("utf-8"),
        ready.to_str().expect("utf-8"),
    ];
    args.extend_from_slice(extra);
    let peer = rclpy_peer(python, "ros_inputs_peer.py", &args)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("start ros_inputs_peer.py");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ready.exists() {
        assert!(
            Instant::now() < deadline,
            "the peer never published the description"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let node = start_nominal_node(&params, &domain, &[]);
    let out = peer.wait_with_output().expect("peer output");
    let (summary, log) = ros_support::stop_node_with_log(node);
    let r = gpn_test_support::json_output(&out, "ros_inputs_peer.py");
    eprintln!("peer: {r}\nnode: {summary}");
    assert!(r.get("error").is_none(), "{r}");
    (r, summary, log)
}

#[test]
fn a_description_that_does_not_load_is_refused_and_the_next_one_taken() {
    let Some(python) = ros_python("ros_inputs") else {
        return;
    };
    let (r, summary, log) =
        run_with_description_peer(&python, "ros_inputs_bad_description", 22, &["bad-first"]);
    let refused = log
        .find("refused the robot description on /robot_description")
        .unwrap_or_else(|| panic!("the bad description was not refused:\n{log}"));
    let received = log
        .find("robot description received on /robot_description")
        .unwrap_or_else(|| panic!("the good description was not taken:\n{log}"));
    assert!(refused < received, "{log}");
    assert_eq!(summary["robot"], "topic robot_description");
    assert_eq!(r["joints"], 7);
}
