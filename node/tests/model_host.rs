//! The plugin host's everyday contract, driven through a well-behaved double
//! (`gpn_double_slow` with `predict_sleep_ms: 0`, a running mean per output): metadata,
//! stats, dimension checks, YAML/JSON config, save/load, lifetimes (a model keeps its
//! library loaded), threads, and name resolution on a search path.

mod model_support;

use std::ffi::OsString;

use gp_node::plugin_host::{HostError, Plugin, PluginModel, SearchPath};
use gpn_gp_core::model::{ModelError, OnlineModel};
use model_support::{
    assert_call_failed, assert_create_fails, bits, cdylib, double, is_mapped, scratch_dir,
};

const FAST: &str = "predict_sleep_ms: 0";

fn well_behaved(test: &str) -> (Plugin, std::path::PathBuf) {
    let path = double("gpn_double_slow", test);
    (Plugin::open(&path).expect("open"), path)
}

fn predict(model: &mut PluginModel, x: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let p = model.output_dim();
    let (mut mean, mut var) = (vec![0.0; p], vec![0.0; p]);
    model.predict(x, &mut mean, &mut var).expect("predict");
    (mean, var)
}

#[test]
fn info_comes_from_the_table() {
    let (plugin, path) = well_behaved("info");
    let info = plugin.info();
    assert_eq!(info.name, "slow");
    assert_eq!(
        info.version,
        env!("CARGO_PKG_VERSION"),
        "the doubles share the workspace version"
    );
    assert!(
        info.description
            .starts_with("Failure double: predict sleeps")
    );
    assert_eq!(info.abi_version, gpn_plugin_api::ABI_VERSION);
    assert_eq!(info.path, path);
}

#[test]
fn a_plugin_model_is_an_online_model() {
    let (plugin, _) = well_behaved("online_model");
    let mut model: Box<dyn OnlineModel> = Box::new(plugin.create(FAST, 2, 2).expect("create"));
    assert_eq!((model.input_dim(), model.output_dim()), (2, 2));
    for k in 0..4 {
        model
            .update(
                &[k as f64, 0.0],
                &[k as f64, 10.0],
                k as f64 * 0.01,
                &[0.1, 0.1],
            )
            .expect("update");
    }
    let (mut mean, mut var) = ([0.0; 2], [0.0; 2]);
    model
        .predict(&[0.0, 0.0], &mut mean, &mut var)
        .expect("predict");
    assert_eq!(mean, [1.5, 10.0]);
    assert_eq!(var, [0.2, 0.2]);
    let stats = model.stats();
    assert_eq!(
        (stats.samples_seen, stats.experts, stats.memory_bytes),
        (4, 1, 16)
    );
}

/// The (expected, found) lengths of the error of `result`, which must be a length error
/// of argument `what`.
fn wrong_length(result: Result<(), ModelError>, what: &str) -> (usize, usize) {
    match result {
        Err(ModelError::Dimension {
            what: w,
            expected,
            found,
        }) if w == what => (expected, found),
        other => panic!("expected a length error of {what}, got {other:?}"),
    }
}

#[test]
fn wrong_lengths_are_caught_before_the_call() {
    let (plugin, _) = well_behaved("lengths");
    let mut model = plugin.create(FAST, 3, 2).expect("create");
    let (mut mean, mut var, mut short) = ([0.0; 2], [0.0; 2], [0.0; 1]);
    let x_short = model.predict(&[0.0; 2], &mut mean, &mut var);
    assert_eq!(wrong_length(x_short, "x"), (3, 2));
    let y_long = model.update(&[0.0; 3], &[1.0; 3], 0.0, &[0.1; 2]);
    assert_eq!(wrong_length(y_long, "y"), (2, 3));
    wrong_length(model.update(&[0.0; 3], &[1.0; 2], 0.0, &[0.1]), "noise_var");
    wrong_length(model.predict(&[0.0; 3], &mut short, &mut var), "mean");
    // The plugin's own checks come back as errors too (non-finite input).
    let err = model
        .update(&[f64::NAN, 0.0, 0.0], &[1.0; 2], 0.0, &[0.1; 2])
        .expect_err("NaN x");
    assert!(
        err.to_string().contains("update failed with NON_FINITE"),
        "{err}"
    );
    let err = plugin.create(FAST, 0, 1).expect_err("zero input dim");
    assert!(
        matches!(err, HostError::Dimensions { input_dim: 0, .. }),
        "{err:?}"
    );
}

