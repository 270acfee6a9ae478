//! gpn_double_common: what the plugin host's failure doubles share — a tiny well-behaved
//! model ([`Mean`]), the wrapper that breaks it in one place ([`Faulty`] with a [`Fault`]),
//! the entry point of a double that breaks the table itself ([`export_mean_table!`]), and
//! counters of live models and threads that each double exports through test-only symbols
//! ([`export_counters!`]).
//!
//! Boundary: test support only; never shipped. Each double is its own cdylib and links
//! its own copy of this crate, so every double has its own counters.
//!
//! ```
//! use gpn_double_common::{Mean, live_models};
//! use gpn_online_model::OnlineModel;
//! let before = live_models();
//! let mut m = Mean::new(1, 1);
//! m.update(&[0.0], &[2.0], 0.0, &[0.1]).unwrap();
//! assert_eq!(live_models(), before + 1);
//! drop(m);
//! assert_eq!(live_models(), before);
//! ```
#![warn(missing_docs)]

use std::sync::atomic::{AtomicU64, Ordering};

use gpn_online_model::{ModelError, ModelStats, OnlineModel};
use gpn_plugin_api::Plugin;
use gpn_plugin_api::serde_json::Value;

static LIVE_MODELS: AtomicU64 = AtomicU64::new(0);
static LIVE_THREADS: AtomicU64 = AtomicU64::new(0);

/// Models of this library currently alive (created and not yet dropped).
pub fn live_models() -> u64 {
    LIVE_MODELS.load(Ordering::SeqCst)
}

/// Background threads of this library's models currently running.
pub fn live_threads() -> u64 {
    LIVE_THREADS.load(Ordering::SeqCst)
}

/// Counts one live model from creation to drop.
#[derive(Debug)]
pub struct LiveModel(());

impl LiveModel {
    /// Count one more live model.
    pub fn new() -> LiveModel {
        LIVE_MODELS.fetch_add(1, Ordering::SeqCst);
        LiveModel(())
    }
}

impl Default for LiveModel {
    fn default() -> Self {
        LiveModel::new()
    }
}

