//! The C example plugin (`plugins/c_example/blr.c`), compiled here with the system C
//! compiler against `gpn_plugin.h` and loaded through the host: its recursive posterior
//! must equal a batch Bayesian linear regression computed independently in Rust, its state
//! must round-trip bit for bit, its errors must come back categorised with their messages,
//! and the library must unload after its last model.

mod model_support;

use gp_node::plugin_host::{Plugin, PluginModel, SearchPath};
use gpn_gp_core::model::OnlineModel;
use model_support::{assert_call_failed, assert_create_fails, c_example, is_mapped};
use nalgebra::{DMatrix, DVector};

/// Inputs on a deterministic, non-degenerate path in R^2.
fn input(k: usize) -> [f64; 2] {
    let t = k as f64 * 0.173;
    [t.sin() + 0.2 * (3.1 * t).cos(), (0.7 * t).cos() - 0.5]
}

/// Targets of the two outputs: linear plus a deterministic wiggle (so the fit is not exact).
fn target(x: &[f64; 2], k: usize) -> [f64; 2] {
    let wiggle = 0.05 * ((k * 7919) % 13) as f64 / 13.0;
    [0.5 + 2.0 * x[0] - x[1] + wiggle, -1.0 + 0.3 * x[1] - wiggle]
}

const NOISE: [f64; 2] = [0.04, 0.25];

/// Batch posterior of one output with features [1, x], prior N(0, prior_var I), noise
/// `noise_var`, and exponential forgetting `lambda` (sample k of n weighted λ^(n-1-k), the
/// prior λ^n): information form A = λ^n/prior_var I + Σ w_k φφᵀ/σ², b = Σ w_k φ y/σ².
fn batch_posterior(
    xs: &[[f64; 2]],
    ys: &[f64],
    prior_var: f64,
    noise_var: f64,
    lambda: f64,
) -> (DVector<f64>, DMatrix<f64>) {
    let n = xs.len();
    let mut a = DMatrix::<f64>::identity(3, 3) * (lambda.powi(n as i32) / prior_var);
    let mut b = DVector::<f64>::zeros(3);
    for (k, (x, y)) in xs.iter().zip(ys).enumerate() {
        let phi = DVector::from_vec(vec![1.0, x[0], x[1]]);
        let weight = lambda.powi((n - 1 - k) as i32) / noise_var;
        a += &phi * phi.transpose() * weight;
        b += &phi * (y * weight);
    }
    let cov = a.try_inverse().expect("posterior precision is invertible");
    (&cov * b, cov)
}

fn feed(model: &mut PluginModel, n: usize) -> (Vec<[f64; 2]>, [Vec<f64>; 2]) {
    let mut xs = Vec::new();
    let mut ys = [Vec::new(), Vec::new()];
    for k in 0..n {
        let x = input(k);
        let y = target(&x, k);
        model
            .update(&x, &y, k as f64 * 0.002, &NOISE)
            .expect("update");
        xs.push(x);
        ys[0].push(y[0]);
        ys[1].push(y[1]);
    }
    (xs, ys)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
}

#[test]
fn the_c_plugin_loads_and_describes_itself() {
    let path = c_example("describe");
    let plugin = Plugin::open(&path).expect("the C plugin loads");
    let info = plugin.info();
    assert_eq!(
        (info.name.as_str(), info.version.as_str(), info.abi_version),
        ("blr_c", "0.1.0", 1)
    );
    assert!(info.description.contains("Bayesian linear regression"));
    // Found by name like any plugin.
    let dir = path.parent().expect("dir").to_path_buf();
    assert_eq!(
        Plugin::find("blr_c", &SearchPath::from_dirs([dir]))
            .expect("by name")
            .info()
            .name,
        "blr_c"
    );
}

#[test]
fn the_c_plugin_reports_readiness_and_has_no_wait() {
    let plugin = Plugin::open(c_example("readiness")).expect("open");
    let mut model = plugin.create("{}", 2, 2).expect("create");
    let mut prior = [false; 2];
    let before = model
        .readiness(&mut prior)
        .expect("blr_c reports readiness");
    assert_eq!((prior, before.samples_behind), ([true, true], 0));
    model
        .update(&[0.1, 0.2], &[1.0, 2.0], 0.0, &NOISE)
        .expect("update");
    // No wait_ready in its table: returns at once.
    model
        .wait_ready(std::time::Duration::from_secs(60))
        .expect("nothing to wait for");
    let after = model.readiness(&mut prior).expect("readiness");
    assert_eq!((prior, after.samples_behind), ([false, false], 0));
    // A buffer of the wrong length gets no answer rather than a partial one.
    assert!(model.readiness(&mut [false; 3]).is_none());
}

