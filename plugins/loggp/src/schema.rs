//! LoG-GP's configuration keys as the plugin declares them to the host
//! ([`gpn_plugin_api::Plugin::config_schema`]): the one place their types, defaults, units
//! and meanings are written. `Config` (config.rs) parses the same keys; a test keeps the two
//! in agreement.

use gpn_gp_core::hyper_config::HYPER_DOC;
use gpn_plugin_api::{ConfigKey, ConfigSchema, KeyType};

/// Every key, in the order `Config` declares them. Every key is optional except `hyper`.
pub fn config_schema() -> ConfigSchema {
    use KeyType::{Array, Integer, Number, Object, String};
    let key = ConfigKey::new;
    ConfigSchema {
        keys: vec![
            key("hyper", Object, &format!("{HYPER_DOC} Required; squared-exponential kernel only (an entry's kernel, if given, must be se). Fixed while learning, as in the reference."))
                .or(Array),
            key("leaf_capacity", Integer, "N̄: points per leaf GP, 2..=2048. A full leaf splits in two inside `update` (O(p·N̄³/12), once every ~N̄/2 admitted samples).")
                .default(100)
                .unit("samples"),
            key("max_leaves", Integer, "L_max: most leaves, 1..=2²⁰. Storage for all of them is allocated at create (refused above 4 GiB); once reached, full leaves follow `when_full`.")
                .default(256)
                .unit("leaves"),
            key("overlap_ratio", Number, "w_o > 1: a split's overlap region is (the leaf's range in the split dimension)/w_o wide; inside it the two children's predictions are blended linearly.")
                .default(10.0),
            key("split_value", String, "Where a full leaf is cut in its split dimension: the mean of its points (the reference's benchmarks), the median, or the mid-range. Falls back to the mid-range when a side would be empty.")
                .default("mean")
                .one_of(&["mean", "median", "midrange"]),
            key("split_dimension", String, "The split dimension: the largest range in lengthscale units (scaled; a deviation, see docs/specs/loggp.md §4) or the largest raw range (range, the reference).")
                .default("scaled")
                .one_of(&["scaled", "range"]),
            key("when_full", String, "A sample reaching a full leaf once the tree cannot grow: replaces the leaf's oldest point (replace_oldest), or is dropped (drop, the reference). Both are counted in `describe`.")
                .default("replace_oldest")
                .one_of(&["replace_oldest", "drop"]),
            key("admit_interval_s", Number, "Admit a sample only this long after the last admitted one (by `t_secs`), ≥ 0; 0: every sample. A time stamp that does not advance past the last admitted one is admitted.")
                .default(0.005)
                .unit("s"),
            key("noise", String, "A point's noise variance: `update`'s noise_var (sample) or σ_n² of `hyper` (hyper); at least 10⁻⁸·σ_f².")
                .default("sample")
                .one_of(&["sample", "hyper"]),
            key("combine", String, "How the active leaves' predictions are combined: gpoe, the generalised product of experts (precision-weighted: μ = σ²·Σ ω_i μ_i/σ_i², 1/σ² = Σ ω_i/σ_i²; a leaf without data near x barely counts), or moe, the paper's moment-matched mixture (each leaf by its branch weight ω_i alone; its variance includes the leaves' disagreement). See docs/specs/loggp.md §4 item 10.")
                .default("gpoe")
                .one_of(&["gpoe", "moe"]),
            key("seed", Integer, "Seed of the routing draws inside overlap regions (runs are reproducible).")
                .default(0),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use serde_json::{Value, json};

    #[test]
    fn declares_the_keys_and_defaults_config_reads() {
        let required =
            json!({"hyper": {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [0.5, 0.5]}});
        let resolve = |config: &Value| Config::from_json(config).and_then(|c| c.check(2, 1));
        let conformance = gpn_plugin_api::config_schema::conformance::<Config, _, _>(
            "loggp",
            &config_schema(),
            &required,
            resolve,
        );
        assert_eq!(conformance, Ok(()));
    }
}
