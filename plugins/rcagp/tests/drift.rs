//! Uncertainty injection (`drift` key): every window sample's base noise becomes
//! drift.var(ν_i, t_now − t_i) in RCaGP's per-point noise; blocks whose samples have all
//! expired leave the window. Checked against independent dense computations (a
//! heteroscedastic GP written here with nalgebra, the crate's exact RCGP baseline fed with
//! noise aged here), against a from-scratch batch RCaGP of the window after expiry has
//! rotated the ring, on expiry edges, on a drifting target, and for save/load.
#![allow(clippy::unwrap_used)]

use gpn_gp_core::drift::Drift;
use gpn_gp_core::model::OnlineModel;
use gpn_rcagp::RcaGp;
use gpn_rcagp::baselines::DensePosterior;
use gpn_rcagp::kernel::{KernelKind, KernelParams};
use gpn_rcagp::posterior::{OutputData, OutputParams};
use gpn_rcagp::weights::{Beta, WeightProfile};
use nalgebra::{DMatrix, DVector};
use serde_json::{Value, json};

const ELL: f64 = 0.7;

fn cfg(drift: Value, blocks: usize, block_size: usize) -> Value {
    json!({
        "hyper": {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [ELL]},
        "blocks": blocks, "block_size": block_size, "background": false,
        "refit_every_blocks": 0, "drift": drift,
    })
}

/// Sample k of a 1-D stream at 10 Hz: (x, y, t, ν), with an outlier every 11th sample.
fn sample(k: usize) -> (f64, f64, f64, f64) {
    let x = 2.0 * (0.9 * k as f64).sin();
    let t = 0.1 * k as f64;
    let glitch = if k % 11 == 5 { 4.0 } else { 0.0 };
    let y = (2.0 * x).sin() + 0.3 * t + glitch;
    (x, y, t, 0.01 * (1 + k % 3) as f64)
}

/// The first samples of the stream, as fed to a model: inputs, targets, stamps and noise.
struct Fed {
    x: Vec<f64>,
    y: Vec<f64>,
    t: Vec<f64>,
    nu: Vec<f64>,
}

impl Fed {
    /// The noise of each sample aged by `var(ν, age)` to the last sample's time.
    fn aged(&self, var: impl Fn(f64, f64) -> f64) -> Vec<f64> {
        let t_now = self.t[self.t.len() - 1];
        self.nu
            .iter()
            .zip(&self.t)
            .map(|(&nu, &t)| var(nu, t_now - t))
            .collect()
    }
}

/// Updates `m` with samples 0..n, their outliers left out when `without_outliers`.
fn feed(m: &mut RcaGp, n: usize, without_outliers: bool) -> Fed {
    let mut fed = Fed {
        x: vec![],
        y: vec![],
        t: vec![],
        nu: vec![],
    };
    for k in 0..n {
        let (x, mut y, t, nu) = sample(k);
        if without_outliers && k % 11 == 5 {
            y -= 4.0;
        }
        m.update(&[x], &[y], t, &[nu]).unwrap();
        fed.x.push(x);
        fed.y.push(y);
        fed.t.push(t);
        fed.nu.push(nu);
    }
    fed
}

fn se(a: f64, b: f64) -> f64 {
    (-0.5 * ((a - b) / ELL).powi(2)).exp()
}

/// Dense GP with per-point noise `v`, unit outputscale, zero prior mean: (mean, latent var).
fn dense_gp(x: &[f64], y: &[f64], v: &[f64], xq: f64) -> (f64, f64) {
    let n = x.len();
    let k = DMatrix::from_fn(n, n, |i, j| {
        se(x[i], x[j]) + if i == j { v[i] } else { 0.0 }
    });
    let chol = k.cholesky().unwrap();
    let kx = DVector::from_iterator(n, x.iter().map(|&xi| se(xi, xq)));
    let alpha = chol.solve(&DVector::from_column_slice(y));
    let w = chol.solve(&kx);
    (kx.dot(&alpha), 1.0 - kx.dot(&w))
}

fn predict1(m: &mut RcaGp, x: f64) -> (f64, f64) {
    let (mut mu, mut var) = ([0.0], [0.0]);
    m.predict(&[x], &mut mu, &mut var).unwrap();
    (mu[0], var[0])
}

const PROBES: [f64; 5] = [-1.7, -0.4, 0.0, 0.9, 1.8];

