//! The `extern "C"` shims [`crate::export_plugin!`] puts in a plugin's table, generic over
//! the model type.
//!
//! Each shim is the same three steps: check the raw arguments (null, alignment, lengths),
//! run the safe `*_impl` body under `catch_unwind`, and turn its `Err` or a panic into a
//! status code plus a message for `last_error`. No panic ever leaves a shim. After a panic
//! the model is *poisoned*: every later call except `destroy` returns [`status::PANIC`].
//!
//! Real-time: on success `update`, `predict` and `stats` allocate nothing and touch no lock;
//! only the failure path formats a message.

use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

use gpn_online_model::ModelError;

use crate::abi::{ABI_VERSION, ModelHandle, PluginStats, PluginTable, StrRef, TABLE_SIZE, WriteFn};
use crate::last_error;
use crate::panic_hook;
use crate::plugin::Plugin;
use crate::status::{self, StatusCode};

/// What a model handle points to on the plugin side.
struct Instance<P> {
    model: P,
    poisoned: bool,
}

/// A failed call: the status to return and the message to leave in `last_error`.
struct Failure {
    code: StatusCode,
    message: String,
}

impl Failure {
    fn new(code: StatusCode, message: impl Into<String>) -> Failure {
        Failure {
            code,
            message: message.into(),
        }
    }

    fn model(function: &str, err: &ModelError) -> Failure {
        Failure::new(status::of_model_error(err), format!("{function}: {err}"))
    }
}

/// Record a failure and return its code.
fn fail(failure: Failure) -> StatusCode {
    last_error::set(&failure.message);
    failure.code
}

/// Run `body`, converting `Err` and panics into a status code and a last-error message.
fn guard(function: &str, body: impl FnOnce() -> Result<(), Failure>) -> StatusCode {
    panic_hook::install();
    let (result, recorded) = panic_hook::run_in_shim(|| catch_unwind(AssertUnwindSafe(body)));
    match result {
        Ok(Ok(())) => status::OK,
        Ok(Err(failure)) => fail(failure),
        Err(payload) => {
            let message = if recorded {
                format!("{function}: {}", last_error::get())
            } else {
                format!(
                    "{function}: model panicked: {}",
                    panic_hook::payload_text(&*payload)
                )
            };
            // A payload whose destructor panics must not escape either.
            let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
            fail(Failure::new(status::PANIC, message))
        }
    }
}

/// Check that `ptr` can back a slice of `len` values: not null and aligned.
fn check_ptr<T>(function: &str, what: &str, ptr: *const T) -> Result<(), Failure> {
    if ptr.is_null() {
        Err(Failure::new(
            status::INVALID_ARGUMENT,
            format!("{function}: {what} is null"),
        ))
    } else if !ptr.is_aligned() {
        Err(Failure::new(
            status::INVALID_ARGUMENT,
            format!("{function}: {what} is misaligned"),
        ))
    } else {
        Ok(())
    }
}

/// Run `body` on the live, unpoisoned instance behind `handle`; poison it if `body` panics.
///
/// # Safety
/// `handle` is null or came from this plugin's `create::<P>` and was not destroyed, and no
/// other call on it runs concurrently.
unsafe fn with_instance<P: Plugin>(
    function: &str,
    handle: *mut ModelHandle,
    body: impl FnOnce(&mut P) -> Result<(), Failure>,
) -> StatusCode {
    // SAFETY: per this function's contract the pointer is null or a live, exclusively
    // accessed `Instance<P>` made by `create::<P>` (Box::into_raw, so aligned).
    let Some(instance) = (unsafe { handle.cast::<Instance<P>>().as_mut() }) else {
        return fail(Failure::new(
            status::INVALID_ARGUMENT,
            format!("{function}: model handle is null"),
        ));
    };
    if instance.poisoned {
        return fail(Failure::new(
            status::PANIC,
            format!("{function}: model is poisoned by an earlier panic; destroy it"),
        ));
    }
    let code = guard(function, || body(&mut instance.model));
    if code == status::PANIC {
        instance.poisoned = true;
    }
    code
}

