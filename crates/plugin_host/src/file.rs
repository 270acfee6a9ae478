//! Model files: a running model's learned state on disk, with everything needed to rebuild
//! it — the plugin's name and version, its configuration, the hyperparameters and the output
//! map. Written atomically (a temporary file beside the target, flushed, then renamed), so a
//! crash never leaves a half-written model under the target name.
//!
//! Layout, little endian: the magic `GPNMODEL` (8 bytes), the format version (u32, now 1),
//! the header length (u32) and the header (UTF-8 JSON, [`ModelFileHeader`]), the state length
//! (u64) and the plugin's opaque state bytes. A file of another format version, of a plugin
//! version other than the one installed, or for other dimensions is refused with a message
//! saying which.
//!
//! [`ModelDir`] confines file names that come from elsewhere (the node's save and load
//! services) to one directory: a name is a file name or a relative path without `..`,
//! resolved inside the directory, and symbolic links that lead out of it are refused.

use std::io::Write as _;
use std::path::{Component, Path, PathBuf};

use gpn_control::learn::{InputLayout, ModelSnapshot, ReadyModel, Standardizer, create_model};
use gpn_online_model::OnlineModel;

use super::process::{ProcessModel, ProcessOptions};
use super::{HostError, Plugin, SearchPath};

const MAGIC: &[u8; 8] = b"GPNMODEL";
/// The format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// What a model file says about its model.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelFileHeader {
    /// Plugin name.
    pub plugin: String,
    /// Plugin version that wrote the state.
    pub plugin_version: String,
    /// Plugin configuration (without `hyper`).
    pub config: serde_json::Value,
    /// Hyperparameters (the config's `hyper` value the model was created with).
    pub hyper: serde_json::Value,
    /// Output map: raw target = mean + std · model output.
    pub output_mean: Vec<f64>,
    /// See `output_mean`.
    pub output_std: Vec<f64>,
    /// Input dimension.
    pub input_dim: usize,
    /// v_f of the friction features among the inputs, rad/s (0: none, as in the files
    /// written before them; `gpn_control::learn::InputLayout`).
    #[serde(default)]
    pub friction_feature_velocity: f64,
    /// Output dimension.
    pub output_dim: usize,
    /// Samples the model had learned when saved.
    pub samples_seen: u64,
    /// Range [lo, hi] of each joint's q̈ among the samples learned, rad/s²: a run that starts
    /// from the file clamps its queries into it, as the learner that saved it did (empty in
    /// files written before it: the new run's samples set the range).
    #[serde(default)]
    pub accel_range: Vec<(f64, f64)>,
}

/// A model file's content.
#[derive(Debug, Clone)]
pub struct ModelFile {
    /// The header.
    pub header: ModelFileHeader,
    /// The plugin's state.
    pub state: Vec<u8>,
}

