//! `layout: experts` (src/experts.rs, ADR 0018): RCaGP's weights on SkyGP's local experts.
//! A clean stream is learned bit for bit as SkyGP learns it; outliers in the targets are
//! held off by the weights where SkyGP follows them; the state round-trips bit for bit; the
//! real-time path allocates nothing; the keys of the other layout are refused.
#![allow(clippy::unwrap_used)]

mod common;

use common::{Rng, smooth_sample};
use gpn_gp_core::model::OnlineModel;
use gpn_plugin_api::Plugin;
use gpn_rcagp::RcaGpPlugin;
use gpn_skygp_model::SkyGp;
use serde_json::{Value, json};

#[global_allocator]
static GLOBAL: gpn_alloc_count::Counting = gpn_alloc_count::Counting;

const D: usize = 2;

fn hyper() -> Value {
    json!({"sigma_f": 1.0, "sigma_n": 0.05, "lengthscales": [0.6, 0.6]})
}

fn experts(extra: Value) -> RcaGpPlugin {
    let mut cfg = json!({"hyper": hyper(), "layout": "experts"});
    cfg.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    RcaGpPlugin::from_json(&cfg, D, 1).unwrap()
}

/// A path through [−2, 2]² that revisits its region, target sin(x₀)·cos(x₁).
fn sample(k: usize) -> ([f64; D], f64) {
    let s = k as f64 * 0.013;
    let x = [2.0 * (0.7 * s).sin(), 2.0 * (1.1 * s + 0.4).cos()];
    (x, x[0].sin() * x[1].cos())
}

#[test]
fn a_clean_stream_is_learned_bit_for_bit_as_skygp_learns_it() {
    // The flat-top weights leave every sample inside the threshold alone; with targets
    // that never leave it, the experts see exactly SkyGP's stream (with the drift that
    // carries per-sample noise and adds none), the warm-up's provisional thresholds too.
    let mut robust = experts(json!({"c_floor_sigmas": 1e3}));
    let sky_cfg = json!({"hyper": hyper(), "variant": "dense", "drift": {"model": "linear", "q_per_s": 0,
        "refresh_hz": 1.1574074074074073e-5}});
    let mut sky = SkyGp::from_json(&sky_cfg, D, 1).unwrap();
    let mut rng = Rng(7);
    let (mut m1, mut v1, mut m2, mut v2) = ([0.0], [0.0], [0.0], [0.0]);
    for k in 0..3000 {
        let (x, f) = sample(k);
        let y = [f + 0.05 * rng.normal()];
        robust.predict(&x, &mut m1, &mut v1).unwrap();
        sky.predict(&x, &mut m2, &mut v2).unwrap();
        assert_eq!(
            (m1[0].to_bits(), v1[0].to_bits()),
            (m2[0].to_bits(), v2[0].to_bits()),
            "k = {k}"
        );
        robust.update(&x, &y, k as f64 * 1e-3, &[0.0025]).unwrap();
        sky.update(&x, &y, k as f64 * 1e-3, &[0.0025]).unwrap();
    }
    let RcaGpPlugin::Experts(inner) = &robust else {
        panic!("layout")
    };
    assert_eq!(inner.down_weighted(), 0);
    assert!(inner.thresholds()[0].is_finite());
}

/// RMSE against the noise-free target over the second half of a stream whose targets
/// `update` receives are pulled down by 3–9 σ_y in 10 % of the samples.
fn outlier_rmse(model: &mut dyn OnlineModel) -> f64 {
    let mut rng = Rng(11);
    let (mut mu, mut var) = ([0.0], [0.0]);
    let (mut sq, mut n) = (0.0, 0);
    for k in 0..6000 {
        let (x, f) = sample(k);
        model.predict(&x, &mut mu, &mut var).unwrap();
        if k >= 3000 {
            sq += (mu[0] - f).powi(2);
            n += 1;
        }
        let mut y = f + 0.05 * rng.normal();
        if rng.uniform() < 0.1 {
            y -= (3.0 + 6.0 * rng.uniform()) * 0.5;
        }
        model.update(&x, &[y], k as f64 * 1e-3, &[0.0025]).unwrap();
    }
    (sq / n as f64).sqrt()
}

#[test]
fn outliers_in_the_targets_are_held_off_where_skygp_follows_them() {
    let mut robust = experts(json!({}));
    let mut sky = SkyGp::from_json(&json!({"hyper": hyper()}), D, 1).unwrap();
    let (r, s) = (outlier_rmse(&mut robust), outlier_rmse(&mut sky));
    assert!(r * 3.0 < s, "RCaGP experts {r} against SkyGP {s}");
    let RcaGpPlugin::Experts(inner) = &robust else {
        panic!("layout")
    };
    assert!(inner.down_weighted() > 500, "{}", inner.down_weighted());
}