/// `create` for model type `P`.
///
/// # Safety
/// The ABI's `create` contract: `config_json` points to `config_len` readable bytes (or
/// `config_len == 0`), and `out_model` is a writable pointer.
pub unsafe extern "C" fn create<P: Plugin>(
    config_json: *const u8,
    config_len: usize,
    input_dim: usize,
    output_dim: usize,
    out_model: *mut *mut ModelHandle,
) -> StatusCode {
    guard("create", || {
        check_ptr("create", "out_model", out_model)?;
        // SAFETY: checked non-null and aligned; the caller guarantees it is writable.
        unsafe { out_model.write(std::ptr::null_mut()) };
        if input_dim == 0 || output_dim == 0 {
            return Err(Failure::new(
                status::INVALID_ARGUMENT,
                format!(
                    "create: dimensions must be at least 1, got input_dim {input_dim}, output_dim {output_dim}"
                ),
            ));
        }
        let text = if config_len == 0 {
            "{}"
        } else {
            check_ptr("create", "config_json", config_json)?;
            // SAFETY: non-null; the caller guarantees `config_len` readable bytes.
            let bytes = unsafe { std::slice::from_raw_parts(config_json, config_len) };
            std::str::from_utf8(bytes).map_err(|e| {
                Failure::new(
                    status::INVALID_ARGUMENT,
                    format!("create: config is not UTF-8: {e}"),
                )
            })?
        };
        let config: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            Failure::new(
                status::INVALID_CONFIG,
                format!("create: config is not JSON: {e}"),
            )
        })?;
        let model =
            P::create(&config, input_dim, output_dim).map_err(|e| Failure::model("create", &e))?;
        if model.input_dim() != input_dim || model.output_dim() != output_dim {
            return Err(Failure::new(
                status::INTERNAL,
                format!(
                    "create: asked for dims ({input_dim}, {output_dim}), model reports ({}, {})",
                    model.input_dim(),
                    model.output_dim()
                ),
            ));
        }
        let instance = Box::new(Instance {
            model,
            poisoned: false,
        });
        // SAFETY: checked above; ownership of the box passes to the handle (see `destroy`).
        unsafe { out_model.write(Box::into_raw(instance).cast()) };
        Ok(())
    })
}

/// `destroy` for model type `P`: drops the model (joining its threads, if its `Drop` does).
///
/// # Safety
/// `model` is null or came from `create::<P>` and is not used again.
pub unsafe extern "C" fn destroy<P: Plugin>(model: *mut ModelHandle) {
    if model.is_null() {
        return;
    }
    // SAFETY: per the contract, `model` is the `Box<Instance<P>>` leaked by `create::<P>`,
    // destroyed once.
    let instance = unsafe { Box::from_raw(model.cast::<Instance<P>>()) };
    let _ = guard("destroy", move || {
        drop(instance);
        Ok(())
    });
}

/// `update` for model type `P`.
///
/// # Safety
/// `model` is null or a live model from `create::<P>`, not used concurrently; `x` holds `input_dim` and `y`, `noise_var` hold
/// `output_dim` readable values.
pub unsafe extern "C" fn update<P: Plugin>(
    model: *mut ModelHandle,
    x: *const f64,
    y: *const f64,
    t_secs: f64,
    noise_var: *const f64,
) -> StatusCode {
    let body = |m: &mut P| {
        check_ptr("update", "x", x)?;
        check_ptr("update", "y", y)?;
        check_ptr("update", "noise_var", noise_var)?;
        let (d, p) = (m.input_dim(), m.output_dim());
        // SAFETY: non-null, aligned, and the caller guarantees the lengths.
        let (x, y, nv) = unsafe {
            (
                std::slice::from_raw_parts(x, d),
                std::slice::from_raw_parts(y, p),
                std::slice::from_raw_parts(noise_var, p),
            )
        };
        m.update(x, y, t_secs, nv)
            .map_err(|e| Failure::model("update", &e))
    };
    // SAFETY: forwarded contract.
    unsafe { with_instance::<P>("update", model, body) }
}

/// `predict` for model type `P`.
///
/// # Safety
/// `model` is null or a live model from `create::<P>`, not used concurrently; `x` holds `input_dim` readable values, `mean_out`
/// and `var_out` `output_dim` writable values each, and the three do not overlap.
pub unsafe extern "C" fn predict<P: Plugin>(
    model: *mut ModelHandle,
    x: *const f64,
    mean_out: *mut f64,
    var_out: *mut f64,
) -> StatusCode {
    let body = |m: &mut P| {
        check_ptr("predict", "x", x)?;
        check_ptr("predict", "mean_out", mean_out)?;
        check_ptr("predict", "var_out", var_out)?;
        let (d, p) = (m.input_dim(), m.output_dim());
        // SAFETY: non-null, aligned, non-overlapping, and the caller guarantees lengths.
        let (x, mean, var) = unsafe {
            (
                std::slice::from_raw_parts(x, d),
                std::slice::from_raw_parts_mut(mean_out, p),
                std::slice::from_raw_parts_mut(var_out, p),
            )
        };
        m.predict(x, mean, var)
            .map_err(|e| Failure::model("predict", &e))
    };
    // SAFETY: forwarded contract.
    unsafe { with_instance::<P>("predict", model, body) }
}

