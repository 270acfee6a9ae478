//! The plugin glue: [`LogGp`] as a `gpn_plugin_api` plugin named `loggp`, so the crate's
//! cdylib (`libgpn_loggp.so`) is loadable by the node's plugin host.

use gpn_gp_core::model::{ModelError, OnlineModel};
use gpn_plugin_api::{ConfigSchema, Plugin};

use crate::model::LogGp;

impl Plugin for LogGp {
    fn create(
        config: &serde_json::Value,
        input_dim: usize,
        output_dim: usize,
    ) -> Result<Self, ModelError> {
        LogGp::from_json(config, input_dim, output_dim)
    }

    fn config_schema() -> Option<ConfigSchema> {
        Some(crate::schema::config_schema())
    }

    fn save_state(&self) -> Result<Vec<u8>, ModelError> {
        self.state_bytes()
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), ModelError> {
        self.restore_state_bytes(bytes)
    }

    fn describe(&self) -> Option<serde_json::Value> {
        let c = self.counters();
        Some(serde_json::json!({
            "leaves": self.leaves(),
            "max_leaves": self.config().max_leaves,
            "leaf_capacity": self.config().leaf_capacity,
            "depth": self.depth(),
            "samples_seen": c.samples_seen,
            "admitted": c.admitted,
            "stored": c.stored,
            "splits": c.splits,
            "replaced": c.replaced,
            "dropped": c.dropped,
            "unsplittable": c.unsplittable,
        }))
    }
}

gpn_plugin_api::export_plugin!(
    LogGp,
    name = "loggp",
    version = env!("CARGO_PKG_VERSION"),
    description = "LoG-GP: locally growing random trees of Gaussian processes (baseline)",
);
