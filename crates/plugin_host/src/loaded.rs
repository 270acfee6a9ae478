//! A loaded plugin library as the host keeps it: the library, its checked and copied
//! function table, and what it says about itself. Shared by [`super::Plugin`] (which opens
//! it) and every [`super::PluginModel`] created from it (which calls into it).

use std::path::PathBuf;

use gpn_plugin_api::{ConfigSchema, status};
use libloading::Library;

use super::error::HostError;

/// Bytes of `last_error` message the host reads.
const MESSAGE_BYTES: usize = 1024;

/// What a plugin says about itself, plus where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginInfo {
    /// Model name from the table, e.g. `skygp`.
    pub name: String,
    /// Model version from the table.
    pub version: String,
    /// One-line description from the table.
    pub description: String,
    /// ABI version (always [`gpn_plugin_api::ABI_VERSION`] once loaded).
    pub abi_version: u32,
    /// The library file.
    pub path: PathBuf,
}

/// The library and its checked, copied table: shared by a [`Plugin`] and its models.
pub(crate) struct Loaded {
    pub(crate) functions: Functions,
    pub(crate) info: PluginInfo,
    /// The keys the plugin declares (`config_schema`), if it declares them.
    pub(crate) config_schema: Option<ConfigSchema>,
    // Dropped last (fields drop in order), though nothing above points into it.
    pub(super) _library: Library,
}

/// The table's function pointers, checked non-null.
#[derive(Clone, Copy)]
pub(crate) struct Functions {
    pub(crate) create: gpn_plugin_api::abi::CreateFn,
    pub(crate) destroy: gpn_plugin_api::abi::DestroyFn,
    pub(crate) update: gpn_plugin_api::abi::UpdateFn,
    pub(crate) predict: gpn_plugin_api::abi::PredictFn,
    pub(crate) stats: gpn_plugin_api::abi::StatsFn,
    pub(crate) save: gpn_plugin_api::abi::SaveFn,
    pub(crate) load: gpn_plugin_api::abi::LoadFn,
    pub(crate) last_error: gpn_plugin_api::abi::LastErrorFn,
    /// Optional (null, or absent from a shorter version-1 table).
    pub(crate) describe: Option<gpn_plugin_api::abi::DescribeFn>,
    /// Optional, like `describe`.
    pub(crate) readiness: Option<gpn_plugin_api::abi::ReadinessFn>,
    /// Optional, like `describe`.
    pub(crate) wait_ready: Option<gpn_plugin_api::abi::WaitReadyFn>,
}

impl Loaded {
    /// The plugin's message for the last failure on this thread, or a placeholder.
    pub(crate) fn last_error(&self) -> String {
        let mut buf = [0u8; MESSAGE_BYTES];
        // SAFETY: `last_error` is the plugin's (checked non-null), the buffer is writable
        // for its length; the ABI says the plugin writes at most `cap` bytes.
        let n = unsafe { (self.functions.last_error)(buf.as_mut_ptr(), buf.len()) };
        let text = String::from_utf8_lossy(&buf[..n.min(buf.len())]).into_owned();
        if text.is_empty() {
            "(the plugin gave no message)".to_string()
        } else {
            text
        }
    }

    /// A [`HostError::Call`] for a failed `function` with status `code`, message from the
    /// plugin.
    pub(crate) fn call_error(&self, function: &'static str, code: u32) -> HostError {
        self.host_error(function, code, self.last_error())
    }

    /// A [`HostError::Call`] with the host's own message.
    pub(crate) fn host_error(
        &self,
        function: &'static str,
        code: u32,
        message: String,
    ) -> HostError {
        HostError::Call {
            plugin: self.info.name.clone(),
            function,
            status: status::name(code),
            code,
            message,
            path: self.info.path.clone(),
        }
    }
}
