//! The `hyper` key every plugin's configuration takes, in the workspace-wide format the node
//! and `gp-node eval` write: `{sigma_f, sigma_n, lengthscales, kernel?}` (standard
//! deviations, one lengthscale per input) shared by all outputs, or an array of one such
//! object per output. `K` is how a plugin names a kernel in the optional `kernel` field.

use serde::Deserialize;
use serde::de::DeserializeOwned;

/// Hyperparameters of one output.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, bound(deserialize = "K: Deserialize<'de>"))]
pub struct HyperEntry<K> {
    /// Signal standard deviation σ_f.
    pub sigma_f: f64,
    /// Noise standard deviation σ_n.
    pub sigma_n: f64,
    /// ARD lengthscales ℓ (length d).
    pub lengthscales: Vec<f64>,
    /// This output's kernel, where the plugin lets outputs differ.
    #[serde(default)]
    pub kernel: Option<K>,
}

/// The `hyper` key: one entry shared by all outputs, or one per output.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(
    try_from = "serde_json::Value",
    bound(deserialize = "K: DeserializeOwned")
)]
pub enum Hyper<K> {
    /// One object for every output.
    Shared(HyperEntry<K>),
    /// An array of p objects.
    PerOutput(Vec<HyperEntry<K>>),
}

/// What the `hyper` key is, for a plugin's configuration schema.
pub const HYPER_DOC: &str = "Hyperparameters: {sigma_f, sigma_n, lengthscales: [d], kernel?} (standard deviations, one lengthscale per input) shared by all outputs, or an array of one such object per output.";

/// What a configuration without `hyper` is told.
pub const HYPER_MISSING: &str = "key \"hyper\" missing; give {\"sigma_f\", \"sigma_n\", \"lengthscales\"} or an array of p such objects";

impl<K: DeserializeOwned> TryFrom<serde_json::Value> for Hyper<K> {
    type Error = String;

    fn try_from(v: serde_json::Value) -> Result<Self, String> {
        let entry = |i: Option<usize>, v: serde_json::Value| {
            HyperEntry::deserialize(v).map_err(|e| match i {
                Some(i) => format!("hyper[{i}]: {e}"),
                None => format!("hyper: {e}"),
            })
        };
        match v {
            serde_json::Value::Array(items) => items
                .into_iter()
                .enumerate()
                .map(|(i, x)| entry(Some(i), x))
                .collect::<Result<_, _>>()
                .map(Hyper::PerOutput),
            obj @ serde_json::Value::Object(_) => entry(None, obj).map(Hyper::Shared),
            other => Err(format!(
                "hyper must be an object {{sigma_f, sigma_n, lengthscales}} or an array of them, found {other}"
            )),
        }
    }
}

impl<K> Hyper<K> {
    /// One entry per output for `p` outputs (a shared entry repeated), or why the array does
    /// not fit.
    pub fn per_output(&self, p: usize) -> Result<Vec<&HyperEntry<K>>, String> {
        match self {
            Hyper::Shared(e) => Ok(vec![e; p]),
            Hyper::PerOutput(list) if list.len() == p => Ok(list.iter().collect()),
            Hyper::PerOutput(list) => Err(format!(
                "hyper has {} entries, expected one per output ({p})",
                list.len()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, Clone, PartialEq, Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Name {
        Se,
        Matern32,
    }

    fn parse(v: serde_json::Value) -> Result<Hyper<Name>, String> {
        serde_json::from_value(v).map_err(|e| e.to_string())
    }

    #[test]
    fn shared_and_per_output_entries_resolve_to_one_per_output() {
        let shared = parse(json!({"sigma_f": 2.0, "sigma_n": 0.1, "lengthscales": [1.0, 3.0]}))
            .expect("shared");
        let all = shared.per_output(3).expect("repeated");
        assert_eq!(all.len(), 3);
        assert_eq!(all[2].lengthscales, [1.0, 3.0]);
        assert_eq!(all[0].kernel, None);
        let list = parse(json!([
            {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [1.0]},
            {"sigma_f": 2.0, "sigma_n": 0.2, "lengthscales": [2.0], "kernel": "matern32"},
        ]))
        .expect("per output");
        let two = list.per_output(2).expect("fits");
        assert_eq!(
            (two[1].sigma_f, two[1].kernel.clone()),
            (2.0, Some(Name::Matern32))
        );
        assert_eq!(
            list.per_output(3).unwrap_err(),
            "hyper has 2 entries, expected one per output (3)"
        );
    }

    #[test]
    fn bad_hyper_values_name_the_entry_at_fault() {
        let err = parse(json!(3)).unwrap_err();
        assert!(err.contains("hyper must be an object"), "{err}");
        let err = parse(json!([
            {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [1.0]},
            {"sigma_f": 1.0, "lengthscales": [1.0]},
        ]))
        .unwrap_err();
        assert!(err.contains("hyper[1]") && err.contains("sigma_n"), "{err}");
        let err = parse(json!({"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [1.0], "extra": 1}))
            .unwrap_err();
        assert!(err.contains("extra"), "{err}");
        let err = parse(
            json!({"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [1.0], "kernel": "cubic"}),
        )
        .unwrap_err();
        assert!(err.contains("cubic"), "{err}");
    }
}
