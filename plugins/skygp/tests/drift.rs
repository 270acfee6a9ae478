//! Uncertainty injection (`drift` key, specs/tvgp.md §1.2, §6.1): behaviour without the
//! key, each expert's posterior against an independent heteroscedastic exact GP, expiry
//! and retirement, tracking a drifting target, and the refresh thread never blocking the
//! control thread.
#![allow(clippy::unwrap_used)] // Tests: a panic is the failure report.

mod common;

use common::se;
use gpn_gp_core::model::OnlineModel;
use gpn_plugin_api::Plugin;
use gpn_skygp::SkyGp;
use gpn_test_support::Xorshift as Rng;
use nalgebra::{DMatrix, DVector};
use serde_json::json;
use std::collections::HashMap;

/// The three drift models, written out here independently of `gpn_gp_core::drift`.
#[derive(Clone, Copy, Debug)]
enum Model {
    Quadratic(f64),
    Linear(f64),
    Exponential(f64),
}

impl Model {
    fn json(self, ratio: f64, hz: f64) -> serde_json::Value {
        match self {
            Model::Quadratic(k) => {
                json!({"model": "quadratic", "kappa_per_s": k, "max_var_ratio": ratio, "refresh_hz": hz})
            }
            Model::Linear(q) => {
                json!({"model": "linear", "q_per_s": q, "max_var_ratio": ratio, "refresh_hz": hz})
            }
            Model::Exponential(tau) => {
                json!({"model": "exponential", "tau_s": tau, "max_var_ratio": ratio, "refresh_hz": hz})
            }
        }
    }

    /// v(σ², a): σ² + κ²a², σ² + q·a, σ²·e^(a/τ); negative ages count as 0.
    fn var(self, base: f64, age: f64) -> f64 {
        let a = age.max(0.0);
        match self {
            Model::Quadratic(k) => base + k * k * a * a,
            Model::Linear(q) => base + q * a,
            Model::Exponential(tau) => base * (a / tau).exp(),
        }
    }
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

// ---------------------------------------------------------------------------------------
// (1) Without the key: exactly as before.

fn run_bits(cfg: &serde_json::Value, p: usize, steps: usize) -> (Vec<u64>, Vec<u8>) {
    let data = common::kin40k();
    let mut gp = SkyGp::from_json(cfg, 8, p).unwrap();
    let (mut mu, mut var) = (vec![0.0; p], vec![0.0; p]);
    let mut out = Vec::new();
    for i in 0..steps {
        let y: Vec<f64> = (0..p).map(|o| data.y[i] * (1.0 + o as f64)).collect();
        if i >= 1 {
            gp.predict(&data.x[i], &mut mu, &mut var).unwrap();
            out.extend(bits(&mu));
            out.extend(bits(&var));
        }
        gp.update(&data.x[i], &y, i as f64 * 0.01, &vec![0.003; p])
            .unwrap();
    }
    (out, gp.save_state().unwrap())
}

#[test]
fn without_drift_predictions_and_states_are_bit_identical() {
    let data = common::kin40k();
    for variant in ["fast", "dense"] {
        for preset in ["recommended", "reference"] {
            let base = json!({"variant": variant, "preset": preset, "max_experts": 40,
                              "hyper": [data.hyper.clone(), data.hyper.clone()]});
            let (want, state) = run_bits(&base, 2, 3000);
            assert!(want.len() > 10_000);
            for off in [json!(null), json!({"model": "none"})] {
                let mut cfg = base.clone();
                cfg["drift"] = off.clone();
                let (got, got_state) = run_bits(&cfg, 2, 3000);
                assert!(
                    got == want,
                    "{variant}/{preset}, drift = {off}: predictions differ"
                );
                assert!(
                    got_state == state,
                    "{variant}/{preset}, drift = {off}: saved states differ"
                );
                let gp = SkyGp::from_json(&cfg, 8, 2).unwrap();
                assert!(gp.drift().is_none() && gp.drift_stats().is_none());
            }
        }
    }
}

/// A state written by the code before the `drift` key existed (format 1) loads and
/// continues as the old code did (continuation recorded by that code): to 1e-12, since
/// Dense replacements now update the factor's row where that code refactored (same
/// matrix, other rounding).
#[test]
fn a_format_1_state_from_before_drift_loads_and_continues_identically() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
    let state = std::fs::read(format!("{dir}/skygp_state_v1.bin")).unwrap();
    let want: Vec<Vec<u64>> =
        std::fs::read_to_string(format!("{dir}/skygp_state_v1_continuation.txt"))
            .unwrap()
            .lines()
            .map(|l| l.split(' ').map(|v| v.parse().unwrap()).collect())
            .collect();
    let cfg = json!({
        "variant": "dense", "n_bar": 10, "n_cal": 3, "max_experts": 12,
        "hyper": [
            {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [0.6, 0.8]},
            {"sigma_f": 0.7, "sigma_n": 0.2, "lengthscales": [1.1, 0.5]}
        ]
    });
    let mut gp = SkyGp::from_json(&cfg, 2, 2).unwrap();
    gp.load_state(&state).unwrap();
    assert_eq!(gp.save_state().unwrap(), state, "re-saved byte for byte");
    let (mut m, mut v) = ([0.0; 2], [0.0; 2]);
    for (i, k) in (400..460).enumerate() {
        let t = k as f64 * 0.05;
        let x = [
            (1.3 * t).sin() * 2.0 + 0.1 * (7.0 * t).cos(),
            (0.7 * t).cos() * 1.5,
        ];
        let y = [
            x[0].sin() * x[1],
            (x[0] - x[1]).cos() + 0.05 * ((k * 31) % 7) as f64,
        ];
        gp.predict(&x, &mut m, &mut v).unwrap();
        for (got, &bits) in [m[0], m[1], v[0], v[1]].iter().zip(&want[i]) {
            let w = f64::from_bits(bits);
            assert!(
                (got - w).abs() <= 1e-12 * w.abs().max(1.0),
                "step {k}: {got} vs {w} recorded"
            );
        }
        gp.update(&x, &y, k as f64 * 0.01, &[0.01, 0.04]).unwrap();
    }
    // A model with drift refuses it, saying why.
    let mut with = cfg.clone();
    with["drift"] = Model::Quadratic(0.1).json(100.0, 10.0);
    let mut d = SkyGp::from_json(&with, 2, 2).unwrap();
    let err = d.load_state(&state).unwrap_err().to_string();
    assert!(err.contains("without drift"), "{err}");
    // And a model without drift refuses a drift state.
    let mut src = SkyGp::from_json(&with, 2, 2).unwrap();
    src.update(&[0.0, 0.0], &[1.0, 1.0], 0.0, &[0.0, 0.0])
        .unwrap();
    let err = gp
        .load_state(&src.save_state().unwrap())
        .unwrap_err()
        .to_string();
    assert!(err.contains("with drift"), "{err}");
}