#[test]
fn yaml_and_json_configs_reach_the_plugin() {
    let (plugin, _) = well_behaved("config");
    plugin.create("predict_sleep_ms: 0\n", 1, 1).expect("YAML");
    plugin
        .create(r#"{"predict_sleep_ms": 0}"#, 1, 1)
        .expect("JSON");
    plugin
        .create_json(&serde_json::json!({"predict_sleep_ms": 0}), 1, 1)
        .expect("JSON value");
    // The plugin's own validation, with its message.
    assert_create_fails(
        &plugin,
        "predict_sleep_ms: -3",
        "INVALID_CONFIG",
        "predict_sleep_ms must be a whole number, got -3",
    );
    // Text that is neither YAML nor JSON never reaches it.
    let err = plugin
        .create("predict_sleep_ms: [0", 1, 1)
        .expect_err("bad YAML");
    assert!(matches!(err, HostError::Config { .. }), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("invalid config for plugin slow: not YAML or JSON"),
        "{err}"
    );
}

#[test]
fn save_then_load_reproduces_predictions_bitwise() {
    let (plugin, _) = well_behaved("save_load");
    let mut a = plugin.create(FAST, 1, 2).expect("create");
    for k in 0..7 {
        let t = k as f64 * 0.37;
        a.update(&[t], &[t.sin(), t.cos() / 3.0], t, &[0.1, 0.1])
            .expect("update");
    }
    let state = a.save_state().expect("save");
    let mut b = plugin.create(FAST, 1, 2).expect("create");
    b.load_state(&state).expect("load");
    let (ma, va) = predict(&mut a, &[0.5]);
    let (mb, vb) = predict(&mut b, &[0.5]);
    assert_eq!(bits(&ma), bits(&mb));
    assert_eq!(bits(&va), bits(&vb));
    assert_eq!(b.stats().samples_seen, 7);

    let err = b.load_state(&state[..5]).expect_err("truncated state");
    assert_call_failed(
        &err,
        "load",
        "INVALID_STATE",
        "state has 5 bytes, expected 24",
    );
    // A failed load leaves the model as it was.
    assert_eq!(predict(&mut b, &[0.5]).0, mb);
}

#[test]
fn a_model_keeps_its_library_loaded_after_the_plugin_handle_drops() {
    let (plugin, path) = well_behaved("lifetime");
    let mut model = plugin.create(FAST, 1, 1).expect("create");
    assert_eq!(plugin.other_handles(), 1);
    drop(plugin);
    assert!(is_mapped(&path), "the model's Arc keeps the library mapped");
    model
        .update(&[0.0], &[4.0], 0.0, &[0.1])
        .expect("update after the plugin handle dropped");
    assert_eq!(predict(&mut model, &[0.0]).0, [4.0]);
    drop(model);
    assert!(!is_mapped(&path), "the library unloads with its last model");
}

#[test]
fn a_model_is_created_on_one_thread_and_driven_on_another() {
    let (plugin, _) = well_behaved("threads");
    let model = std::thread::spawn(move || plugin.create(FAST, 1, 1).expect("create"))
        .join()
        .expect("creator thread");
    let mut model = std::thread::spawn(move || {
        let mut model = model;
        model.update(&[0.0], &[2.0], 0.0, &[0.1]).expect("update");
        model
    })
    .join()
    .expect("learner thread");
    assert_eq!(predict(&mut model, &[0.0]).0, [2.0]);
    // Errors are read on the thread that made the failing call.
    let err = std::thread::spawn(move || {
        model
            .update(&[f64::INFINITY], &[1.0], 0.0, &[0.1])
            .expect_err("inf")
    })
    .join()
    .expect("thread");
    assert!(
        err.to_string()
            .contains("x contains a non-finite value at index 0"),
        "{err}"
    );
}

#[test]
fn names_resolve_in_search_order() {
    let first = scratch_dir("order-first");
    let second = scratch_dir("order-second");
    let suffix = std::env::consts::DLL_SUFFIX;
    let prefix = std::env::consts::DLL_PREFIX;
    // `model` is the slow double in the first directory and the NaN double in the second.
    std::fs::copy(
        cdylib("gpn_double_slow"),
        first.join(format!("{prefix}model{suffix}")),
    )
    .expect("copy");
    std::fs::copy(
        cdylib("gpn_double_returns_nan"),
        second.join(format!("{prefix}model{suffix}")),
    )
    .expect("copy");
    // `gpn_only` is found by its short name through the `libgpn_<name>` rule.
    std::fs::copy(
        cdylib("gpn_double_slow"),
        second.join(format!("{prefix}gpn_only{suffix}")),
    )
    .expect("copy");

    let cli_first = SearchPath::from_parts(
        [first.as_os_str()],
        Some(OsString::from(second.as_os_str())),
        None,
    );
    assert_eq!(
        Plugin::find("model", &cli_first).expect("find").info().name,
        "slow"
    );
    let env_first = SearchPath::from_parts(
        [second.as_os_str()],
        Some(OsString::from(first.as_os_str())),
        None,
    );
    assert_eq!(
        Plugin::find("model", &env_first).expect("find").info().name,
        "returns_nan"
    );
    assert_eq!(
        Plugin::find("only", &cli_first).expect("find").info().name,
        "slow"
    );
    // `available` lists each name once, under the name that finds it, shadowed files left out.
    let listed: Vec<(String, std::path::PathBuf)> = cli_first
        .available()
        .into_iter()
        .map(|a| (a.name, a.path))
        .collect();
    assert_eq!(
        listed,
        [
            (
                "model".to_string(),
                first.join(format!("{prefix}model{suffix}"))
            ),
            (
                "only".to_string(),
                second.join(format!("{prefix}gpn_only{suffix}"))
            ),
        ]
    );
    // A path is not a name: refused, even to a file that is a plugin on the search path;
    // the error says which directory to put on the search path and which name to pass.
    let direct = first.join(format!("{prefix}model{suffix}"));
    for search in [&SearchPath::default(), &cli_first] {
        let err =
            Plugin::find(&direct.display().to_string(), search).expect_err("a path is refused");
        assert!(matches!(err, HostError::InvalidName { .. }), "{err:?}");
        let message = err.to_string();
        assert!(
            message.contains(&format!(
                "put {} on --plugin-path or GPN_PLUGIN_PATH and pass the name \"model\"",
                first.display()
            )),
            "{message}"
        );
    }
    let err = Plugin::find("../model", &cli_first).expect_err("`..` is refused");
    assert!(matches!(err, HostError::InvalidName { .. }), "{err:?}");
}

#[test]
fn the_executables_directory_is_searched() {
    // This test binary lives in target/<profile>/deps/, where `cargo test -p gp_node`
    // builds the doubles (dev-dependencies) and `--workspace` also puts them one level up.
    model_support::cdylib("gpn_double_slow");
    let search = SearchPath::from_parts(
        Vec::<&str>::new(),
        None,
        std::env::current_exe().ok().as_deref(),
    );
    let plugin = Plugin::find("gpn_double_slow", &search).expect("found next to the test binary");
    assert_eq!(plugin.info().name, "slow");
    let names: Vec<String> = search.available().into_iter().map(|a| a.name).collect();
    // Listed under its short name, once, though cargo may have put it in both directories.
    assert_eq!(
        names.iter().filter(|n| *n == "double_slow").count(),
        1,
        "{names:?}"
    );
    assert!(names.iter().any(|n| n == "skygp"), "{names:?}");
    assert_eq!(
        Plugin::find("double_slow", &search)
            .expect("short name")
            .info()
            .name,
        "slow"
    );
    assert!(
        names.iter().all(|n| !n.contains('-')),
        "hashed artefacts are not listed: {names:?}"
    );
}
