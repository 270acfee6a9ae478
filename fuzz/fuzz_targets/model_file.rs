//! A model file's bytes (`~/load_model`, `gp-node run --model`) → its header and snapshot:
//! a truncated or hostile file is an error, never a panic.
#![no_main]

use gpn_plugin_host::file::ModelFile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = ModelFile::from_bytes(data, std::path::Path::new("fuzz.gpmodel"));
});
