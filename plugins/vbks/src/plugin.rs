//! The plugin glue: [`Vbks`] as a `gpn_plugin_api` plugin named `vbks`, so the crate's
//! cdylib (`libgpn_vbks.so`) is loadable by the node's plugin host. State round trip:
//! `persist.rs`; diagnostics: `describe.rs`.

use gpn_gp_core::model::ModelError;
use gpn_plugin_api::{ConfigSchema, Plugin};

use crate::model::Vbks;
use crate::{describe, persist};

impl Plugin for Vbks {
    fn create(
        config: &serde_json::Value,
        input_dim: usize,
        output_dim: usize,
    ) -> Result<Self, ModelError> {
        Vbks::from_json(config, input_dim, output_dim)
    }

    fn config_schema() -> Option<ConfigSchema> {
        Some(crate::schema::config_schema())
    }

    fn save_state(&self) -> Result<Vec<u8>, ModelError> {
        persist::save(self)
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), ModelError> {
        persist::load(self, bytes)
    }

    fn describe(&self) -> Option<serde_json::Value> {
        Some(describe::describe(self))
    }
}

gpn_plugin_api::export_plugin!(
    Vbks,
    name = "vbks",
    version = env!("CARGO_PKG_VERSION"),
    description =
        "VBKS ensemble: Bayesian kernel selection over composite kernels, online sparse-GP mixture",
);