/// Why a model file could not be written, read or used.
#[derive(Debug, thiserror::Error)]
pub enum ModelFileError {
    /// Reading or writing failed.
    #[error("{action} failed: {error}: {}", path.display())]
    Io {
        /// What was being done.
        action: &'static str,
        /// OS error.
        error: std::io::Error,
        /// The file.
        path: PathBuf,
    },
    /// Not a model file (wrong magic or truncated).
    #[error("not a gp-node model file ({why}): {}", path.display())]
    NotAModelFile {
        /// What is wrong.
        why: String,
        /// The file.
        path: PathBuf,
    },
    /// Another format version.
    #[error("model file format version {found} is not supported (this gp-node reads version {supported}): {}", path.display())]
    FormatVersion {
        /// In the file.
        found: u32,
        /// What this build reads.
        supported: u32,
        /// The file.
        path: PathBuf,
    },
    /// Written by another version of the plugin than the one installed.
    #[error("model file was written by plugin {plugin} {file_version}, but {plugin} {installed} is installed; its state format may differ: {}", path.display())]
    PluginVersion {
        /// Plugin.
        plugin: String,
        /// Version in the file.
        file_version: String,
        /// Version found.
        installed: String,
        /// The file.
        path: PathBuf,
    },
    /// For other dimensions than the robot's.
    #[error("model file is for {file_in} inputs and {file_out} outputs, the robot needs {in_} and {out}: {}", path.display())]
    Dimensions {
        /// In the file.
        file_in: usize,
        /// In the file.
        file_out: usize,
        /// Needed.
        in_: usize,
        /// Needed.
        out: usize,
        /// The file.
        path: PathBuf,
    },
    /// Learned with other input features than the node forms.
    #[error("model file was learned with friction features of v_f = {file} rad/s, the node forms them with {node} rad/s (learn.friction_feature_velocity_rad_s; 0: none); set the parameter to the file's value to load it: {}", path.display())]
    InputFeatures {
        /// In the file.
        file: f64,
        /// The node's.
        node: f64,
        /// The file.
        path: PathBuf,
    },
    /// A name given to a [`ModelDir`] that is not inside it (absolute, with `..`, empty,
    /// or through a symbolic link that leads out).
    #[error("model file \"{name}\" is refused: {reason}; give a file name (or a relative path without \"..\") inside the model directory: {}", dir.display())]
    OutsideModelDir {
        /// The name asked for.
        name: String,
        /// Why it is refused.
        reason: String,
        /// The model directory.
        dir: PathBuf,
    },
    /// The plugin could not be found or loaded.
    #[error(transparent)]
    Host(#[from] HostError),
    /// The plugin refused the configuration or the state.
    #[error("plugin {plugin} refused the saved {what}: {message}: {}", path.display())]
    Refused {
        /// Plugin.
        plugin: String,
        /// `configuration` or `state`.
        what: &'static str,
        /// The plugin's message.
        message: String,
        /// The file.
        path: PathBuf,
    },
}

impl ModelFileError {
    /// A short stable key for what went wrong (`not_a_model_file`, `outside_model_dir`…;
    /// a plugin's own error gives [`HostError::reason`]): what the node counts refused
    /// operations by in `/diagnostics`.
    pub fn reason(&self) -> &'static str {
        match self {
            ModelFileError::Io { .. } => "io",
            ModelFileError::NotAModelFile { .. } => "not_a_model_file",
            ModelFileError::FormatVersion { .. } => "format_version",
            ModelFileError::PluginVersion { .. } => "plugin_version",
            ModelFileError::Dimensions { .. } => "dimensions",
            ModelFileError::InputFeatures { .. } => "input_features",
            ModelFileError::OutsideModelDir { .. } => "outside_model_dir",
            ModelFileError::Host(e) => e.reason(),
            ModelFileError::Refused { .. } => "state_refused",
        }
    }
}

/// The one directory model files named by a caller that is not trusted with the file system
/// (the node's save and load services) are read from and written to.
///
/// A name is a file name, or a relative path whose components are plain names (`.` is
/// ignored), joined to the directory. Absolute paths and `..` are refused before anything
/// is touched; then the resolved file (load) or the folder it goes in (save) is made
/// canonical and must lie inside the canonical directory, so that a symbolic link inside
/// the directory cannot lead out of it. The directory itself may be a symbolic link: its
/// target is the directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelDir {
    dir: PathBuf,
}

