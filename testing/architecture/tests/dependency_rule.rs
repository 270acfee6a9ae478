//! The workspace's crate dependencies obey the table of `ARCHITECTURE.md` (issue 18): any
//! edge the table does not allow, or a crate it does not list, fails this test.

use std::process::Command;

use gpn_architecture::{rules, violations, workspace_edges};
use gpn_test_support::{json_stdout, repo_root};
use serde_json::Value;

fn metadata() -> Value {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut metadata = Command::new(cargo);
    metadata
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(repo_root());
    json_stdout(&mut metadata, "cargo metadata")
}

fn table() -> Vec<gpn_architecture::Rule> {
    let text =
        std::fs::read_to_string(repo_root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let rules = rules(&text);
    assert!(rules.len() >= 5, "the crate table was not found: {rules:?}");
    rules
}

#[test]
fn every_workspace_dependency_is_allowed_by_the_crate_table() {
    let edges = workspace_edges(&metadata());
    assert!(
        edges.contains_key("gp_node") && edges.contains_key("gpn_dynamics"),
        "{edges:?}"
    );
    let found = violations(&table(), &edges);
    assert!(
        found.is_empty(),
        "forbidden dependencies:\n{}",
        found.join("\n")
    );
}

/// The test of the test: a deliberately added edge (the dynamics crate on the GP numerics)
/// and a crate missing from the table are both reported.
#[test]
fn a_forbidden_edge_and_an_unlisted_crate_fail_the_rule() {
    let mut edges = workspace_edges(&metadata());
    edges
        .get_mut("gpn_dynamics")
        .expect("the dynamics crate")
        .push("gpn_gp_core".into());
    edges.insert("gpn_unlisted".into(), Vec::new());
    let found = violations(&table(), &edges);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0].starts_with("gpn_dynamics → gpn_gp_core: not allowed"),
        "{found:?}"
    );
    assert!(found[1].starts_with("gpn_unlisted: no row"), "{found:?}");
}
