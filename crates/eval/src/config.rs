//! The model configuration of an evaluation run: the JSON config file, `--set` overrides,
//! hyperparameters from a file or fitted on the stream, and the per-target noise variances
//! the MSLL needs.
//!
//! Order of application: config file (a JSON object; none = `{}`), then the hyperparameter
//! file merged into the config's `"hyper"`, then every `--set key=value` in order (last wins).
//! If `"hyper"` is still missing, [`fit_hyper`] fits it on the stream.
//!
//! Hyperparameters use the workspace-wide format (standard deviations):
//! `{"sigma_f": σ_f, "sigma_n": σ_n, "lengthscales": [ℓ_1, …, ℓ_d]}` shared by all outputs,
//! or an array of p such objects.

use std::path::Path;

pub use gpn_gp_core::hyperfit::FitMode;
use gpn_gp_core::hyperfit::{FitOptions, FitResult, OutputHyper, fit};
use gpn_gp_core::kernel::{ArdKernel, KernelKind};
use serde_json::{Map, Value};

use super::EvalError;
use super::dataset::Dataset;

/// Reads a JSON config file; it must hold an object. `None` gives `{}`.
pub fn load_config(path: Option<&Path>) -> Result<Value, EvalError> {
    let Some(path) = path else {
        return Ok(Value::Object(Map::new()));
    };
    let v = read_json(path, "cannot read config file")?;
    if !v.is_object() {
        return Err(EvalError::Config(format!(
            "config file must hold a JSON object: {}",
            path.display()
        )));
    }
    Ok(v)
}

fn read_json(path: &Path, what: &'static str) -> Result<Value, EvalError> {
    let text = std::fs::read_to_string(path).map_err(|e| EvalError::Io {
        what,
        path: path.display().to_string(),
        source: e,
    })?;
    serde_json::from_str(&text)
        .map_err(|e| EvalError::Config(format!("{what}: invalid JSON ({e}): {}", path.display())))
}