#[test]
fn aged_noise_equals_an_exact_heteroscedastic_gp() {
    // Block size 1 (every point its own action: RCaGP = RCGP) and c ≥ 1e6 (weights flat:
    // RCGP = GP up to ~1e−12), refreshed at every sample: the model must be the dense GP with
    // noise ν_i + κ²(t_now − t_i)².
    let kappa = 0.3;
    let drift = json!({"model": "quadratic", "kappa_per_s": kappa, "max_var_ratio": 1e12,
                       "refresh_hz": 1e6});
    let mut c = cfg(drift, 30, 1);
    c["c_min"] = json!(1e6);
    let mut m = RcaGp::from_json(&c, 1, 1).unwrap();
    // No outliers for the plain GP.
    let fed = feed(&mut m, 30, true);
    let aged = fed.aged(|nu, age| nu + (kappa * age).powi(2));
    let (xs, ys, nus) = (&fed.x, &fed.y, &fed.nu);
    let mut worst_fresh_gap = 0.0f64;
    for xq in PROBES {
        let (mu, var) = predict1(&mut m, xq);
        let (mu_ref, var_ref) = dense_gp(xs, ys, &aged, xq);
        assert!((mu - mu_ref).abs() < 1e-8, "mean at {xq}: {mu} vs {mu_ref}");
        assert!(
            (var - var_ref).abs() < 1e-8,
            "var at {xq}: {var} vs {var_ref}"
        );
        let (mu_fresh, _) = dense_gp(xs, ys, nus, xq);
        worst_fresh_gap = worst_fresh_gap.max((mu_fresh - mu_ref).abs());
    }
    // The comparison can fail: without ageing the answer is far off.
    assert!(
        worst_fresh_gap > 1e-2,
        "ageing changed little: {worst_fresh_gap}"
    );
}

#[test]
fn aged_noise_equals_the_exact_rcgp_baseline() {
    // With outliers and the default thresholds, for normalized and fixed β, three drift
    // models: the model equals the crate's dense exact RCGP fed with noise aged here.
    let drifts = [
        json!({"model": "quadratic", "kappa_per_s": 0.2, "max_var_ratio": 1e12, "refresh_hz": 1e6}),
        json!({"model": "linear", "q_per_s": 0.05, "max_var_ratio": 1e12, "refresh_hz": 1e6}),
        json!({"model": "exponential", "tau_s": 1.5, "max_var_ratio": 1e12, "refresh_hz": 1e6}),
    ];
    for dj in drifts {
        let dr = Drift::from_config(&json!({ "drift": dj }))
            .unwrap()
            .unwrap();
        for (beta_json, beta) in [
            (json!("normalized"), Beta::Normalized),
            (json!(1.0), Beta::Fixed(1.0)),
        ] {
            let mut c = cfg(dj.clone(), 40, 1);
            c["beta"] = beta_json;
            let mut m = RcaGp::from_json(&c, 1, 1).unwrap();
            let fed = feed(&mut m, 40, false);
            let aged = fed.aged(|nu, age| dr.var(nu, age));
            let window = m.window_problem().unwrap().unwrap();
            let (wdata, _) = &window.outputs[0];
            for (a, b) in wdata.noise.iter().zip(&aged) {
                assert!((a - b).abs() <= 1e-12 * b, "window noise {a} vs {b}");
            }
            let n = fed.y.len();
            let data = OutputData {
                y: fed.y.clone(),
                noise: aged,
                prior_mean: vec![0.0; n],
                center: vec![0.0; n],
                c2: wdata.c2.clone(), // the window's threshold (not what is tested)
            };
            let params = OutputParams {
                outputscale: 1.0,
                sigma2: 1.0,
                beta,
                profile: WeightProfile::Imq,
            };
            let kernel = KernelParams {
                kind: KernelKind::Rbf,
                lengthscales: vec![ELL],
                outputscale: 1.0,
            };
            let reference =
                DensePosterior::exact_rcgp(&kernel, &fed.x, 1, &data, &params, 0.0).unwrap();
            for xq in PROBES {
                let (mu, var) = predict1(&mut m, xq);
                let (mu_ref, var_ref) = reference.predict(&[xq]);
                assert!(
                    (mu - mu_ref).abs() < 1e-8 && (var - var_ref).abs() < 1e-8,
                    "{dj} β {beta:?} at {xq}: ({mu}, {var}) vs ({mu_ref}, {var_ref})"
                );
            }
        }
    }
}

