//! [`SearchPath`]: where plugins are looked for, and how a name becomes a file.
//!
//! Order (first match wins):
//! 1. the directories given on the command line (`--plugin-path DIR`, each value may itself
//!    be a `:`-separated list),
//! 2. the `GPN_PLUGIN_PATH` environment variable (`:`-separated, as `PATH`),
//! 3. the directory of the running executable and, for cargo's layouts, its `deps/`
//!    subdirectory (searched first: cargo writes every cdylib there, and copies only some
//!    up to `target/<profile>/`, so the `deps/` copy is never the stale one), or its parent
//!    when the executable itself sits in `deps/` (test binaries). An installed `gp-node`
//!    has no `deps/`: put plugins beside it or on `GPN_PLUGIN_PATH`.
//!
//! In each directory, the name `NAME` matches, in this order, `libNAME.so`, `NAME.so` and
//! `libgpn_NAME.so` (the prefix and suffix are the platform's, `std::env::consts::DLL_*`);
//! the last lets `skygp` find the crate `gpn_skygp`. A name containing a path separator is
//! taken as a path to the file itself.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use std::env::consts::{DLL_PREFIX, DLL_SUFFIX};

use super::error::{Available, HostError, Result};

/// The environment variable with extra plugin directories.
pub const ENV_VAR: &str = "GPN_PLUGIN_PATH";

/// An ordered list of directories to look for plugins in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchPath {
    dirs: Vec<PathBuf>,
}

impl SearchPath {
    /// The standard search path: `cli_dirs`, then [`ENV_VAR`], then the executable's
    /// directory (and `deps/` or its parent); see the module doc.
    pub fn standard<I, P>(cli_dirs: I) -> SearchPath
    where
        I: IntoIterator<Item = P>,
        P: AsRef<OsStr>,
    {
        SearchPath::from_parts(
            cli_dirs,
            std::env::var_os(ENV_VAR),
            std::env::current_exe().ok().as_deref(),
        )
    }

    /// The standard order from explicit parts (what [`SearchPath::standard`] reads from the
    /// process); `exe` is the path of the executable, not its directory.
    pub fn from_parts<I, P>(cli_dirs: I, env: Option<OsString>, exe: Option<&Path>) -> SearchPath
    where
        I: IntoIterator<Item = P>,
        P: AsRef<OsStr>,
    {
        let mut path = SearchPath::default();
        for value in cli_dirs {
            path.extend(std::env::split_paths(value.as_ref()));
        }
        if let Some(env) = env {
            path.extend(std::env::split_paths(&env));
        }
        if let Some(dir) = exe.and_then(Path::parent) {
            if dir.file_name() == Some(OsStr::new("deps")) {
                path.extend([dir.to_path_buf()]);
                path.extend(dir.parent().map(Path::to_path_buf));
            } else {
                // `deps/` first: every cargo build writes a library there and only some
                // copy it up, so the copy in `deps/` is never the older one.
                path.extend([dir.join("deps"), dir.to_path_buf()]);
            }
        }
        path
    }

    /// Exactly these directories, in this order.
    pub fn from_dirs<I: IntoIterator<Item = PathBuf>>(dirs: I) -> SearchPath {
        let mut path = SearchPath::default();
        path.extend(dirs);
        path
    }

    /// Append directories, skipping empty entries and duplicates.
    pub fn extend<I: IntoIterator<Item = PathBuf>>(&mut self, dirs: I) {
        for dir in dirs {
            if !dir.as_os_str().is_empty() && !self.dirs.contains(&dir) {
                self.dirs.push(dir);
            }
        }
    }

    /// The directories, in search order.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// The file names `name` matches, in order of preference.
    pub fn file_names(name: &str) -> [String; 3] {
        [
            format!("{DLL_PREFIX}{name}{DLL_SUFFIX}"),
            format!("{name}{DLL_SUFFIX}"),
            format!("{DLL_PREFIX}gpn_{name}{DLL_SUFFIX}"),
        ]
    }

    /// The file the plugin `name` resolves to. A missing name's error lists what is
    /// [available](SearchPath::available) and where it looked.
    pub fn find(&self, name: &str) -> Result<PathBuf> {
        self.resolve(name).ok_or_else(|| HostError::NotFound {
            name: name.to_string(),
            searched: self.dirs.clone(),
            available: self.available(),
        })
    }

