//! Issue 24, part 1: `--plugin NAME` starts from that plugin's own defaults. `gp-node sim
//! --plugin X` with no other configuration runs for every shipped plugin (the built-in
//! parameter file's `model.config` is SkyGP's, whose keys the others refuse), the JSON names
//! the configuration the model ran with — the plugin's defaults with the given keys over
//! them, only keys of that plugin — and the configured plugin keeps its own configuration.

use std::process::Command;

use gp_node::app::{self, NodeParams};
use gp_node::plugin_host::{Plugin, SearchPath};

const PLUGINS: [&str; 4] = ["skygp", "rcagp", "vbks", "loggp"];
/// `gp-node sim`'s exit status when the learned run tracked worse (a 1 s run is too short
/// for some plugins to learn anything): the run itself worked.
const LEARNED_WORSE: i32 = 3;

fn sim(plugin: &str) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_gp-node"))
        .args([
            "sim",
            "--plugin",
            plugin,
            "--duration",
            "1",
            "--no-viz",
            "--json",
        ])
        .output()
        .expect("gp-node sim");
    let code = out.status.code();
    assert!(
        code == Some(0) || code == Some(LEARNED_WORSE),
        "sim --plugin {plugin}: {code:?}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON report")
}

#[test]
fn every_shipped_plugin_runs_sim_with_its_own_defaults() {
    for plugin in PLUGINS {
        let report = sim(plugin);
        assert_eq!(report["plugin"], plugin);
        assert_eq!(report["model"]["plugin"], plugin);
        let found = Plugin::find(plugin, &SearchPath::standard(&[] as &[std::path::PathBuf]))
            .expect("shipped plugin");
        let schema = found.config_schema().expect("a configuration schema");
        let config = report["model"]["config"]
            .as_object()
            .expect("config object");
        for (key, value) in config {
            assert!(
                schema.key(key).is_some(),
                "{plugin}: key {key} is not its own"
            );
            if plugin != "skygp" {
                assert_eq!(
                    Some(value),
                    schema.defaults().get(key),
                    "{plugin}: {key} is its default"
                );
            }
        }
        assert_eq!(config.len(), schema.defaults().len().max(config.len()));
    }
}

#[test]
fn the_configured_plugin_keeps_its_configuration() {
    let report = sim("skygp");
    let defaults = NodeParams::from_yaml(app::DEFAULT_PARAMS_YAML).expect("defaults");
    for (key, value) in defaults.model.config.as_object().expect("object") {
        assert_eq!(&report["model"]["config"][key], value, "skygp keeps {key}");
    }
    let mut model = defaults.model.clone();
    assert!(!model.select_plugin("skygp"));
    assert_eq!(model.config, defaults.model.config);
    assert!(model.select_plugin("rcagp"));
    assert_eq!(model.config, serde_json::json!({}));
}

#[test]
fn the_reported_configuration_holds_only_the_keys_of_the_mode_given() {
    // RCaGP's keys of one layout have defaults only in that layout: a run of layout
    // experts must not report the window's block sizes as if they were in effect.
    let found = Plugin::find("rcagp", &SearchPath::standard(&[] as &[std::path::PathBuf]))
        .expect("shipped plugin");
    let schema = found.config_schema().expect("a configuration schema");
    let window = found.effective_config(&serde_json::json!({"layout": "window"}));
    // Experts is the default layout.
    let experts = found.effective_config(&serde_json::json!({}));
    assert_eq!(window["blocks"], 64, "{window}");
    assert_eq!(experts["layout"], "experts", "{experts}");
    for key in &schema.keys {
        let only_window = key
            .when
            .as_ref()
            .is_some_and(|c| c.key == "layout" && c.is == ["window"]);
        if only_window {
            assert!(
                experts.get(&key.name).is_none(),
                "experts reports {}",
                key.name
            );
        }
    }
    assert!(experts.get("blocks").is_none() && experts.get("refit_lr").is_none());
    assert_eq!(experts["epsilon"], window["epsilon"]);
}
