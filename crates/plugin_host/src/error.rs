//! [`HostError`]: everything that can go wrong finding, loading, checking or calling a
//! plugin. Every variant names the plugin (or the name asked for) and ends with the path.

use std::fmt::Write as _;
use std::path::PathBuf;

/// A file on the search path that looks like a plugin (see [`super::SearchPath::available`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Available {
    /// The name that finds it (`libgpn_skygp.so` → `gpn_skygp`).
    pub name: String,
    /// The file.
    pub path: PathBuf,
}

/// Errors of the plugin host.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// No file for the name on the search path.
    #[error(
        "plugin \"{name}\" not found; {}",
        describe_missing(available, searched)
    )]
    NotFound {
        /// The name asked for.
        name: String,
        /// The directories searched, in order.
        searched: Vec<PathBuf>,
        /// Plugin-like files found on the search path.
        available: Vec<Available>,
    },
    /// The name is not a plugin name (empty, a path, `..`, a character outside
    /// `[A-Za-z0-9_.-]`): plugins are found by name on the search path only.
    #[error("plugin name \"{name}\" is refused: {reason}")]
    InvalidName {
        /// The name asked for.
        name: String,
        /// Why it is refused, and what to do instead.
        reason: String,
    },
    /// The dynamic loader refused the file (not a shared library, missing dependency…).
    #[error("cannot load plugin \"{name}\": {source}: {path}")]
    Load {
        /// The name derived from the file.
        name: String,
        /// The loader's error.
        source: libloading::Error,
        /// The file.
        path: PathBuf,
    },
    /// A shared library without the entry symbol.
    #[error("\"{name}\" is not a gp-node plugin: it does not export `{symbol}`: {path}")]
    NotAPlugin {
        /// The name derived from the file.
        name: String,
        /// The symbol looked for.
        symbol: &'static str,
        /// The file.
        path: PathBuf,
    },
    /// The entry point returned null.
    #[error("plugin \"{name}\" returned a null function table: {path}")]
    NullTable {
        /// The name derived from the file.
        name: String,
        /// The file.
        path: PathBuf,
    },
    /// The plugin was built for another ABI version.
    #[error(
        "plugin \"{name}\" was built for plugin ABI version {found}, this host implements \
         version {expected}; rebuild it against gpn_plugin_api {expected}: {path}"
    )]
    AbiMismatch {
        /// The name derived from the file.
        name: String,
        /// The host's ABI version.
        expected: u32,
        /// The plugin's.
        found: u32,
        /// The file.
        path: PathBuf,
    },
    /// The table is smaller than ABI version `expected`'s, so some functions are missing.
    #[error(
        "plugin \"{name}\" declares a {found}-byte function table, ABI version {abi_version} \
         needs at least {expected} bytes: {path}"
    )]
    TableTooSmall {
        /// The name derived from the file.
        name: String,
        /// The ABI version both sides agree on.
        abi_version: u32,
        /// Bytes the host needs.
        expected: u32,
        /// Bytes the plugin declares.
        found: u32,
        /// The file.
        path: PathBuf,
    },
    /// A required function pointer is null.
    #[error("plugin \"{name}\" has no `{function}` function (null in its table): {path}")]
    MissingFunction {
        /// The name derived from the file.
        name: String,
        /// The table field.
        function: &'static str,
        /// The file.
        path: PathBuf,
    },
    /// A name/version/description string is null, absurdly long or not UTF-8.
    #[error("plugin \"{name}\" has an invalid `{field}` string ({reason}): {path}")]
    BadString {
        /// The name derived from the file.
        name: String,
        /// The table field.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
        /// The file.
        path: PathBuf,
    },
    /// The plugin's `config_schema` failed or wrote something that is not a schema.
    #[error(
        "plugin \"{name}\" declares a configuration schema the host cannot read ({reason}): {path}"
    )]
    BadSchema {
        /// The plugin's name.
        name: String,
        /// What is wrong with it.
        reason: String,
        /// The file.
        path: PathBuf,
    },
    /// The YAML/JSON configuration could not be turned into a JSON object.
    #[error("invalid config for plugin {plugin}: {reason}: {path}")]
    Config {
        /// The plugin's name.
        plugin: String,
        /// What is wrong.
        reason: String,
        /// The plugin's file.
        path: PathBuf,
    },
    /// Dimensions the host refuses before calling the plugin.
    #[error(
        "plugin {plugin}: input and output dimensions must be ≥ 1, got {input_dim} and {output_dim}: {path}"
    )]
    Dimensions {
        /// The plugin's name.
        plugin: String,
        /// Input dimension asked for.
        input_dim: usize,
        /// Output dimension asked for.
        output_dim: usize,
        /// The plugin's file.
        path: PathBuf,
    },
    /// A table function returned a failure status (or broke the ABI's contract).
    #[error("plugin {plugin}: {function} failed with {status}: {message}: {path}")]
    Call {
        /// The plugin's name.
        plugin: String,
        /// The table function.
        function: &'static str,
        /// The status name (`INVALID_CONFIG`, `PANIC`…).
        status: &'static str,
        /// The raw status code.
        code: u32,
        /// The plugin's message (from `last_error`) or the host's.
        message: String,
        /// The plugin's file.
        path: PathBuf,
    },
}

impl HostError {
    /// A short stable key for what went wrong (`not_found`, `abi_mismatch`, `call`…): what
    /// the node counts refused operations by in `/diagnostics`.
    pub fn reason(&self) -> &'static str {
        match self {
            HostError::NotFound { .. } => "not_found",
            HostError::InvalidName { .. } => "invalid_name",
            HostError::Load { .. } => "load",
            HostError::NotAPlugin { .. } => "not_a_plugin",
            HostError::NullTable { .. } => "null_table",
            HostError::AbiMismatch { .. } => "abi_mismatch",
            HostError::TableTooSmall { .. } => "table_too_small",
            HostError::MissingFunction { .. } => "missing_function",
            HostError::BadString { .. } => "bad_string",
            HostError::BadSchema { .. } => "bad_schema",
            HostError::Config { .. } => "config",
            HostError::Dimensions { .. } => "dimensions",
            HostError::Call { .. } => "call",
        }
    }
}

/// Convenience alias for the host's results.
pub type Result<T, E = HostError> = std::result::Result<T, E>;

fn describe_missing(available: &[Available], searched: &[PathBuf]) -> String {
    let mut s = String::new();
    if available.is_empty() {
        s.push_str("no plugins on the search path");
    } else {
        s.push_str("available:");
        for a in available {
            let _ = write!(s, " {} ({}),", a.name, a.path.display());
        }
        s.pop();
    }
    s.push_str("; searched: ");
    if searched.is_empty() {
        s.push_str("(no directories; pass --plugin-path or set GPN_PLUGIN_PATH)");
    } else {
        let dirs: Vec<String> = searched.iter().map(|d| d.display().to_string()).collect();
        s.push_str(&dirs.join(":"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_lists_available_and_searched() {
        let err = HostError::NotFound {
            name: "nope".into(),
            searched: vec!["/a".into(), "/b".into()],
            available: vec![
                Available {
                    name: "skygp".into(),
                    path: "/a/libskygp.so".into(),
                },
                Available {
                    name: "rls_c".into(),
                    path: "/b/librls_c.so".into(),
                },
            ],
        };
        assert_eq!(
            err.to_string(),
            "plugin \"nope\" not found; available: skygp (/a/libskygp.so), rls_c (/b/librls_c.so); \
             searched: /a:/b"
        );
    }
}