/// `stats` for model type `P`.
///
/// # Safety
/// `model` is null or a live model from `create::<P>`, not used concurrently; `out` is writable.
pub unsafe extern "C" fn stats<P: Plugin>(
    model: *const ModelHandle,
    out: *mut PluginStats,
) -> StatusCode {
    let body = |m: &mut P| {
        check_ptr("stats", "out", out)?;
        let s = PluginStats::from(m.stats());
        // SAFETY: non-null, aligned, writable per the contract.
        unsafe { out.write(s) };
        Ok(())
    };
    // SAFETY: forwarded contract; `stats` only reads the model through `&P`.
    unsafe { with_instance::<P>("stats", model.cast_mut(), body) }
}

/// `save` for model type `P`: one call of `write` with the whole state.
///
/// # Safety
/// `model` is null or a live model from `create::<P>`, not used concurrently; `write` is safe to call with `ctx`.
pub unsafe extern "C" fn save<P: Plugin>(
    model: *const ModelHandle,
    write: WriteFn,
    ctx: *mut c_void,
) -> StatusCode {
    let body = |m: &mut P| {
        let bytes = m.save_state().map_err(|e| Failure::model("save", &e))?;
        // SAFETY: forwarded contract.
        unsafe { write_all("save", &bytes, write, ctx) }
    };
    // SAFETY: forwarded contract; `save_state` takes `&P`.
    unsafe { with_instance::<P>("save", model.cast_mut(), body) }
}

/// `load` for model type `P`. Every model error becomes [`status::INVALID_STATE`].
///
/// # Safety
/// `model` is null or a live model from `create::<P>`, not used concurrently; `bytes` points to `len` readable bytes (or `len == 0`).
pub unsafe extern "C" fn load<P: Plugin>(
    model: *mut ModelHandle,
    bytes: *const u8,
    len: usize,
) -> StatusCode {
    let body = |m: &mut P| {
        let bytes: &[u8] = if len == 0 {
            &[]
        } else {
            check_ptr("load", "bytes", bytes)?;
            // SAFETY: non-null; the caller guarantees `len` readable bytes.
            unsafe { std::slice::from_raw_parts(bytes, len) }
        };
        m.load_state(bytes)
            .map_err(|e| Failure::new(status::INVALID_STATE, format!("load: {e}")))
    };
    // SAFETY: forwarded contract.
    unsafe { with_instance::<P>("load", model, body) }
}

/// `describe` for model type `P`: the model's diagnostics as one JSON object through one
/// call of `write`, or [`status::UNSUPPORTED`] if it has none.
///
/// # Safety
/// `model` is null or a live model from `create::<P>`, not used concurrently; `write` is safe to call with `ctx`.
pub unsafe extern "C" fn describe<P: Plugin>(
    model: *const ModelHandle,
    write: WriteFn,
    ctx: *mut c_void,
) -> StatusCode {
    let body = |m: &mut P| {
        let value = m.describe().ok_or_else(|| {
            Failure::new(
                status::UNSUPPORTED,
                "describe: this model has no diagnostics to report",
            )
        })?;
        if !value.is_object() {
            return Err(Failure::new(
                status::INTERNAL,
                "describe: the model's diagnostics are not a JSON object",
            ));
        }
        let bytes = serde_json::to_vec(&value)
            .map_err(|e| Failure::new(status::INTERNAL, format!("describe: {e}")))?;
        // SAFETY: forwarded contract.
        unsafe { write_all("describe", &bytes, write, ctx) }
    };
    // SAFETY: forwarded contract; `describe` takes `&P`.
    unsafe { with_instance::<P>("describe", model.cast_mut(), body) }
}

/// `config_schema` for model type `P`: its schema as one JSON object through one call of
/// `write`, or [`status::UNSUPPORTED`] if it declares none.
///
/// # Safety
/// `write` is safe to call with `ctx`.
pub unsafe extern "C" fn config_schema<P: Plugin>(write: WriteFn, ctx: *mut c_void) -> StatusCode {
    guard("config_schema", || {
        let schema = P::config_schema().ok_or_else(|| {
            Failure::new(
                status::UNSUPPORTED,
                "config_schema: this plugin declares no configuration schema",
            )
        })?;
        // SAFETY: forwarded contract.
        unsafe { write_all("config_schema", schema.to_json().as_bytes(), write, ctx) }
    })
}

