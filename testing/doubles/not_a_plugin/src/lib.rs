//! Failure double for the plugin host: a perfectly good shared library that is not a
//! plugin — it exports a function, but not `gpn_plugin_entry`.
//!
//! Boundary: test support only. Used by `node/tests/model_doubles.rs`.
#![warn(missing_docs)]

/// Some unrelated export.
#[unsafe(no_mangle)]
pub extern "C" fn gpn_not_a_plugin_answer() -> u32 {
    42
}