impl Drop for LiveModel {
    fn drop(&mut self) {
        LIVE_MODELS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Counts one running thread; create it on the thread, drop it when the thread ends.
#[derive(Debug)]
pub struct LiveThread(());

impl LiveThread {
    /// Count one more running thread.
    pub fn new() -> LiveThread {
        LIVE_THREADS.fetch_add(1, Ordering::SeqCst);
        LiveThread(())
    }
}

impl Default for LiveThread {
    fn default() -> Self {
        LiveThread::new()
    }
}

impl Drop for LiveThread {
    fn drop(&mut self) {
        LIVE_THREADS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Define the test-only exports `gpn_double_live_models` and `gpn_double_live_threads`
/// (`uint64_t (void)`) in the invoking cdylib.
#[macro_export]
macro_rules! export_counters {
    () => {
        /// Test-only: live models of this double.
        #[unsafe(no_mangle)]
        pub extern "C" fn gpn_double_live_models() -> u64 {
            $crate::live_models()
        }
        /// Test-only: running background threads of this double's models.
        #[unsafe(no_mangle)]
        pub extern "C" fn gpn_double_live_threads() -> u64 {
            $crate::live_threads()
        }
    };
}

/// The running mean of each output, with variance 1/(n+1): a small model that does
/// everything right, for the doubles to break in one place each.
#[derive(Debug)]
pub struct Mean {
    input_dim: usize,
    sum: Vec<f64>,
    n: u64,
    _live: LiveModel,
}

impl Mean {
    /// A model for `input_dim` inputs and `output_dim` outputs.
    pub fn new(input_dim: usize, output_dim: usize) -> Mean {
        Mean {
            input_dim,
            sum: vec![0.0; output_dim],
            n: 0,
            _live: LiveModel::new(),
        }
    }

    fn check(&self, what: &'static str, expected: usize, values: &[f64]) -> Result<(), ModelError> {
        if values.len() != expected {
            return Err(ModelError::Dimension {
                what,
                expected,
                found: values.len(),
            });
        }
        match values.iter().position(|v| !v.is_finite()) {
            Some(index) => Err(ModelError::NonFinite { what, index }),
            None => Ok(()),
        }
    }
}

impl OnlineModel for Mean {
    fn input_dim(&self) -> usize {
        self.input_dim
    }

    fn output_dim(&self) -> usize {
        self.sum.len()
    }

    fn predict(&mut self, x: &[f64], mean: &mut [f64], var: &mut [f64]) -> Result<(), ModelError> {
        self.check("x", self.input_dim, x)?;
        let n = self.n as f64;
        for ((m, v), s) in mean.iter_mut().zip(var.iter_mut()).zip(&self.sum) {
            *m = if self.n == 0 { 0.0 } else { s / n };
            *v = 1.0 / (n + 1.0);
        }
        Ok(())
    }

    fn update(
        &mut self,
        x: &[f64],
        y: &[f64],
        _t_secs: f64,
        noise_var: &[f64],
    ) -> Result<(), ModelError> {
        self.check("x", self.input_dim, x)?;
        self.check("y", self.sum.len(), y)?;
        self.check("noise_var", self.sum.len(), noise_var)?;
        self.sum.iter_mut().zip(y).for_each(|(s, y)| *s += y);
        self.n += 1;
        Ok(())
    }

    fn stats(&self) -> ModelStats {
        ModelStats {
            samples_seen: self.n,
            samples_stored: 0,
            experts: 1,
            memory_bytes: (8 * self.sum.len()) as u64,
        }
    }
}

impl Plugin for Mean {
    fn create(
        _config: &serde_json::Value,
        input_dim: usize,
        output_dim: usize,
    ) -> Result<Self, ModelError> {
        Ok(Mean::new(input_dim, output_dim))
    }

    fn save_state(&self) -> Result<Vec<u8>, ModelError> {
        let mut out = self.n.to_le_bytes().to_vec();
        self.sum
            .iter()
            .for_each(|s| out.extend_from_slice(&s.to_le_bytes()));
        Ok(out)
    }

    fn describe(&self) -> Option<serde_json::Value> {
        Some(serde_json::json!({"model": "mean", "samples": self.n, "outputs": self.sum.len()}))
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), ModelError> {
        let want = 8 * (1 + self.sum.len());
        if bytes.len() != want {
            return Err(ModelError::Other(format!(
                "state has {} bytes, expected {want}",
                bytes.len()
            )));
        }
        let mut words = bytes.chunks_exact(8).map(|c| {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            w
        });
        self.n = words.next().map_or(0, u64::from_le_bytes);
        self.sum
            .iter_mut()
            .zip(words)
            .for_each(|(s, w)| *s = f64::from_le_bytes(w));
        Ok(())
    }
}

/// One way of breaking the plugin contract, applied to a [`Mean`] by [`Faulty`]. Every hook
/// but `from_config` defaults to behaving well, so a double writes only the one it breaks.
pub trait Fault: Send + Sized + 'static {
    /// The fault's settings from the model's config. Runs after the model is built, so an
    /// error here also shows that a failed `create` releases what it built.
    fn from_config(config: &Value) -> Result<Self, ModelError>;

    /// Before each `update`, given the model as it is.
    fn before_update(&mut self, _model: &Mean) {}

    /// Before each `predict`.
    fn before_predict(&mut self) {}

    /// After a successful `predict`, on its output.
    fn after_predict(&self, _mean: &mut [f64], _var: &mut [f64]) {}
}

/// A [`Mean`] broken in the one way `F` says; everything else (dimensions, stats, state) is
/// the mean's. No `describe`: the doubles answer `UNSUPPORTED` there, as before the hook.
#[derive(Debug)]
pub struct Faulty<F> {
    // Declared first so it drops first: a fault's `Drop` (the slow double joining its
    // worker) runs while the model still counts as live.
    fault: F,
    model: Mean,
}

impl<F: Fault> OnlineModel for Faulty<F> {
    fn input_dim(&self) -> usize {
        self.model.input_dim()
    }

    fn output_dim(&self) -> usize {
        self.model.output_dim()
    }

    fn predict(&mut self, x: &[f64], mean: &mut [f64], var: &mut [f64]) -> Result<(), ModelError> {
        self.fault.before_predict();
        self.model.predict(x, mean, var)?;
        self.fault.after_predict(mean, var);
        Ok(())
    }

    fn update(
        &mut self,
        x: &[f64],
        y: &[f64],
        t_secs: f64,
        noise_var: &[f64],
    ) -> Result<(), ModelError> {
        self.fault.before_update(&self.model);
        self.model.update(x, y, t_secs, noise_var)
    }

    fn stats(&self) -> ModelStats {
        self.model.stats()
    }
}

impl<F: Fault> Plugin for Faulty<F> {
    fn create(config: &Value, input_dim: usize, output_dim: usize) -> Result<Self, ModelError> {
        // The model first, as a late validation step would have it (see `Fault::from_config`).
        let model = Mean::new(input_dim, output_dim);
        let fault = F::from_config(config)?;
        Ok(Faulty { fault, model })
    }

    fn save_state(&self) -> Result<Vec<u8>, ModelError> {
        self.model.save_state()
    }

    fn load_state(&mut self, bytes: &[u8]) -> Result<(), ModelError> {
        self.model.load_state(bytes)
    }
}

/// Export a [`Mean`] through a table built by `gpn_plugin_api::shim::table` with the given
/// fields replaced (`abi_version: 2`, a short `struct_size`…): the entry point of a double
/// whose model works but whose table breaks the contract. Also exports the counters.
///
/// `export_mean_table!(name = "wrong_abi", description = "…", abi_version: 2);`
#[macro_export]
macro_rules! export_mean_table {
    (name = $name:expr, description = $description:expr, $($field:ident: $value:expr),+ $(,)?) => {
        static TABLE: $crate::plugin_api::PluginTable = $crate::plugin_api::PluginTable {
            $($field: $value,)+
            ..$crate::plugin_api::shim::table::<$crate::Mean>(
                $crate::plugin_api::StrRef::from_static($name),
                $crate::plugin_api::StrRef::from_static(env!("CARGO_PKG_VERSION")),
                $crate::plugin_api::StrRef::from_static($description),
            )
        };

        /// The entry point, returning the altered table.
        #[unsafe(no_mangle)]
        pub extern "C" fn gpn_plugin_entry() -> *const $crate::plugin_api::PluginTable {
            &TABLE
        }

        $crate::export_counters!();
    };
}

/// Re-exported for [`export_mean_table!`].
pub use gpn_plugin_api as plugin_api;
/// Re-exported so the doubles need no direct dependency on it.
pub use gpn_plugin_api::serde_json;
