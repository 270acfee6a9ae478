//! Failure double for the plugin host: ABI version 1, but a `struct_size` that covers only
//! the header and strings (as a plugin compiled against a truncated header would). The
//! table behind it is complete, so only the size check can refuse it.
//!
//! Boundary: test support only. Used by `node/tests/model_doubles.rs`.
#![warn(missing_docs)]

gpn_double_common::export_mean_table!(
    name = "short_table",
    description = "Failure double: truncated function table",
    struct_size: std::mem::offset_of!(gpn_plugin_api::PluginTable, create) as u32,
);
