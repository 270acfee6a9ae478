//! [`export_plugin!`](crate::export_plugin): the few lines that turn a [`crate::Plugin`]
//! type into a loadable plugin.

/// Export a [`Plugin`](crate::Plugin) type as this shared library's model.
///
/// Expands to a `static` [`PluginTable`](crate::PluginTable) filled with the shims of
/// [`crate::shim`] and the one entry symbol, `gpn_plugin_entry`, returning it. Invoke it
/// once, in a crate built with `crate-type = ["cdylib", "rlib"]` (the cdylib is the plugin;
/// the rlib lets the same model be linked in-process). All three strings must be constant
/// expressions.
///
/// ```ignore
/// gpn_plugin_api::export_plugin!(
///     MyModel,
///     name = "my_model",
///     version = env!("CARGO_PKG_VERSION"),
///     description = "What it learns, in one line",
/// );
/// ```
///
/// The entry symbol is unmangled, so two crates that invoke this macro must not both be
/// linked into one binary *and* have their entry points called there: the linker keeps one
/// of them. Hosts reach plugins through `dlopen`, where each library resolves its own.
#[macro_export]
macro_rules! export_plugin {
    ($model:ty, name = $name:expr, version = $version:expr, description = $description:expr $(,)?) => {
        #[doc(hidden)]
        static GPN_PLUGIN_TABLE: $crate::PluginTable = $crate::shim::table::<$model>(
            $crate::StrRef::from_static($name),
            $crate::StrRef::from_static($version),
            $crate::StrRef::from_static($description),
        );

        /// The entry point of this model plugin (gp-learning-node plugin ABI): returns the
        /// function table, which lives as long as the library is loaded.
        #[unsafe(no_mangle)]
        pub extern "C" fn gpn_plugin_entry() -> *const $crate::PluginTable {
            &GPN_PLUGIN_TABLE
        }
    };
}
