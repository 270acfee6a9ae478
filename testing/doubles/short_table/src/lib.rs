//! Failure double for the plugin host: ABI version 1, but a `struct_size` that covers only
//! the header and strings (as a plugin compiled against a truncated header would). The
//! table behind it is complete, so only the size check can refuse it.
//!
//! Boundary: test support only. Used by `node/tests/model_doubles.rs`.
#![warn(missing_docs)]

use gpn_double_common::Mean;
use gpn_plugin_api::{PluginTable, StrRef, shim};

static TABLE: PluginTable = PluginTable {
    struct_size: std::mem::offset_of!(PluginTable, create) as u32,
    ..shim::table::<Mean>(
        StrRef::from_static("short_table"),
        StrRef::from_static(env!("CARGO_PKG_VERSION")),
        StrRef::from_static("Failure double: truncated function table"),
    )
};

/// The entry point, returning the table with the short `struct_size`.
#[unsafe(no_mangle)]
pub extern "C" fn gpn_plugin_entry() -> *const PluginTable {
    &TABLE
}

gpn_double_common::export_counters!();
