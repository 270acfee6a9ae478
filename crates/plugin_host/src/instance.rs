//! [`PluginModel`]: a model living in a plugin, driven like any in-process
//! [`OnlineModel`].
//!
//! The host checks slice lengths before every call (the ABI passes bare pointers) and
//! every prediction after it: a NaN or infinite mean or variance is an error, never a
//! number handed on. A `PANIC` status poisons the model on the host side too: later calls
//! fail without entering the plugin, and only `destroy` (on drop) is still called.
//!
//! Real-time: `predict` and `update` allocate nothing on success; error paths format a
//! message.

use std::ffi::c_void;
use std::ptr::NonNull;
use std::sync::Arc;

use gpn_online_model::{ModelError, ModelStats, OnlineModel, Readiness};
use gpn_plugin_api::{ModelHandle, PluginStats, status};

use super::error::{HostError, Result};
use super::loaded::{Loaded, PluginInfo};

/// A model created by a plugin. Dropping it calls the plugin's `destroy` (which joins the
/// model's threads); it holds an `Arc` of its library, so the library is unloaded only
/// after the last model from it is gone.
pub struct PluginModel {
    handle: NonNull<ModelHandle>,
    input_dim: usize,
    output_dim: usize,
    poisoned: bool,
    /// The bytes `readiness` writes, one per output (allocated at creation).
    prior_flags: std::cell::RefCell<Vec<u8>>,
    // After `handle`'s destruction in `Drop::drop`, this may be the library's last
    // reference: it must outlive every call into the plugin, which it does as a field.
    loaded: Arc<Loaded>,
}

// SAFETY: the ABI requires a model to be usable from any thread as long as calls on it are
// not concurrent (Rust plugins enforce it with `OnlineModel: Send`; C plugins promise it).
// `PluginModel` is not `Sync` and every call goes through `&self`/`&mut self`, so two
// threads can never call into the same model at once. The `Arc<Loaded>` is `Send + Sync`.
unsafe impl Send for PluginModel {}

impl std::fmt::Debug for PluginModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginModel")
            .field("plugin", &self.loaded.info.name)
            .field("input_dim", &self.input_dim)
            .field("output_dim", &self.output_dim)
            .field("poisoned", &self.poisoned)
            .finish()
    }
}

impl PluginModel {
    /// Wrap a handle.
    ///
    /// # Safety
    /// `handle` was returned by `loaded`'s `create` with these dimensions and is owned by
    /// no one else.
    pub(crate) unsafe fn from_raw(
        loaded: Arc<Loaded>,
        handle: NonNull<ModelHandle>,
        input_dim: usize,
        output_dim: usize,
    ) -> PluginModel {
        PluginModel {
            handle,
            input_dim,
            output_dim,
            poisoned: false,
            prior_flags: std::cell::RefCell::new(vec![0; output_dim]),
            loaded,
        }
    }

    /// The plugin this model came from.
    pub fn plugin_info(&self) -> &PluginInfo {
        &self.loaded.info
    }

    /// Whether a panic inside the plugin has made this model unusable (drop it).
    pub fn is_poisoned(&self) -> bool {
        self.poisoned
    }

    /// The learned state, as the plugin's `save` writes it (opaque bytes for `load`).
    pub fn save_state(&self) -> Result<Vec<u8>> {
        self.check_usable("save")
            .map_err(|m| self.loaded.host_error("save", status::PANIC, m))?;
        let mut bytes: Vec<u8> = Vec::new();
        // SAFETY: `save` is the plugin's; the handle is live and not used concurrently
        // (`&self` on a `!Sync` type); `append_chunk` is called by the plugin with
        // `&mut bytes` as its context, which outlives the call.
        let code = unsafe {
            (self.loaded.functions.save)(
                self.handle.as_ptr(),
                append_chunk,
                (&raw mut bytes).cast(),
            )
        };
        if code != status::OK {
            return Err(self.loaded.call_error("save", code));
        }
        Ok(bytes)
    }

    /// Replace the learned state with bytes from [`PluginModel::save_state`] of a model of
    /// the same plugin, config and dimensions.
    pub fn load_state(&mut self, bytes: &[u8]) -> Result<()> {
        self.check_usable("load")
            .map_err(|m| self.loaded.host_error("load", status::PANIC, m))?;
        // SAFETY: `load` is the plugin's; the handle is live and exclusively borrowed; the
        // slice is valid for its length.
        let code = unsafe {
            (self.loaded.functions.load)(self.handle.as_ptr(), bytes.as_ptr(), bytes.len())
        };
        self.after_call(code)
            .map_err(|code| self.loaded.call_error("load", code))
    }

