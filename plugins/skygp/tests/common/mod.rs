//! Test helpers: a std-only CSV reader, the shared data/anchor files, and the allocation
//! tests' hyperparameters and step.
#![allow(dead_code)]

use std::path::PathBuf;

use gpn_gp_core::model::OnlineModel;
use gpn_skygp::SkyGp;
use gpn_test_support::AllocStream;

/// `shared/` beside the repository (never an absolute path in the source).
pub fn shared() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared"))
}

/// Header and numeric rows of a CSV file (empty fields → NaN).
pub fn read_csv(path: &std::path::Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines();
    let header = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_string)
        .collect();
    let rows = lines
        .filter(|l| !l.is_empty())
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    (header, rows)
}

/// A regression stream, mean-centred with whole-file means (reference protocol).
pub struct Stream {
    pub x: Vec<Vec<f64>>,
    pub y: Vec<f64>,
    pub hyper: serde_json::Value,
}

pub fn load(dataset: &str, file: &str) -> Stream {
    let (_, rows) = read_csv(&shared().join("data").join(file));
    let mut x: Vec<Vec<f64>> = rows
        .iter()
        .map(|r| {
            r[..r.len() - 1]
                .iter()
                .map(|v| v.parse::<f64>().unwrap())
                .collect()
        })
        .collect();
    let mut y: Vec<f64> = rows
        .iter()
        .map(|r| r[r.len() - 1].parse::<f64>().unwrap())
        .collect();
    let n = y.len() as f64;
    let d = x[0].len();
    for j in 0..d {
        let m = x.iter().map(|r| r[j]).sum::<f64>() / n;
        for r in &mut x {
            r[j] -= m;
        }
    }
    let my = y.iter().sum::<f64>() / n;
    for v in &mut y {
        *v -= my;
    }
    let text = std::fs::read_to_string(shared().join("data/hyperparams.json")).unwrap();
    let all: serde_json::Value = serde_json::from_str(&text).unwrap();
    let h = &all["datasets"][dataset];
    let hyper = serde_json::json!({
        "sigma_f": h["sigma_f"], "sigma_n": h["sigma_n"], "lengthscales": h["lengthscales"]
    });
    Stream { x, y, hyper }
}

pub fn kin40k() -> Stream {
    load("kin40k", "kin40k.csv")
}

/// Hyperparameters for `p` outputs of `d` inputs: one kernel for all, or with
/// `distinct_kernels` one per output, each a little different.
pub fn alloc_hyper(d: usize, p: usize, distinct_kernels: bool) -> serde_json::Value {
    if !distinct_kernels {
        return serde_json::json!({"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": vec![0.6; d]});
    }
    (0..p)
        .map(|o| {
            let o = o as f64;
            serde_json::json!({"sigma_f": 1.0 + o * 0.1, "sigma_n": 0.1, "lengthscales": vec![0.6 + 0.05 * o; d]})
        })
        .collect()
}

/// Feeds the current sample of `s` to `gp` at stamp `t`, predicting it first when
/// `with_predict`: the allocation tests' step, which allocates nothing itself.
pub fn feed(gp: &mut SkyGp, s: &mut AllocStream, t: f64, with_predict: bool) {
    if with_predict {
        gp.predict(&s.x, &mut s.mean, &mut s.var).unwrap();
    }
    gp.update(&s.x, &s.y, t, &s.noise_var).unwrap();
}

/// The squared-exponential kernel σ_f²·exp(−½ Σ ((a − b)/ℓ)²), written out as the
/// independent reference the exact-GP checks compare with.
pub fn se(a: &[f64], b: &[f64], sf2: f64, ell: &[f64]) -> f64 {
    sf2 * (-0.5
        * a.iter()
            .zip(b)
            .zip(ell)
            .map(|((x, y), l)| ((x - y) / l).powi(2))
            .sum::<f64>())
    .exp()
}
