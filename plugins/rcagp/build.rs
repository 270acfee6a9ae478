//! The cdylib links gpn_skygp's rlib (for `layout: experts`), and that rlib carries
//! skygp's own `gpn_plugin_entry` (its `export_plugin!`). A shared library keeps every
//! exported symbol of its rlibs, so the link would see two entry points. The linker keeps
//! the first definition, and this crate's own objects come before its dependencies' on the
//! link line, so `libgpn_rcagp.so`'s entry is rcagp's (checked by the node's tests, which
//! load it and read its name and schema).
fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,--allow-multiple-definition");
}
