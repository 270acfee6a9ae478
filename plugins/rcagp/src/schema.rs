//! RCaGP's configuration keys as the plugin declares them to the host
//! ([`gpn_plugin_api::Plugin::config_schema`]): the one place their types, defaults, units
//! and meanings are written. `Config` (config.rs) parses and checks the same keys; a test
//! keeps the defaults here equal to what `Config::check` resolves when only `hyper` is
//! given.

use gpn_gp_core::drift::DRIFT_DOC;
use gpn_gp_core::hyper_config::HYPER_DOC;
use gpn_plugin_api::{ConfigKey, ConfigSchema, KeyType};
use serde_json::Value;

use crate::config::{EXPERTS_ONLY, WINDOW_ONLY};

/// Every key, in the order `Config` declares them. Every key is optional except `hyper`.
pub fn config_schema() -> ConfigSchema {
    use KeyType::{Array, Boolean, Integer, Number, Object, String};
    let key = |name: &str, kind, doc: &str| {
        let k = ConfigKey::new(name, kind, doc);
        if WINDOW_ONLY.contains(&name) {
            k.when("layout", &["window"])
        } else if EXPERTS_ONLY.contains(&name) {
            k.when("layout", &["experts"])
        } else {
            k
        }
    };
    ConfigSchema {
        keys: vec![
            key("hyper", Object, &format!("{HYPER_DOC} Required; the lengthscales must be the same for every output (the outputs share the inputs and the action blocks), and an entry's kernel must be the model's `kernel`."))
                .or(Array),
            key("kernel", String, "Kernel profile (rbf = se); SE by default because the node and `gp-node eval` fit SE hyperparameters.")
                .default("se")
                .one_of(&["se", "rbf", "matern12", "matern32", "matern52"]),
            key("blocks", Integer, "i: action blocks in the window, 1..=2048.")
                .default(64)
                .unit("blocks"),
            key("block_size", Integer, "k_b: admitted samples per block, ≥ 1; the window n = blocks·block_size is at most 65536.")
                .default(16)
                .unit("samples"),
            key("admit_every", Integer, "Admit every n-th sample passed to `update` (decimation, §6.2), ≥ 1.")
                .default(1)
                .unit("samples"),
            key("admit_interval_s", Number, "Admit a sample only this long after the last admitted one (by `t_secs`; decimation, §6.2, §6.7), ≥ 0; 0: off. The default keeps about 5 s of motion in the default window at 1 kHz; streams whose samples are further apart admit every one. A time stamp that does not advance past the last admitted one (no clock, a reset) is admitted.")
                .default(0.005)
                .unit("s"),
            key("epsilon", Number, "ε in (0, 1): the threshold c = Q_{1−ε}(|y − γ|) over the window (§6.4, §6.7).")
                .default(0.15),
            key("beta", Number, "IMQ height β > 0, or \"normalized\": β² = σ²/2 per point, so d = σ²(1 + t²/c²) (§5 item 9).")
                .or(String)
                .default("normalized")
                .one_of(&["normalized"]),
            key("c_floor_sigmas", Number, "Floor of c in units of the window's median noise σ, ≥ 0 (§6.4).")
                .default(3.0),
            key("c_min", Number, "Absolute floor of c, ≥ 0; not 0 together with c_floor_sigmas.")
                .default(1e-6),
            key("weight_center", String, "Centre γ of the weights: the prior mean (the paper), or the model's prediction at the sample before learning it, with c² widened by that prediction's latent variance (§6.4's variant, a deviation; it rejects genuine surprises too, see `docs/results/rcagp-eval.md`).")
                .default("prior")
                .one_of(&["prior", "predictive"]),
            key("weight_profile", String, "Shape of w² in t = y − γ: the paper's IMQ β²/(1 + t²/c²), which inflates every point's noise by 1 + t²/c², or flat_imq: full weight for |t| ≤ c and the IMQ's decay in |t| − c beyond (a deviation; `docs/results/models-in-the-loop.md`). Default imq under layout window, flat_imq under layout experts (on a clean robot stream the paper's IMQ costs 11 % there).")
                .one_of(&["imq", "flat_imq"]),
            key("prior_mean", Number, "Constant prior mean m: one for every output, or an array of one per output.")
                .or(Array)
                .default(0.0),
            key("actions", String, "Action entries of a new block (§6.2): weight-aware, the paper's random N(0, 1/k_b), or uniform 1/√k_b.")
                .default("weight_aware")
                .one_of(&["weight_aware", "random", "uniform"]),
            key("seed", Integer, "Seed of the random actions.").default(0),
            key("noise", String, "Base noise ν of a point: `update`'s noise_var, or σ_n² of `hyper`; σ² = κ·ν with κ learned (init 1).")
                .default("sample")
                .one_of(&["sample", "hyper"]),
            key("background", Boolean, "Block path and refits on the model's threads (real-time `update`); false: inside `update` (deterministic).")
                .default(true),
            key("queue_capacity", Integer, "Samples waiting for the worker, 1..=2²⁰; when full the oldest is dropped (counted), as it would leave the window anyway. Unset: blocks·block_size + block_size (1040 with the default window), so a burst is caught up in one window's time.")
                .unit("samples"),
            key("threshold_refresh_blocks", Integer, "Recompute the soft thresholds c_o (and so every weight) with a full rebuild of the factors, O(p·i³), every this many committed blocks, ≥ 1. Between refreshes a committed block keeps the thresholds and updates each output's factor by one row, O(p·i²): what makes a window of many small blocks (e.g. 256 × 4 at 1 ms) affordable. 1: every block, the spec's block path. A drift refresh or a refit rebuilds in full too.")
                .default(1)
                .unit("blocks"),
            key("refit_every_blocks", Integer, "Slow path: refit the hyperparameters on the ELBO after this many new blocks (0: never).")
                .default(64)
                .unit("blocks"),
            key("refit_steps", Integer, "Adam steps per refit (on −ELBO/n, clipped at norm 2), ≥ 1 when refits are on.")
                .default(10)
                .unit("iterations"),
            key("refit_blocks", Integer, "Slow path: refit on the newest this many committed blocks (and the open block), 0: the whole window. A refit costs O(n² d + p n i²) in the n points and i actions it sees, so a fraction of a large window refits that much more often within `refit_max_duty`; G_C of the blocks it did not see is recomputed with the new lengthscales when it is installed.")
                .default(0)
                .unit("blocks"),
            key("refit_lr", Number, "Adam learning rate of the refits, > 0.").default(0.01),
            key("refit_lengthscales", Boolean, "Whether the slow path learns the lengthscales.")
                .default(true),
            key("refit_outputscale", Boolean, "Whether the slow path learns the outputscales.")
                .default(true),
            key("refit_noise", Boolean, "Whether the slow path learns the noise multipliers κ.")
                .default(true),
            key("refit_max_duty", Number, "In (0, 1]; background mode: after a refit that took T the next waits T·(1/duty − 1), capping the refit thread at this fraction of a core (a step costs O(n² d + p n i²), ≈ 0.1–0.3 s at n = 1024, d = 21, p = 7).")
                .default(0.25),
            key("drift", Object, DRIFT_DOC).default(Value::Null),
            key("layout", String, "Where the robust weights are applied: experts (the default), SkyGP-Dense's local experts, each sample weighted before they learn it (ADR 0018; on a robot stream as accurate as SkyGP-Dense at its update cost, and far more robust to outliers; in the loop `docs/results/models-in-the-loop.md`); or window, the paper's computation-aware GP on the block window (more robust on streams of small noise, `plugins/README.md`). A key of the other layout is refused.")
                .default("experts")
                .one_of(&["window", "experts"]),
            key("experts", Object, "layout experts: the local experts' configuration, any keys of the skygp plugin except hyper and drift (which come from the keys above), e.g. {variant: fast}. Default: SkyGP's defaults with variant dense (the node's default model)."),
            key("threshold_window", Integer, "layout experts: the thresholds c_o are the 1 − ε quantile of |t_o| over this many newest samples, 8..=65536. Default 1024.")
                .unit("samples"),
            key("threshold_refresh_samples", Integer, "layout experts: recompute the thresholds every this many samples, ≥ 1 (O(p · threshold_window) each). Default 64. The first min(this, threshold_window) samples are the warm-up: the thresholds are refreshed at each of them, over the samples so far.")
                .unit("samples"),
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
        let required =
            json!({"hyper": {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [0.5, 0.5]}});
        let resolve = |config: &Value| Config::from_json(config).and_then(|c| c.check(2, 1));
        let conformance = gpn_plugin_api::config_schema::conformance::<Config, _, _>(
            "rcagp",
            &config_schema(),
            &required,
            resolve,
        );
        assert_eq!(conformance, Ok(()));
    }
}