#[test]
fn the_predictive_centre_and_the_paper_imq_on_fast_experts_hold_off_outliers_too() {
    let mut robust = experts(
        json!({"weight_center": "predictive", "weight_profile": "imq",
        "experts": {"variant": "fast"}}),
    );
    let mut sky = SkyGp::from_json(&json!({"hyper": hyper()}), D, 1).unwrap();
    let (r, s) = (outlier_rmse(&mut robust), outlier_rmse(&mut sky));
    assert!(r * 3.0 < s, "RCaGP experts {r} against SkyGP {s}");
}

#[test]
fn the_state_round_trips_bit_for_bit_and_learning_continues_identically() {
    let cfg = json!({"threshold_refresh_samples": 50});
    let mut a = experts(cfg.clone());
    let mut rng = Rng(3);
    let (mut mu, mut var) = ([0.0], [0.0]);
    let mut stream = |m: &mut RcaGpPlugin, ks: std::ops::Range<usize>, rng: &mut Rng| {
        for k in ks {
            let (x, f) = sample(k);
            m.predict(&x, &mut mu, &mut var).unwrap();
            let y = f + if rng.uniform() < 0.1 {
                -2.0
            } else {
                0.05 * rng.normal()
            };
            m.update(&x, &[y], k as f64 * 1e-3, &[0.0025]).unwrap();
        }
    };
    stream(&mut a, 0..1500, &mut rng);
    let bytes = a.save_state().unwrap();
    let mut b = experts(cfg.clone());
    b.load_state(&bytes).unwrap();
    let mut rng_b = rng.clone();
    stream(&mut a, 1500..2500, &mut rng);
    stream(&mut b, 1500..2500, &mut rng_b);
    for k in (0..2500).step_by(97) {
        let (x, _) = sample(k);
        let (mut ma, mut va, mut mb, mut vb) = ([0.0], [0.0], [0.0], [0.0]);
        a.predict(&x, &mut ma, &mut va).unwrap();
        b.predict(&x, &mut mb, &mut vb).unwrap();
        assert_eq!(
            (ma[0].to_bits(), va[0].to_bits()),
            (mb[0].to_bits(), vb[0].to_bits())
        );
    }
    assert_eq!(a.save_state().unwrap(), b.save_state().unwrap());
    // Another configuration, or bytes cut short, are refused and leave the model as it was.
    let mut other = experts(json!({"epsilon": 0.2}));
    let err = other.load_state(&bytes).unwrap_err().to_string();
    assert!(err.contains("different configuration"), "{err}");
    let err = b
        .load_state(&bytes[..bytes.len() - 3])
        .unwrap_err()
        .to_string();
    assert!(err.contains("truncated"), "{err}");
    assert_eq!(a.save_state().unwrap(), b.save_state().unwrap());
    // Mid-warm-up states round trip and learn on alike.
    for cut in [1, 30, 49] {
        let (mut e, mut f) = (experts(cfg.clone()), experts(cfg.clone()));
        let mut rng_e = Rng(5);
        stream(&mut e, 0..cut, &mut rng_e);
        f.load_state(&e.save_state().unwrap()).unwrap();
        let mut rng_f = rng_e.clone();
        stream(&mut e, cut..400, &mut rng_e);
        stream(&mut f, cut..400, &mut rng_f);
        assert_eq!(
            e.save_state().unwrap(),
            f.save_state().unwrap(),
            "cut {cut}"
        );
    }
    // A state of the other layout names the layout that loads it, both ways.
    let mut window =
        RcaGpPlugin::from_json(&json!({"hyper": hyper(), "layout": "window"}), D, 1).unwrap();
    let err = window.load_state(&bytes).unwrap_err().to_string();
    assert!(err.contains("set layout: experts"), "{err}");
    let err = b
        .load_state(&window.save_state().unwrap())
        .unwrap_err()
        .to_string();
    assert!(err.contains("set layout: window"), "{err}");
    assert_eq!(a.save_state().unwrap(), b.save_state().unwrap());
}

