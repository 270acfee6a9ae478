//! Plugins installed as ROS 2 packages: where the ament index puts them.
//!
//! A package that ships plugins installs them in `<prefix>/lib/<package>/` and registers
//! itself in the ament resource index under [`RESOURCE_TYPE`]
//! (`<prefix>/share/ament_index/resource_index/gp_learning_node__plugins/<package>`), as
//! pluginlib's plugin packages do; `gp_learning_node_plugins` (SkyGP, RCaGP, VBKS) is one.
//!
//! Prefixes, in order: the one holding the running executable (`<prefix>/lib/<pkg>/<exe>`,
//! recognised by its `share/ament_index`) and, in colcon's isolated layout (an
//! `.colcon_install_layout` file saying `isolated` beside the package prefixes), the other
//! package prefixes of that install; then `$AMENT_PREFIX_PATH`. So an installed node finds
//! the plugins installed with it whether or not the install's setup script was sourced.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The ament resource type of packages that ship model plugins.
pub const RESOURCE_TYPE: &str = "gp_learning_node__plugins";

/// The plugin directories of the ament install around `exe` and of `ament_prefix_path`
/// (`AMENT_PREFIX_PATH`'s value), in search order, without duplicates.
pub fn plugin_dirs(exe: Option<&Path>, ament_prefix_path: Option<&OsStr>) -> Vec<PathBuf> {
    let mut prefixes = exe.map(install_prefixes_of).unwrap_or_default();
    if let Some(value) = ament_prefix_path {
        prefixes.extend(std::env::split_paths(value).filter(|p| !p.as_os_str().is_empty()));
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    for prefix in prefixes {
        for dir in plugin_package_lib_dirs(&prefix) {
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    dirs
}

/// The prefix of an executable installed as `<prefix>/lib/<package>/<exe>`, then (isolated
/// colcon install) the other package prefixes beside it, by name.
fn install_prefixes_of(exe: &Path) -> Vec<PathBuf> {
    let Some(prefix) = exe
        .parent()
        .and_then(Path::parent)
        .filter(|lib| lib.file_name() == Some(OsStr::new("lib")))
        .and_then(Path::parent)
        .filter(|prefix| prefix.join("share/ament_index").is_dir())
    else {
        return Vec::new();
    };
    let mut prefixes = vec![prefix.to_path_buf()];
    if let Some(install) = prefix
        .parent()
        .filter(|install| is_isolated_install(install))
    {
        let mut siblings: Vec<PathBuf> = std::fs::read_dir(install)
            .into_iter()
            .flatten()
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|p| p != prefix && p.join("share/ament_index").is_dir())
            .collect();
        siblings.sort();
        prefixes.extend(siblings);
    }
    prefixes
}

/// colcon writes the layout of an install (`isolated` or `merged`) into this file.
fn is_isolated_install(install: &Path) -> bool {
    std::fs::read_to_string(install.join(".colcon_install_layout"))
        .is_ok_and(|layout| layout.trim() == "isolated")
}

/// `<prefix>/lib/<package>` of every plugin package the prefix's ament index registers, by
/// name.
fn plugin_package_lib_dirs(prefix: &Path) -> Vec<PathBuf> {
    let index = prefix
        .join("share/ament_index/resource_index")
        .join(RESOURCE_TYPE);
    let mut packages: Vec<String> = std::fs::read_dir(index)
        .into_iter()
        .flatten()
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .collect();
    packages.sort();
    packages
        .into_iter()
        .map(|package| prefix.join("lib").join(package))
        .filter(|dir| dir.is_dir())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plugin package's prefix: the index marker and `lib/<pkg>/`.
    fn package(prefix: &Path, name: &str) {
        let index = prefix
            .join("share/ament_index/resource_index")
            .join(RESOURCE_TYPE);
        std::fs::create_dir_all(&index).expect("index dir");
        std::fs::write(index.join(name), "").expect("marker");
        std::fs::create_dir_all(prefix.join("lib").join(name)).expect("lib dir");
    }

    fn scratch(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("gpn_ament_{tag}_{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        dir
    }

    #[test]
    fn an_isolated_install_finds_the_sibling_packages_from_the_executable() {
        let install = scratch("isolated");
        std::fs::write(install.join(".colcon_install_layout"), "isolated\n").expect("layout");
        package(&install.join("node_pkg"), "node_pkg");
        package(&install.join("gpn_b"), "gpn_b");
        package(&install.join("gpn_a"), "gpn_a");
        // A package in the index that ships no plugins.
        std::fs::create_dir_all(install.join("msgs/share/ament_index")).expect("msgs");
        let exe = install.join("node_pkg/lib/node_pkg/node_exe");
        let dirs = plugin_dirs(Some(&exe), None);
        assert_eq!(
            dirs,
            vec![
                install.join("node_pkg/lib/node_pkg"),
                install.join("gpn_a/lib/gpn_a"),
                install.join("gpn_b/lib/gpn_b"),
            ]
        );
    }

    #[test]
    fn a_merged_install_and_ament_prefix_path_are_searched_in_order() {
        let root = scratch("merged");
        let merged = root.join("install");
        package(&merged, "node_pkg");
        std::fs::write(merged.join(".colcon_install_layout"), "merged\n").expect("layout");
        package(&merged, "gpn_a");
        let other = root.join("other");
        package(&other, "gpn_c");
        let exe = merged.join("lib/node_pkg/node_exe");
        let env = std::env::join_paths([other.clone(), merged.clone()]).expect("path list");
        let dirs = plugin_dirs(Some(&exe), Some(&env));
        assert_eq!(
            dirs,
            vec![
                merged.join("lib/gpn_a"),
                merged.join("lib/node_pkg"),
                other.join("lib/gpn_c"),
            ],
            "a merged prefix has no package siblings; duplicates are dropped"
        );
    }

    #[test]
    fn an_executable_outside_an_ament_install_adds_nothing() {
        let root = scratch("cargo");
        std::fs::create_dir_all(root.join("target/debug")).expect("target");
        let exe = root.join("target/debug/gp-node");
        assert!(plugin_dirs(Some(&exe), None).is_empty());
        assert!(plugin_dirs(None, Some(OsStr::new(""))).is_empty());
    }
}
