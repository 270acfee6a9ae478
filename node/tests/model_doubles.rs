//! The plugin host against its failure doubles (real cdylibs from `testing/doubles/`):
//! each failure gives its own clear error, leaves nothing behind (live-model and
//! live-thread counters exported by the doubles, and the library unmapped from the process
//! after the last handle drops), and the host then loads and runs another model.

mod model_support;

use std::path::Path;

use gp_node::plugin_host::{HostError, Plugin, SearchPath};
use gpn_gp_core::model::{ModelError, OnlineModel};
use model_support::{counter, double, is_mapped, scratch_dir};

/// After a failure: a well-behaved model from another library still works.
fn host_still_works(test: &str) {
    let path = double("gpn_double_slow", &format!("{test}-after"));
    let plugin = Plugin::open(&path).expect("open slow double");
    let mut model = plugin.create("predict_sleep_ms: 0", 2, 1).expect("create");
    model
        .update(&[0.1, 0.2], &[3.0], 0.0, &[0.01])
        .expect("update");
    let (mut mean, mut var) = ([0.0], [0.0]);
    model
        .predict(&[0.1, 0.2], &mut mean, &mut var)
        .expect("predict");
    assert_eq!(mean, [3.0]);
}

fn assert_unloaded(path: &Path) {
    assert!(
        !is_mapped(path),
        "{} is still mapped after its last handle dropped",
        path.display()
    );
}

#[test]
fn fails_create_reports_invalid_config_and_leaks_nothing() {
    let path = double("gpn_double_fails_create", "fails_create");
    let plugin = Plugin::open(&path).expect("the double loads");
    assert_eq!(plugin.info().name, "fails_create");
    let err = plugin.create("{}", 3, 2).expect_err("create must fail");
    match &err {
        HostError::Call {
            plugin,
            function,
            status,
            message,
            path: p,
            ..
        } => {
            assert_eq!(
                (plugin.as_str(), *function, *status),
                ("fails_create", "create", "INVALID_CONFIG")
            );
            assert!(message.contains("refuses every configuration"), "{message}");
            assert_eq!(p, &path);
        }
        other => panic!("expected HostError::Call, got {other:?}"),
    }
    let text = err.to_string();
    assert!(
        text.starts_with("plugin fails_create: create failed with INVALID_CONFIG"),
        "{text}"
    );
    assert!(
        text.ends_with(&path.display().to_string()),
        "path last: {text}"
    );
    // Nothing of the failed create survives: no model in the library, no handle in the host.
    assert_eq!(plugin.other_handles(), 0);
    assert_eq!(counter(&path, "gpn_double_live_models"), 0);
    drop(plugin);
    assert_unloaded(&path);
    host_still_works("fails_create");
}

#[test]
fn panic_in_update_is_contained_poisons_the_model_and_releases_it() {
    let path = double("gpn_double_panics_update", "panics_update");
    let plugin = Plugin::open(&path).expect("open");
    let mut model = plugin.create("", 1, 1).expect("create");
    model
        .update(&[0.0], &[1.0], 0.0, &[0.1])
        .expect("first update");
    model
        .update(&[0.0], &[3.0], 0.1, &[0.1])
        .expect("second update");
    let err = model
        .update(&[0.0], &[5.0], 0.2, &[0.1])
        .expect_err("third update panics");
    let text = err.to_string();
    assert!(text.contains("update failed with PANIC"), "{text}");
    assert!(
        text.contains("deliberate panic in update after 2 samples"),
        "{text}"
    );
    assert!(model.is_poisoned());
    // A poisoned model is not called again...
    let (mut mean, mut var) = ([0.0], [0.0]);
    let err = model
        .predict(&[0.0], &mut mean, &mut var)
        .expect_err("poisoned");
    assert!(err.to_string().contains("poisoned"), "{err}");
    assert_eq!(
        model.stats().samples_seen,
        0,
        "stats of a poisoned model are zero"
    );
    // ...but is destroyed on drop.
    assert_eq!(counter(&path, "gpn_double_live_models"), 1);
    drop(model);
    assert_eq!(counter(&path, "gpn_double_live_models"), 0);
    // The same library still makes healthy models.
    let mut fresh = plugin.create("", 1, 1).expect("create after a panic");
    fresh.update(&[0.0], &[2.0], 0.0, &[0.1]).expect("update");
    fresh.predict(&[0.0], &mut mean, &mut var).expect("predict");
    assert_eq!(mean, [2.0]);
    drop(fresh);
    drop(plugin);
    assert_unloaded(&path);
    host_still_works("panics_update");
}