#[test]
fn predict_and_update_allocate_nothing() {
    let p = 7;
    let cfg = json!({"hyper": {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": vec![0.9; 5]},
        "layout": "experts", "experts": {"variant": "dense"}, "threshold_window": 256,
        "threshold_refresh_samples": 16});
    let mut m = RcaGpPlugin::from_json(&cfg, 5, p).unwrap();
    let (mut x, mut y, nv) = (vec![0.0; 5], vec![0.0; p], vec![0.01; p]);
    let (mut mu, mut var) = (vec![0.0; p], vec![0.0; p]);
    let mut step = |m: &mut RcaGpPlugin, k: usize| {
        smooth_sample(k, &mut x, &mut y);
        if k.is_multiple_of(9) {
            y[k % p] += 5.0;
        }
        m.predict(&x, &mut mu, &mut var).unwrap();
        m.update(&x, &y, k as f64 * 0.001, &nv).unwrap();
    };
    for k in 0..2000 {
        step(&mut m, k);
    }
    let allocs = gpn_alloc_count::count_allocations_and_frees(|| {
        for k in 2000..5000 {
            step(&mut m, k);
        }
    });
    assert_eq!(allocs, 0, "{allocs} allocations or frees");
    let RcaGpPlugin::Experts(inner) = &m else {
        panic!("layout")
    };
    assert!(inner.down_weighted() > 300, "{}", inner.down_weighted());
}

#[test]
fn each_layout_refuses_the_keys_of_the_other() {
    let create = |extra: Value| {
        let mut cfg = json!({"hyper": hyper()});
        cfg.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        RcaGpPlugin::from_json(&cfg, D, 1)
            .map(|_| ())
            .unwrap_err()
            .to_string()
    };
    // Experts is the default layout: a window key without a layout is refused too.
    let default = RcaGpPlugin::from_json(&json!({"hyper": hyper()}), D, 1).unwrap();
    assert!(
        matches!(default, RcaGpPlugin::Experts(_)),
        "the default layout"
    );
    for extra in [
        json!({"layout": "experts", "blocks": 128, "refit_lr": 0.1}),
        json!({"blocks": 128, "refit_lr": 0.1}),
    ] {
        let err = create(extra);
        assert!(
            err.contains("blocks, refit_lr") && err.contains("layout \"window\""),
            "{err}"
        );
    }
    let err = create(json!({"layout": "window", "threshold_window": 512}));
    assert!(
        err.contains("threshold_window belongs to layout \"experts\""),
        "{err}"
    );
    let err = create(json!({"layout": "experts", "experts": {"hyper": hyper()}}));
    assert!(err.contains("experts.hyper"), "{err}");
    let err = create(json!({"layout": "experts", "experts": {"n_barr": 10}}));
    assert!(err.contains("n_barr"), "{err}");
    let err = create(json!({"layout": "experts", "threshold_window": 4}));
    assert!(err.contains("threshold_window"), "{err}");
    // Bad samples are errors, not panics, and change nothing.
    let mut m = experts(json!({}));
    let before = m.save_state().unwrap();
    assert!(m.update(&[0.0, f64::NAN], &[0.0], 0.0, &[0.01]).is_err());
    assert!(
        m.update(&[0.0, 0.0], &[f64::INFINITY], 0.0, &[0.01])
            .is_err()
    );
    assert!(m.update(&[0.0, 0.0], &[0.0], 0.0, &[-1.0]).is_err());
    assert!(m.update(&[0.0], &[0.0], 0.0, &[0.01]).is_err());
    assert!(m.update(&[0.0, 0.0], &[0.0], f64::NAN, &[0.01]).is_err());
    assert_eq!(m.save_state().unwrap(), before);
}

#[test]
fn the_warm_up_weighs_each_sample_against_the_samples_before_it() {
    // Outliers from the 21st sample on: the warm-up's thresholds, over the samples so far,
    // hold them off at once, where thresholds first set at the 64th sample let every
    // earlier one in at full weight.
    let mut m = experts(json!({}));
    let mut outliers = 0;
    for k in 0..64 {
        let (x, f) = sample(k);
        let outlier = k >= 20 && k % 5 == 0;
        outliers += usize::from(outlier);
        let y = if outlier { f - 3.0 } else { f };
        m.update(&x, &[y], k as f64 * 1e-3, &[0.0025]).unwrap();
        let RcaGpPlugin::Experts(inner) = &m else {
            panic!("layout")
        };
        assert!(inner.thresholds()[0].is_finite(), "k = {k}");
    }
    let RcaGpPlugin::Experts(inner) = &m else {
        panic!("layout")
    };
    assert!(
        inner.down_weighted() >= outliers as u64,
        "{} of {outliers}",
        inner.down_weighted()
    );
    let (x, f) = sample(40);
    let (mut mu, mut var) = ([0.0], [0.0]);
    m.predict(&x, &mut mu, &mut var).unwrap();
    assert!((mu[0] - f).abs() < 0.3, "{} against {f}", mu[0]);
}