#[test]
fn drift_config_is_validated() {
    let h = json!({"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [1.0]});
    let cases = [
        (json!({"model": "quadratic"}), "kappa_per_s is required"),
        (
            json!({"model": "cubic", "kappa_per_s": 1.0}),
            "drift.model must be",
        ),
        (
            json!({"model": "linear", "q_per_s": 1.0, "max_var_ratio": 0.5}),
            "max_var_ratio must be > 1",
        ),
        (
            json!({"model": "linear", "q_per_s": 1.0, "speed": 2}),
            "unknown key",
        ),
        (json!(3), "drift must be an object"),
    ];
    for (drift, want) in cases {
        let err = SkyGp::from_json(&json!({"hyper": h, "drift": drift}), 1, 1)
            .unwrap_err()
            .to_string();
        assert!(err.contains(want), "{drift}: {err}");
    }
    let zero_noise = json!({"sigma_f": 1.0, "sigma_n": 0.0, "lengthscales": [1.0]});
    let err = SkyGp::from_json(
        &json!({"hyper": zero_noise, "drift": Model::Linear(1.0).json(10.0, 10.0)}),
        1,
        1,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("drift needs sigma_n > 0"), "{err}");
    // Bad per-call values are errors with drift.
    let mut gp = SkyGp::from_json(
        &json!({"hyper": h, "drift": Model::Linear(1.0).json(10.0, 10.0)}),
        1,
        1,
    )
    .unwrap();
    assert!(gp.update(&[0.0], &[1.0], 0.0, &[-1.0]).is_err());
    assert!(gp.update(&[0.0], &[1.0], 0.0, &[f64::NAN]).is_err());
    assert!(gp.update(&[0.0], &[1.0], f64::INFINITY, &[0.0]).is_err());
    assert!(gp.update(&[0.0], &[1.0], 0.0, &[0.0]).is_ok());
}

// ---------------------------------------------------------------------------------------
// (2) Each expert = an independent heteroscedastic exact GP with v_i = drift.var(...).

/// What the test itself recorded of each sample, keyed by the bits of its output-0 target.
struct Record {
    by_y0: HashMap<u64, (f64, Vec<f64>)>,
}

#[derive(Clone)]
struct OutHyper {
    sf: f64,
    sn: f64,
    ell: Vec<f64>,
}

/// Checks every expert selected at `queries` against nalgebra: factor of K + diag(v) with
/// v_i = model.var(base_i, τ − t_i), the expert's mean and latent variance. `base_rule`
/// gives σ_i² of output o from the caller's noise variances of that sample. Returns the
/// largest relative errors (factor, mean, variance) and the experts checked.
/// The reference may also carry a jitter j·I on its diagonal (a Dense refactor's); each
/// expert-output counts its error under the closest of `jitters`.
#[allow(clippy::too_many_arguments)]
fn check_against_exact(
    gp: &mut SkyGp,
    rec: &Record,
    hyper: &[OutHyper],
    model: Model,
    base_rule: &dyn Fn(usize, &[f64]) -> f64,
    queries: &[Vec<f64>],
    tau_ok: &dyn Fn(f64) -> bool,
    jitters: &[f64],
) -> (f64, f64, f64, usize) {
    let p = hyper.len();
    let d = queries[0].len();
    let (mut mu, mut var) = (vec![0.0; p], vec![0.0; p]);
    let (mut e_l, mut e_m, mut e_v, mut checked) = (0.0f64, 0.0f64, 0.0f64, 0);
    for xq in queries {
        gp.predict(xq, &mut mu, &mut var).unwrap();
        let sel = gp.last_selected().to_vec();
        for (j, &pos) in sel.iter().enumerate() {
            let tau = gp.expert_factor_time(pos).unwrap();
            assert!(tau_ok(tau), "factor time {tau}");
            let (_, y0, _) = gp.expert_data(pos, 0).unwrap();
            let stamps: Vec<(f64, Vec<f64>)> =
                y0.iter().map(|y| rec.by_y0[&y.to_bits()].clone()).collect();
            // The model's own stamps agree with the test's record.
            let own_t = gp.expert_times(pos).unwrap();
            for (a, b) in own_t.iter().zip(&stamps) {
                assert_eq!(*a, b.0);
            }
            for (o, h) in hyper.iter().enumerate() {
                let (xs, ys, _) = gp.expert_data(pos, o).unwrap();
                let n = ys.len();
                let row = |s: usize| &xs[s * d..(s + 1) * d];
                let (sf2, ell) = (h.sf * h.sf, &h.ell);
                let v: Vec<f64> = stamps
                    .iter()
                    .map(|(t, nv)| model.var(base_rule(o, nv), tau - t))
                    .collect();
                let m_got = gp.last_expert_means(o)[j];
                let v_got = gp.last_expert_vars(o)[j];
                let mut best = (f64::INFINITY, f64::INFINITY, f64::INFINITY);
                for &jit in jitters {
                    let kmat = DMatrix::from_fn(n, n, |a, b| {
                        se(row(a), row(b), sf2, ell) + if a == b { v[a] + jit } else { 0.0 }
                    });
                    let chol = nalgebra::Cholesky::new(kmat).unwrap();
                    // Outputs have their own factor group here (distinct kernels) unless the
                    // caller says otherwise through `hyper`; compare the factor of group o
                    // when it exists.
                    let rel_l = if o < gp.n_factor_groups() {
                        let l = gp.expert_factor(pos, o).unwrap().to_matrix();
                        (&l - chol.l()).amax() / chol.l().amax()
                    } else {
                        0.0
                    };
                    let kq = DVector::from_fn(n, |a, _| se(row(a), xq, sf2, ell));
                    let m_ref = kq.dot(&chol.solve(&DVector::from_column_slice(ys)));
                    let w = chol.l().solve_lower_triangular(&kq).unwrap();
                    let v_ref = (sf2 - w.dot(&w)).max(1e-12);
                    let rel_m = (m_got - m_ref).abs() / m_ref.abs().max(1e-3);
                    let rel_v = (v_got - v_ref).abs() / v_ref.abs().max(1e-6);
                    if rel_l.max(rel_m).max(rel_v) < best.0.max(best.1).max(best.2) {
                        best = (rel_l, rel_m, rel_v);
                    }
                }
                e_l = e_l.max(best.0);
                e_m = e_m.max(best.1);
                e_v = e_v.max(best.2);
                checked += 1;
            }
        }
    }
    (e_l, e_m, e_v, checked)
}

/// Predicts at x, then learns (x, y(x)) at t with the caller noise `nv`, recording the
/// sample's stamp and noise under its first target (made unique by a k-dependent offset).
#[allow(clippy::too_many_arguments)]
fn learn_recorded(
    gp: &mut SkyGp,
    rec: &mut Record,
    rng: &mut Rng,
    k: usize,
    t: f64,
    x: &[f64],
    nv: [f64; 2],
) {
    let y = [
        x[0].sin() + 0.5 * x[1] + 0.01 * rng.uniform() + 1e-9 * k as f64,
        (x[0] * x[1]).cos() + 0.01 * rng.uniform(),
    ];
    rec.by_y0.insert(y[0].to_bits(), (t, nv.to_vec()));
    let (mut mu, mut var) = ([0.0; 2], [0.0; 2]);
    gp.predict(x, &mut mu, &mut var).unwrap();
    gp.update(x, &y, t, &nv).unwrap();
}

fn hetero_case(model: Model, shared_kernel: bool) {
    let d = 2;
    let first = OutHyper {
        sf: 1.1,
        sn: 0.1,
        ell: vec![0.7, 1.2],
    };
    let second = if shared_kernel {
        first.clone()
    } else {
        OutHyper {
            sf: 0.6,
            sn: 0.05,
            ell: vec![1.5, 0.4],
        }
    };
    let hyper = [first, second];
    let hyper_json: Vec<serde_json::Value> = hyper
        .iter()
        .map(|h| json!({"sigma_f": h.sf, "sigma_n": h.sn, "lengthscales": h.ell}))
        .collect();
    let ratio = 30.0;
    // A very slow period: the refresh thread runs only when asked (drift_refresh_now),
    // which makes the run deterministic.
    let cfg = json!({"variant": "fast", "n_bar": 30, "n_cal": 3,
                     "hyper": hyper_json, "drift": model.json(ratio, 1e-3)});
    let mut gp = SkyGp::from_json(&cfg, d, 2).unwrap();
    assert_eq!(gp.n_factor_groups(), if shared_kernel { 1 } else { 2 });
    // σ_i² per output: the larger of σ_n² and the caller's noise; outputs that share a
    // factor share the largest relative one.
    let base_rule = |o: usize, nv: &[f64]| -> f64 {
        if shared_kernel {
            nv.iter().fold(hyper[0].sn * hyper[0].sn, |m, &v| m.max(v))
        } else {
            (hyper[o].sn * hyper[o].sn).max(nv[o])
        }
    };
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut rec = Record {
        by_y0: HashMap::new(),
    };
    let mut xs_seen = Vec::new();
    let dt = 0.05;
    let mut t = 0.0;
    let mut last_refresh = 0.0;
    for k in 0..900 {
        t = k as f64 * dt;
        let x = vec![
            1.5 * (0.05 * k as f64).sin() + 0.3 * rng.uniform(),
            1.2 * (0.031 * k as f64).cos() + 0.3 * rng.uniform(),
        ];
        // Caller noise: sometimes below σ_n², sometimes well above.
        let nv = [
            if k % 3 == 0 { 0.04 } else { 0.001 },
            if k % 5 == 0 { 0.02 } else { 0.0 },
        ];
        learn_recorded(&mut gp, &mut rec, &mut rng, k, t, &x, nv);
        xs_seen.push(x);
        if k % 40 == 39 {
            gp.drift_refresh_now().unwrap();
            last_refresh = t;
        }
    }
    let queries: Vec<Vec<f64>> = xs_seen.iter().rev().step_by(37).take(12).cloned().collect();
    let check = |gp: &mut SkyGp, rec: &Record, tau_ok: &dyn Fn(f64) -> bool| {
        check_against_exact(gp, rec, &hyper, model, &base_rule, &queries, tau_ok, &[0.0])
    };
    // (a) Just refreshed: every factor is at t_now.
    gp.drift_refresh_now().unwrap();
    let t_now = t;
    let (e_l, e_m, e_v, n) = check(&mut gp, &rec, &|tau| tau == t_now);
    println!(
        "{model:?} shared={shared_kernel}: refreshed, {n} expert-outputs, max rel error factor {e_l:.1e}, mean {e_m:.1e}, var {e_v:.1e}"
    );
    assert!(n >= 12, "too few experts checked ({n})");
    assert!(
        e_l < 1e-10 && e_m < 1e-10 && e_v < 1e-10,
        "{model:?}: {e_l:e} {e_m:e} {e_v:e}"
    );
    // Expiry, independently: the samples stored are exactly those whose variance at t_now
    // is within the cap (Fast, no eviction: nothing else removes a sample).
    let expected = rec
        .by_y0
        .values()
        .filter(|(ts, nv)| {
            (0..2).any(|o| {
                let b = base_rule(o, nv);
                model.var(b, t_now - ts) <= ratio * b
            })
        })
        .count();
    assert_eq!(gp.stats().samples_stored as usize, expected);
    assert!(expected < 900, "{model:?}: some samples must have expired");
    assert_eq!(
        gp.drift_stats().unwrap().samples_expired as usize,
        900 - expected
    );
    // (b) Samples appended since the last refresh enter at their own time's variance:
    // the factor is that of v_i(τ_e) with τ_e the expert's factor time.
    last_refresh = last_refresh.max(t_now);
    for k in 900..930 {
        t = k as f64 * dt;
        let x = xs_seen[k - 700].clone();
        let y = [x[0].sin() + 0.5 * x[1] + 1e-9 * k as f64 + 0.003, x[1]];
        let nv = [0.002, 0.03];
        rec.by_y0.insert(y[0].to_bits(), (t, nv.to_vec()));
        gp.update(&x, &y, t, &nv).unwrap();
    }
    let (e_l, e_m, e_v, n) = check(&mut gp, &rec, &|tau| tau >= last_refresh && tau <= t);
    println!(
        "{model:?} shared={shared_kernel}: with appends, {n} expert-outputs, factor {e_l:.1e}, mean {e_m:.1e}, var {e_v:.1e}"
    );
    assert!(
        e_l < 1e-10 && e_m < 1e-10 && e_v < 1e-10,
        "{model:?}: {e_l:e} {e_m:e} {e_v:e}"
    );
    // (c) Then refreshed again: adopted factors with re-added appended rows and a full
    // refactor agree, at the new time.
    gp.drift_refresh_now().unwrap();
    let (e_l, e_m, e_v, _) = check(&mut gp, &rec, &|tau| tau == t);
    assert!(
        e_l < 1e-10 && e_m < 1e-10 && e_v < 1e-10,
        "{model:?}: {e_l:e} {e_m:e} {e_v:e}"
    );
}

#[test]
fn experts_equal_heteroscedastic_exact_gps_quadratic() {
    hetero_case(Model::Quadratic(0.08), false);
    hetero_case(Model::Quadratic(0.08), true);
}

#[test]
fn experts_equal_heteroscedastic_exact_gps_linear() {
    hetero_case(Model::Linear(0.01), false);
}

#[test]
fn experts_equal_heteroscedastic_exact_gps_exponential() {
    hetero_case(Model::Exponential(6.0), false);
}

/// A drift that adds nothing (`linear`, q = 0) is a per-sample noise: every sample keeps
/// the noise it was learned with, nothing expires, and a Dense replacement updates one row
/// of the cached K's factor (O(N̄²)) as without drift. The experts equal heteroscedastic
/// exact GPs through thousands of replacements.
#[test]
fn a_drift_that_adds_nothing_keeps_each_samples_noise_through_dense_replacements() {
    let hyper = [
        OutHyper {
            sf: 1.1,
            sn: 0.1,
            ell: vec![0.7, 1.2],
        },
        OutHyper {
            sf: 0.6,
            sn: 0.05,
            ell: vec![1.5, 0.4],
        },
    ];
    let hyper_json: Vec<serde_json::Value> = hyper
        .iter()
        .map(|h| json!({"sigma_f": h.sf, "sigma_n": h.sn, "lengthscales": h.ell}))
        .collect();
    let cfg = json!({"variant": "dense", "n_bar": 12, "n_cal": 2, "max_experts": 8,
                     "hyper": hyper_json, "drift": Model::Linear(0.0).json(10.0, 1e-3)});
    let mut gp = SkyGp::from_json(&cfg, 2, 2).unwrap();
    let base_rule = |o: usize, nv: &[f64]| (hyper[o].sn * hyper[o].sn).max(nv[o]);
    let mut rng = Rng(0x0bad_5eed_1234_5678);
    let mut rec = Record {
        by_y0: HashMap::new(),
    };
    let (mut mu, mut var) = ([0.0; 2], [0.0; 2]);
    let mut xs_seen = Vec::new();
    for k in 0..4000 {
        let t = k as f64 * 1e-3;
        let x = vec![
            (0.013 * k as f64).sin() + 0.2 * rng.uniform(),
            (0.021 * k as f64).cos() + 0.2 * rng.uniform(),
        ];
        // Per-sample noise well above σ_n² on some samples, as RCaGP's weights give.
        let nv = [
            if k % 3 == 0 { 0.5 } else { 0.001 },
            if k % 7 == 0 { 0.2 } else { 0.0 },
        ];
        learn_recorded(&mut gp, &mut rec, &mut rng, k, t, &x, nv);
        xs_seen.push(x);
    }
    assert!(
        gp.replacements() > 1000,
        "the stream must exercise Dense replacements ({})",
        gp.replacements()
    );
    assert_eq!(gp.drift_stats().unwrap().samples_expired, 0);
    let queries: Vec<Vec<f64>> = xs_seen.iter().rev().step_by(53).take(16).cloned().collect();
    // An expert refactored by a replacement carries the Dense refactor's jitter.
    let (e_l, e_m, e_v, n) = check_against_exact(
        &mut gp,
        &rec,
        &hyper,
        Model::Linear(0.0),
        &base_rule,
        &queries,
        &|_| true,
        &[0.0, gpn_skygp::config::REFACTOR_JITTER],
    );
    println!(
        "static drift, Dense: {} replacements, {n} expert-outputs, factor {e_l:.1e}, mean {e_m:.1e}, var {e_v:.1e}",
        gp.replacements()
    );
    assert!(n >= 16, "too few experts checked ({n})");
    assert!(
        e_l < 1e-8 && e_m < 1e-8 && e_v < 1e-8,
        "{e_l:e} {e_m:e} {e_v:e}"
    );
    // Nothing goes stale: no refresh thread, nothing waiting to be copied to one, no
    // shared buffers (the pool costs what it costs without drift, plus the per-sample
    // variances).
    gp.drift_refresh_now().unwrap();
    let st = gp.drift_stats().unwrap();
    assert_eq!((st.refresh_cycles, st.pending_sync), (0, 0), "{st:?}");
    let mut plain_cfg = cfg.clone();
    plain_cfg["drift"] = serde_json::Value::Null;
    let plain = SkyGp::from_json(&plain_cfg, 2, 2).unwrap();
    let (with, without) = (gp.stats().memory_bytes, plain.stats().memory_bytes);
    assert!(
        with < without + without / 4,
        "{with} bytes against {without} without drift"
    );
    // The per-sample noise survives a state round trip.
    let state = gp.save_state().unwrap();
    let mut back = SkyGp::from_json(&cfg, 2, 2).unwrap();
    back.load_state(&state).unwrap();
    let (mut m2, mut v2) = ([0.0; 2], [0.0; 2]);
    for x in &queries {
        gp.predict(x, &mut mu, &mut var).unwrap();
        back.predict(x, &mut m2, &mut v2).unwrap();
        assert_eq!((bits(&mu), bits(&var)), (bits(&m2), bits(&v2)));
    }
}

// ---------------------------------------------------------------------------------------
// (3) Expiry and retirement.

#[test]
fn expired_samples_leave_and_empty_experts_retire() {
    for variant in ["fast", "dense"] {
        // σ_n = 0.1, κ = 0.03, cap 10·σ²: a sample lives sqrt(9·0.01)/0.03 = 10 s. A fast
        // time decay (ρ = 0.5 per s) makes the region-A experts stale during the gap, so no
        // region-B sample joins them: their samples all expire and they must retire.
        let model = Model::Quadratic(0.03);
        let cfg = json!({"variant": variant, "n_bar": 20, "rho_decay": 0.5,
                         "hyper": {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [0.5]},
                         "drift": model.json(10.0, 1e-3)});
        let mut gp = SkyGp::from_json(&cfg, 1, 1).unwrap();
        let (mut mu, mut var) = ([0.0], [0.0]);
        let mut rng = Rng(77);
        let mut stamps = Vec::new();
        let mut a_experts = 0;
        let mut t_now = 0.0;
        for k in 0..300 {
            // Region A (x < 0) for t in [0, 10), nothing for 15 s, region B (x > 0) for
            // t in [25, 45).
            let (t, x) = if k < 100 {
                (k as f64 * 0.1, -2.0 + rng.uniform())
            } else {
                (25.0 + (k - 100) as f64 * 0.1, 2.0 + rng.uniform())
            };
            t_now = t;
            gp.predict(&[x], &mut mu, &mut var).unwrap();
            gp.update(&[x], &[x.sin()], t, &[0.0]).unwrap();
            stamps.push(t);
            if k % 10 == 9 {
                gp.drift_refresh_now().unwrap();
            }
            if k == 99 {
                a_experts = gp.n_experts();
            }
        }
        gp.drift_refresh_now().unwrap();
        let st = gp.drift_stats().unwrap();
        println!(
            "{variant}: {a_experts} experts after region A, now {}; {st:?}",
            gp.n_experts()
        );
        // Every region-A sample is older than 10 s: all gone, and so are their experts.
        for pos in 0..gp.n_experts() {
            let (xs, _, c) = gp.expert_data(pos, 0).unwrap();
            assert!(
                xs.iter().all(|&x| x > 0.0),
                "{variant}: a region-A sample is left"
            );
            assert!(c[0] > 0.0);
            let ts = gp.expert_times(pos).unwrap();
            assert!(
                ts.iter()
                    .all(|&t| model.var(0.01, t_now - t) <= 10.0 * 0.01)
            );
        }
        assert!(a_experts >= 3);
        assert_eq!(st.experts_retired, a_experts as u64, "{variant}");
        if variant == "fast" {
            // Exactly the samples whose variance at t_now is within the cap remain.
            let alive = stamps
                .iter()
                .filter(|&&t| model.var(0.01, t_now - t) <= 0.1)
                .count();
            assert_eq!(gp.stats().samples_stored as usize, alive);
            assert_eq!(st.samples_expired as usize, 300 - alive);
        }
        assert_eq!(gp.stats().samples_seen, 300);
        assert_eq!(gp.evictions(), 0);
        // The model keeps predicting in region B and has forgotten region A.
        gp.predict(&[2.0], &mut mu, &mut var).unwrap();
        assert!((mu[0] - 2f64.sin()).abs() < 0.05, "{variant}: {}", mu[0]);
        gp.predict(&[-2.0], &mut mu, &mut var).unwrap();
        assert!(
            var[0] > 0.9,
            "{variant}: region A forgotten, var {}",
            var[0]
        );
    }
}

// ---------------------------------------------------------------------------------------
// (4) A drifting target is tracked better with drift.

struct TrackScore {
    rmse: f64,
    coverage: f64,
}

fn track(drift: Option<serde_json::Value>) -> TrackScore {
    let mut cfg = json!({"variant": "fast", "n_bar": 30,
                         "hyper": {"sigma_f": 1.0, "sigma_n": 0.05, "lengthscales": [0.8]}});
    if let Some(dr) = drift {
        cfg["drift"] = dr;
    }
    let mut gp = SkyGp::from_json(&cfg, 1, 1).unwrap();
    let (t_end, dt) = (200.0, 0.05);
    let n = (t_end / dt) as usize;
    let f = |x: f64, t: f64| x.sin() + 0.5 * t / t_end;
    let mut rng = Rng(4242);
    let (mut mu, mut var) = ([0.0], [0.0]);
    let (mut se, mut covered, mut count) = (0.0, 0usize, 0usize);
    for k in 0..n {
        let t = k as f64 * dt;
        let x = 3.0 * rng.uniform();
        gp.predict(&[x], &mut mu, &mut var).unwrap();
        if t >= t_end / 2.0 {
            let err = mu[0] - f(x, t);
            se += err * err;
            covered += usize::from(err.abs() <= 2.0 * var[0].sqrt());
            count += 1;
        }
        gp.update(&[x], &[f(x, t) + 0.05 * rng.uniform()], t, &[0.0025])
            .unwrap();
        if k % 10 == 9 {
            gp.drift_refresh_now().unwrap();
        }
    }
    TrackScore {
        rmse: (se / count as f64).sqrt(),
        coverage: covered as f64 / count as f64,
    }
}

#[test]
fn a_drifting_target_is_tracked_better_with_drift() {
    // The target rises by 0.5 over 200 s (0.0025 per s): κ twice that rate, samples kept
    // while their variance is within 10·σ² (an age of 30 s).
    let off = track(None);
    let quad = track(Some(Model::Quadratic(0.005).json(10.0, 1e-3)));
    let lin = track(Some(Model::Linear(1e-3).json(100.0, 1e-3)));
    let exp = track(Some(Model::Exponential(20.0).json(100.0, 1e-3)));
    println!(
        "drifting sin, second half: RMSE off {:.4}, quadratic {:.4}, linear {:.4}, exponential {:.4}; \
         ±2σ coverage off {:.3}, quadratic {:.3}, linear {:.3}, exponential {:.3}",
        off.rmse,
        quad.rmse,
        lin.rmse,
        exp.rmse,
        off.coverage,
        quad.coverage,
        lin.coverage,
        exp.coverage
    );
    for (name, s) in [
        ("quadratic", &quad),
        ("linear", &lin),
        ("exponential", &exp),
    ] {
        assert!(
            s.rmse < 0.7 * off.rmse,
            "{name}: RMSE {} vs {}",
            s.rmse,
            off.rmse
        );
        assert!(
            s.coverage > off.coverage + 0.25,
            "{name}: coverage {} vs {}",
            s.coverage,
            off.coverage
        );
    }
    assert!(quad.rmse < 0.3 * off.rmse && quad.coverage > 0.85);
}

// ---------------------------------------------------------------------------------------
// (5) The refresh thread never blocks predict/update.

fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(20),
            "timed out waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

#[test]
fn a_refresh_in_progress_never_blocks_predict_or_update() {
    // One large expert (slot 0) takes the first 400 samples, so the refresh thread pauses
    // on the very expert that the updates below extend.
    let cfg = json!({"variant": "fast", "n_bar": 400, "max_experts": 8,
                     "hyper": {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [0.7]},
                     "drift": Model::Quadratic(0.05).json(100.0, 1e-3)});
    let mut gp = SkyGp::from_json(&cfg, 1, 1).unwrap();
    let (mut mu, mut var) = ([0.0], [0.0]);
    let x_of = |k: usize| -2.0 + 4.0 * ((k * 37) % 101) as f64 / 100.0;
    let mut t = 0.0;
    for k in 0..200 {
        t = k as f64 * 0.05;
        gp.update(&[x_of(k)], &[x_of(k).sin()], t, &[0.0]).unwrap();
    }
    gp.drift_refresh_now().unwrap();
    // More data after the refresh: the next refresh would change every expert.
    for k in 200..260 {
        t = k as f64 * 0.05;
        gp.update(&[x_of(k)], &[x_of(k).sin() + 0.1], t, &[0.0])
            .unwrap();
    }
    let probes: Vec<f64> = (0..25).map(|i| -2.4 + 0.2 * i as f64).collect();
    let predict_all = |gp: &mut SkyGp| -> Vec<u64> {
        let (mut mu, mut var) = ([0.0], [0.0]);
        probes
            .iter()
            .flat_map(|&x| {
                gp.predict(&[x], &mut mu, &mut var).unwrap();
                [mu[0].to_bits(), var[0].to_bits()]
            })
            .collect()
    };
    let before = predict_all(&mut gp);
    let adopted_before = gp.drift_stats().unwrap().results_adopted;

    // Stop the refresh thread in the middle of a refresh, holding an expert's input lock.
    gp.drift_hold_refresh(true);
    gp.drift_request_refresh();
    wait_for("the refresh thread to pause", || gp.drift_refresh_held());

    // predict answers at once, from the previous factors.
    for _ in 0..50 {
        assert_eq!(predict_all(&mut gp), before);
    }
    // update goes on too, including on the expert whose lock the refresh thread holds:
    // its copy for the refresh thread is deferred, not waited for.
    for k in 260..760 {
        t = k as f64 * 0.05;
        let x = x_of(k);
        gp.predict(&[x], &mut mu, &mut var).unwrap();
        gp.update(&[x], &[x.sin() + 0.2], t, &[0.0]).unwrap();
    }
    let held = gp.drift_stats().unwrap();
    assert!(gp.drift_refresh_held(), "still paused");
    assert_eq!(
        held.results_adopted, adopted_before,
        "nothing adopted while held"
    );
    assert!(
        held.sync_deferred > 0,
        "the control thread met the held lock and moved on: {held:?}"
    );
    assert!(held.pending_sync > 0);
    println!("while held: {held:?}");

    // Released: the refresh finishes, the deferred copies go through, factors move on.
    gp.drift_hold_refresh(false);
    gp.drift_refresh_now().unwrap();
    let after = gp.drift_stats().unwrap();
    assert!(after.results_adopted > adopted_before);
    assert_eq!(after.pending_sync, 0);
    for pos in 0..gp.n_experts() {
        assert_eq!(gp.expert_factor_time(pos), Some(t));
    }
    assert_ne!(predict_all(&mut gp), before);
}

#[test]
fn dropping_a_model_joins_its_refresh_thread_even_when_paused() {
    let cfg = json!({"hyper": {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [0.7]},
                     "drift": Model::Linear(0.01).json(100.0, 1000.0)});
    for pause in [false, true] {
        let mut gp = SkyGp::from_json(&cfg, 1, 1).unwrap();
        for k in 0..100 {
            gp.update(&[k as f64 * 0.03], &[1.0], k as f64 * 0.1, &[0.0])
                .unwrap();
        }
        if pause {
            gp.drift_hold_refresh(true);
            wait_for("the refresh thread to pause", || gp.drift_refresh_held());
        }
        drop(gp); // Returns only once the thread has been joined.
    }
}

// ---------------------------------------------------------------------------------------
// Save/load with drift (format 2), and a clone.

#[test]
fn drift_state_round_trips() {
    let cfg = json!({"variant": "dense", "n_bar": 12, "n_cal": 3, "max_experts": 40,
                     "hyper": [{"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [0.6, 0.8]},
                               {"sigma_f": 0.7, "sigma_n": 0.2, "lengthscales": [1.1, 0.5]}],
                     "drift": Model::Quadratic(0.05).json(20.0, 1e-3)});
    let mut a = SkyGp::from_json(&cfg, 2, 2).unwrap();
    let (mut m, mut v) = ([0.0; 2], [0.0; 2]);
    let sample = |k: usize| {
        let s = k as f64 * 0.02;
        // Wanders away from its start so that early experts retire.
        let x = [s + (3.0 * s).sin(), (1.7 * s).cos()];
        (x, [x[0].sin() * x[1], x[1] + 0.01 * (k % 7) as f64])
    };
    for k in 0..800 {
        let (x, y) = sample(k);
        a.predict(&x, &mut m, &mut v).unwrap();
        a.update(&x, &y, k as f64 * 0.1, &[0.01, 0.1]).unwrap();
        if k % 20 == 19 {
            a.drift_refresh_now().unwrap();
        }
    }
    a.drift_refresh_now().unwrap();
    let st = a.drift_stats().unwrap();
    assert!(st.experts_retired > 0 && a.replacements() > 0, "{st:?}");
    let state = a.save_state().unwrap();
    let mut b = SkyGp::from_json(&cfg, 2, 2).unwrap();
    b.load_state(&state).unwrap();
    assert_eq!(b.save_state().unwrap(), state, "re-saved byte for byte");
    assert_eq!(a.stats(), b.stats());
    let mut c = a.clone();
    b.drift_refresh_now().unwrap();
    c.drift_refresh_now().unwrap();
    // Same data refreshed at the same times by three different refresh threads.
    for k in 800..1000 {
        let (x, y) = sample(k);
        let (mut ma, mut va, mut mb, mut vb, mut mc, mut vc) =
            ([0.0; 2], [0.0; 2], [0.0; 2], [0.0; 2], [0.0; 2], [0.0; 2]);
        a.predict(&x, &mut ma, &mut va).unwrap();
        b.predict(&x, &mut mb, &mut vb).unwrap();
        c.predict(&x, &mut mc, &mut vc).unwrap();
        // The loaded model and the clone predict bit for bit what the original does.
        assert_eq!(
            (bits(&ma), bits(&va)),
            (bits(&mb), bits(&vb)),
            "loaded, step {k}"
        );
        assert_eq!(
            (bits(&ma), bits(&va)),
            (bits(&mc), bits(&vc)),
            "clone, step {k}"
        );
        for gp in [&mut a, &mut b, &mut c] {
            gp.update(&x, &y, k as f64 * 0.1, &[0.01, 0.1]).unwrap();
            if k % 20 == 19 {
                gp.drift_refresh_now().unwrap();
            }
        }
    }
    // Corrupt drift sections are refused and leave the model unchanged.
    let before = b.save_state().unwrap();
    assert!(b.load_state(&state[..state.len() - 5]).is_err());
    assert_eq!(b.save_state().unwrap(), before);
}
