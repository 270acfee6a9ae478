//! The wire types of ABI version 1: the entry symbol, the function table, strings, stats
//! and the opaque model handle. `include/gpn_plugin.h` declares the same layout for C and
//! C++ (checked by `tests/c_header.rs`).
//!
//! Rules that keep the ABI stable within a major version: the table only grows at its end
//! (a host reads the prefix it knows and checks `struct_size` covers it); no field changes
//! type or place; a breaking change bumps [`ABI_VERSION`] and the host refuses the old one.

use std::ffi::c_void;
use std::marker::{PhantomData, PhantomPinned};

use crate::status::StatusCode;

/// The ABI version this crate implements. A host refuses any other.
pub const ABI_VERSION: u32 = 1;

/// Name of the one symbol a plugin exports: `const gpn_plugin_table *gpn_plugin_entry(void)`.
pub const ENTRY_SYMBOL: &str = "gpn_plugin_entry";

/// [`ENTRY_SYMBOL`] with its terminating NUL, as `libloading::Library::get` wants it.
pub const ENTRY_SYMBOL_NUL: &[u8] = b"gpn_plugin_entry\0";

/// An opaque model instance owned by the plugin (`gpn_model` in C).
///
/// Only ever seen behind a pointer; the host never reads or writes through it.
#[repr(C)]
pub struct ModelHandle {
    _private: [u8; 0],
    _marker: PhantomData<(*mut u8, PhantomPinned)>,
}

/// A UTF-8 string as pointer plus length in bytes, not NUL-terminated (`gpn_str` in C).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct StrRef {
    /// First byte; may be null only when `len == 0`.
    pub ptr: *const u8,
    /// Length in bytes.
    pub len: usize,
}

// SAFETY: a `StrRef` is a read-only view. Plugins build it only from `'static` immutable
// data (`StrRef::from_static`), and the host copies the bytes out while the library is
// loaded; sharing the pointer between threads cannot cause a data race.
unsafe impl Sync for StrRef {}
// SAFETY: as for `Sync`: the pointee is immutable for the life of the library.
unsafe impl Send for StrRef {}

impl StrRef {
    /// The empty string.
    pub const EMPTY: StrRef = StrRef {
        ptr: std::ptr::null(),
        len: 0,
    };

    /// A view of a `'static` string (usable in a `static` table).
    pub const fn from_static(s: &'static str) -> StrRef {
        StrRef {
            ptr: s.as_ptr(),
            len: s.len(),
        }
    }
}

/// Counters a model reports through `stats` (`gpn_stats` in C); mirrors
/// `gpn_online_model::ModelStats`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PluginStats {
    /// Samples passed to `update` so far.
    pub samples_seen: u64,
    /// Samples currently stored (after any eviction).
    pub samples_stored: u64,
    /// Local experts (or components) in use; 1 for a single model.
    pub experts: u64,
    /// Bytes of model state held (buffers, not the code).
    pub memory_bytes: u64,
}

impl From<gpn_online_model::ModelStats> for PluginStats {
    fn from(s: gpn_online_model::ModelStats) -> Self {
        PluginStats {
            samples_seen: s.samples_seen,
            samples_stored: s.samples_stored,
            experts: s.experts,
            memory_bytes: s.memory_bytes,
        }
    }
}

impl From<PluginStats> for gpn_online_model::ModelStats {
    fn from(s: PluginStats) -> Self {
        gpn_online_model::ModelStats {
            samples_seen: s.samples_seen,
            samples_stored: s.samples_stored,
            experts: s.experts,
            memory_bytes: s.memory_bytes,
        }
    }
}

/// Host-supplied sink for `save`: the plugin calls it zero or more times with consecutive
/// chunks of the state; the host copies each chunk into memory it owns. Returns
/// [`crate::status::OK`] to go on; anything else makes the plugin stop and return that code.
pub type WriteFn =
    unsafe extern "C" fn(ctx: *mut c_void, bytes: *const u8, len: usize) -> StatusCode;

/// `create`: parse the JSON config (`config_len` UTF-8 bytes; `config_len == 0` means `{}`)
/// and build a model with input dimension `input_dim` and output dimension `output_dim`
/// (both ≥ 1), storing it in `*out_model`. On failure `*out_model` is left null.
pub type CreateFn = unsafe extern "C" fn(
    config_json: *const u8,
    config_len: usize,
    input_dim: usize,
    output_dim: usize,
    out_model: *mut *mut ModelHandle,
) -> StatusCode;

/// `destroy`: free the model and join every thread it started, so that the library can be
/// unloaded as soon as this returns. Null is a no-op.
pub type DestroyFn = unsafe extern "C" fn(model: *mut ModelHandle);

