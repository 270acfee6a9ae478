//! The plugin glue: [`RcaGpPlugin`] as a `gpn_plugin_api` plugin named `rcagp`, so the
//! crate's cdylib (`libgpn_rcagp.so`) is loadable by the node's plugin host. The `layout`
//! key picks the model: [`RobustExperts`] (the default) or [`RcaGp`] on the block window.
//! The state round trips are `persist.rs` and `experts.rs`.

use std::time::Duration;

use gpn_gp_core::model::{ModelError, ModelStats, OnlineModel, Readiness};
use gpn_plugin_api::{ConfigSchema, Plugin};

use crate::config::{Config, Layout};
use crate::experts::{ExpertsSettings, RobustExperts};
use crate::model::RcaGp;

/// The model the `rcagp` plugin creates: one of the two layouts.
#[derive(Debug)]
pub enum RcaGpPlugin {
    /// `layout: window`.
    Window(Box<RcaGp>),
    /// `layout: experts`.
    Experts(Box<RobustExperts>),
}

impl RcaGpPlugin {
    /// Builds the layout `config` names. Allocates.
    pub fn from_json(
        config: &serde_json::Value,
        input_dim: usize,
        output_dim: usize,
    ) -> Result<Self, ModelError> {
        let parsed = Config::from_json(config)?;
        match parsed.layout.unwrap_or_default() {
            Layout::Window => {
                RcaGp::new(parsed.check(input_dim, output_dim)?).map(|m| Self::Window(Box::new(m)))
            }
            Layout::Experts => {
                if input_dim == 0 || output_dim == 0 {
                    return Err(ModelError::Config(format!(
                        "rcagp: input_dim and output_dim must be ≥ 1, got {input_dim} and {output_dim}"
                    )));
                }
                let settings = ExpertsSettings::resolve(config, &parsed, input_dim, output_dim)?;
                RobustExperts::new(settings).map(|m| Self::Experts(Box::new(m)))
            }
        }
    }

    fn model(&self) -> &dyn OnlineModel {
        match self {
            Self::Window(m) => m.as_ref(),
            Self::Experts(m) => m.as_ref(),
        }
    }

    fn model_mut(&mut self) -> &mut dyn OnlineModel {
        match self {
            Self::Window(m) => m.as_mut(),
            Self::Experts(m) => m.as_mut(),
        }
    }
}

impl OnlineModel for RcaGpPlugin {
    fn input_dim(&self) -> usize {
        self.model().input_dim()
    }

    fn output_dim(&self) -> usize {
        self.model().output_dim()
    }

    fn predict(&mut self, x: &[f64], mean: &mut [f64], var: &mut [f64]) -> Result<(), ModelError> {
        self.model_mut().predict(x, mean, var)
    }

    fn update(
        &mut self,
        x: &[f64],
        y: &[f64],
        t_secs: f64,
        noise_var: &[f64],
    ) -> Result<(), ModelError> {
        self.model_mut().update(x, y, t_secs, noise_var)
    }

    fn stats(&self) -> ModelStats {
        self.model().stats()
    }

    fn readiness(&self, from_prior: &mut [bool]) -> Option<Readiness> {
        self.model().readiness(from_prior)
    }

    fn wait_ready(&mut self, timeout: Duration) -> Result<(), ModelError> {
        self.model_mut().wait_ready(timeout)
    }
}

impl Plugin for RcaGpPlugin {
    fn create(
        config: &serde_json::Value,
        input_dim: usize,
        output_dim: usize,
    ) -> Result<Self, ModelError> {
        Self::from_json(config, input_dim, output_dim)
    }

    fn config_schema() -> Option<ConfigSchema> {
        Some(crate::schema::config_schema())
    }

    fn save_state(&self) -> Result<Vec<u8>, ModelError> {
        match self {
            Self::Window(m) => m.save(),
            Self::Experts(m) => m.save(),
        }
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), ModelError> {
        // A state of the other layout is named as such: experts became the default layout
        // after window states had been saved with no `layout` key.
        let other = |saved: &str, this: &str| {
            ModelError::Other(format!(
                "rcagp load: the state was saved by layout \"{saved}\" and this model's layout \
                 is \"{this}\"; set layout: {saved} in the configuration to load it"
            ))
        };
        match self {
            Self::Window(_) if bytes.starts_with(crate::experts::MAGIC) => {
                Err(other("experts", "window"))
            }
            Self::Experts(_) if bytes.starts_with(crate::persist::MAGIC) => {
                Err(other("window", "experts"))
            }
            Self::Window(m) => m.load(bytes),
            Self::Experts(m) => m.load(bytes),
        }
    }
}

gpn_plugin_api::export_plugin!(
    RcaGpPlugin,
    name = "rcagp",
    version = env!("CARGO_PKG_VERSION"),
    description = "RCaGP: robust weights on SkyGP's local experts (the default layout), or the robust computation-aware GP on a streaming block window",
);
