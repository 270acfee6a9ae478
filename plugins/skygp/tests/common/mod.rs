//! Test helpers: a std-only CSV reader and the shared data/anchor files.
#![allow(dead_code)]

use std::path::PathBuf;

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

/// Deterministic uniform numbers in [−1, 1) (xorshift; no allocation, so the allocation
/// tests can draw inside their counted sections).
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
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