/// `update`: learn one sample. `x` has `input_dim` values, `y` and `noise_var` have
/// `output_dim` values; `t_secs` is the sample's time stamp in seconds.
pub type UpdateFn = unsafe extern "C" fn(
    model: *mut ModelHandle,
    x: *const f64,
    y: *const f64,
    t_secs: f64,
    noise_var: *const f64,
) -> StatusCode;

/// `predict`: write the posterior mean and latent variance of every output at `x`
/// (`input_dim` values) into `mean_out` and `var_out` (`output_dim` values each).
pub type PredictFn = unsafe extern "C" fn(
    model: *mut ModelHandle,
    x: *const f64,
    mean_out: *mut f64,
    var_out: *mut f64,
) -> StatusCode;

/// `stats`: fill `*out` with the model's counters.
pub type StatsFn =
    unsafe extern "C" fn(model: *const ModelHandle, out: *mut PluginStats) -> StatusCode;

/// `save`: serialise the learned state through `write(ctx, ..)`; the bytes are opaque to
/// the host and only meaningful to `load` of the same plugin with the same config and dims.
pub type SaveFn =
    unsafe extern "C" fn(model: *const ModelHandle, write: WriteFn, ctx: *mut c_void) -> StatusCode;

/// `load`: replace the learned state with `len` bytes produced by `save`.
pub type LoadFn =
    unsafe extern "C" fn(model: *mut ModelHandle, bytes: *const u8, len: usize) -> StatusCode;

/// `describe` (added within version 1, at the end of the table): write a UTF-8 JSON object
/// of model-specific diagnostics (e.g. learned hyperparameters, a kernel belief) through
/// `write(ctx, ..)`, the same writer pattern as `save`. Optional: the pointer may be null,
/// a table whose `struct_size` ends before it has none, and a model with nothing to report
/// returns [`crate::status::UNSUPPORTED`]. Not real-time (it may allocate).
pub type DescribeFn =
    unsafe extern "C" fn(model: *const ModelHandle, write: WriteFn, ctx: *mut c_void) -> StatusCode;

/// `config_schema` (added within version 1, at the end of the table): write the plugin's
/// configuration schema — every key with its type, default, unit and meaning, as the JSON
/// object of [`crate::config_schema`] — through `write(ctx, ..)`. It takes no model: a host
/// reads it before creating one. Optional: the pointer may be null, a table whose
/// `struct_size` ends before it has none, and a plugin that declares no schema returns
/// [`crate::status::UNSUPPORTED`]. Not real-time (it may allocate).
pub type ConfigSchemaFn = unsafe extern "C" fn(write: WriteFn, ctx: *mut c_void) -> StatusCode;

/// `readiness` (added within version 1 after `config_schema`): what `predict` answers from
/// now. Writes `output_dim` bytes to `from_prior` (1 where that output answers from the
/// prior or a data-free fallback alone, nothing learned in use; else 0) and, to
/// `*samples_behind`, how many samples given to `update` a background thread has not taken
/// in yet (0 for a model that learns on the calling thread). `output_dim` must be the
/// model's. Optional: the pointer may be null, or the table may end before it; the host
/// then reports readiness as unknown. Real-time: no allocation, lock or I/O.
pub type ReadinessFn = unsafe extern "C" fn(
    model: *const ModelHandle,
    from_prior: *mut u8,
    output_dim: usize,
    samples_behind: *mut u64,
) -> StatusCode;

/// `wait_ready` (added within version 1 after `readiness`): block up to `timeout_ms`
/// milliseconds until the background has taken in every sample given so far, adopting what
/// it published (then `readiness` reports 0 samples behind). Returns `OK` also when the
/// time ran out; the host asks `readiness` where the model stands. Optional like
/// `readiness`; a model without background work returns at once. Not real-time.
pub type WaitReadyFn = unsafe extern "C" fn(model: *mut ModelHandle, timeout_ms: u64) -> StatusCode;

/// `last_error`: copy the message of the most recent failing call **made on the calling
/// thread** into `buf` (at most `cap` bytes, UTF-8, truncated at a character boundary, no
/// NUL) and return the number of bytes written (0 when there is none).
pub type LastErrorFn = unsafe extern "C" fn(buf: *mut u8, cap: usize) -> usize;

/// The entry point's signature: returns a pointer to a table with static lifetime.
pub type EntryFn = unsafe extern "C" fn() -> *const PluginTable;

/// The first two fields of every table, of every ABI version: what a host reads before
/// anything else.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TableHeader {
    /// [`ABI_VERSION`] the plugin was built against.
    pub abi_version: u32,
    /// `sizeof` the table as the plugin knows it, in bytes.
    pub struct_size: u32,
}

