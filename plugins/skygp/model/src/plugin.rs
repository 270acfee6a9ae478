//! [`SkyGp`] as a `gpn_plugin_api` plugin: what the `skygp` plugin (`gpn_skygp`, whose
//! cdylib `libgpn_skygp.so` exports it with `export_plugin!`) answers through the ABI. The
//! export itself is not here, so that a crate linking this one in-process (RCaGP's experts
//! layout) does not carry a second `gpn_plugin_entry`. The learned state round trip is
//! `persist.rs`.

use gpn_gp_core::model::ModelError;
use gpn_plugin_api::{ConfigSchema, Plugin};

use crate::model::SkyGp;
use crate::persist;

impl Plugin for SkyGp {
    fn create(
        config: &serde_json::Value,
        input_dim: usize,
        output_dim: usize,
    ) -> Result<Self, ModelError> {
        SkyGp::from_json(config, input_dim, output_dim)
    }

    fn config_schema() -> Option<ConfigSchema> {
        Some(crate::schema::config_schema())
    }

    fn save_state(&self) -> Result<Vec<u8>, ModelError> {
        Ok(persist::save(self))
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), ModelError> {
        persist::load(self, bytes)
    }

    /// The pool: experts in use and made, the bound, bytes per expert, and the counters.
    fn describe(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({
            "model": "skygp",
            "experts": self.n_experts(),
            "experts_made": self.experts_made(),
            "max_experts": self.config().max_experts,
            "bytes_per_expert": self.bytes_per_expert(),
            "grown_late": self.grown_late(),
            "replacements": self.replacements(),
            "evictions": self.evictions(),
        }))
    }
}
