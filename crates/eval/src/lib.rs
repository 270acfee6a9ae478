//! Offline evaluation of streaming models on recorded CSV streams (`gp-node eval`).
//!
//! Boundary: files in, numbers out. It loads a CSV ([`dataset`]), assembles the model
//! configuration and hyperparameters ([`config`]), creates the model by plugin name
//! ([`plugins`]), streams the data predict-then-update ([`runner`]) and reports accuracy
//! (prequential SMSE/MSLL from `gpn_gp_core::metrics`), per-call timing, model counters and,
//! with truth columns, the calibrated-bound coverage ([`report`]). A stream may be
//! contaminated with outliers or a robot's sensor faults first ([`contaminate`],
//! [`sensor_faults`]: only what `update` sees changes), and
//! every prediction written out ([`predictions`]). It knows nothing of ROS; the control loop
//! and the tests reuse it. The node re-exports this crate as `gp_node::eval`.
//!
//! ```no_run
//! use gpn_eval::{config, dataset::{Centering, ColumnSelection, Dataset}, plugins, runner};
//! let mut data = Dataset::from_path("kin40k.csv".as_ref(), &ColumnSelection::default())?;
//! data.center(Centering::WholeFile);
//! let mut cfg = serde_json::json!({"preset": "reference", "variant": "fast"});
//! config::merge_hyper(&mut cfg, config::load_hyper_file("hyperparams.json".as_ref(), Some("kin40k"))?)?;
//! let noise = config::noise_vars(&cfg, data.output_dim())?;
//! let mut model = plugins::create_model("skygp", &cfg, data.input_dim(), data.output_dim())?;
//! let report = runner::run_stream("skygp", model.as_mut(), &data, &runner::RunOptions::new(noise), &mut |_| {})?;
//! println!("{}", report.to_table());
//! # Ok::<(), gpn_eval::EvalError>(())
//! ```

#![warn(missing_docs)]

pub mod columns;
pub mod config;
pub mod contaminate;
pub mod contamination;
pub mod dataset;
pub mod plugins;
pub mod predictions;
pub mod readiness;
pub mod refit;
pub mod report;
pub mod runner;
pub mod sensor_faults;

use gpn_gp_core::model::ModelError;

/// Errors of the evaluator. Messages name the file, line and column; paths come last.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// A file could not be opened or read.
    #[error("{what}: {source}: {path}")]
    Io {
        /// What was being read.
        what: &'static str,
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file has no header (it is empty).
    #[error("data file is empty (no header row): {path}")]
    EmptyFile {
        /// The file.
        path: String,
    },
    /// The file has a header but no data rows.
    #[error("data file has a header but no data rows: {path}")]
    NoRows {
        /// The file.
        path: String,
    },
    /// Malformed CSV (e.g. a row with a different number of fields).
    #[error("malformed CSV at line {line}: {message}: {path}")]
    Csv {
        /// The file.
        path: String,
        /// 1-based line.
        line: u64,
        /// The parser's message.
        message: String,
    },
    /// A selected cell is not a finite number.
    #[error("line {line}, column \"{column}\": \"{value}\" is not a finite number: {path}")]
    NonNumeric {
        /// The file.
        path: String,
        /// 1-based line (the header is line 1).
        line: u64,
        /// Column name.
        column: String,
        /// The cell text.
        value: String,
    },
    /// A column selection names a column the header lacks.
    #[error("{what}: no column \"{column}\"; the header has: {header}")]
    UnknownColumn {
        /// The option (`--inputs`, …).
        what: String,
        /// The unknown item.
        column: String,
        /// The header, comma-separated.
        header: String,
    },
    /// A column selection is malformed or inconsistent.
    #[error("{0}")]
    ColumnSpec(String),
    /// The model configuration is invalid.
    #[error("{0}")]
    Config(String),
    /// Hyperparameters are missing or malformed.
    #[error("{0}")]
    Hyper(String),
    /// Hyperparameter fitting failed.
    #[error("hyperparameter fit failed: {0}")]
    Fit(#[from] gpn_gp_core::hyperfit::HyperfitError),
    /// The plugin could not be found, loaded or checked, or refused to create the model.
    #[error(transparent)]
    Plugin(#[from] gpn_plugin_host::HostError),
    /// No model of that name.
    #[error("unknown plugin \"{name}\"; available: {available}")]
    UnknownPlugin {
        /// The name asked for.
        name: String,
        /// The names known, comma-separated.
        available: String,
    },
    /// The model rejected its configuration.
    #[error("cannot create model {plugin}: {source}")]
    ModelCreate {
        /// Plugin name.
        plugin: String,
        /// The model's error.
        source: ModelError,
    },
    /// The model failed during the stream.
    #[error("model {phase} failed at step {step}: {source}")]
    Model {
        /// 0-based step.
        step: usize,
        /// `predict` or `update`.
        phase: &'static str,
        /// The model's error.
        source: ModelError,
    },
    /// A prediction was unusable (e.g. NaN).
    #[error("bad prediction at step {step}: {source}")]
    Prediction {
        /// 0-based step.
        step: usize,
        /// The metric's complaint.
        source: gpn_gp_core::metrics::MetricsError,
    },
    /// A metric error outside a prediction.
    #[error("metrics: {0}")]
    Metrics(#[from] gpn_gp_core::metrics::MetricsError),
    /// A bound error.
    #[error("bound: {0}")]
    Bound(#[from] gpn_gp_core::bound::BoundError),
}
