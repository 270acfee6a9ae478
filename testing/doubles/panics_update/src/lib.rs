//! Failure double for the plugin host: the first two `update`s work, every later one
//! panics (inside the plugin, where the export shim must catch it). Exports the live-model
//! counter.
//!
//! Boundary: test support only. Used by `node/tests/model_doubles.rs`.
//!
//! ```
//! use gpn_online_model::OnlineModel;
//! use gpn_plugin_api::Plugin;
//! let mut m = gpn_double_panics_update::PanicsUpdate::create(&gpn_double_common::serde_json::json!({}), 1, 1).unwrap();
//! m.update(&[0.0], &[1.0], 0.0, &[0.1]).unwrap();
//! m.update(&[0.0], &[1.0], 0.0, &[0.1]).unwrap();
//! let third = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| m.update(&[0.0], &[1.0], 0.0, &[0.1])));
//! assert!(third.is_err());
//! ```
#![warn(missing_docs)]

use gpn_double_common::serde_json::Value;
use gpn_double_common::{Fault, Faulty, Mean};
use gpn_online_model::{ModelError, OnlineModel};

/// Panics in `update` once two samples have been learnt.
#[derive(Debug)]
pub struct PanicsAfterTwo;

impl Fault for PanicsAfterTwo {
    fn from_config(_config: &Value) -> Result<Self, ModelError> {
        Ok(PanicsAfterTwo)
    }

    fn before_update(&mut self, model: &Mean) {
        let seen = model.stats().samples_seen;
        assert!(
            seen < 2,
            "panics_update: deliberate panic in update after {seen} samples (failure double)"
        );
    }
}

/// Updates that work twice, then panic.
pub type PanicsUpdate = Faulty<PanicsAfterTwo>;

gpn_plugin_api::export_plugin!(
    PanicsUpdate,
    name = "panics_update",
    version = env!("CARGO_PKG_VERSION"),
    description = "Failure double: panics in update after two samples",
);
gpn_double_common::export_counters!();
