//! Config parsing, presets, overrides and validation errors.
#![allow(clippy::unwrap_used)] // Tests: a panic is the failure report.

use gpn_skygp::config::{DecayClock, InsertSide, NuPrevRule, Preset, ReplaceRule, Variant};
use gpn_skygp::{Config, SkyGp};
use serde_json::json;

fn hyper(d: usize) -> serde_json::Value {
    json!({"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": vec![1.0; d]})
}

fn err(cfg: serde_json::Value, d: usize, p: usize) -> String {
    match SkyGp::from_json(&cfg, d, p) {
        Ok(_) => panic!("config accepted: {cfg}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn presets_resolve_documented_defaults() {
    let rec = Config::from_json(&json!({"hyper": hyper(2)}))
        .unwrap()
        .check(2, 1)
        .unwrap();
    assert_eq!(rec.preset, Preset::Recommended);
    assert_eq!(
        (rec.variant, rec.n_bar, rec.n_cal, rec.w_bar),
        (Variant::Fast, 50, 4, 40)
    );
    assert_eq!(
        (rec.rho_window, rec.rho_decay, rec.theta_bar),
        (0.04, 0.995, 1e-3)
    );
    assert_eq!(rec.replace_rule, ReplaceRule::KernelMin);
    assert_eq!(rec.insert_side, InsertSide::Paper);
    assert_eq!(rec.nu_prev_rule, NuPrevRule::NewExpert);
    assert_eq!(rec.decay_clock, DecayClock::Seconds);
    assert_eq!(rec.max_experts, 1024);
    let r =
        Config::from_json(&json!({"preset": "reference", "variant": "dense", "hyper": hyper(2)}))
            .unwrap()
            .check(2, 1)
            .unwrap();
    assert_eq!((r.rho_window, r.rho_decay), (0.03, 1.0));
    assert_eq!(r.replace_rule, ReplaceRule::EuclidRef);
    assert_eq!(r.insert_side, InsertSide::RefMirror);
    assert_eq!(r.nu_prev_rule, NuPrevRule::Stale);
    assert_eq!(r.decay_clock, DecayClock::Steps);
    assert_eq!(r.aggregation, gpn_gp_core::aggregate::Aggregation::BCMRef);
}

#[test]
fn overrides_apply_on_top_of_a_preset() {
    let c = json!({
        "preset": "reference", "n_cal": 2, "w_bar": 10, "insert_side": "paper", "aggregation": "gpoe",
        "window_mode": "paper", "distance": "euclid", "use_adaptive_window": false, "eviction": "fifo",
        "kernel": "matern32", "max_experts": 16, "hyper": [hyper(3), hyper(3)]
    });
    let v = Config::from_json(&c).unwrap().check(3, 2).unwrap();
    assert_eq!((v.n_cal, v.w_bar, v.max_experts), (2, 10, 16));
    assert_eq!(v.insert_side, InsertSide::Paper);
    assert_eq!(v.aggregation, gpn_gp_core::aggregate::Aggregation::GPoE);
    assert!(!v.use_adaptive_window);
    assert_eq!(
        v.hyper[1].kernel.kind(),
        gpn_gp_core::kernel::KernelKind::Matern32
    );
}

/// A config with these hyperparameters for one output of two inputs.
fn one_hyper(sigma_f: f64, sigma_n: f64, lengthscales: [f64; 2]) -> serde_json::Value {
    json!({"hyper": {"sigma_f": sigma_f, "sigma_n": sigma_n, "lengthscales": lengthscales}})
}

/// A config with 2-input hyperparameters for one output, plus `key: value`.
fn hyper_and(key: &str, value: serde_json::Value) -> serde_json::Value {
    json!({"hyper": hyper(2), key: value})
}

#[test]
fn bad_values_are_rejected_with_a_clear_message() {
    // One bad setting on top of good hyperparameters: (key, value, part of the message).
    let bad_settings = [
        ("n_barr", json!(3), "unknown field `n_barr`"),
        (
            "aggregation",
            json!("rbcmx"),
            "aggregation \"rbcmx\" unknown",
        ),
        ("variant", json!("slow"), "unknown variant `slow`"),
        ("n_cal", json!(0), "n_cal must be ≥ 1"),
        ("rho_decay", json!(1.5), "rho_decay must be in (0, 1]"),
        (
            "rho_window",
            json!(0.0),
            "rho_window must be finite and > 0",
        ),
        ("theta_bar", json!(1.0), "theta_bar must be in (0, 1)"),
        (
            "max_experts",
            json!(4),
            "max_experts must be ≥ 2 and > n_cal (4)",
        ),
        ("max_experts", json!(100000000), "expert pool would need"),
        ("kernel", json!("rbf"), "unknown variant `rbf`"),
    ];
    let mut cases: Vec<(serde_json::Value, &str)> = vec![
        (json!({}), "\"hyper\" missing"),
        (
            json!({"hyper": hyper(3)}),
            "lengthscales has 3 values, expected input_dim = 2",
        ),
        (
            json!({"hyper": [hyper(2)]}),
            "hyper has 1 entries, expected one per output (2)",
        ),
        (
            one_hyper(1.0, -0.1, [1.0, 1.0]),
            "sigma_n must be finite and ≥ 0",
        ),
        (
            one_hyper(0.0, 0.1, [1.0, 1.0]),
            "sigma_f must be finite and > 0",
        ),
        (one_hyper(1.0, 0.1, [1.0, -1.0]), "lengthscales[1]"),
        (
            json!({"hyper": {"sigma_f": 1.0, "lengthscales": [1.0, 1.0]}}),
            "missing field `sigma_n`",
        ),
        (json!({"hyper": 3}), "hyper must be an object"),
    ];
    cases.extend(bad_settings.map(|(key, value, want)| (hyper_and(key, value), want)));
    for (cfg, want) in cases {
        let p = if cfg["hyper"].is_array() { 2 } else { 1 };
        let msg = err(cfg.clone(), 2, p);
        assert!(
            msg.contains(want),
            "config {cfg}: message {msg:?} lacks {want:?}"
        );
    }
    assert!(err(json!({"hyper": hyper(2)}), 0, 1).contains("input_dim and output_dim must be ≥ 1"));
}

#[test]
fn wrong_call_dimensions_are_errors() {
    use gpn_gp_core::model::{ModelError, OnlineModel};
    let mut gp = SkyGp::from_json(&json!({"hyper": hyper(2)}), 2, 1).unwrap();
    let (mut m, mut v) = ([0.0], [0.0]);
    assert!(matches!(
        gp.predict(&[0.0], &mut m, &mut v),
        Err(ModelError::Dimension {
            what: "x",
            expected: 2,
            found: 1
        })
    ));
    assert!(matches!(
        gp.update(&[0.0, f64::NAN], &[1.0], 0.0, &[0.0]),
        Err(ModelError::NonFinite {
            what: "x",
            index: 1
        })
    ));
    assert!(matches!(
        gp.update(&[0.0, 0.0], &[1.0, 2.0], 0.0, &[0.0]),
        Err(ModelError::Dimension { what: "y", .. })
    ));
    assert!(matches!(
        gp.update(&[0.0, 0.0], &[1.0], f64::NAN, &[0.0]),
        Err(ModelError::NonFinite { what: "t_secs", .. })
    ));
    // The prior before any data: (0, σ_f²).
    gp.predict(&[0.0, 0.0], &mut m, &mut v).unwrap();
    assert_eq!((m[0], v[0]), (0.0, 1.0));
}
