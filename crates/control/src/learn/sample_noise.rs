//! The noise variance a model is told with each sample (`OnlineModel::update`'s
//! `noise_var`, standardised units): the observation noise its hyperparameters were fitted
//! with, σ_n² per output, plus what is known about the sample itself (the q̈ estimate's
//! share of velocity noise, an injected jump variance). The replay buffer keeps only that
//! per-sample part, so the same samples can warm models of other hyperparameters.
//!
//! Why not the configured sensor noise (`learn.torque_noise_std_nm`, one value for every
//! joint): standardised per output it is far too large for a light joint and too small for
//! a heavy one, and models that take `noise_var` as the observation noise (RCaGP, VBKS)
//! then barely learn the first and overfit the second (`docs/results/models-in-the-loop.md`). It stays
//! the base of an output whose σ_n the hyperparameters do not state.

use serde_json::Value;

/// Writes σ_n of every output stated in `hyper` (the model config's `"hyper"` value: one
/// `{sigma_f, sigma_n, lengthscales}` object shared by all outputs, an array of one per
/// output, or a split model's `{"parts": [{"outputs", "hyper"}, …]}`) into `out`, leaving
/// the others as they are. Allocates nothing (it runs on the control thread at adoption).
pub fn read_sigma_n(hyper: &Value, out: &mut [f64]) {
    if let Some(parts) = hyper.get("parts").and_then(Value::as_array) {
        for part in parts {
            let (Some(outputs), Some(h)) = (
                part.get("outputs").and_then(Value::as_array),
                part.get("hyper"),
            ) else {
                continue;
            };
            for (k, o) in outputs.iter().enumerate() {
                let Some(slot) = o.as_u64().and_then(|o| out.get_mut(o as usize)) else {
                    continue;
                };
                if let Some(s) = entry(h, k) {
                    *slot = s;
                }
            }
        }
        return;
    }
    for (k, slot) in out.iter_mut().enumerate() {
        if let Some(s) = entry(hyper, k) {
            *slot = s;
        }
    }
}

/// σ_n of output `k` of a plain `"hyper"` value (shared object or per-output array), if
/// finite and positive.
fn entry(hyper: &Value, k: usize) -> Option<f64> {
    let h = match hyper {
        Value::Array(list) => list.get(k)?,
        h => h,
    };
    let s = h.get("sigma_n")?.as_f64()?;
    (s.is_finite() && s > 0.0).then_some(s)
}

/// The base noise variance per output in standardised units: σ_n² where `hyper` states it,
/// else `fallback_var_raw` (N·m²) mapped by the output's scale `std`.
pub fn base_noise_var(hyper: Option<&Value>, std: &[f64], fallback_var_raw: f64, out: &mut [f64]) {
    out.fill(f64::NAN);
    if let Some(h) = hyper {
        read_sigma_n(h, out);
    }
    for (v, s) in out.iter_mut().zip(std) {
        *v = if v.is_nan() {
            fallback_var_raw / (s * s)
        } else {
            *v * *v
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(hyper: Value, p: usize) -> Vec<f64> {
        let mut out = vec![f64::NAN; p];
        read_sigma_n(&hyper, &mut out);
        out
    }

    #[test]
    fn sigma_n_is_read_from_every_format_a_fit_or_a_user_writes() {
        let h = |s: f64| json!({"sigma_f": 1.0, "sigma_n": s, "lengthscales": [1.0]});
        assert_eq!(read(h(0.3), 2), vec![0.3, 0.3]);
        assert_eq!(read(json!([h(0.1), h(0.2)]), 2), vec![0.1, 0.2]);
        let split = json!({"parts": [
            {"outputs": [1], "inputs": [0], "hyper": [h(0.5)]},
            {"outputs": [0, 2], "inputs": [0], "hyper": [h(0.1), h(0.7)]},
        ]});
        assert_eq!(read(split, 3), vec![0.1, 0.5, 0.7]);
    }

    #[test]
    fn an_output_without_a_usable_sigma_n_takes_the_fallback() {
        let hyper = json!([
            {"sigma_f": 1.0, "sigma_n": 0.5},
            {"sigma_f": 1.0, "sigma_n": -1.0},
        ]);
        let mut out = vec![0.0; 3];
        base_noise_var(Some(&hyper), &[2.0, 2.0, 4.0], 0.04, &mut out);
        assert_eq!(out, vec![0.25, 0.01, 0.0025]);
        base_noise_var(None, &[1.0], 0.04, &mut out[..1]);
        assert_eq!(out[0], 0.04);
    }
}