/// Streaming predictions against a from-scratch batch RCaGP of the current window.
fn assert_equals_batch(m: &mut RcaGp, what: &str) {
    let problem = m.window_problem().unwrap().unwrap();
    let fitted = problem.fit().unwrap();
    for xq in PROBES {
        let (mu, var) = predict1(m, xq);
        let (mu_ref, var_ref) = fitted.predict(&problem, 0, &[xq], 0.0);
        assert!(
            (mu - mu_ref).abs() < 1e-8 && (var - var_ref).abs() < 1e-8,
            "{what} at {xq}: ({mu}, {var}) vs batch ({mu_ref}, {var_ref})"
        );
    }
}

#[test]
fn expired_blocks_leave_and_the_rest_stays_exact() {
    // Linear drift, ν = 0.01, ratio 10: a sample expires past 0.09/q = 1 s of age.
    let drift = json!({"model": "linear", "q_per_s": 0.09, "max_var_ratio": 10, "refresh_hz": 10});
    let mut m = RcaGp::from_json(&cfg(drift, 32, 4), 1, 1).unwrap();
    let mut t = 0.0;
    let mut k = 0;
    let mut feed = |m: &mut RcaGp, count: usize, dt: f64| {
        for _ in 0..count {
            let x = 2.0 * (0.37 * k as f64).sin();
            m.update(&[x], &[(2.0 * x).sin()], t, &[0.01]).unwrap();
            t += dt;
            k += 1;
        }
        t - dt
    };
    // 200 Hz for 1 s: 200 samples > the 128-sample window, so the ring has wrapped and
    // nothing has expired yet (ages < 1 s).
    let _ = feed(&mut m, 200, 0.005);
    assert_eq!(m.drift_counters().unwrap().0, 0);
    let n_full = m.window_problem().unwrap().unwrap().x.len();
    assert_eq!(n_full, 128);
    assert_equals_batch(&mut m, "full ring");
    // Then 20 Hz for 3 s: the dense part expires while the ring is wrapped.
    let t_last = feed(&mut m, 60, 0.05);
    let (expired, refreshes) = m.drift_counters().unwrap();
    assert!(expired > 0 && refreshes > 0);
    let problem = m.window_problem().unwrap().unwrap();
    // Every kept point is younger than max age + refresh period + one block's span; the
    // oldest is older than max age − one sample step (its block was not yet all expired).
    let n_kept = problem.x.len();
    assert!(n_kept < 60, "kept {n_kept} points");
    let oldest_age = t_last - window_oldest_t(&m);
    assert!(
        oldest_age > 1.0 - 0.05 - 1e-9 && oldest_age <= 1.0 + 0.1 + 4.0 * 0.05 + 1e-9,
        "oldest kept age {oldest_age}"
    );
    assert_equals_batch(&mut m, "after expiry with a wrapped ring");
    // Refill past the window again after the rotation: still exact.
    let _ = feed(&mut m, 300, 0.002);
    assert_equals_batch(&mut m, "refilled after expiry");
}

/// Oldest stamp in the window, recovered from the aged noise of the linear model
/// (ν(t) = 0.01 + 0.09·age at the last refresh) — ages are not exported otherwise.
fn window_oldest_t(m: &RcaGp) -> f64 {
    let problem = m.window_problem().unwrap().unwrap();
    let max_noise = problem.outputs[0]
        .0
        .noise
        .iter()
        .fold(0.0f64, |a, &b| a.max(b));
    let max_age_at_refresh = (max_noise - 0.01) / 0.09;
    let (_, t_ref) = last_refresh(m);
    t_ref - max_age_at_refresh
}

/// (t_newest, t_ref) from a saved state's trailing drift section.
fn last_refresh(m: &RcaGp) -> (f64, f64) {
    let bytes = m.save().unwrap();
    let tail = &bytes[bytes.len() - 32..];
    let f = |i: usize| f64::from_le_bytes(tail[i * 8..i * 8 + 8].try_into().unwrap());
    (f(0), f(1))
}

#[test]
fn after_a_long_gap_only_the_newest_sample_stays() {
    let drift = json!({"model": "quadratic", "kappa_per_s": 0.5, "max_var_ratio": 100});
    for block_size in [1, 4] {
        let mut m = RcaGp::from_json(&cfg(drift.clone(), 16, block_size), 1, 1).unwrap();
        for k in 0..64 {
            let (x, y, t, nu) = sample(k);
            m.update(&[x], &[y], t, &[nu]).unwrap();
        }
        // A sample 1000 s later: every earlier sample is far past its cap.
        m.update(&[0.25], &[3.0], 1000.0, &[0.01]).unwrap();
        let problem = m.window_problem().unwrap().unwrap();
        assert_eq!(problem.x, vec![0.25], "block size {block_size}");
        assert_equals_batch(&mut m, "only the newest sample");
        assert!(
            predict1(&mut m, 0.25).0 > 1.0,
            "the newest sample is learned"
        );
        // And it keeps learning normally afterwards.
        for k in 0..40 {
            let (x, y, _, nu) = sample(k);
            m.update(&[x], &[y], 1000.0 + 0.1 * (k + 1) as f64, &[nu])
                .unwrap();
        }
        assert_equals_batch(&mut m, "after the gap");
    }
}

