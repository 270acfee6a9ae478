//! Issue 18 item 5: a plugin declares its configuration schema through the ABI, and the
//! host, the parameter check and the documentation read it from there. These tests load
//! the real plugin libraries.

mod model_support;

use std::process::Command;

use gp_node::plugin_host::{Plugin, config_page};

const PLUGINS: [&str; 4] = ["skygp", "rcagp", "vbks", "loggp"];

fn open(name: &str) -> Plugin {
    Plugin::open(model_support::cdylib(&format!("gpn_{name}"))).expect("the plugin loads")
}

#[test]
fn each_plugins_page_in_docs_is_printed_from_its_schema() {
    let docs = gpn_test_support::repo_root().join("docs/plugins");
    for name in PLUGINS {
        let page = config_page(&open(name)).expect("the plugin declares a schema");
        let path = docs.join(format!("{name}.md"));
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == page,
            "{} is not what the plugin declares; regenerate it with \
             `cargo run --bin gp-node -- plugins {name} --markdown > docs/plugins/{name}.md`",
            path.display()
        );
    }
}

#[test]
fn a_mistyped_key_is_refused_before_anything_is_created() {
    let skygp = open("skygp");
    let err = skygp
        .create_json(&serde_json::json!({"n_barr": 8}), 2, 1)
        .expect_err("unknown key")
        .to_string();
    assert!(
        err.contains("skygp has no configuration key 'n_barr'; did you mean 'n_bar'?"),
        "{err}"
    );
    let err = skygp
        .check_config(&serde_json::json!({"variant": "sparse"}))
        .expect_err("not a variant")
        .to_string();
    assert!(err.contains("expected one of fast, dense"), "{err}");
    // Keys of another plugin are not carried over: RCaGP does not know SkyGP's.
    let err = open("rcagp")
        .check_config(&serde_json::json!({"n_cal": 4}))
        .expect_err("a SkyGP key")
        .to_string();
    assert!(
        err.contains("rcagp has no configuration key 'n_cal'"),
        "{err}"
    );
}

#[test]
fn sim_refuses_a_mistyped_key_at_start_up() {
    let out = Command::new(env!("CARGO_BIN_EXE_gp-node"))
        .args(["sim", "--no-viz", "--json", "--duration", "0.2"])
        .args(["--swap-to", r#"skygp:{"variant": "dense", "w_barr": 20}"#])
        .output()
        .expect("run gp-node sim");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("did you mean 'w_bar'?"), "{stderr}");
    assert!(
        out.stdout.is_empty(),
        "nothing ran: {}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn plugins_lists_what_it_finds_and_prints_a_schema() {
    let dir = model_support::cdylib("gpn_skygp");
    let dir = dir.parent().expect("a directory");
    let gp_node = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_gp-node"))
            .arg("plugins")
            .args(args)
            .arg("--plugin-path")
            .arg(dir)
            .output()
            .expect("run gp-node plugins")
    };
    let list = gp_node(&[]);
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(
        list.status.success(),
        "{}",
        String::from_utf8_lossy(&list.stderr)
    );
    for name in PLUGINS {
        assert!(
            text.lines()
                .any(|l| l.starts_with(name) && l.contains(" keys ")),
            "{text}"
        );
    }
    let json = gp_node(&["skygp", "--json"]);
    let schema = gpn_plugin_api::ConfigSchema::from_json(&json.stdout).expect("a schema");
    assert_eq!(schema, *open("skygp").config_schema().expect("declared"));
}
