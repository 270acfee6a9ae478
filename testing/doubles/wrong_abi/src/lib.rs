//! Failure double for the plugin host: a complete, working table that declares ABI
//! version 2. A host that skipped the version check would load and run it happily, so
//! refusing it proves the check happens.
//!
//! Boundary: test support only. Used by `node/tests/model_doubles.rs`.
#![warn(missing_docs)]

use gpn_double_common::Mean;
use gpn_plugin_api::{PluginTable, StrRef, shim};

static TABLE: PluginTable = PluginTable {
    abi_version: 2,
    ..shim::table::<Mean>(
        StrRef::from_static("wrong_abi"),
        StrRef::from_static(env!("CARGO_PKG_VERSION")),
        StrRef::from_static("Failure double: declares ABI version 2"),
    )
};

/// The entry point, returning the version-2 table.
#[unsafe(no_mangle)]
pub extern "C" fn gpn_plugin_entry() -> *const PluginTable {
    &TABLE
}

gpn_double_common::export_counters!();