#[test]
fn the_c_posterior_equals_batch_bayesian_linear_regression() {
    let plugin = Plugin::open(c_example("posterior")).expect("open");
    for (config, prior_var, lambda) in [
        ("prior_var: 4.0", 4.0, 1.0),
        (r#"{"prior_var": 0.5, "forgetting": 0.97}"#, 0.5, 0.97),
    ] {
        let mut model = plugin.create(config, 2, 2).expect("create");
        let (xs, ys) = feed(&mut model, 60);
        for probe in [[0.3, -0.2], [1.5, 0.8], [-2.0, 3.0]] {
            let (mut mean, mut var) = ([0.0; 2], [0.0; 2]);
            model.predict(&probe, &mut mean, &mut var).expect("predict");
            let phi = DVector::from_vec(vec![1.0, probe[0], probe[1]]);
            for o in 0..2 {
                let (w, cov) = batch_posterior(&xs, &ys[o], prior_var, NOISE[o], lambda);
                let want_mean = phi.dot(&w);
                let want_var = (phi.transpose() * &cov * &phi)[(0, 0)];
                assert!(
                    close(mean[o], want_mean),
                    "{config}: output {o} mean {} vs batch {want_mean}",
                    mean[o]
                );
                assert!(
                    close(var[o], want_var),
                    "{config}: output {o} var {} vs batch {want_var}",
                    var[o]
                );
            }
        }
        let stats = model.stats();
        assert_eq!(
            (stats.samples_seen, stats.samples_stored, stats.experts),
            (60, 0, 1)
        );
        assert!(stats.memory_bytes > 0);
    }
}

#[test]
fn the_c_state_round_trips_bitwise() {
    let plugin = Plugin::open(c_example("save_load")).expect("open");
    let mut a = plugin.create("prior_var: 2", 2, 2).expect("create");
    feed(&mut a, 25);
    let state = a.save_state().expect("save");
    let mut b = plugin.create("prior_var: 2", 2, 2).expect("create");
    b.load_state(&state).expect("load");
    for k in 100..110 {
        let x = input(k);
        let (mut ma, mut va, mut mb, mut vb) = ([0.0; 2], [0.0; 2], [0.0; 2], [0.0; 2]);
        a.predict(&x, &mut ma, &mut va).expect("predict a");
        b.predict(&x, &mut mb, &mut vb).expect("predict b");
        assert_eq!(ma.map(f64::to_bits), mb.map(f64::to_bits));
        assert_eq!(va.map(f64::to_bits), vb.map(f64::to_bits));
        // Both keep learning identically.
        let y = target(&x, k);
        a.update(&x, &y, 0.0, &NOISE).expect("update a");
        b.update(&x, &y, 0.0, &NOISE).expect("update b");
    }
    assert_eq!(b.stats().samples_seen, 35);

    // State for other dimensions or not a state at all.
    let mut other = plugin.create("", 3, 2).expect("create");
    let err = other.load_state(&state).expect_err("wrong dims");
    assert_call_failed(
        &err,
        "load",
        "INVALID_STATE",
        "load failed with INVALID_STATE",
    );
    let err = other
        .load_state(b"definitely not a state")
        .expect_err("garbage");
    assert!(
        err.to_string()
            .contains("load failed with INVALID_STATE: load: not a blr_c state"),
        "{err}"
    );
}

#[test]
fn the_c_plugins_errors_come_back_with_their_messages() {
    let plugin = Plugin::open(c_example("errors")).expect("open");
    for (config, text) in [
        (
            "prior_var: 1\nlengthscale: 3",
            "unknown key \"lengthscale\"",
        ),
        ("forgetting: 1.5", "forgetting must be in (0, 1], got 1.5"),
    ] {
        assert_create_fails(&plugin, config, "INVALID_CONFIG", text);
    }

    let mut model = plugin.create("", 1, 1).expect("create");
    let err = model
        .update(&[f64::NAN], &[1.0], 0.0, &[0.1])
        .expect_err("NaN input");
    assert!(
        err.to_string()
            .contains("NON_FINITE: update: x contains a non-finite value at index 0"),
        "{err}"
    );
    let err = model
        .update(&[0.0], &[1.0], 0.0, &[0.0])
        .expect_err("zero noise");
    assert!(
        err.to_string()
            .contains("INVALID_ARGUMENT: update: noise_var[0] must be > 0"),
        "{err}"
    );
    // A fixed noise in the config overrides the per-sample one.
    let mut fixed = plugin.create("noise_var: 0.1", 1, 1).expect("create");
    fixed
        .update(&[0.0], &[1.0], 0.0, &[0.0])
        .expect("config noise used");
    // Errors do not poison: the model still learns.
    model.update(&[0.0], &[1.0], 0.0, &[0.1]).expect("update");
}

#[test]
fn the_c_library_unloads_after_its_last_model() {
    let path = c_example("unload");
    let plugin = Plugin::open(&path).expect("open");
    let mut model = plugin.create("", 1, 1).expect("create");
    drop(plugin);
    model.update(&[1.0], &[2.0], 0.0, &[0.5]).expect("update");
    assert!(is_mapped(&path));
    drop(model);
    assert!(
        !is_mapped(&path),
        "libblr_c.so still mapped after its last model dropped"
    );
}