    /// The model's diagnostics (the plugin's `describe`: one JSON object), or `None` when
    /// the plugin has no `describe` (a null pointer, or a version-1 table that ends before
    /// it) or the model reports `UNSUPPORTED`. Not for the control thread (allocates).
    pub fn describe(&self) -> Result<Option<serde_json::Value>> {
        let Some(describe) = self.loaded.functions.describe else {
            return Ok(None);
        };
        self.check_usable("describe")
            .map_err(|m| self.loaded.host_error("describe", status::PANIC, m))?;
        let mut bytes: Vec<u8> = Vec::new();
        // SAFETY: `describe` is the plugin's (non-null); the handle is live and not used
        // concurrently (`&self` on a `!Sync` type); `append_chunk` gets `&mut bytes` as its
        // context, which outlives the call.
        let code = unsafe { describe(self.handle.as_ptr(), append_chunk, (&raw mut bytes).cast()) };
        match code {
            status::OK => {}
            status::UNSUPPORTED => return Ok(None),
            _ => return Err(self.loaded.call_error("describe", code)),
        }
        let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| {
            self.loaded.host_error(
                "describe",
                status::INTERNAL,
                format!("wrote {} bytes that are not JSON: {e}", bytes.len()),
            )
        })?;
        if !value.is_object() {
            return Err(self.loaded.host_error(
                "describe",
                status::INTERNAL,
                "wrote JSON that is not an object".into(),
            ));
        }
        Ok(Some(value))
    }

    fn check_usable(&self, function: &str) -> std::result::Result<(), String> {
        if self.poisoned {
            Err(format!(
                "{function}: the model panicked earlier and is poisoned; drop it"
            ))
        } else {
            Ok(())
        }
    }

    /// Record a `PANIC` and turn a status into `Err(code)`.
    fn after_call(&mut self, code: u32) -> std::result::Result<(), u32> {
        match code {
            status::OK => Ok(()),
            status::PANIC => {
                self.poisoned = true;
                Err(code)
            }
            _ => Err(code),
        }
    }

    fn model_error(&self, function: &'static str, code: u32) -> ModelError {
        let err = self.loaded.call_error(function, code);
        match code {
            status::INVALID_CONFIG => ModelError::Config(err.to_string()),
            _ => ModelError::Other(err.to_string()),
        }
    }
}

fn check_len(
    what: &'static str,
    expected: usize,
    found: usize,
) -> std::result::Result<(), ModelError> {
    if expected == found {
        Ok(())
    } else {
        Err(ModelError::Dimension {
            what,
            expected,
            found,
        })
    }
}

/// The host's `save` writer: append the chunk to the `Vec<u8>` behind `ctx`.
///
/// # Safety
/// `ctx` is a `*mut Vec<u8>` nothing else refers to during the call; `bytes` points to
/// `len` readable bytes (or `len == 0`).
pub(crate) unsafe extern "C" fn append_chunk(
    ctx: *mut c_void,
    bytes: *const u8,
    len: usize,
) -> u32 {
    if len == 0 {
        return status::OK;
    }
    if ctx.is_null() || bytes.is_null() {
        return status::INVALID_ARGUMENT;
    }
    // SAFETY: per this function's contract; `save_state` holds no other reference to the
    // vector while the plugin runs.
    let out = unsafe { &mut *ctx.cast::<Vec<u8>>() };
    if out.try_reserve(len).is_err() {
        return status::INTERNAL;
    }
    // SAFETY: the plugin passes `len` readable bytes, per the ABI.
    out.extend_from_slice(unsafe { std::slice::from_raw_parts(bytes, len) });
    status::OK
}

impl OnlineModel for PluginModel {
    fn input_dim(&self) -> usize {
        self.input_dim
    }

    fn output_dim(&self) -> usize {
        self.output_dim
    }

    fn predict(
        &mut self,
        x: &[f64],
        mean: &mut [f64],
        var: &mut [f64],
    ) -> std::result::Result<(), ModelError> {
        check_len("x", self.input_dim, x.len())?;
        check_len("mean", self.output_dim, mean.len())?;
        check_len("var", self.output_dim, var.len())?;
        self.check_usable("predict").map_err(ModelError::Other)?;
        // SAFETY: `predict` is the plugin's; the handle is live and exclusively borrowed;
        // `x` has `input_dim` values, `mean` and `var` `output_dim` writable values each,
        // and the borrows guarantee they do not overlap.
        let code = unsafe {
            (self.loaded.functions.predict)(
                self.handle.as_ptr(),
                x.as_ptr(),
                mean.as_mut_ptr(),
                var.as_mut_ptr(),
            )
        };
        self.after_call(code)
            .map_err(|code| self.model_error("predict", code))?;
        for (what, values) in [("mean", &*mean), ("variance", &*var)] {
            if let Some(o) = values.iter().position(|v| !v.is_finite()) {
                let err = self.loaded.host_error(
                    "predict",
                    status::NON_FINITE,
                    format!(
                        "returned a non-finite {what} {} for output {o}; rejected by the host",
                        values[o]
                    ),
                );
                return Err(ModelError::Other(err.to_string()));
            }
        }
        Ok(())
    }

