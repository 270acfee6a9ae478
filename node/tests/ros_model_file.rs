//! `gp-node run --model FILE`: the ROS 2 node starts from a model file that `gp-node learn`
//! wrote from a rosbag2 recording (its plugin loaded and state restored before the loop
//! runs, said in the log and the summary), and a file that is not a model stops the node at
//! start with an error naming `model.file`.
#![cfg(feature = "ros")] // `gp-node run` joins the graph only when built with ROS 2
#![allow(clippy::unwrap_used)] // Tests: a panic is the failure report.

mod bag_support;
mod ros_support;

use std::process::Command;

use bag_support::{learn_model, recordings};
use ros_support::{domain_id, params_file, scratch, start_node, stop_node_with_log};

#[test]
fn the_node_starts_from_a_model_learned_from_a_recording() {
    let Some(bags) = recordings("ros_model_file") else {
        return;
    };
    let dir = scratch("ros_model_file");
    let model = dir.join("arm.gpn");
    learn_model(&bags.join("mcap_effort"), &model);

    // Another plugin configured: the file's plugin and configuration are the run's.
    let params = params_file(&dir, &[("variant: dense", "variant: fast")]);
    let params = params.to_str().unwrap();
    let domain = domain_id(71).to_string();
    let node = start_node(&[
        "--params",
        params,
        "--domain-id",
        &domain,
        "--json",
        "--model",
        model.to_str().unwrap(),
    ]);
    std::thread::sleep(std::time::Duration::from_secs(2));
    let (summary, log) = stop_node_with_log(node);
    assert!(
        log.contains("starting from the model file: skygp") && log.contains("arm.gpn"),
        "{log}"
    );
    assert_eq!(summary["plugin"], "skygp", "{summary}");

    // Not a model file: the node does not start.
    let out = Command::new(env!("CARGO_BIN_EXE_gp-node"))
        .args([
            "run",
            "--params",
            params,
            "--domain-id",
            &domain,
            "--duration",
            "5",
        ])
        .arg("--model")
        .arg(bags.join("written.json"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("model.file:"), "{err}");
}