#[test]
fn a_drifting_target_is_tracked_better_with_drift() {
    // y = sin(2x) + a(t), the offset a rising 0 → 2.5 over 30 s; x sweeps its range every
    // 2 s; 50 Hz; a 256-sample window (5 s). One-step-ahead errors and ±2σ coverage
    // (latent variance + noise) over the last 20 s.
    let run = |drift: Value| {
        let mut c = cfg(drift, 64, 4);
        c["hyper"]["sigma_f"] = json!(1.5);
        let mut m = RcaGp::from_json(&c, 1, 1).unwrap();
        let (mut se_sum, mut inside, mut count) = (0.0, 0, 0);
        let nu = 0.01;
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        for k in 0..1500 {
            let t = k as f64 * 0.02;
            let x = 2.0 * (std::f64::consts::PI * t).sin();
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let u = (rng >> 11) as f64 / (1u64 << 53) as f64;
            let y = (2.0 * x).sin() + 2.5 * t / 30.0 + 0.1 * (u - 0.5) * 12f64.sqrt();
            if t >= 10.0 {
                let (mu, var) = predict1(&mut m, x);
                se_sum += (mu - y).powi(2);
                inside += usize::from((mu - y).abs() <= 2.0 * (var + nu).sqrt());
                count += 1;
            }
            m.update(&[x], &[y], t, &[nu]).unwrap();
        }
        ((se_sum / count as f64).sqrt(), inside as f64 / count as f64)
    };
    let (rms_off, cov_off) = run(Value::Null);
    let (rms_on, cov_on) = run(json!({"model": "quadratic", "kappa_per_s": 0.1}));
    println!(
        "drifting target: RMS off {rms_off:.4} on {rms_on:.4}; coverage off {cov_off:.3} on {cov_on:.3}"
    );
    // For the results page: the effect of κ (the true drift rate is 2.5/30 ≈ 0.083 per s).
    for kappa in [0.02, 0.05, 0.2, 0.5] {
        let (rms, cov) = run(json!({"model": "quadratic", "kappa_per_s": kappa}));
        println!("drifting target, kappa_per_s {kappa}: RMS {rms:.4}, coverage {cov:.3}");
    }
    for (name, dj) in [
        ("linear q 0.01", json!({"model": "linear", "q_per_s": 0.01})),
        (
            "exponential tau 1",
            json!({"model": "exponential", "tau_s": 1.0}),
        ),
    ] {
        let (rms, cov) = run(dj);
        println!("drifting target, {name}: RMS {rms:.4}, coverage {cov:.3}");
    }
    assert!(rms_on < 0.8 * rms_off, "RMS off {rms_off} on {rms_on}");
    assert!(cov_on > cov_off, "coverage off {cov_off} on {cov_on}");
}

