//! SkyGP's configuration keys as the plugin declares them to the host
//! ([`gpn_plugin_api::Plugin::config_schema`]): the one place their types, defaults, units
//! and meanings are written. `Config` (config.rs) parses and checks the same keys; a test
//! keeps the defaults here equal to what `Config::check` resolves for `{}`.

use gpn_gp_core::drift::DRIFT_DOC;
use gpn_gp_core::hyper_config::HYPER_DOC;
use gpn_plugin_api::{ConfigKey, ConfigSchema, KeyType};
use serde_json::Value;

/// Every key, in the order of the documentation. Defaults are those of `{}`: the
/// recommended preset and the Fast variant; `doc` names what differs under
/// `preset: "reference"` or `variant: "dense"`.
pub fn config_schema() -> ConfigSchema {
    use KeyType::{Boolean, Integer, Number, Object, String};
    let key = ConfigKey::new;
    ConfigSchema {
        keys: vec![
            key("preset", String, "Which defaults the unset keys take: the spec's [R] choices or the public reference code's rules.")
                .default("recommended")
                .one_of(&["recommended", "reference"]),
            key("variant", String, "SkyGP-Fast never evicts data; SkyGP-Dense lets a full expert swap a point in (spec §3.6.1).")
                .default("fast")
                .one_of(&["fast", "dense"]),
            key("n_bar", Integer, "N̄: most points per expert, 1..=4096.")
                .default(50)
                .unit("samples"),
            key("n_cal", Integer, "Ncal: experts used to predict and tried for the update, ≥ 1.")
                .default(4)
                .unit("experts"),
            key("w_bar", Integer, "W̄: widest search window, ≥ 1.")
                .default(40)
                .unit("experts"),
            key("rho_window", Number, "ϱ: adaptive-window scale, > 0 (dense: 0.03).").default(0.04),
            key("rho_decay", Number, "ρ: time-aware decay per decay_clock unit, in (0, 1] (reference preset: 1.0, off).").default(0.995),
            key("theta_bar", Number, "ϑ̄: experts with weight ϑ ≤ ϑ̄ are skipped, in (0, 1).").default(1e-3),
            key("aggregation", String, "How the experts' predictions combine (gpn_gp_core::aggregate); bcm_ref is the paper's rBCM.")
                .default("bcm_ref")
                .one_of(&["moe", "poe", "gpoe", "bcm", "rbcm", "moe_ref", "gpoe_ref", "bcm_ref"]),
            key("window_mode", String, "Candidate-window formula (spec A1).")
                .default("reference")
                .one_of(&["paper", "reference"]),
            key("replace_rule", String, "Dense replacement test, §3.6.1 (reference preset: euclid_ref).")
                .default("kernel_min")
                .one_of(&["kernel_min", "paper_literal", "euclid_ref"]),
            key("distance", String, "Similarity that ranks experts and places new ones (KD/ED).")
                .default("kernel")
                .one_of(&["kernel", "euclid"]),
            key("insert_side", String, "Side on which a new expert is inserted, §3.6.2 (reference preset: ref_mirror).")
                .default("paper")
                .one_of(&["paper", "ref_mirror"]),
            key("nu_prev_rule", String, "ν_prev after a new expert, A6 (reference preset: stale).")
                .default("new_expert")
                .one_of(&["new_expert", "stale"]),
            key("empty_candidates", String, "What happens when every candidate is stale, A8 (reference preset: reference).")
                .default("prior")
                .one_of(&["prior", "reference"]),
            key("decay_clock", String, "Unit of Δt in ϑ ← ρ^Δt: the samples' time stamps or one step per prediction (reference preset: steps).")
                .default("seconds")
                .one_of(&["seconds", "steps"]),
            key("use_drop_center", Boolean, "DC ablation switch.").default(true),
            key("use_adaptive_window", Boolean, "AW ablation switch (off: window W̄).").default(true),
            key("use_time_decay", Boolean, "TD ablation switch (off: no decay, no staleness filter).").default(true),
            key("max_experts", Integer, "Pool capacity, ≥ 2 and > n_cal. Experts are made 32 at a time by a background thread, a chunk ahead of need; memory follows the experts held, up to this bound.")
                .default(1024)
                .unit("experts"),
            key("eviction", String, "Which expert a full pool recycles.")
                .default("lru")
                .one_of(&["lru", "fifo"]),
            key("kernel", String, "Kernel formula of every output without its own.")
                .default("se")
                .one_of(&["se", "matern32", "matern52"]),
            key("hyper", Object, HYPER_DOC).or(KeyType::Array),
            key("drift", Object, DRIFT_DOC).default(Value::Null),
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
            "skygp",
            &config_schema(),
            &required,
            resolve,
        );
        assert_eq!(conformance, Ok(()));
    }
}