/// The function table of ABI version 1 (`gpn_plugin_table` in C).
///
/// Every function pointer is required (a null one is refused by the host). Functions taking
/// a model may be called from any thread but never concurrently on the same model; `create`
/// and `last_error` may be called concurrently from several threads.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct PluginTable {
    /// Must be [`ABI_VERSION`].
    pub abi_version: u32,
    /// `size_of::<PluginTable>()` as the plugin was compiled.
    pub struct_size: u32,
    /// Model name, e.g. `"skygp"`.
    pub name: StrRef,
    /// Model version, e.g. `"0.1.0"`.
    pub version: StrRef,
    /// One-line description.
    pub description: StrRef,
    /// See [`CreateFn`].
    pub create: Option<CreateFn>,
    /// See [`DestroyFn`].
    pub destroy: Option<DestroyFn>,
    /// See [`UpdateFn`].
    pub update: Option<UpdateFn>,
    /// See [`PredictFn`].
    pub predict: Option<PredictFn>,
    /// See [`StatsFn`].
    pub stats: Option<StatsFn>,
    /// See [`SaveFn`].
    pub save: Option<SaveFn>,
    /// See [`LoadFn`].
    pub load: Option<LoadFn>,
    /// See [`LastErrorFn`].
    pub last_error: Option<LastErrorFn>,
    /// See [`DescribeFn`]. Optional (may be null); added within version 1, so a host must
    /// read it only when `struct_size` covers it.
    pub describe: Option<DescribeFn>,
    /// See [`ConfigSchemaFn`]. Optional (may be null); added within version 1 after
    /// `describe`, so a host must read it only when `struct_size` covers it.
    pub config_schema: Option<ConfigSchemaFn>,
    /// See [`ReadinessFn`]. Optional (may be null); added within version 1 after
    /// `config_schema`, so a host must read it only when `struct_size` covers it.
    pub readiness: Option<ReadinessFn>,
    /// See [`WaitReadyFn`]. Optional (may be null); added within version 1 after
    /// `readiness`, so a host must read it only when `struct_size` covers it.
    pub wait_ready: Option<WaitReadyFn>,
}

/// `size_of::<PluginTable>()` as a `u32`: the `struct_size` a plugin built against this
/// crate declares.
pub const TABLE_SIZE: u32 = {
    let size = std::mem::size_of::<PluginTable>();
    assert!(size <= u32::MAX as usize);
    size as u32
};

/// The smallest `struct_size` a version-1 host accepts: the table as first published
/// (every field up to `last_error`). Fields after it (`describe`, `config_schema`,
/// `readiness`, `wait_ready`) are optional and read
/// only when `struct_size` covers them.
pub const TABLE_SIZE_MIN: u32 = std::mem::offset_of!(PluginTable, describe) as u32;

/// Field names of [`PluginTable`] in declaration order with their byte offsets; the C
/// header test compares these with `offsetof` in C.
pub const TABLE_FIELD_OFFSETS: [(&str, usize); 17] = [
    (
        "abi_version",
        std::mem::offset_of!(PluginTable, abi_version),
    ),
    (
        "struct_size",
        std::mem::offset_of!(PluginTable, struct_size),
    ),
    ("name", std::mem::offset_of!(PluginTable, name)),
    ("version", std::mem::offset_of!(PluginTable, version)),
    (
        "description",
        std::mem::offset_of!(PluginTable, description),
    ),
    ("create", std::mem::offset_of!(PluginTable, create)),
    ("destroy", std::mem::offset_of!(PluginTable, destroy)),
    ("update", std::mem::offset_of!(PluginTable, update)),
    ("predict", std::mem::offset_of!(PluginTable, predict)),
    ("stats", std::mem::offset_of!(PluginTable, stats)),
    ("save", std::mem::offset_of!(PluginTable, save)),
    ("load", std::mem::offset_of!(PluginTable, load)),
    ("last_error", std::mem::offset_of!(PluginTable, last_error)),
    ("describe", std::mem::offset_of!(PluginTable, describe)),
    (
        "config_schema",
        std::mem::offset_of!(PluginTable, config_schema),
    ),
    ("readiness", std::mem::offset_of!(PluginTable, readiness)),
    ("wait_ready", std::mem::offset_of!(PluginTable, wait_ready)),
];

/// Field names of [`PluginStats`] in declaration order with their byte offsets.
pub const STATS_FIELD_OFFSETS: [(&str, usize); 4] = [
    (
        "samples_seen",
        std::mem::offset_of!(PluginStats, samples_seen),
    ),
    (
        "samples_stored",
        std::mem::offset_of!(PluginStats, samples_stored),
    ),
    ("experts", std::mem::offset_of!(PluginStats, experts)),
    (
        "memory_bytes",
        std::mem::offset_of!(PluginStats, memory_bytes),
    ),
];

// The header must be a prefix of the table, whatever else changes.
const _: () = {
    assert!(
        std::mem::offset_of!(PluginTable, abi_version)
            == std::mem::offset_of!(TableHeader, abi_version)
    );
    assert!(
        std::mem::offset_of!(PluginTable, struct_size)
            == std::mem::offset_of!(TableHeader, struct_size)
    );
};
