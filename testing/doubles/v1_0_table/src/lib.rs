//! Double for the plugin host: a plugin built against the version-1 header *as first
//! published*, whose table ends after `last_error` (`struct_size` = 120 bytes with 8-byte
//! pointers), before the `describe` field added later within version 1. The host must load
//! it and treat `describe` as unavailable. The static table behind the pointer is a
//! complete current one, `describe` included, so a host that read past `struct_size`
//! would find a working `describe` — the test that it returns `None` shows it does not.
//!
//! Boundary: test support only. Used by `node/tests/model_describe.rs`.
#![warn(missing_docs)]

gpn_double_common::export_mean_table!(
    name = "v1_0_table",
    description = "Double: a version-1 table without describe",
    struct_size: gpn_plugin_api::TABLE_SIZE_MIN,
);