#[test]
fn nan_from_predict_is_rejected_not_propagated() {
    let path = double("gpn_double_returns_nan", "returns_nan");
    let plugin = Plugin::open(&path).expect("open");
    for (config, what) in [("{}", "mean"), ("nan_in: variance", "variance")] {
        let mut model = plugin.create(config, 2, 3).expect("create");
        let (mut mean, mut var) = ([0.0; 3], [0.0; 3]);
        let err = model
            .predict(&[0.0, 1.0], &mut mean, &mut var)
            .expect_err("NaN must be rejected");
        let text = err.to_string();
        assert!(matches!(err, ModelError::Other(_)));
        assert!(
            text.contains(&format!("non-finite {what} NaN for output 2")),
            "{text}"
        );
        assert!(
            text.contains("NON_FINITE") && text.contains("returns_nan"),
            "{text}"
        );
        // Not poisoned: the model keeps learning and the host keeps running.
        assert!(!model.is_poisoned());
        model
            .update(&[0.0, 1.0], &[1.0, 2.0, 3.0], 0.0, &[0.1; 3])
            .expect("update still works");
    }
    drop(plugin);
    host_still_works("returns_nan");
}

#[test]
fn slow_predict_completes_and_destroy_joins_the_model_thread() {
    let path = double("gpn_double_slow", "slow");
    let plugin = Plugin::open(&path).expect("open");
    // Default config: predict sleeps 50 ms. No wall-clock assertion: it completes, and the
    // host is fine afterwards.
    let mut model = plugin.create("", 1, 2).expect("create");
    assert_eq!(
        counter(&path, "gpn_double_live_threads"),
        1,
        "the model runs a worker thread"
    );
    model
        .update(&[0.5], &[1.0, -1.0], 0.0, &[0.1, 0.1])
        .expect("update");
    let (mut mean, mut var) = ([0.0; 2], [0.0; 2]);
    model
        .predict(&[0.5], &mut mean, &mut var)
        .expect("slow predict completes");
    assert_eq!(mean, [1.0, -1.0]);
    drop(model);
    // destroy joined the worker before returning, so the library can go.
    assert_eq!(counter(&path, "gpn_double_live_threads"), 0);
    assert_eq!(counter(&path, "gpn_double_live_models"), 0);
    drop(plugin);
    assert_unloaded(&path);
}

#[test]
fn wrong_abi_version_is_refused_before_anything_else() {
    let path = double("gpn_double_wrong_abi", "wrong_abi");
    let err = Plugin::open(&path).expect_err("ABI 2 must be refused");
    match &err {
        HostError::AbiMismatch {
            expected,
            found,
            path: p,
            name,
        } => {
            assert_eq!((*expected, *found), (1, 2));
            assert_eq!(p, &path);
            assert_eq!(name, "gpn_double_wrong_abi");
        }
        other => panic!("expected AbiMismatch, got {other:?}"),
    }
    let text = err.to_string();
    assert!(
        text.contains("ABI version 2") && text.contains("implements version 1"),
        "{text}"
    );
    assert_eq!(
        counter(&path, "gpn_double_live_models"),
        0,
        "nothing was created"
    );
    assert_unloaded(&path);
    host_still_works("wrong_abi");
}

#[test]
fn truncated_table_is_refused() {
    let path = double("gpn_double_short_table", "short_table");
    let err = Plugin::open(&path).expect_err("short table must be refused");
    assert!(
        matches!(
            err,
            HostError::TableTooSmall {
                abi_version: 1,
                found: 56,
                ..
            }
        ),
        "expected TableTooSmall(56), got {err:?}"
    );
    assert!(err.to_string().contains("56-byte function table"), "{err}");
    host_still_works("short_table");
}