/// Applies one `key=value` override. The value is parsed as JSON (`4`, `true`, `[1,2]`,
/// `"x"`), else taken as a string (`variant=dense`). A dotted key (`hyper.sigma_n=0.1`)
/// walks into nested objects, creating them as needed.
pub fn apply_set(config: &mut Value, assignment: &str) -> Result<(), EvalError> {
    let (key, raw) = assignment
        .split_once('=')
        .ok_or_else(|| EvalError::Config(format!("--set \"{assignment}\": expected key=value")))?;
    let key = key.trim();
    if key.is_empty() || key.split('.').any(str::is_empty) {
        return Err(EvalError::Config(format!(
            "--set \"{assignment}\": empty key"
        )));
    }
    let value = serde_json::from_str::<Value>(raw.trim())
        .unwrap_or_else(|_| Value::String(raw.to_string()));
    let mut node = config;
    let parts: Vec<&str> = key.split('.').collect();
    for (k, part) in parts.iter().enumerate() {
        let Value::Object(map) = node else {
            return Err(EvalError::Config(format!(
                "--set {key}: \"{}\" is not an object",
                parts[..k].join(".")
            )));
        };
        if k + 1 == parts.len() {
            map.insert((*part).to_string(), value);
            return Ok(());
        }
        node = map
            .entry((*part).to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    Ok(())
}

/// Reads hyperparameters from a JSON file. Where: `datasets.<key>` (the shared
/// `hyperparams.json` format; `key` required unless there is a single dataset), a top-level
/// `hyper` (what `gp-node eval --json` prints), or the top level itself. What: one
/// `{sigma_f, sigma_n, lengthscales, kernel?}` shared by all targets, or an array of one such
/// object per target. Only those keys are kept.
pub fn load_hyper_file(path: &Path, key: Option<&str>) -> Result<Value, EvalError> {
    let v = read_json(path, "cannot read hyperparameter file")?;
    let place = path.display();
    let entry = if let Some(datasets) = v.get("datasets").and_then(Value::as_object) {
        let names: Vec<&str> = datasets.keys().map(String::as_str).collect();
        let key = match key {
            Some(k) => k,
            None if names.len() == 1 => names[0],
            None => {
                return Err(EvalError::Hyper(format!(
                    "{place} holds several datasets; choose one with --hyper-key (one of: {})",
                    names.join(", ")
                )));
            }
        };
        datasets.get(key).ok_or_else(|| {
            EvalError::Hyper(format!(
                "no dataset \"{key}\" in {place}; available: {}",
                names.join(", ")
            ))
        })?
    } else if let Some(hyper) = v.get("hyper") {
        hyper
    } else if v.get("sigma_f").is_some() || v.is_array() {
        &v
    } else {
        return Err(EvalError::Hyper(format!(
            "{place}: expected \"datasets\".<name>, \"hyper\", or top-level sigma_f, sigma_n, lengthscales (or an array of them, one per target)"
        )));
    };
    match entry {
        Value::Array(list) if !list.is_empty() => list
            .iter()
            .enumerate()
            .map(|(t, e)| hyper_entry(e, &format!("{place}: target {t}")))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        Value::Array(_) => Err(EvalError::Hyper(format!(
            "{place}: the hyperparameter array is empty"
        ))),
        e => hyper_entry(e, &place.to_string()),
    }
}

/// One `{sigma_f, sigma_n, lengthscales, kernel?}` object of a hyperparameter file.
fn hyper_entry(entry: &Value, at: &str) -> Result<Value, EvalError> {
    if !entry.is_object() {
        return Err(EvalError::Hyper(format!(
            "{at}: expected an object with sigma_f, sigma_n, lengthscales, found {entry}"
        )));
    }
    let mut out = Map::new();
    for k in ["sigma_f", "sigma_n", "lengthscales", "kernel"] {
        if let Some(x) = entry.get(k) {
            out.insert(k.to_string(), x.clone());
        } else if k != "kernel" {
            return Err(EvalError::Hyper(format!(
                "{at}: hyperparameters lack \"{k}\""
            )));
        }
    }
    Ok(Value::Object(out))
}

/// Merges `hyper` into `config["hyper"]`: key by key when both are objects, otherwise
/// replacing it.
pub fn merge_hyper(config: &mut Value, hyper: Value) -> Result<(), EvalError> {
    let Value::Object(map) = config else {
        return Err(EvalError::Config("config must be a JSON object".into()));
    };
    match (map.get_mut("hyper"), hyper) {
        (Some(Value::Object(old)), Value::Object(new)) => old.extend(new),
        (_, new) => {
            map.insert("hyper".into(), new);
        }
    }
    Ok(())
}

/// True if the config has a `"hyper"` key.
pub fn has_hyper(config: &Value) -> bool {
    config.get("hyper").is_some_and(|h| !h.is_null())
}

/// σ_n² of each of the p targets from `config["hyper"]` (an object shared by all outputs or
/// an array of p objects).
pub fn noise_vars(config: &Value, p: usize) -> Result<Vec<f64>, EvalError> {
    let sigma_n = |h: &Value, at: &str| -> Result<f64, EvalError> {
        let s = h.get("sigma_n").and_then(Value::as_f64).ok_or_else(|| {
            EvalError::Hyper(format!("{at}: \"sigma_n\" missing or not a number"))
        })?;
        if s.is_finite() && s >= 0.0 {
            Ok(s * s)
        } else {
            Err(EvalError::Hyper(format!(
                "{at}: sigma_n must be finite and >= 0, found {s}"
            )))
        }
    };
    match config.get("hyper") {
        Some(Value::Array(list)) => {
            if list.len() != p {
                return Err(EvalError::Hyper(format!(
                    "hyper has {} entries, expected one per target ({p})",
                    list.len()
                )));
            }
            list.iter()
                .enumerate()
                .map(|(o, h)| sigma_n(h, &format!("hyper[{o}]")))
                .collect()
        }
        Some(h @ Value::Object(_)) => Ok(vec![sigma_n(h, "hyper")?; p]),
        Some(other) => Err(EvalError::Hyper(format!(
            "hyper must be an object or an array, found {other}"
        ))),
        None => Err(EvalError::Hyper(
            "no hyperparameters (\"hyper\") in the model config".into(),
        )),
    }
}

/// `config["hyper"]` as one object per target (a shared object repeated `p` times), or
/// `None` without hyperparameters or when an array has another length.
pub fn hyper_per_output(config: &Value, p: usize) -> Option<Value> {
    match config.get("hyper")? {
        Value::Array(list) if list.len() == p => Some(Value::Array(list.clone())),
        h @ Value::Object(_) => Some(Value::Array(vec![h.clone(); p])),
        _ => None,
    }
}

/// The config's hyperparameters, one per output, if they are in the format
/// [`fit_hyper`] writes (`sigma_f`, `sigma_n`, `lengthscales`): a refit's warm start.
pub fn hyper_outputs(config: &Value, p: usize) -> Option<Vec<OutputHyper>> {
    let Value::Array(list) = hyper_per_output(config, p)? else {
        return None;
    };
    list.iter().map(OutputHyper::from_json).collect()
}

/// The kernel formula named by the config's `"kernel"` key (`se`, `matern32`, `matern52`;
/// default `se`).
pub fn kernel_kind(config: &Value) -> Result<KernelKind, EvalError> {
    match config.get("kernel").and_then(Value::as_str) {
        None | Some("se") => Ok(KernelKind::SquaredExponential),
        Some("matern32") => Ok(KernelKind::Matern32),
        Some("matern52") => Ok(KernelKind::Matern52),
        Some(other) => Err(EvalError::Config(format!(
            "kernel \"{other}\" unknown; expected se, matern32 or matern52"
        ))),
    }
}

/// Fits hyperparameters on the first `max_samples` samples of `data` (as streamed, i.e.
/// after centring) by maximising the marginal likelihood, lengthscales shared across outputs
/// or one set per output (`mode`); returns the `"hyper"` value (one object per output if
/// p > 1) and the fit.
///
/// `warm`: hyperparameters to start one more run from (those in use, at a refit); the
/// better likelihood on this data wins.
pub fn fit_hyper(
    data: &Dataset,
    kind: KernelKind,
    max_samples: usize,
    mode: FitMode,
    warm: Option<Vec<OutputHyper>>,
) -> Result<(Value, FitResult), EvalError> {
    let d = data.input_dim();
    let kernel =
        ArdKernel::new(kind, 1.0, &vec![1.0; d]).map_err(|e| EvalError::Config(e.to_string()))?;
    // A tool may use every core: per-output fits run side by side (same result).
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let opts = FitOptions {
        mode,
        max_samples,
        threads,
        warm_start: warm,
        ..FitOptions::default()
    };
    let result = fit(&kernel, &data.x, &data.y, d, data.output_dim(), &opts)?;
    let entries: Vec<Value> = result.outputs.iter().map(OutputHyper::to_json).collect();
    let value = if entries.len() == 1 {
        entries[0].clone()
    } else {
        Value::Array(entries)
    };
    Ok((value, result))
}
