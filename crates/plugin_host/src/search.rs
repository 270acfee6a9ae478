//! [`SearchPath`]: where plugins are looked for, and how a name becomes a file.
//!
//! Order (first match wins):
//! 1. the directories given on the command line (`--plugin-path DIR`, each value may itself
//!    be a `:`-separated list),
//! 2. the `GPN_PLUGIN_PATH` environment variable (`:`-separated, as `PATH`),
//! 3. the directory of the running executable and, for cargo's layouts, its `deps/`
//!    subdirectory (searched first: cargo writes every cdylib there, and copies only some
//!    up to `target/<profile>/`, so the `deps/` copy is never the stale one), or its parent
//!    when the executable itself sits in `deps/` (test binaries),
//! 4. plugins installed as ROS 2 packages: `lib/<package>/` of every Rust package in the
//!    ament index of the install holding the executable (colcon's isolated or merged
//!    layout), then of `$AMENT_PREFIX_PATH` (see `ament.rs`).
//!
//! In each directory, the name `NAME` matches, in this order, `libNAME.so`, `NAME.so` and
//! `libgpn_NAME.so` (the prefix and suffix are the platform's, `std::env::consts::DLL_*`);
//! the last lets `skygp` find the crate `gpn_skygp`.
//!
//! A plugin is named, never given by path: names may come from the network (`model.plugin`,
//! `~/swap_model`, a model file's header), and loading a library runs its code with the
//! node's privileges, so only files inside the search path's directories are ever opened. A
//! name is non-empty ASCII letters, digits, `_`, `-` and `.`, does not start with `.` and
//! holds no `..`; anything else — a path in particular — is refused
//! ([`HostError::InvalidName`]), with the directory to put on `--plugin-path` or
//! `GPN_PLUGIN_PATH` when it was a path. ([`Plugin::open`](super::Plugin::open) still opens
//! a file by path, for local code that chose the file itself.)

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
    /// directory (and `deps/` or its parent), then the ament install's plugin packages; see
    /// the module doc.
    pub fn standard<I, P>(cli_dirs: I) -> SearchPath
    where
        I: IntoIterator<Item = P>,
        P: AsRef<OsStr>,
    {
        let exe = std::env::current_exe().ok();
        let mut path = SearchPath::from_parts(cli_dirs, std::env::var_os(ENV_VAR), exe.as_deref());
        path.extend(super::ament::plugin_dirs(
            exe.as_deref(),
            std::env::var_os("AMENT_PREFIX_PATH").as_deref(),
        ));
        path
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

    /// The file the plugin `name` resolves to, always inside one of the directories. A name
    /// that is not a plain name (see `check_name`) is refused before any file is looked
    /// at; a missing name's error lists what is [available](SearchPath::available) and
    /// where it looked.
    pub fn find(&self, name: &str) -> Result<PathBuf> {
        check_name(name)?;
        self.resolve(name).ok_or_else(|| HostError::NotFound {
            name: name.to_string(),
            searched: self.dirs.clone(),
            available: self.available(),
        })
    }

    /// `name` (already checked, or taken from a file name) in the directories.
    fn resolve(&self, name: &str) -> Option<PathBuf> {
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

/// Checks that `name` is a plugin name and not a path: non-empty, ASCII letters, digits,
/// `_`, `-` and `.` only, not starting with `.` and without `..`. The error of a path says
/// which directory to put on the search path and which name to pass instead.
pub(crate) fn check_name(name: &str) -> Result<()> {
    let refuse = |reason: String| {
        Err(HostError::InvalidName {
            name: name.to_string(),
            reason,
        })
    };
    if name.is_empty() {
        return refuse("the name is empty".into());
    }
    let path = Path::new(name);
    if name.contains(std::path::is_separator) || path.is_absolute() {
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map_or_else(|| "its directory".to_string(), |d| d.display().to_string());
        let file = name_of_path(path);
        return refuse(format!(
            "plugins are found by name, not by path, and only in the plugin directories: \
             put {dir} on --plugin-path or {ENV_VAR} and pass the name \"{file}\""
        ));
    }
    if name.starts_with('.') || name.contains("..") {
        return refuse("a name must not start with '.' or contain \"..\"".into());
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        return refuse(format!(
            "{bad:?} is not allowed in a plugin name (letters, digits, '_', '-' and '.')"
        ));
    }
    Ok(())
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

    fn scratch(test: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("gpn-search-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        dir
    }

    fn refused(name: &str) -> String {
        match SearchPath::default().find(name) {
            Err(e @ HostError::InvalidName { .. }) => e.to_string(),
            other => panic!("{name:?} must be refused as a name, got {other:?}"),
        }
    }

    #[test]
    fn a_path_is_refused_with_the_directory_and_name_to_use() {
        let dir = scratch("path");
        let file = dir.join(format!("{DLL_PREFIX}real{DLL_SUFFIX}"));
        std::fs::write(&file, b"not loaded").expect("write");
        // The file exists, but a path is never opened.
        let message = refused(&file.display().to_string());
        assert!(message.contains("not by path"), "{message}");
        assert!(
            message.contains(&format!(
                "put {} on --plugin-path or GPN_PLUGIN_PATH",
                dir.display()
            )),
            "{message}"
        );
        assert!(message.contains("pass the name \"real\""), "{message}");
        // Even when the path is inside a searched directory.
        let search = SearchPath::from_dirs([dir.clone()]);
        assert!(matches!(
            search.find(&file.display().to_string()),
            Err(HostError::InvalidName { .. })
        ));
        assert_eq!(search.find("real").expect("by name"), file);
    }

    #[test]
    fn relative_paths_dots_empty_and_odd_characters_are_refused() {
        let message = refused("../x");
        assert!(message.contains("not by path"), "{message}");
        assert!(refused("a/b").contains("put a on --plugin-path"));
        assert!(refused("").contains("empty"));
        assert!(refused("..").contains(".."));
        assert!(refused("a..b").contains(".."));
        assert!(refused(".hidden").contains("'.'"));
        assert!(refused("a b").contains("' '"));
        assert!(refused("a\\b").contains("'\\\\'"));
        assert!(refused("x\0y").contains("not allowed"));
        for ok in ["skygp", "gpn_skygp", "rls_c", "my-model.v2"] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn a_name_resolves_inside_the_directories_or_lists_where_it_looked() {
        let first = scratch("resolve-a");
        let second = scratch("resolve-b");
        let file = second.join(format!("{DLL_PREFIX}gpn_model{DLL_SUFFIX}"));
        std::fs::write(&file, b"not loaded").expect("write");
        let search = SearchPath::from_dirs([first.clone(), second.clone()]);
        assert_eq!(search.find("model").expect("found"), file);
        assert_eq!(search.find("gpn_model").expect("found"), file);
        let err = search.find("other").expect_err("not there");
        let HostError::NotFound {
            searched,
            available,
            ..
        } = &err
        else {
            panic!("{err:?}");
        };
        assert_eq!(searched, &[first.clone(), second.clone()]);
        assert_eq!(available.len(), 1);
        let message = err.to_string();
        assert!(
            message.contains(&format!(
                "searched: {}:{}",
                first.display(),
                second.display()
            )),
            "{message}"
        );
        assert!(message.contains("model ("), "{message}");
    }
}
