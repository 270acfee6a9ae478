//! SkyGP as a plugin (`libgpn_skygp.so`, loaded through the host) against SkyGP linked
//! in-process (`gpn_skygp` as a crate): the same predictions bit for bit, the same saved
//! state, and the same `gp-node eval` numbers whether the evaluator or the CLI loads it.

mod model_support;

use gp_node::eval::dataset::{Centering, ColumnSelection, Dataset};
use gp_node::plugin_host::{Plugin, SearchPath};
use gpn_gp_core::model::OnlineModel;
use gpn_plugin_api::Plugin as _;
use gpn_skygp::SkyGp;
use model_support::{eval_json_command, lockstep, same_eval_via_host_and_in_process};
use serde_json::json;

fn config(variant: &str) -> serde_json::Value {
    json!({
        "variant": variant, "n_bar": 12, "n_cal": 3, "max_experts": 24,
        "hyper": [
            {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [0.6, 0.8]},
            {"sigma_f": 0.7, "sigma_n": 0.2, "lengthscales": [1.1, 0.5]}
        ]
    })
}

fn sample(k: usize) -> ([f64; 2], [f64; 2]) {
    let t = k as f64 * 0.05;
    let x = [
        (1.3 * t).sin() * 2.0,
        (0.7 * t).cos() * 1.5 + 0.1 * (5.0 * t).sin(),
    ];
    (x, [x[0].sin() * x[1], (x[0] - x[1]).cos()])
}

const NOISE: [f64; 2] = [0.01, 0.04];

fn skygp_plugin() -> Plugin {
    // Found by name next to this test binary (cargo builds the crate's cdylib there).
    Plugin::find("skygp", &SearchPath::standard(Vec::<&str>::new())).expect("skygp plugin")
}

#[test]
fn the_plugin_predicts_exactly_what_the_crate_does() {
    let plugin = skygp_plugin();
    assert_eq!(plugin.info().name, "skygp");
    for variant in ["fast", "dense"] {
        let cfg = config(variant);
        let mut through_abi = plugin.create_json(&cfg, 2, 2).expect("create");
        let mut in_process = SkyGp::from_json(&cfg, 2, 2).expect("create");
        lockstep(&mut through_abi, &mut in_process, 0..800, sample, &NOISE);
        assert_eq!(through_abi.stats(), in_process.stats(), "{variant}");
        // The stream exercises the structural paths: recycling (Fast), replacement (Dense).
        let exercised = match variant {
            "fast" => in_process.evictions(),
            _ => in_process.replacements(),
        };
        assert!(
            exercised > 0,
            "{variant}: the stream must recycle or replace"
        );
    }
}

#[test]
fn state_saved_through_the_host_reloads_bitwise_and_matches_the_crate() {
    let plugin = skygp_plugin();
    for variant in ["fast", "dense"] {
        let cfg = config(variant);
        let mut a = plugin.create_json(&cfg, 2, 2).expect("create");
        let mut reference = SkyGp::from_json(&cfg, 2, 2).expect("create");
        lockstep(&mut a, &mut reference, 0..500, sample, &NOISE);
        let state = a.save_state().expect("save");
        // The plugin writes exactly what the crate's own save writes.
        assert_eq!(
            state,
            reference.save_state().expect("crate save"),
            "{variant}"
        );
        // A fresh plugin model loaded with it continues exactly like the crate model.
        let mut b = plugin.create_json(&cfg, 2, 2).expect("create");
        b.load_state(&state).expect("load");
        lockstep(&mut b, &mut reference, 500..700, sample, &NOISE);
        // A state for another config is refused with the reason.
        let mut other = plugin
            .create_json(
                &config(if variant == "fast" { "dense" } else { "fast" }),
                2,
                2,
            )
            .expect("create");
        let err = other.load_state(&state).expect_err("other config");
        assert!(err.to_string().contains("INVALID_STATE"), "{err}");
        assert!(err.to_string().contains("another configuration"), "{err}");
    }
}

fn csv(n: usize) -> String {
    let mut s = String::from("x1,x2,y\n");
    for k in 0..n {
        let (x, y) = sample(k);
        s += &format!(
            "{},{},{}\n",
            x[0],
            x[1],
            y[0] + 0.02 * (k as f64 * 3.7).sin()
        );
    }
    s
}

#[test]
fn eval_gives_the_same_numbers_through_the_plugin_and_in_process() {
    let mut data = Dataset::from_reader(csv(400).as_bytes(), "mem", &ColumnSelection::default())
        .expect("dataset");
    data.center(Centering::WholeFile);
    let cfg = json!({"variant": "dense", "n_bar": 15,
                     "hyper": {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [0.7, 0.9]}});
    let in_process = Box::new(SkyGp::from_json(&cfg, 2, 1).expect("crate model"));
    same_eval_via_host_and_in_process("skygp", &cfg, in_process, &data);
}

#[test]
fn gp_node_eval_loads_the_plugin_from_plugin_path() {
    let dir = model_support::scratch_dir("eval_plugin_path");
    let data = dir.join("stream.csv");
    std::fs::write(&data, csv(300)).expect("write csv");
    let hyper = dir.join("hyper.json");
    std::fs::write(
        &hyper,
        r#"{"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [0.7, 0.9]}"#,
    )
    .expect("write hyper");
    // The same library under another name, only findable through --plugin-path.
    let plugins_dir = dir.join("plugins");
    std::fs::create_dir_all(&plugins_dir).expect("mkdir");
    let file = |name: &str| {
        format!(
            "{}{name}{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        )
    };
    std::fs::copy(
        model_support::cdylib("gpn_skygp"),
        plugins_dir.join(file("skygp_copy")),
    )
    .expect("copy");
    let run = |plugin: &str, extra: &[&str]| {
        let out = eval_json_command(plugin, &data)
            .args(["--set", "variant=dense", "--hyper"])
            .arg(&hyper)
            .args(extra)
            .output()
            .expect("run gp-node");
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let dir_arg = plugins_dir.to_str().expect("utf-8 path");
    let (code, copy_json, err) = run("skygp_copy", &["--plugin-path", dir_arg]);
    assert_eq!(code, Some(0), "{err}");
    let (code, default_json, err) = run("skygp", &[]);
    assert_eq!(code, Some(0), "{err}");
    let mut copy: serde_json::Value = serde_json::from_str(&copy_json).expect("json");
    let mut default: serde_json::Value = serde_json::from_str(&default_json).expect("json");
    assert_eq!(copy["plugin"], "skygp_copy");
    for v in [&mut copy, &mut default] {
        let map = v.as_object_mut().expect("object");
        map.retain(|k, _| {
            !k.ends_with("_us_mean")
                && !k.contains("_us_")
                && !["wall_s", "wait_s", "plugin"].contains(&k.as_str())
        });
        // How many experts the pool's grower thread had handed over when the run ended
        // depends on when that thread ran (a busy machine); predictions do not.
        if let Some(info) = map.get_mut("model_info").and_then(|i| i.as_object_mut()) {
            info.remove("experts_made");
        }
    }
    assert_eq!(copy, default, "same library, same numbers");
    // Without the flag the copy is not found, and the error lists what is.
    let (code, _, err) = run("skygp_copy", &[]);
    assert_eq!(code, Some(2));
    assert!(
        err.contains("plugin \"skygp_copy\" not found; available:") && err.contains("skygp ("),
        "{err}"
    );
}
