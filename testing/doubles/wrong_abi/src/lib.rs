//! Failure double for the plugin host: a complete, working table that declares ABI
//! version 2. A host that skipped the version check would load and run it happily, so
//! refusing it proves the check happens.
//!
//! Boundary: test support only. Used by `node/tests/model_doubles.rs`.
#![warn(missing_docs)]

gpn_double_common::export_mean_table!(
    name = "wrong_abi",
    description = "Failure double: declares ABI version 2",
    abi_version: 2,
);
