//! Mesh visuals: a URDF `<mesh filename=…>` resolved to a file rerun can draw (`Asset3D`:
//! STL, OBJ, glTF, GLB). `package://PKG/REST` is looked up in the ROS 2 install spaces
//! (`$AMENT_PREFIX_PATH/*/share/PKG/REST`) and in `$ROS_PACKAGE_PATH` (`*/PKG/REST`);
//! `file://PATH` is a path; a plain path is relative to the URDF file's folder. Anything
//! else (another scheme, a missing file, Collada `.dae`, which rerun does not read) is
//! skipped with the reason, and the skeleton still shows the link.

use std::path::{Path, PathBuf};

/// File extensions rerun's `Asset3D` reads.
const DRAWABLE: [&str; 4] = ["stl", "obj", "gltf", "glb"];

/// Where mesh files are looked for.
#[derive(Debug, Clone, Default)]
pub(crate) struct MeshSearch {
    /// The URDF file's folder (None: URDF text from a topic, no relative paths).
    base_dir: Option<PathBuf>,
    /// `share` folders of the ament prefixes, then `$ROS_PACKAGE_PATH` folders.
    package_roots: Vec<PathBuf>,
}

impl MeshSearch {
    /// A search from the URDF file's folder and the environment's package paths.
    pub fn from_env(base_dir: Option<&Path>) -> Self {
        let split = |var: &str| -> Vec<PathBuf> {
            std::env::var_os(var)
                .map(|v| {
                    std::env::split_paths(&v)
                        .filter(|p| !p.as_os_str().is_empty())
                        .collect()
                })
                .unwrap_or_default()
        };
        let package_roots = split("AMENT_PREFIX_PATH")
            .into_iter()
            .map(|prefix| prefix.join("share"))
            .chain(split("ROS_PACKAGE_PATH"))
            .collect();
        Self::new(base_dir, package_roots)
    }

    /// A search from `base_dir` and the given package roots (each holds `PKG/…` folders).
    pub fn new(base_dir: Option<&Path>, package_roots: Vec<PathBuf>) -> Self {
        Self {
            base_dir: base_dir.map(Path::to_path_buf),
            package_roots,
        }
    }

    /// The file a URDF mesh `filename` names, if rerun can draw it; else why not.
    pub fn resolve(&self, filename: &str) -> Result<PathBuf, String> {
        let path = if let Some(rest) = filename.strip_prefix("package://") {
            let (package, inner) = rest
                .split_once('/')
                .ok_or_else(|| format!("{filename}: no file after the package name"))?;
            let mut folders = self
                .package_roots
                .iter()
                .map(|root| root.join(package))
                .filter(|p| p.is_dir())
                .peekable();
            let first = folders.peek().cloned().ok_or_else(|| {
                format!(
                    "{filename}: package {package:?} not found in $AMENT_PREFIX_PATH or \
                     $ROS_PACKAGE_PATH"
                )
            })?;
            // The first folder holding the file, else the first one (then: "no file").
            folders
                .map(|folder| folder.join(inner))
                .find(|p| p.is_file())
                .unwrap_or_else(|| first.join(inner))
        } else if let Some(abs) = filename.strip_prefix("file://") {
            PathBuf::from(abs)
        } else if filename.contains("://") {
            return Err(format!("{filename}: only package:// and file:// are read"));
        } else {
            let relative = Path::new(filename);
            match &self.base_dir {
                _ if relative.is_absolute() => relative.to_path_buf(),
                Some(dir) => dir.join(relative),
                None => {
                    return Err(format!(
                        "{filename}: a relative path, and the URDF came without a folder"
                    ));
                }
            }
        };
        let extension = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        if !DRAWABLE.contains(&extension.as_str()) {
            return Err(format!(
                "{filename}: rerun draws {} meshes, not .{extension}",
                DRAWABLE.join(", ")
            ));
        }
        if !path.is_file() {
            return Err(format!("{filename}: no file {}", path.display()));
        }
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_file_and_relative_names_resolve() {
        let root = std::env::temp_dir().join(format!("gpn_mesh_{}", std::process::id()));
        let meshes = root.join("share/arm_description/meshes");
        std::fs::create_dir_all(&meshes).expect("dirs");
        for name in ["link1.stl", "link2.dae", "link3.OBJ"] {
            std::fs::write(meshes.join(name), b"solid x\nendsolid x\n").expect("mesh");
        }
        let search = MeshSearch::new(Some(&root), vec![root.join("share")]);
        assert_eq!(
            search.resolve("package://arm_description/meshes/link1.stl"),
            Ok(meshes.join("link1.stl"))
        );
        assert_eq!(
            search.resolve("share/arm_description/meshes/link3.OBJ"),
            Ok(meshes.join("link3.OBJ"))
        );
        let file_url = format!("file://{}", meshes.join("link1.stl").display());
        assert_eq!(search.resolve(&file_url), Ok(meshes.join("link1.stl")));
        for (name, why) in [
            ("package://arm_description/meshes/link2.dae", "not .dae"),
            (
                "package://other_description/m.stl",
                "\"other_description\" not found",
            ),
            ("package://arm_description/meshes/none.stl", "no file"),
            ("https://example.com/m.stl", "only package://"),
        ] {
            let err = search.resolve(name).expect_err(name);
            assert!(err.contains(why), "{name}: {err}");
        }
        let from_topic = MeshSearch::new(None, Vec::new());
        let err = from_topic
            .resolve("meshes/link1.stl")
            .expect_err("relative");
        assert!(err.contains("without a folder"), "{err}");
        let _ = std::fs::remove_dir_all(&root);
    }
}
