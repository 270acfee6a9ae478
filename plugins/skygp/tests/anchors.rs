//! Step-by-step reproduction of the reference code's first 500 KIN40K steps
//! (anchors/skygp_ref_kin40k_{fast,dense}_first500.csv): rBCM (= bcm_ref), Ncal 4, N̄ 50,
//! W̄ 40, step 0 without prediction.
#![allow(clippy::unwrap_used)] // Tests: a panic is the failure report.

mod common;

use gpn_gp_core::model::OnlineModel;
use gpn_skygp::SkyGp;

struct Anchor {
    step: usize,
    mean: f64,
    var: f64,
    n_experts: usize,
    selected: Vec<usize>,
}

fn anchors(variant: &str) -> Vec<Anchor> {
    let path = common::shared().join(format!("anchors/skygp_ref_kin40k_{variant}_first500.csv"));
    let (header, rows) = common::read_csv(&path);
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (cs, cm, cv, cn, ce) = (
        col("step"),
        col("mean"),
        col("var"),
        col("n_experts_after_update"),
        col("selected_experts"),
    );
    rows.iter()
        .map(|r| Anchor {
            step: r[cs].parse().unwrap(),
            mean: r[cm].parse().unwrap(),
            var: r[cv].parse().unwrap(),
            n_experts: r[cn].parse().unwrap(),
            selected: r
                .get(ce)
                .map(|s| {
                    s.split(';')
                        .filter(|t| !t.is_empty())
                        .map(|t| t.parse().unwrap())
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect()
}

fn reproduce(variant: &str) {
    let data = common::kin40k();
    let cfg = serde_json::json!({
        "preset": "reference", "variant": variant, "aggregation": "bcm_ref",
        "n_cal": 4, "n_bar": 50, "w_bar": 40, "hyper": data.hyper,
    });
    let mut gp = SkyGp::from_json(&cfg, 8, 1).unwrap();
    let sn2 = data.hyper["sigma_n"].as_f64().unwrap().powi(2);
    let (mut mu, mut var) = ([0.0], [0.0]);
    let (mut max_rel_mean, mut max_rel_var, mut max_abs_mean) = (0.0f64, 0.0f64, 0.0f64);
    for a in anchors(variant) {
        let i = a.step;
        if i >= 1 {
            gp.predict(&data.x[i], &mut mu, &mut var).unwrap();
            assert_eq!(
                gp.last_selected(),
                &a.selected[..],
                "{variant} step {i}: selected experts"
            );
            let rel_m = (mu[0] - a.mean).abs() / a.mean.abs().max(1e-3);
            let rel_v = (var[0] - a.var).abs() / a.var.abs();
            max_rel_mean = max_rel_mean.max(rel_m);
            max_rel_var = max_rel_var.max(rel_v);
            max_abs_mean = max_abs_mean.max((mu[0] - a.mean).abs());
            assert!(
                rel_m <= 1e-9,
                "{variant} step {i}: mean {} vs {}",
                mu[0],
                a.mean
            );
            assert!(
                rel_v <= 1e-9,
                "{variant} step {i}: var {} vs {}",
                var[0],
                a.var
            );
        }
        gp.update(&data.x[i], &[data.y[i]], i as f64, &[sn2])
            .unwrap();
        assert_eq!(
            gp.n_experts(),
            a.n_experts,
            "{variant} step {i}: experts after update"
        );
    }
    println!(
        "{variant}: max relative error mean {max_rel_mean:.3e} (abs {max_abs_mean:.3e}), var {max_rel_var:.3e}; {} replacements",
        gp.replacements()
    );
}

#[test]
fn kin40k_fast_first500_matches_reference() {
    reproduce("fast");
}

#[test]
fn kin40k_dense_first500_matches_reference() {
    reproduce("dense");
}
