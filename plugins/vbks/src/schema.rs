//! VBKS's configuration keys as the plugin declares them to the host
//! ([`gpn_plugin_api::Plugin::config_schema`]): the one place their types, defaults, units
//! and meanings are written. `Config` (config.rs) parses and checks the same keys; a test
//! keeps the defaults here equal to what `Config::check` resolves for `{}`.

use gpn_gp_core::drift::DRIFT_DOC;
use gpn_gp_core::hyper_config::HYPER_DOC;
use gpn_plugin_api::{ConfigKey, ConfigSchema, KeyType};
use serde_json::{Value, json};

/// Every key, in the order `Config` declares them; all are optional.
pub fn config_schema() -> ConfigSchema {
    use KeyType::{Array, Boolean, Integer, Number, Object, String};
    let key = ConfigKey::new;
    ConfigSchema {
        keys: vec![
            key("kernels", String, "Candidate kernel space: level2 (the 24 expressions of level ≤ 2 over SE, RQ, LIN, PER), level1, level3 (K_144), k12 (the paper's K_12), or a list of expressions such as [\"SE\", \"PER*SE\", \"(PER+RQ)*LIN\"].")
                .or(Array)
                .default("level2")
                .one_of(&["k12", "level1", "level2", "level3"]),
            key("base_dims", Object, "Active inputs per base kernel (spec gap #13): {SE, RQ, LIN, PER (or lower case): [strictly increasing input indices]}; a base kernel not listed acts on all inputs.")
                .default(json!({})),
            key("offline_samples", Integer, "N: samples of the offline phase, at least the inducing inputs and 2.")
                .default(1000)
                .unit("samples"),
            key("inducing", Integer, "M: inducing inputs of each online component, ≥ 1.")
                .default(64)
                .unit("points"),
            key("inducing_select", Integer, "M_sel: shared inducing inputs of the offline selection (k-means), ≥ 1. Unset: min(inducing, 32), 32 with the default inducing.")
                .unit("points"),
            key("batch_size", Integer, "Minibatch |B| of the local steps (the paper's synthetic runs: 32), ≥ 1.")
                .default(128)
                .unit("samples"),
            key("checkpoints", Integer, "T: chunks of the offline stream, 1..=offline_samples.")
                .default(10),
            key("epochs", Number, "Passes over each new chunk per checkpoint (local steps = ⌈epochs·chunk/|B|⌉), > 0.")
                .default(10.0),
            key("min_steps", Integer, "At least this many local steps per checkpoint.")
                .default(30)
                .unit("iterations"),
            key("final_steps", Integer, "Local steps on all N samples after the last checkpoint.")
                .default(200)
                .unit("iterations"),
            key("lr_hyper", Number, "Adam step of the log-hyperparameters at the start of the offline phase, decaying geometrically to lr_hyper_final, > 0.")
                .default(0.05),
            key("lr_hyper_final", Number, "Adam step of the log-hyperparameters at the end of the offline phase, > 0.")
                .default(0.005),
            key("natgrad_step", Number, "γ of the natural-gradient steps on q(u), in (0, 1] (1 on full batches).")
                .default(0.1),
            key("prior_log_sd", Number, "Standard deviation of the log-normal MAP prior on every hyperparameter, ≥ 0 (0: ML-II).")
                .default(1.0),
            key("init_candidates", Integer, "Initial points scored per kernel (`init.rs`), ≥ 1.")
                .default(90)
                .unit("points"),
            key("starts", Integer, "Best initial points optimised per kernel (the best final bound wins), 1..=init_candidates.")
                .default(2)
                .unit("points"),
            key("keep", Integer, "K̃: kernels kept for the online mixture, ≥ 1 (at most the candidates).")
                .default(5)
                .unit("kernels"),
            key("belief", String, "How the kernel weights are formed: the logistic-normal belief q(g) (Alg. 4), or discrete w ∝ exp(L/τ) (not the paper's).")
                .default("logistic_normal")
                .one_of(&["logistic_normal", "discrete"]),
            key("temperature", Number, "τ of belief = \"discrete\", > 0 (1.0 when unset); an error with the logistic-normal belief."),
            key("prior_scale", Number, "s_g of the belief's prior p(g) = N(μ₀, s_g² I), > 0.")
                .default(1.0),
            key("prior_mean", Array, "μ₀ of p(g): one finite value per candidate kernel. Unset: zeros."),
            key("belief_covariance", String, "Covariance C_g of the belief: full, diagonal, or auto (full when there are at most 64 candidate kernels).")
                .default("auto")
                .one_of(&["auto", "full", "diagonal"]),
            key("belief_lr", Number, "Adam step of the belief fit (Alg. 4), > 0.").default(0.05),
            key("belief_samples", Integer, "Monte-Carlo samples per step of the belief fit, ≥ 1.")
                .default(32)
                .unit("samples"),
            key("belief_steps", Integer, "Adam steps of a fresh belief fit.")
                .default(1000)
                .unit("iterations"),
            key("belief_steps_warm", Integer, "Adam steps of a warm-started belief refit.")
                .default(200)
                .unit("iterations"),
            key("posterior_samples", Integer, "Samples of q*(k) (eq. 13), ≥ 1.")
                .default(2000)
                .unit("samples"),
            key("trajectory", Boolean, "Fit the belief at every checkpoint (reported by `describe`) or only at the end.")
                .default(true),
            key("forgetting", Number, "λ in (0, 1]: the statistics are discounted by λ per sample; ignored when `drift` is given.")
                .default(1.0),
            key("refactor_every", Integer, "With λ < 1: period of the background refactorisation, ≥ 1.")
                .default(200)
                .unit("samples"),
            key("belief_refit_every", Integer, "Period of the online belief refit (0: never).")
                .default(200)
                .unit("samples"),
            key("wait_for_offline", Boolean, "`update` blocks at sample N until the ensemble is ready (reproducible evaluations).")
                .default(false),
            key("predict", String, "The belief-weighted mixture, or one kept kernel alone: top (VBKS-s, the highest offline weight) or an index below keep (0 = top), for comparisons.")
                .or(Integer)
                .default("mixture")
                .one_of(&["mixture", "top"]),
            key("variance", String, "Predicted variance: the latent mixture variance plus the learned noise in excess of the caller's `noise_var` (see `ensemble.rs`), or the latent variance alone.")
                .default("latent_plus_excess_noise")
                .one_of(&["latent_plus_excess_noise", "latent"]),
            key("seed", Integer, "RNG seed (shuffle, k-means, belief Monte Carlo).").default(0),
            key("standardize_inputs", Boolean, "Inputs to zero mean and unit variance (targets: see center_targets).")
                .default(true),
            key("center_targets", Boolean, "Targets to zero mean before scaling them to unit variance (spec §2.5). false: scaled only, so a kernel that vanishes at the origin (LIN in a product) is not asked to explain the subtracted mean; the paper's synthetic sets need it (docs/results/vbks-exact-evidence.md).")
                .default(true),
            key("jitter", Number, "Relative jitter on K_uu, > 0.").default(1e-6),
            key("min_noise_var", Number, "Floor of each kernel's noise variance (standardised units), > 0.")
                .default(1e-6),
            key("pending_capacity", Integer, "Samples queued while the offline phase runs (the oldest dropped when full).")
                .default(10_000)
                .unit("samples"),
            key("warmup_samples", Integer, "Samples after which a warm-up model predicts until the offline phase is done: the first candidate kernel at its initial parameters (seeded from `hyper` when given), inducing inputs by k-means on those samples, learning every later sample; built on the background thread. 0: no warm-up, the running mean and variance (the prior) until then.")
                .default(200)
                .unit("samples"),
            key("catchup_per_update", Integer, "Queued samples folded in per `update` once online, ≥ 1.")
                .default(4)
                .unit("samples"),
            key("replay_capacity", Integer, "Recent samples kept to replay after a background refactorisation, ≥ 1.")
                .default(1024)
                .unit("samples"),
            key("threads", Integer, "Threads of the offline phase (kernels in parallel), ≥ 1.")
                .default(1)
                .unit("threads"),
            key("hyper", Object, &format!("{HYPER_DOC} Optional, as the node and `gp-node eval` pass it: seeds the initial lengthscales and noise (its kernel is ignored), and σ_f² is the variance predicted before any sample (1 without it)."))
                .or(Array)
                .default(Value::Null),
            key("drift", Object, &format!("{DRIFT_DOC} Without it the model is exactly the pre-drift one; with it `forgetting`, `refactor_every` and `replay_capacity` are ignored."))
                .default(Value::Null),
            key("drift_window", Integer, "With `drift`: samples kept at most, ≥ offline_samples (the oldest leave early when full; counted).")
                .default(10_000)
                .unit("samples"),
            key("kernel", String, "Accepted and ignored (the node's model config may carry it).")
                .default(Value::Null),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use serde_json::json;

    #[test]
    fn declares_the_keys_and_defaults_config_reads() {
        let required = json!({});
        let resolve = |config: &Value| Config::from_json(config).and_then(|c| c.check(2, 1));
        let conformance = gpn_plugin_api::config_schema::conformance::<Config, _, _>(
            "vbks",
            &config_schema(),
            &required,
            resolve,
        );
        assert_eq!(conformance, Ok(()));
    }
}
