//! Issue 16 (plugins only from configured directories): `gp-node sim` finds a plugin by name
//! in a `--plugin-path` directory, or in a `model.plugin_path` directory of the parameter
//! file (relative to the file), and nowhere else.

mod model_support;

use std::process::{Command, Output};

/// `gp-node sim` for 1.5 s of the learned run (long enough for the first fit, which creates
/// the model from the plugin).
fn sim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gp-node"))
        .args([
            "sim",
            "--duration",
            "1.5",
            "--learned-only",
            "--no-viz",
            "--json",
        ])
        .args(args)
        .output()
        .expect("run gp-node sim")
}

fn adopted(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert!(
        report["model_adopted_at_s"].is_number(),
        "the plugin's model was adopted: {report}"
    );
    report
}

#[test]
fn sim_finds_a_plugin_in_the_plugin_path_and_nowhere_else() {
    let dir = model_support::scratch_dir("plugin_path_cli");
    let plugins = dir.join("plugins");
    std::fs::create_dir_all(&plugins).expect("plugin dir");
    std::fs::copy(
        model_support::cdylib("gpn_skygp"),
        plugins.join("libelsewhere_skygp.so"),
    )
    .expect("copy the plugin");

    let nowhere = sim(&["--plugin", "elsewhere_skygp"]);
    let stderr = String::from_utf8_lossy(&nowhere.stderr);
    assert_eq!(nowhere.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("not found"), "{stderr}");

    let plugin_dir = plugins.to_string_lossy().into_owned();
    let report = adopted(&sim(&[
        "--plugin",
        "elsewhere_skygp",
        "--plugin-path",
        &plugin_dir,
    ]));
    assert_eq!(report["plugin"], "elsewhere_skygp");

    let params = dir.join("params.yaml");
    let text = gp_node::app::DEFAULT_PARAMS_YAML
        .replacen("plugin_path: []", "plugin_path: [plugins]", 1)
        .replacen("plugin: skygp", "plugin: elsewhere_skygp", 1);
    assert!(text.contains("plugin_path: [plugins]"));
    std::fs::write(&params, text).expect("write params");
    adopted(&sim(&["--params", &params.to_string_lossy()]));
}