impl ModelDir {
    /// The model directory `dir` (relative: to the current directory; created on the first
    /// save).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The directory as configured.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn refuse(&self, name: &str, reason: impl Into<String>) -> ModelFileError {
        ModelFileError::OutsideModelDir {
            name: name.to_owned(),
            reason: reason.into(),
            dir: self.dir.clone(),
        }
    }

    /// `name` joined to the directory, once its form is checked (not canonical yet).
    fn join(&self, name: &str) -> Result<PathBuf, ModelFileError> {
        if name.trim().is_empty() {
            return Err(self.refuse(name, "the name is empty"));
        }
        let mut relative = PathBuf::new();
        for component in Path::new(name).components() {
            match component {
                Component::Normal(part) => relative.push(part),
                Component::CurDir => {}
                Component::ParentDir => {
                    return Err(self.refuse(name, "\"..\" is not allowed in the name"));
                }
                Component::RootDir | Component::Prefix(_) => {
                    return Err(self.refuse(name, "absolute paths are not allowed"));
                }
            }
        }
        if relative.file_name().is_none() {
            return Err(self.refuse(name, "the name names no file"));
        }
        Ok(self.dir.join(relative))
    }

    /// The canonical directory; `action` names what needed it in the error.
    fn canonical_dir(&self, action: &'static str) -> Result<PathBuf, ModelFileError> {
        self.dir.canonicalize().map_err(|error| ModelFileError::Io {
            action,
            error,
            path: self.dir.clone(),
        })
    }

    /// The file `name` names, to read: it must exist, and its canonical path (all symbolic
    /// links followed) must lie inside the directory. Returns that canonical path.
    pub fn resolve_for_load(&self, name: &str) -> Result<PathBuf, ModelFileError> {
        let joined = self.join(name)?;
        let dir = self.canonical_dir("opening the model directory")?;
        let file = joined.canonicalize().map_err(|error| ModelFileError::Io {
            action: "reading",
            error,
            path: joined.clone(),
        })?;
        if !file.starts_with(&dir) {
            return Err(self.refuse(
                name,
                format!(
                    "it leads out of the model directory (to {})",
                    file.display()
                ),
            ));
        }
        Ok(file)
    }

    /// The file `name` names, to write: the directory is created if missing; the folder
    /// the file goes in must exist and lie inside the directory once made canonical (a
    /// file of that name that is a symbolic link is replaced, not followed: see
    /// [`ModelFile::write_atomic`]). Returns the canonical folder joined with the file name.
    pub fn resolve_for_save(&self, name: &str) -> Result<PathBuf, ModelFileError> {
        let joined = self.join(name)?;
        std::fs::create_dir_all(&self.dir).map_err(|error| ModelFileError::Io {
            action: "creating the model directory",
            error,
            path: self.dir.clone(),
        })?;
        let dir = self.canonical_dir("opening the model directory")?;
        let (Some(parent), Some(file_name)) = (joined.parent(), joined.file_name()) else {
            return Err(self.refuse(name, "the name names no file"));
        };
        let folder = parent.canonicalize().map_err(|error| ModelFileError::Io {
            action: "opening the folder to write in",
            error,
            path: parent.to_owned(),
        })?;
        if !folder.starts_with(&dir) {
            return Err(self.refuse(
                name,
                format!(
                    "its folder leads out of the model directory (to {})",
                    folder.display()
                ),
            ));
        }
        Ok(folder.join(file_name))
    }
}

impl ModelFile {
    /// A file's content from a learner snapshot and the plugin configuration in use.
    pub fn from_snapshot(snapshot: ModelSnapshot, config: &serde_json::Value) -> Self {
        let mut config = config.clone();
        if let Some(obj) = config.as_object_mut() {
            obj.remove("hyper");
        }
        Self {
            header: ModelFileHeader {
                plugin: snapshot.plugin,
                plugin_version: snapshot.plugin_version,
                config,
                hyper: snapshot.hyper,
                output_mean: snapshot.output_mean,
                output_std: snapshot.output_std,
                input_dim: snapshot.input_dim,
                friction_feature_velocity: snapshot.friction_feature_velocity,
                output_dim: snapshot.output_dim,
                samples_seen: snapshot.stats.samples_seen,
                accel_range: snapshot.accel_range,
            },
            state: snapshot.state,
        }
    }