#[test]
fn a_library_without_the_entry_symbol_is_not_a_plugin() {
    let path = double("gpn_double_not_a_plugin", "not_a_plugin");
    let err = Plugin::open(&path).expect_err("must be refused");
    assert!(
        matches!(
            err,
            HostError::NotAPlugin {
                symbol: "gpn_plugin_entry",
                ..
            }
        ),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains("is not a gp-node plugin") && text.contains("gpn_plugin_entry"),
        "{text}"
    );
    assert_unloaded(&path);
    host_still_works("not_a_plugin");
}

#[test]
fn a_text_file_named_like_a_plugin_fails_to_load() {
    let dir = scratch_dir("text_file");
    let path = dir.join(format!(
        "{}fake{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    std::fs::write(&path, "this is not a shared library\n").expect("write");
    let err = Plugin::find("fake", &SearchPath::from_dirs([dir])).expect_err("must fail to load");
    assert!(
        matches!(&err, HostError::Load { name, .. } if name == "fake"),
        "{err:?}"
    );
    assert!(
        err.to_string().starts_with("cannot load plugin \"fake\""),
        "{err}"
    );
    host_still_works("text_file");
}

#[test]
fn a_missing_plugin_lists_what_is_available() {
    let dir = scratch_dir("missing");
    let slow = model_support::cdylib("gpn_double_slow");
    std::fs::copy(
        &slow,
        dir.join(format!(
            "{}alpha{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        )),
    )
    .expect("copy");
    std::fs::copy(
        &slow,
        dir.join(format!("beta{}", std::env::consts::DLL_SUFFIX)),
    )
    .expect("copy");
    std::fs::write(dir.join("notes.txt"), "not a plugin").expect("write");
    let search = SearchPath::from_dirs([dir.clone(), dir.join("does-not-exist")]);
    let err = Plugin::find("gamma", &search).expect_err("gamma is not there");
    let HostError::NotFound {
        name,
        available,
        searched,
    } = &err
    else {
        panic!("expected NotFound, got {err:?}")
    };
    assert_eq!(name, "gamma");
    let names: Vec<&str> = available.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["alpha", "beta"]);
    assert_eq!(searched.len(), 2);
    let text = err.to_string();
    assert!(
        text.contains("plugin \"gamma\" not found; available: alpha ("),
        "{text}"
    );
    assert!(text.contains(&dir.display().to_string()), "{text}");
    // And both names do resolve.
    assert_eq!(
        Plugin::find("alpha", &search).expect("alpha").info().name,
        "slow"
    );
    assert_eq!(
        Plugin::find("beta", &search).expect("beta").info().name,
        "slow"
    );
}

#[test]
fn every_failure_in_a_row_then_a_working_model() {
    // One host session going through every failure mode; the host must come out able to
    // load and drive a model.
    let mut errors = Vec::new();
    for (krate, test) in [
        ("gpn_double_wrong_abi", "row-wrong_abi"),
        ("gpn_double_short_table", "row-short_table"),
        ("gpn_double_not_a_plugin", "row-not_a_plugin"),
    ] {
        errors.push(
            Plugin::open(double(krate, test))
                .expect_err("refused")
                .to_string(),
        );
    }
    let fails = Plugin::open(double("gpn_double_fails_create", "row-fails")).expect("open");
    errors.push(
        fails
            .create("", 1, 1)
            .expect_err("create fails")
            .to_string(),
    );
    let panics = Plugin::open(double("gpn_double_panics_update", "row-panics")).expect("open");
    let mut m = panics.create("", 1, 1).expect("create");
    for k in 0..3 {
        if let Err(e) = m.update(&[0.0], &[k as f64], 0.0, &[0.1]) {
            errors.push(e.to_string());
        }
    }
    let nan = Plugin::open(double("gpn_double_returns_nan", "row-nan")).expect("open");
    let mut m = nan.create("", 1, 1).expect("create");
    let (mut mean, mut var) = ([0.0], [0.0]);
    errors.push(
        m.predict(&[0.0], &mut mean, &mut var)
            .expect_err("NaN")
            .to_string(),
    );
    // Six distinct, specific messages.
    assert_eq!(errors.len(), 6, "{errors:#?}");
    for (i, a) in errors.iter().enumerate() {
        for b in &errors[i + 1..] {
            assert_ne!(a, b);
        }
    }
    host_still_works("row");
}