/// `readiness` for model type `P`: which outputs answer from the prior, and how many samples
/// the background has not taken in; [`status::UNSUPPORTED`] when the model does not say
/// ([`gpn_online_model::OnlineModel::readiness`] returns `None`).
///
/// # Safety
/// `model` is null or a live model from `create::<P>`, not used concurrently; `from_prior`
/// is null or points to `output_dim` writable bytes; `samples_behind` is null or writable.
pub unsafe extern "C" fn readiness<P: Plugin>(
    model: *const ModelHandle,
    from_prior: *mut u8,
    output_dim: usize,
    samples_behind: *mut u64,
) -> StatusCode {
    let body = |m: &mut P| {
        check_ptr("readiness", "from_prior", from_prior)?;
        check_ptr("readiness", "samples_behind", samples_behind)?;
        if output_dim != m.output_dim() {
            return Err(Failure::new(
                status::DIMENSION_MISMATCH,
                format!(
                    "readiness: output_dim {output_dim}, the model has {}",
                    m.output_dim()
                ),
            ));
        }
        // SAFETY: non-null, `output_dim` writable bytes per the contract. Zeroed first, so
        // every byte is a valid `bool` (same size and alignment as `u8`) before the model
        // sees them as such.
        let flags = unsafe {
            std::ptr::write_bytes(from_prior, 0, output_dim);
            std::slice::from_raw_parts_mut(from_prior.cast::<bool>(), output_dim)
        };
        let r = m.readiness(flags).ok_or_else(|| {
            Failure::new(
                status::UNSUPPORTED,
                "readiness: this model does not report its readiness",
            )
        })?;
        // SAFETY: non-null, aligned, writable per the contract.
        unsafe { samples_behind.write(r.samples_behind) };
        Ok(())
    };
    // SAFETY: forwarded contract; `readiness` only reads the model through `&P`.
    unsafe { with_instance::<P>("readiness", model.cast_mut(), body) }
}

/// `wait_ready` for model type `P`: [`gpn_online_model::OnlineModel::wait_ready`] with the
/// timeout in milliseconds.
///
/// # Safety
/// `model` is null or a live model from `create::<P>`, not used concurrently.
pub unsafe extern "C" fn wait_ready<P: Plugin>(
    model: *mut ModelHandle,
    timeout_ms: u64,
) -> StatusCode {
    let body = |m: &mut P| {
        m.wait_ready(std::time::Duration::from_millis(timeout_ms))
            .map_err(|e| Failure::model("wait_ready", &e))
    };
    // SAFETY: forwarded contract.
    unsafe { with_instance::<P>("wait_ready", model, body) }
}

/// Hands `bytes` to the host's writer in one call; a refusal becomes the writer's code.
///
/// # Safety
/// `write` is safe to call with `ctx`.
unsafe fn write_all(
    function: &str,
    bytes: &[u8],
    write: WriteFn,
    ctx: *mut c_void,
) -> Result<(), Failure> {
    // SAFETY: the host's writer, called with its own context and a valid slice.
    let code = unsafe { write(ctx, bytes.as_ptr(), bytes.len()) };
    if code == status::OK {
        Ok(())
    } else {
        Err(Failure::new(
            code,
            format!(
                "{function}: the host's writer refused {} bytes",
                bytes.len()
            ),
        ))
    }
}

/// `last_error`: this thread's last failure message, shared by every model type.
///
/// # Safety
/// `buf` is null or points to `cap` writable bytes.
pub unsafe extern "C" fn last_error(buf: *mut u8, cap: usize) -> usize {
    if buf.is_null() || cap == 0 {
        return 0;
    }
    // SAFETY: non-null; the caller guarantees `cap` writable bytes (u8 needs no alignment).
    let out = unsafe { std::slice::from_raw_parts_mut(buf, cap) };
    catch_unwind(AssertUnwindSafe(|| last_error::copy_into(out))).unwrap_or(0)
}

/// The table for model type `P` (what [`crate::export_plugin!`] puts in a `static`).
pub const fn table<P: Plugin>(name: StrRef, version: StrRef, description: StrRef) -> PluginTable {
    PluginTable {
        abi_version: ABI_VERSION,
        struct_size: TABLE_SIZE,
        name,
        version,
        description,
        create: Some(create::<P>),
        destroy: Some(destroy::<P>),
        update: Some(update::<P>),
        predict: Some(predict::<P>),
        stats: Some(stats::<P>),
        save: Some(save::<P>),
        load: Some(load::<P>),
        last_error: Some(last_error),
        describe: Some(describe::<P>),
        config_schema: Some(config_schema::<P>),
        readiness: Some(readiness::<P>),
        wait_ready: Some(wait_ready::<P>),
    }
}