    fn resolve(&self, name: &str) -> Option<PathBuf> {
        if name.contains(std::path::is_separator) {
            let path = PathBuf::from(name);
            return path.is_file().then_some(path);
        }
        if name.is_empty() {
            return None;
        }
        let names = SearchPath::file_names(name);
        self.dirs
            .iter()
            .flat_map(|dir| names.iter().map(move |file| dir.join(file)))
            .find(|path| path.is_file())
    }

    /// The plugins a name finds on this search path: every file named like a plugin
    /// (`lib*.so`, `*.so`), in search order then by name, under the shortest name that
    /// resolves to it (`libgpn_skygp.so` is listed as `skygp`); files shadowed by an
    /// earlier one of the same name are left out. Names come from file names only: nothing
    /// is loaded, so whether a file really is a plugin is known only when it is opened.
    /// Cargo's hashed build artefacts (`libfoo-0123abcd.so`) are skipped.
    pub fn available(&self) -> Vec<Available> {
        let mut found: Vec<Available> = Vec::new();
        for dir in &self.dirs {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            let mut here: Vec<(String, PathBuf)> = entries
                .filter_map(|entry| entry.ok())
                .filter(|entry| entry.path().is_file())
                .filter_map(|entry| {
                    let file = entry.file_name().into_string().ok()?;
                    Some((name_of_file(&file)?, entry.path()))
                })
                .collect();
            here.sort();
            for (name, path) in here {
                let name = match name.strip_prefix("gpn_") {
                    Some(short) if self.resolve(short).as_ref() == Some(&path) => short.to_string(),
                    _ => name,
                };
                let shadowed = self.resolve(&name).as_ref() != Some(&path);
                if !shadowed && found.iter().all(|a| a.name != name) {
                    found.push(Available { name, path });
                }
            }
        }
        found
    }
}

/// The plugin name of a file name: `libfoo.so` → `foo`, `foo.so` → `foo`; `None` for other
/// files and for cargo's hashed artefacts.
pub fn name_of_file(file: &str) -> Option<String> {
    let stem = file.strip_suffix(DLL_SUFFIX)?;
    let name = stem.strip_prefix(DLL_PREFIX).unwrap_or(stem);
    let valid = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then(|| name.to_string())
}

/// The plugin name of a path (its file name, see [`name_of_file`]), or the file name as is.
pub(crate) fn name_of_path(path: &Path) -> String {
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    name_of_file(&file).unwrap_or(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_is_cli_then_env_then_exe_dirs() {
        let path = SearchPath::from_parts(
            ["/cli/a:/cli/b", "/cli/c"],
            Some(OsString::from("/env/x::/env/y:/cli/a")),
            Some(Path::new("/repo/target/debug/gp-node")),
        );
        let want: Vec<PathBuf> = [
            "/cli/a",
            "/cli/b",
            "/cli/c",
            "/env/x",
            "/env/y",
            "/repo/target/debug/deps",
            "/repo/target/debug",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        assert_eq!(path.dirs(), &want[..]);
    }

    #[test]
    fn a_test_binary_in_deps_also_searches_the_profile_dir() {
        let path = SearchPath::from_parts(
            Vec::<&str>::new(),
            None,
            Some(Path::new("/repo/target/debug/deps/model_host-0123")),
        );
        assert_eq!(
            path.dirs(),
            &[
                PathBuf::from("/repo/target/debug/deps"),
                PathBuf::from("/repo/target/debug")
            ][..]
        );
    }

    #[test]
    fn file_names_and_back() {
        let [a, b, c] = SearchPath::file_names("skygp");
        assert_eq!(name_of_file(&a).as_deref(), Some("skygp"));
        assert_eq!(name_of_file(&b).as_deref(), Some("skygp"));
        assert_eq!(name_of_file(&c).as_deref(), Some("gpn_skygp"));
        let hashed = format!("{DLL_PREFIX}serde_derive-0123abcd{DLL_SUFFIX}");
        assert_eq!(name_of_file(&hashed), None);
        assert_eq!(name_of_file("README.md"), None);
    }
}
