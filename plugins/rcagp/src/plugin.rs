//! The plugin glue: [`RcaGp`] as a `gpn_plugin_api` plugin named `rcagp`, so the crate's
//! cdylib (`libgpn_rcagp.so`) is loadable by the node's plugin host. The state round trip
//! is `persist.rs`.

use gpn_gp_core::model::ModelError;
use gpn_plugin_api::{ConfigSchema, Plugin};

use crate::model::RcaGp;

impl Plugin for RcaGp {
    fn create(
        config: &serde_json::Value,
        input_dim: usize,
        output_dim: usize,
    ) -> Result<Self, ModelError> {
        RcaGp::from_json(config, input_dim, output_dim)
    }

    fn config_schema() -> Option<ConfigSchema> {
        Some(crate::schema::config_schema())
    }

    fn save_state(&self) -> Result<Vec<u8>, ModelError> {
        self.save()
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), ModelError> {
        self.load(bytes)
    }
}

gpn_plugin_api::export_plugin!(
    RcaGp,
    name = "rcagp",
    version = env!("CARGO_PKG_VERSION"),
    description = "RCaGP: robust computation-aware GP on a streaming block window",
);
