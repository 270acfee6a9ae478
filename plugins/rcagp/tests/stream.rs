//! The streaming model's contract: predict only reads a published snapshot (a rebuild held
//! at the publication gate does not change its answers), background equals inline when the
//! worker is waited for, destroy joins the threads, multi-output sharing, per-sample noise,
//! robustness to glitches on a stream, the weights' profile, and clear errors for bad input.
#![allow(clippy::unwrap_used)]

mod common;

use std::time::{Duration, Instant};

use common::Rng;
use gpn_gp_core::model::{ModelError, OnlineModel};
use gpn_rcagp::RcaGp;
use serde_json::json;

const D: usize = 2;

fn sample(k: usize) -> ([f64; D], f64) {
    let t = k as f64 * 0.013;
    let x = [(1.3 * t).sin() * 2.0, (0.7 * t).cos() * 1.5];
    (x, (1.5 * x[0]).sin() * x[1] + 0.2 * x[0])
}

/// Updates `m` with samples `ks`, all stamped 0 with noise variance 0.0025.
fn feed(m: &mut RcaGp, ks: impl IntoIterator<Item = usize>) {
    for k in ks {
        let (x, y) = sample(k);
        m.update(&x, &[y], 0.0, &[0.0025]).unwrap();
    }
}

/// Waits (10 s at most) until the worker of `m` is held at the closed publication gate.
fn wait_at_the_gate(m: &RcaGp) {
    let start = Instant::now();
    while m.gate().unwrap().waiting() == 0 {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the worker never reached the gate"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn config(background: bool) -> serde_json::Value {
    json!({
        "hyper": {"sigma_f": 1.0, "sigma_n": 0.05, "lengthscales": [0.8, 0.9]},
        "blocks": 8, "block_size": 4, "background": background, "refit_every_blocks": 0,
    })
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn predict_reads_only_the_published_snapshot() {
    let mut m = RcaGp::from_json(&config(true), D, 1).unwrap();
    let (mut mu, mut var) = ([0.0], [0.0]);
    // Two full blocks, published.
    feed(&mut m, 0..8);
    assert!(m.wait_idle(Duration::from_secs(10)));
    let probe = [0.3, -0.2];
    m.predict(&probe, &mut mu, &mut var).unwrap();
    let (before_mu, before_var, before_version) = (mu, var, m.snapshot().version);
    assert!(before_version > 0 && m.snapshot().n_blocks() == 2);

    // Hold the next rebuild between building and publishing.
    let gate = m.gate().unwrap();
    gate.close();
    feed(&mut m, 8..12);
    wait_at_the_gate(&m);
    // The new block is built but held: predict keeps answering from the old snapshot.
    for _ in 0..100 {
        m.predict(&probe, &mut mu, &mut var).unwrap();
        assert_eq!(bits(&mu), bits(&before_mu));
        assert_eq!(bits(&var), bits(&before_var));
        assert_eq!(m.snapshot().version, before_version);
        assert_eq!(m.snapshot().n_blocks(), 2);
    }
    m.gate().unwrap().open();
    assert!(m.wait_idle(Duration::from_secs(10)));
    m.predict(&probe, &mut mu, &mut var).unwrap();
    assert!(m.snapshot().version > before_version);
    assert_eq!(m.snapshot().n_blocks(), 3);
    assert_ne!(
        bits(&mu),
        bits(&before_mu),
        "the new block changed the answer"
    );
}

#[test]
fn background_equals_inline_when_waited_for() {
    let mut bg = RcaGp::from_json(&config(true), D, 1).unwrap();
    let mut inl = RcaGp::from_json(&config(false), D, 1).unwrap();
    let (mut m1, mut v1, mut m2, mut v2) = ([0.0], [0.0], [0.0], [0.0]);
    for k in 0..200 {
        let (x, y) = sample(k);
        bg.predict(&x, &mut m1, &mut v1).unwrap();
        inl.predict(&x, &mut m2, &mut v2).unwrap();
        assert_eq!(bits(&m1), bits(&m2), "mean at step {k}");
        assert_eq!(bits(&v1), bits(&v2), "variance at step {k}");
        bg.update(&x, &[y], k as f64, &[0.0025]).unwrap();
        inl.update(&x, &[y], k as f64, &[0.0025]).unwrap();
        assert!(bg.wait_idle(Duration::from_secs(10)));
    }
    assert_eq!(bg.dropped_samples(), 0);
}

#[test]
fn drop_joins_the_worker_threads_promptly() {
    let mut cfg = config(true);
    cfg["refit_every_blocks"] = json!(1);
    cfg["refit_steps"] = json!(1000);
    let mut m = RcaGp::from_json(&cfg, D, 1).unwrap();
    feed(&mut m, 0..64);
    assert!(m.wait_idle(Duration::from_secs(10)));
    let start = Instant::now();
    drop(m);
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "destroy took {:?}",
        start.elapsed()
    );
}

#[test]
fn outputs_share_inputs_and_blocks_exactly() {
    // With output-independent actions, output o of a 3-output model equals a 1-output model
    // fed output o alone.
    let p = 3;
    let mk = |p: usize, sf: f64, sn: f64| {
        let hyper: Vec<_> = (0..p)
            .map(|_| json!({"sigma_f": sf, "sigma_n": sn, "lengthscales": [0.8, 0.9]}))
            .collect();
        json!({"hyper": hyper, "blocks": 6, "block_size": 5, "background": false,
               "refit_every_blocks": 0, "actions": "uniform"})
    };
    let hyper: Vec<_> = (0..p)
        .map(|o| json!({"sigma_f": 1.0 + 0.2 * o as f64, "sigma_n": 0.05 + 0.02 * o as f64, "lengthscales": [0.8, 0.9]}))
        .collect();
    let cfg_multi = json!({"hyper": hyper, "blocks": 6, "block_size": 5, "background": false,
                           "refit_every_blocks": 0, "actions": "uniform"});
    let mut multi = RcaGp::from_json(&cfg_multi, D, p).unwrap();
    let mut singles: Vec<RcaGp> = (0..p)
        .map(|o| {
            RcaGp::from_json(&mk(1, 1.0 + 0.2 * o as f64, 0.05 + 0.02 * o as f64), D, 1).unwrap()
        })
        .collect();
    let (mut mm, mut vm) = (vec![0.0; p], vec![0.0; p]);
    let (mut ms, mut vs) = ([0.0], [0.0]);
    let mut rng = Rng(3);
    for k in 0..150 {
        let (x, y0) = sample(k);
        let y: Vec<f64> = (0..p)
            .map(|o| y0 * (1.0 + o as f64) + if rng.uniform() < 0.03 { 5.0 } else { 0.0 })
            .collect();
        let nv: Vec<f64> = (0..p).map(|o| (0.05 + 0.02 * o as f64).powi(2)).collect();
        multi.predict(&x, &mut mm, &mut vm).unwrap();
        for (o, s) in singles.iter_mut().enumerate() {
            s.predict(&x, &mut ms, &mut vs).unwrap();
            assert!(
                (mm[o] - ms[0]).abs() <= 1e-12 * ms[0].abs().max(1.0),
                "step {k} output {o}: {} vs {}",
                mm[o],
                ms[0]
            );
            assert!((vm[o] - vs[0]).abs() <= 1e-12 * vs[0].abs().max(1.0));
            s.update(&x, &[y[o]], 0.0, &[nv[o]]).unwrap();
        }
        multi.update(&x, &y, 0.0, &nv).unwrap();
    }
}

#[test]
fn per_sample_noise_enters_the_per_point_noise() {
    let mut cfg = config(false);
    cfg["weight_center"] = json!("prior");
    let mut m = RcaGp::from_json(&cfg, D, 1).unwrap();
    for k in 0..40 {
        let (x, y) = sample(k);
        m.update(&x, &[y], 0.0, &[0.001 * (1 + k % 5) as f64])
            .unwrap();
    }
    let problem = m.window_problem().unwrap().unwrap();
    let noise = &problem.outputs[0].0.noise;
    assert_eq!(noise.len(), 32);
    // Slots are replaced in place: slots 0 and 1 now hold samples 32..40, the rest 8..32.
    for (l, v) in noise.iter().enumerate() {
        let k = if l < 8 { 32 + l } else { l };
        assert_eq!(*v, 0.001 * (1 + k % 5) as f64, "window row {l}");
    }
    // A larger noise everywhere gives a larger posterior variance at the data.
    let mut loud = RcaGp::from_json(&cfg, D, 1).unwrap();
    let mut quiet = RcaGp::from_json(&cfg, D, 1).unwrap();
    for k in 0..40 {
        let (x, y) = sample(k);
        loud.update(&x, &[y], 0.0, &[0.1]).unwrap();
        quiet.update(&x, &[y], 0.0, &[0.001]).unwrap();
    }
    let (x, _) = sample(30);
    let (mut mu, mut vl, mut vq) = ([0.0], [0.0], [0.0]);
    loud.predict(&x, &mut mu, &mut vl).unwrap();
    quiet.predict(&x, &mut mu, &mut vq).unwrap();
    assert!(
        vl[0] > 3.0 * vq[0],
        "noise 0.1 → var {} vs noise 0.001 → var {}",
        vl[0],
        vq[0]
    );
}

#[test]
fn glitches_do_not_bend_the_stream_model() {
    // The same stream with 2 % spikes of +10: RCaGP stays near the clean target, the same
    // model with a huge threshold (no robustness) does not.
    let run = |glitch: bool, robust: bool| -> f64 {
        let mut cfg = json!({
            "hyper": {"sigma_f": 1.0, "sigma_n": 0.05, "lengthscales": [0.8, 0.9]},
            "blocks": 16, "block_size": 8, "background": false, "refit_every_blocks": 0,
            // Every sample of this 1 kHz stream, as the thresholds were set for.
            "admit_interval_s": 0.0,
        });
        if !robust {
            cfg["c_min"] = json!(1e9);
        }
        let mut m = RcaGp::from_json(&cfg, D, 1).unwrap();
        let mut rng = Rng(11);
        let (mut mu, mut var) = ([0.0], [0.0]);
        let mut sq = 0.0;
        let mut count = 0;
        for k in 0..2000 {
            let (x, y) = sample(k);
            m.predict(&x, &mut mu, &mut var).unwrap();
            if k > 500 {
                sq += (mu[0] - y).powi(2);
                count += 1;
            }
            let spike = glitch && rng.uniform() < 0.02;
            let y_obs = y + 0.05 * rng.normal() + if spike { 10.0 } else { 0.0 };
            m.update(&x, &[y_obs], k as f64 * 0.001, &[0.0025]).unwrap();
        }
        (sq / count as f64).sqrt()
    };
    let (robust_clean, robust_glitch) = (run(false, true), run(true, true));
    let (plain_clean, plain_glitch) = (run(false, false), run(true, false));
    assert!(
        robust_glitch < 1.5 * robust_clean.max(0.02),
        "RCaGP RMSE {robust_clean} → {robust_glitch}"
    );
    assert!(
        plain_glitch > 3.0 * plain_clean.max(0.02),
        "non-robust RMSE {plain_clean} → {plain_glitch}"
    );
}

#[test]
fn bad_input_and_config_are_errors() {
    let mut m = RcaGp::from_json(&config(true), D, 2).unwrap_err_or_model();
    let (mut mu, mut var) = ([0.0; 2], [0.0; 2]);
    assert!(matches!(
        m.predict(&[0.0], &mut mu, &mut var),
        Err(ModelError::Dimension { what: "x", .. })
    ));
    assert!(matches!(
        m.predict(&[f64::NAN, 0.0], &mut mu, &mut var),
        Err(ModelError::NonFinite { .. })
    ));
    assert!(matches!(
        m.update(&[0.0, 0.0], &[1.0], 0.0, &[0.1, 0.1]),
        Err(ModelError::Dimension { what: "y", .. })
    ));
    assert!(matches!(
        m.update(&[0.0, 0.0], &[1.0, f64::INFINITY], 0.0, &[0.1, 0.1]),
        Err(ModelError::NonFinite { .. })
    ));
    assert!(
        m.update(&[0.0, 0.0], &[1.0, 1.0], 0.0, &[0.1, 0.0])
            .is_err(),
        "zero noise"
    );
    assert!(
        m.update(&[0.0, 0.0], &[1.0, 1.0], f64::NAN, &[0.1, 0.1])
            .is_err(),
        "NaN time"
    );
    let cases = [
        json!({}),
        json!({"hyper": {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [1.0]}}),
        json!({"hyper": {"sigma_f": -1.0, "sigma_n": 0.1, "lengthscales": [1.0, 1.0]}}),
        json!({"hyper": [{"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [1.0, 1.0]},
                          {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [2.0, 1.0]}]}),
        json!({"hyper": {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [1.0, 1.0]}, "kernel": "cubic"}),
        json!({"hyper": {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [1.0, 1.0]}, "blocks": 0}),
        json!({"hyper": {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [1.0, 1.0]}, "blocks": 5000}),
        json!({"hyper": {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [1.0, 1.0]}, "refit_max_duty": 0.0}),
        json!({"hyper": {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [1.0, 1.0]}, "epsilon": 1.5}),
        json!({"hyper": {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [1.0, 1.0]}, "beta": "large"}),
        json!({"hyper": {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [1.0, 1.0]}, "no_such_key": 1}),
    ];
    for c in cases {
        let e = RcaGp::from_json(&c, D, 2).unwrap_err();
        assert!(
            e.to_string().starts_with("invalid config: rcagp:"),
            "{c}: {e}"
        );
    }
}

trait UnwrapModel {
    fn unwrap_err_or_model(self) -> RcaGp;
}
impl UnwrapModel for Result<RcaGp, ModelError> {
    fn unwrap_err_or_model(self) -> RcaGp {
        self.unwrap()
    }
}

#[test]
fn a_full_queue_drops_the_oldest_samples() {
    let mut cfg = config(true);
    cfg["queue_capacity"] = json!(8);
    cfg["blocks"] = json!(16);
    let mut m = RcaGp::from_json(&cfg, D, 1).unwrap();
    let gate = m.gate().unwrap();
    gate.close();
    feed(&mut m, [0]);
    wait_at_the_gate(&m);
    // The worker is held: 20 more samples overflow the 8-sample queue.
    feed(&mut m, 1..=20);
    assert_eq!(m.dropped_samples(), 12);
    m.gate().unwrap().open();
    assert!(m.wait_idle(Duration::from_secs(10)));
    let problem = m.window_problem().unwrap().unwrap();
    // Sample 0, then the newest 8 (13..=20): the oldest waiting ones were dropped.
    let kept: Vec<f64> = problem.x.chunks(D).map(|r| r[0]).collect();
    let expected: Vec<f64> = std::iter::once(0)
        .chain(13..=20)
        .map(|k| sample(k).0[0])
        .collect();
    assert_eq!(kept, expected);
}

#[test]
fn samples_are_admitted_at_the_configured_spacing_of_their_time_stamps() {
    let cfg = |interval: f64| {
        json!({
            "hyper": {"sigma_f": 1.0, "sigma_n": 0.05, "lengthscales": [0.8, 0.9]},
            "blocks": 8, "block_size": 4, "background": false, "refit_every_blocks": 0,
            "admit_interval_s": interval,
        })
    };
    // Samples in the window (32 at most) after 100 updates stamped by `stamp`.
    let admitted = |interval: f64, stamp: &dyn Fn(usize) -> f64| -> u64 {
        let mut m = RcaGp::from_json(&cfg(interval), D, 1).unwrap();
        for k in 0..100 {
            let x = [0.01 * k as f64, 0.0];
            m.update(&x, &[0.0], stamp(k), &[0.0025]).unwrap();
        }
        m.stats().samples_stored
    };
    let at_1khz = |k: usize| k as f64 * 0.001;
    assert_eq!(admitted(0.005, &at_1khz), 20, "every 5 ms of 100 ms");
    assert_eq!(admitted(0.0, &at_1khz), 32, "every sample, the window full");
    assert_eq!(
        admitted(0.1, &|k| k as f64 * 0.01),
        10,
        "every 0.1 s of 1 s"
    );
    assert_eq!(admitted(0.1, &|_| 0.0), 32, "stamps that never advance");
    // Stamps back to 0 after 50 samples: the first sample and the one at the reset.
    assert_eq!(admitted(0.5, &|k| (k % 50) as f64 * 0.01), 2);
    assert!(RcaGp::from_json(&cfg(-1.0), D, 1).is_err());
}

/// `weight_profile` reaches the streaming model: with the threshold above every |y − m|,
/// `flat_imq` gives every point full weight, so the model equals the non-robust one
/// (the IMQ with c → ∞) to rounding, while the IMQ at the same threshold still inflates
/// the noise of every point by 1 + t²/c² and predicts differently.
#[test]
fn flat_imq_inside_its_threshold_is_the_non_robust_model() {
    let model = |profile: &str, c_min: f64| {
        let mut cfg = config(false);
        cfg["weight_profile"] = json!(profile);
        cfg["c_min"] = json!(c_min);
        let mut m = RcaGp::from_json(&cfg, D, 1).unwrap();
        feed(&mut m, 0..37);
        m
    };
    let max_abs_y = (0..37).map(|k| sample(k).1.abs()).fold(0.0, f64::max);
    let c = 1.5 * max_abs_y;
    let mut flat = model("flat_imq", c);
    let mut plain = model("imq", 1e12);
    let mut imq = model("imq", c);
    let (mut largest_gap, mut mf, mut vf, mut mp, mut vp, mut mi, mut vi) =
        (0.0f64, [0.0], [0.0], [0.0], [0.0], [0.0], [0.0]);
    for k in (0..60).step_by(3) {
        let (x, _) = sample(k);
        flat.predict(&x, &mut mf, &mut vf).unwrap();
        plain.predict(&x, &mut mp, &mut vp).unwrap();
        imq.predict(&x, &mut mi, &mut vi).unwrap();
        assert!(
            (mf[0] - mp[0]).abs() <= 1e-9,
            "x {x:?}: {} vs {}",
            mf[0],
            mp[0]
        );
        assert!(
            (vf[0] - vp[0]).abs() <= 1e-9 * vp[0].max(1e-6),
            "x {x:?}: {} vs {}",
            vf[0],
            vp[0]
        );
        largest_gap = largest_gap.max((vi[0] - vp[0]) / vp[0]);
    }
    assert!(
        largest_gap > 1e-3,
        "the IMQ at the same c predicts like the plain model ({largest_gap})"
    );
}