    /// The file's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let header = serde_json::to_vec(&self.header).unwrap_or_default();
        let mut out = Vec::with_capacity(24 + header.len() + self.state.len());
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&(header.len() as u32).to_le_bytes());
        out.extend_from_slice(&header);
        out.extend_from_slice(&(self.state.len() as u64).to_le_bytes());
        out.extend_from_slice(&self.state);
        out
    }

    /// Parses a file's bytes (`path` names it in errors).
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<Self, ModelFileError> {
        let bad = |why: &str| ModelFileError::NotAModelFile {
            why: why.into(),
            path: path.to_owned(),
        };
        if bytes.len() < 16 || &bytes[..8] != MAGIC {
            return Err(bad("no GPNMODEL signature"));
        }
        let word = |at: usize| {
            u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
        };
        let version = word(8);
        if version != FORMAT_VERSION {
            return Err(ModelFileError::FormatVersion {
                found: version,
                supported: FORMAT_VERSION,
                path: path.to_owned(),
            });
        }
        let header_len = word(12) as usize;
        let header_end = 16usize
            .checked_add(header_len)
            .filter(|end| end + 8 <= bytes.len())
            .ok_or_else(|| bad("truncated header"))?;
        let header: ModelFileHeader = serde_json::from_slice(&bytes[16..header_end])
            .map_err(|e| bad(&format!("header: {e}")))?;
        let mut len = [0u8; 8];
        len.copy_from_slice(&bytes[header_end..header_end + 8]);
        let state_len = u64::from_le_bytes(len) as usize;
        let state_start = header_end + 8;
        if bytes.len() - state_start != state_len {
            return Err(bad(&format!(
                "state is {} bytes, the header promises {state_len}",
                bytes.len() - state_start
            )));
        }
        Ok(Self {
            header,
            state: bytes[state_start..].to_vec(),
        })
    }

    /// Writes the file atomically: a temporary file in the same folder, flushed to disk,
    /// renamed over `path` (which replaces a symbolic link at `path` rather than writing
    /// where it points).
    pub fn write_atomic(&self, path: &Path) -> Result<(), ModelFileError> {
        let io = |action, error| ModelFileError::Io {
            action,
            error,
            path: path.to_owned(),
        };
        let name = path
            .file_name()
            .ok_or_else(|| io("writing", std::io::Error::other("the path names no file")))?;
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".tmp-{}", std::process::id()));
        let tmp = path.with_file_name(tmp_name);
        let result = (|| {
            // A fresh file: a stale temporary (or a symbolic link in its place) is removed,
            // never written through.
            let _ = std::fs::remove_file(&tmp);
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)?;
            file.write_all(&self.to_bytes())?;
            file.sync_all()?;
            std::fs::rename(&tmp, path)
        })();
        if let Err(error) = result {
            let _ = std::fs::remove_file(&tmp);
            return Err(io("writing", error));
        }
        Ok(())
    }

    /// Reads and parses a file.
    pub fn read(path: &Path) -> Result<Self, ModelFileError> {
        let bytes = std::fs::read(path).map_err(|error| ModelFileError::Io {
            action: "reading",
            error,
            path: path.to_owned(),
        })?;
        Self::from_bytes(&bytes, path)
    }

    /// Rebuilds the model: finds the plugin on `search`, checks its version, the input
    /// features and the dimensions against the node's `inputs` (nv outputs), creates it with
    /// the saved configuration and hyperparameters and loads the state. Not real-time (loads
    /// a library, allocates).
    pub fn build(
        &self,
        search: &SearchPath,
        inputs: InputLayout,
        path: &Path,
    ) -> Result<ReadyModel, ModelFileError> {
        self.build_in(search, inputs, path, None)
    }

    /// [`ModelFile::build`], the model in a plugin process when `process` is given
    /// (`model.isolation: process`).
    pub fn build_in(
        &self,
        search: &SearchPath,
        inputs: InputLayout,
        path: &Path,
        process: Option<&ProcessOptions>,
    ) -> Result<ReadyModel, ModelFileError> {
        let h = &self.header;
        let (d, p) = (inputs.dim(), inputs.nv());
        if h.friction_feature_velocity != inputs.friction_velocity() {
            return Err(ModelFileError::InputFeatures {
                file: h.friction_feature_velocity,
                node: inputs.friction_velocity(),
                path: path.to_owned(),
            });
        }
        if h.input_dim != d || h.output_dim != p {
            return Err(ModelFileError::Dimensions {
                file_in: h.input_dim,
                file_out: h.output_dim,
                in_: d,
                out: p,
                path: path.to_owned(),
            });
        }
        let standardizer = Standardizer::from_parts(h.output_mean.clone(), h.output_std.clone())
            .filter(|s| s.mean().len() == p)
            .ok_or_else(|| ModelFileError::NotAModelFile {
                why: "the output map is malformed".into(),
                path: path.to_owned(),
            })?;
        let plugin = Plugin::find(&h.plugin, search)?;
        if plugin.info().version != h.plugin_version {
            return Err(ModelFileError::PluginVersion {
                plugin: h.plugin.clone(),
                file_version: h.plugin_version.clone(),
                installed: plugin.info().version.clone(),
                path: path.to_owned(),
            });
        }
        let refused = |what, message: String| ModelFileError::Refused {
            plugin: h.plugin.clone(),
            what,
            message,
            path: path.to_owned(),
        };
        // A split `hyper` (one model per kinematic branch) builds one plugin model per part.
        let mut model = create_model(&h.hyper, d, p, |hyper, d, p| {
            let mut config = h.config.clone();
            if let Some(obj) = config.as_object_mut() {
                obj.insert("hyper".into(), hyper.clone());
            }
            match process {
                Some(options) => {
                    let text = config.to_string();
                    let model = ProcessModel::spawn(options, &plugin.info().path, &text, d, p)?;
                    Ok(Box::new(model) as Box<dyn OnlineModel>)
                }
                None => {
                    let model = plugin
                        .create_json(&config, d, p)
                        .map_err(|e| e.to_string())?;
                    Ok(Box::new(model) as Box<dyn OnlineModel>)
                }
            }
        })
        .map_err(|e| refused("configuration", e))?;
        model
            .restore_state_bytes(&self.state)
            .map_err(|e| refused("state", e.to_string()))?;
        Ok(ReadyModel {
            model,
            standardizer,
            hyper: h.hyper.clone(),
            accel_range: if h.accel_range.len() == p {
                h.accel_range.clone()
            } else {
                Vec::new()
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(test: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("gpn-model-dir-{test}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch dir");
        dir
    }

    fn a_file() -> ModelFile {
        ModelFile {
            header: ModelFileHeader {
                plugin: "skygp".into(),
                plugin_version: "1.2.3".into(),
                config: serde_json::json!({"variant": "fast"}),
                hyper: serde_json::json!({"sigma_f": 1.0}),
                output_mean: vec![0.5],
                output_std: vec![2.0],
                input_dim: 3,
                friction_feature_velocity: 0.0,
                output_dim: 1,
                samples_seen: 42,
                accel_range: vec![(-1.0, 2.0)],
            },
            state: vec![1, 2, 3, 4],
        }
    }

    fn refusal(result: Result<PathBuf, ModelFileError>) -> String {
        match result {
            Err(e @ ModelFileError::OutsideModelDir { .. }) => e.to_string(),
            other => panic!("must be refused as outside the model directory: {other:?}"),
        }
    }

    #[test]
    fn a_plain_name_saves_and_loads_back_and_the_directory_is_created() {
        let root = scratch("roundtrip");
        let models = ModelDir::new(root.join("not/yet/there"));
        let path = models.resolve_for_save("arm.gpnmodel").expect("save path");
        assert!(root.join("not/yet/there").is_dir(), "created on save");
        assert!(
            path.ends_with("not/yet/there/arm.gpnmodel"),
            "{}",
            path.display()
        );
        let file = a_file();
        file.write_atomic(&path).expect("write");
        let back = ModelFile::read(&models.resolve_for_load("arm.gpnmodel").expect("load path"))
            .expect("read");
        assert_eq!(back.header, file.header);
        assert_eq!(back.state, file.state);
        // `./name` and an existing subfolder are inside too.
        assert_eq!(models.resolve_for_load("./arm.gpnmodel").expect("./"), path);
        std::fs::create_dir(root.join("not/yet/there/runs")).expect("mkdir");
        let nested = models
            .resolve_for_save("runs/arm.gpnmodel")
            .expect("nested");
        file.write_atomic(&nested).expect("write nested");
        assert!(models.resolve_for_load("runs/arm.gpnmodel").is_ok());
        // A missing subfolder is not created, a missing file is an I/O error naming it.
        let err = models
            .resolve_for_save("nope/arm.gpnmodel")
            .expect_err("no folder");
        assert!(matches!(err, ModelFileError::Io { .. }), "{err:?}");
        let err = models
            .resolve_for_load("missing.gpnmodel")
            .expect_err("missing");
        assert!(err.to_string().contains("missing.gpnmodel"), "{err}");
    }

    #[test]
    fn absolute_paths_dots_and_empty_names_are_refused_naming_the_directory() {
        let root = scratch("refused");
        let models = ModelDir::new(root.join("models"));
        let outside = root.join("outside.gpnmodel");
        a_file().write_atomic(&outside).expect("write outside");
        let absolute = outside.display().to_string();
        let message = refusal(models.resolve_for_load(&absolute));
        assert!(
            message.contains("absolute paths are not allowed"),
            "{message}"
        );
        assert!(
            message.ends_with(&format!(
                "inside the model directory: {}",
                root.join("models").display()
            )),
            "{message}"
        );
        assert!(refusal(models.resolve_for_save(&absolute)).contains("absolute"));
        let dots = "\"..\" is not allowed in the name";
        for name in ["../outside.gpnmodel", "a/../../outside.gpnmodel", ".."] {
            assert!(
                refusal(models.resolve_for_load(name)).contains(dots),
                "{name}"
            );
            assert!(
                refusal(models.resolve_for_save(name)).contains(dots),
                "{name}"
            );
        }
        assert!(refusal(models.resolve_for_save("")).contains("the name is empty"));
        assert!(refusal(models.resolve_for_save("  ")).contains("the name is empty"));
        assert!(refusal(models.resolve_for_save(".")).contains("names no file"));
    }

    #[cfg(unix)]
    #[test]
    fn symbolic_links_out_of_the_directory_are_refused() {
        use std::os::unix::fs::symlink;
        let root = scratch("symlinks");
        let models_path = root.join("models");
        std::fs::create_dir(&models_path).expect("mkdir");
        let elsewhere = root.join("elsewhere");
        std::fs::create_dir(&elsewhere).expect("mkdir");
        let secret = elsewhere.join("secret.gpnmodel");
        a_file().write_atomic(&secret).expect("write");
        symlink(&elsewhere, models_path.join("out")).expect("dir link");
        symlink(&secret, models_path.join("leak.gpnmodel")).expect("file link");
        let models = ModelDir::new(&models_path);
        let message = refusal(models.resolve_for_load("leak.gpnmodel"));
        assert!(
            message.contains("leads out of the model directory"),
            "{message}"
        );
        assert!(refusal(models.resolve_for_load("out/secret.gpnmodel")).contains("leads out"));
        assert!(refusal(models.resolve_for_save("out/new.gpnmodel")).contains("leads out"));
        assert!(!elsewhere.join("new.gpnmodel").exists());
        // Saving over a link inside the directory replaces the link, never its target.
        let target = models.resolve_for_save("leak.gpnmodel").expect("inside");
        let mut other = a_file();
        other.header.samples_seen = 7;
        other.write_atomic(&target).expect("write");
        assert_eq!(
            ModelFile::read(&secret).expect("read").header.samples_seen,
            42
        );
        assert!(
            !std::fs::symlink_metadata(&target)
                .expect("meta")
                .is_symlink()
        );
        // A link inside the directory to a file inside it is fine, and the directory
        // itself may be a link.
        symlink(&target, models_path.join("alias.gpnmodel")).expect("link");
        assert_eq!(
            models.resolve_for_load("alias.gpnmodel").expect("alias"),
            target
        );
        let linked_dir = root.join("models-link");
        symlink(&models_path, &linked_dir).expect("link the dir");
        let via_link = ModelDir::new(&linked_dir);
        assert!(via_link.resolve_for_load("leak.gpnmodel").is_ok());
        assert!(refusal(via_link.resolve_for_load("out/secret.gpnmodel")).contains("leads out"));
    }
}
