//! Shared by the `gp-node eval` tests (`node/tests/eval_*.rs`): scratch input files, the keys
//! of the JSON report, and a model that logs what the evaluation loop hands it.
#![allow(dead_code)] // each test file uses a subset

use std::path::PathBuf;

use gpn_gp_core::model::{ModelError, ModelStats, OnlineModel};

/// Writes `text` to a file in the temporary directory, named after this test binary, this
/// process and `name` so that test binaries running at once do not share it.
pub fn temp_file(name: &str, text: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "gpn_{}_{}_{name}",
        env!("CARGO_CRATE_NAME"),
        std::process::id()
    ));
    std::fs::write(&path, text).expect("write a temporary file");
    path
}

/// Every key of the evaluation report's JSON (`gp-node eval --json`, `Report::to_json`).
pub const REPORT_KEYS: [&str; 15] = [
    "plugin",
    "n_samples",
    "targets",
    "smse_final",
    "smse_curve_mean",
    "msll_final",
    "msll_curve_mean",
    "truth_rmse",
    "bound_coverage",
    "predict_us_mean",
    "predict_us_p99",
    "update_us_mean",
    "update_us_p99",
    "experts",
    "memory_bytes",
];

/// Asserts that `report` has each of [`REPORT_KEYS`].
pub fn assert_report_keys(report: &serde_json::Value) {
    for key in REPORT_KEYS {
        assert!(
            report.get(key).is_some(),
            "missing JSON key {key}: {report}"
        );
    }
}

/// Two inputs, one output: predicts 0 with variance 1 and logs the inputs of every
/// `predict` and the sample of every `update`.
#[derive(Default)]
pub struct CallLog {
    pub predicted_at: Vec<Vec<f64>>,
    pub updated_with: Vec<(Vec<f64>, Vec<f64>)>,
}

impl OnlineModel for CallLog {
    fn input_dim(&self) -> usize {
        2
    }
    fn output_dim(&self) -> usize {
        1
    }
    fn predict(&mut self, x: &[f64], mean: &mut [f64], var: &mut [f64]) -> Result<(), ModelError> {
        self.predicted_at.push(x.to_vec());
        mean[0] = 0.0;
        var[0] = 1.0;
        Ok(())
    }
    fn update(&mut self, x: &[f64], y: &[f64], _t: f64, _nv: &[f64]) -> Result<(), ModelError> {
        self.updated_with.push((x.to_vec(), y.to_vec()));
        Ok(())
    }
    fn stats(&self) -> ModelStats {
        ModelStats::default()
    }
}
