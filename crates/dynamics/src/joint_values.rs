//! Per-joint parameter values: one value for every joint or one per joint, in the model's
//! joint order ([`crate::Model::joint_names`]), expanded and checked against the joint count.

use serde::{Deserialize, Serialize};

/// A per-joint value that does not fit the robot; names the parameter key.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("`{key}`: {reason}")]
pub struct JointValuesError {
    /// Parameter key, as in the parameter file.
    pub key: &'static str,
    /// What is wrong with it.
    pub reason: String,
}

/// One value for every joint, or one per joint (in the model's joint order).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum JointValues {
    /// The same value for every joint.
    All(f64),
    /// One value per joint.
    Each(Vec<f64>),
}

impl JointValues {
    /// No value at all (`[]`): a key whose value is derived from the robot where the
    /// parameters are resolved (see `gpn_app::derive_defaults`).
    pub fn is_empty(&self) -> bool {
        matches!(self, Self::Each(v) if v.is_empty())
    }

    /// Joint i's value, without checks (after [`JointValues::expand`] succeeded). Real-time:
    /// no allocation.
    pub fn get(&self, i: usize) -> f64 {
        match self {
            Self::All(v) => *v,
            Self::Each(v) => v[i],
        }
    }

    /// Expands to one value per joint, checking length and that each value is finite and ≥ 0.
    pub fn expand(&self, key: &'static str, nv: usize) -> Result<Vec<f64>, JointValuesError> {
        let values = match self {
            Self::All(v) => vec![*v; nv],
            Self::Each(v) if v.len() == nv => v.clone(),
            Self::Each(v) if v.is_empty() => {
                return Err(JointValuesError {
                    key,
                    reason: format!(
                        "empty: derived from the robot by gp-node sim and gp-node run; give one \
                         value or {nv} values to use it here"
                    ),
                });
            }
            Self::Each(v) => {
                return Err(JointValuesError {
                    key,
                    reason: format!("expected one value or {nv} values, found {}", v.len()),
                });
            }
        };
        if let Some(bad) = values.iter().find(|v| !v.is_finite() || **v < 0.0) {
            return Err(JointValuesError {
                key,
                reason: format!("must be finite and ≥ 0, found {bad}"),
            });
        }
        Ok(values)
    }
}