    fn update(
        &mut self,
        x: &[f64],
        y: &[f64],
        t_secs: f64,
        noise_var: &[f64],
    ) -> std::result::Result<(), ModelError> {
        check_len("x", self.input_dim, x.len())?;
        check_len("y", self.output_dim, y.len())?;
        check_len("noise_var", self.output_dim, noise_var.len())?;
        self.check_usable("update").map_err(ModelError::Other)?;
        // SAFETY: `update` is the plugin's; the handle is live and exclusively borrowed;
        // the slices have the lengths the model was created with.
        let code = unsafe {
            (self.loaded.functions.update)(
                self.handle.as_ptr(),
                x.as_ptr(),
                y.as_ptr(),
                t_secs,
                noise_var.as_ptr(),
            )
        };
        self.after_call(code)
            .map_err(|code| self.model_error("update", code))
    }

    /// The plugin's counters; all zero if the model is poisoned or `stats` fails (this
    /// trait method cannot report an error).
    fn stats(&self) -> ModelStats {
        if self.poisoned {
            return ModelStats::default();
        }
        let mut out = PluginStats::default();
        // SAFETY: `stats` is the plugin's; the handle is live and not used concurrently;
        // `out` is writable.
        let code = unsafe { (self.loaded.functions.stats)(self.handle.as_ptr(), &mut out) };
        if code == status::OK {
            out.into()
        } else {
            ModelStats::default()
        }
    }

    fn state_bytes(&self) -> std::result::Result<Vec<u8>, ModelError> {
        Ok(self.save_state()?)
    }

    fn restore_state_bytes(&mut self, bytes: &[u8]) -> std::result::Result<(), ModelError> {
        Ok(self.load_state(bytes)?)
    }

    fn plugin_identity(&self) -> Option<(String, String)> {
        let info = self.plugin_info();
        Some((info.name.clone(), info.version.clone()))
    }

    /// The plugin's `readiness`; `None` when it has none, reports `UNSUPPORTED` or fails,
    /// when `from_prior` has the wrong length, or when the model is poisoned. Real-time.
    fn readiness(&self, from_prior: &mut [bool]) -> Option<Readiness> {
        let readiness = self.loaded.functions.readiness?;
        if self.poisoned || from_prior.len() != self.output_dim {
            return None;
        }
        let mut flags = self.prior_flags.try_borrow_mut().ok()?;
        let mut samples_behind = 0u64;
        // SAFETY: `readiness` is the plugin's (non-null); the handle is live and not used
        // concurrently; `flags` holds `output_dim` writable bytes; `samples_behind` is
        // writable.
        let code = unsafe {
            readiness(
                self.handle.as_ptr(),
                flags.as_mut_ptr(),
                self.output_dim,
                &mut samples_behind,
            )
        };
        if code != status::OK {
            return None;
        }
        for (out, &flag) in from_prior.iter_mut().zip(flags.iter()) {
            *out = flag != 0;
        }
        Some(Readiness { samples_behind })
    }

    /// The plugin's `wait_ready` (timeout in whole milliseconds, at least 1); returns at
    /// once for a plugin without one.
    fn wait_ready(&mut self, timeout: std::time::Duration) -> std::result::Result<(), ModelError> {
        let Some(wait_ready) = self.loaded.functions.wait_ready else {
            return Ok(());
        };
        self.check_usable("wait_ready")
            .map_err(|m| self.loaded.host_error("wait_ready", status::PANIC, m))?;
        let ms = u64::try_from(timeout.as_millis())
            .unwrap_or(u64::MAX)
            .max(1);
        // SAFETY: `wait_ready` is the plugin's (non-null); the handle is live and exclusively
        // borrowed.
        let code = unsafe { wait_ready(self.handle.as_ptr(), ms) };
        self.after_call(code)
            .map_err(|code| self.model_error("wait_ready", code))
    }
}

impl Drop for PluginModel {
    fn drop(&mut self) {
        // SAFETY: the handle came from this library's `create` and is destroyed exactly
        // once, here; the library is still loaded (`self.loaded` is dropped after this).
        unsafe { (self.loaded.functions.destroy)(self.handle.as_ptr()) };
    }
}

impl From<HostError> for ModelError {
    fn from(err: HostError) -> ModelError {
        ModelError::Other(err.to_string())
    }
}