#[test]
fn save_and_load_keep_the_drift_state() {
    let drift =
        json!({"model": "quadratic", "kappa_per_s": 0.4, "max_var_ratio": 50, "refresh_hz": 3});
    let c = cfg(drift, 8, 4);
    let mut a = RcaGp::from_json(&c, 1, 1).unwrap();
    for k in 0..70 {
        let (x, y, t, nu) = sample(k);
        a.update(&[x], &[y], t, &[nu]).unwrap();
    }
    let state = a.save().unwrap();
    let mut b = RcaGp::from_json(&c, 1, 1).unwrap();
    b.load(&state).unwrap();
    // The drift section (t_newest, t_ref, counters) comes back unchanged.
    assert_eq!(last_refresh(&b), last_refresh(&a));
    let tail = |v: &[u8]| v[v.len() - 16..].to_vec();
    assert!(
        tail(&b.save().unwrap()) == tail(&state),
        "drift counters restored"
    );
    // Both continue identically, bit for bit, through refreshes and expiry.
    for k in 70..200 {
        let (x, y, t, nu) = sample(k);
        a.update(&[x], &[y], t, &[nu]).unwrap();
        b.update(&[x], &[y], t, &[nu]).unwrap();
        for xq in PROBES {
            let (pa, pb) = (predict1(&mut a, xq), predict1(&mut b, xq));
            assert_eq!(pa.0.to_bits(), pb.0.to_bits(), "mean at sample {k}");
            assert_eq!(pa.1.to_bits(), pb.1.to_bits(), "var at sample {k}");
        }
    }
    assert!(
        a.drift_counters().unwrap().0 > 0,
        "blocks expired during the run"
    );
    assert_eq!(a.drift_counters().unwrap(), b.drift_counters().unwrap());
    // A drift state does not load into a model without drift, nor with other settings.
    let mut plain = RcaGp::from_json(&cfg(Value::Null, 8, 4), 1, 1).unwrap();
    assert!(plain.load(&state).is_err());
    let other =
        json!({"model": "quadratic", "kappa_per_s": 0.5, "max_var_ratio": 50, "refresh_hz": 3});
    let mut o = RcaGp::from_json(&cfg(other, 8, 4), 1, 1).unwrap();
    assert!(o.load(&state).is_err());
    // A state saved without drift loads into a drift model, which ages it from its newest
    // sample (the window's noise grows).
    let mut p0 = RcaGp::from_json(&cfg(Value::Null, 8, 4), 1, 1).unwrap();
    for k in 0..30 {
        let (x, y, t, nu) = sample(k);
        p0.update(&[x], &[y], t, &[nu]).unwrap();
    }
    let mut aged = RcaGp::from_json(&c, 1, 1).unwrap();
    aged.load(&p0.save().unwrap()).unwrap();
    let before = p0.window_problem().unwrap().unwrap();
    let after = aged.window_problem().unwrap().unwrap();
    assert_eq!(before.x, after.x);
    let (nb, na) = (&before.outputs[0].0.noise, &after.outputs[0].0.noise);
    assert!(na[0] > nb[0] && na[na.len() - 1] == nb[nb.len() - 1]);
    assert_equals_batch(&mut aged, "pre-drift state aged at load");
}

#[test]
fn bad_drift_settings_are_rejected() {
    for bad in [
        json!({"model": "quadratic"}),
        json!({"model": "cubic", "kappa_per_s": 1.0}),
        json!({"model": "linear", "q_per_s": -1.0}),
        json!({"model": "quadratic", "kappa_per_s": 1.0, "max_var_ratio": 1.0}),
        json!({"model": "quadratic", "kappa_per_s": 1.0, "lambda": 1.0}),
        json!(3.0),
    ] {
        let err = RcaGp::from_json(&cfg(bad.clone(), 8, 4), 1, 1).unwrap_err();
        assert!(err.to_string().contains("drift"), "{bad}: {err}");
    }
}

#[test]
fn background_mode_reaches_the_inline_state() {
    // Refresh and expiry run on the worker in background mode; refreshes follow the
    // samples' clock, so after the worker has drained the queue the posterior is the
    // inline model's (up to the order of incremental vs full rebuilds).
    let drift = json!({"model": "linear", "q_per_s": 0.05, "max_var_ratio": 20, "refresh_hz": 4});
    let inline = cfg(drift.clone(), 16, 4);
    let mut bg_cfg = inline.clone();
    bg_cfg["background"] = json!(true);
    let mut a = RcaGp::from_json(&inline, 1, 1).unwrap();
    let mut b = RcaGp::from_json(&bg_cfg, 1, 1).unwrap();
    for k in 0..150 {
        let (x, y, t, nu) = sample(k);
        let t = t + if k >= 100 { 5.0 } else { 0.0 }; // a gap: old blocks expire
        a.update(&[x], &[y], t, &[nu]).unwrap();
        b.update(&[x], &[y], t, &[nu]).unwrap();
        if k % 10 == 0 {
            assert!(b.wait_idle(std::time::Duration::from_secs(10)));
        }
    }
    assert!(b.wait_idle(std::time::Duration::from_secs(10)));
    assert_eq!(a.drift_counters().unwrap(), b.drift_counters().unwrap());
    assert!(a.drift_counters().unwrap().0 > 0);
    assert_eq!(
        a.window_problem().unwrap().unwrap().outputs[0].0.noise,
        b.window_problem().unwrap().unwrap().outputs[0].0.noise
    );
    for xq in PROBES {
        let (pa, pb) = (predict1(&mut a, xq), predict1(&mut b, xq));
        assert!(
            (pa.0 - pb.0).abs() < 1e-9 && (pa.1 - pb.1).abs() < 1e-9,
            "{pa:?} vs {pb:?}"
        );
    }
}
