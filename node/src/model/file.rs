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

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::learn::{ModelSnapshot, ReadyModel, Standardizer};

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
    /// Output dimension.
    pub output_dim: usize,
    /// Samples the model had learned when saved.
    pub samples_seen: u64,
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
                output_dim: snapshot.output_dim,
                samples_seen: snapshot.stats.samples_seen,
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
    /// renamed over `path`.
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
            let mut file = std::fs::File::create(&tmp)?;
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

    /// Rebuilds the model: finds the plugin on `search`, checks its version and the
    /// dimensions (`d` inputs, `p` outputs), creates it with the saved configuration and
    /// hyperparameters and loads the state. Not real-time (loads a library, allocates).
    pub fn build(
        &self,
        search: &SearchPath,
        d: usize,
        p: usize,
        path: &Path,
    ) -> Result<ReadyModel, ModelFileError> {
        let h = &self.header;
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
        let mut config = h.config.clone();
        if let Some(obj) = config.as_object_mut() {
            obj.insert("hyper".into(), h.hyper.clone());
        }
        let refused = |what, message: String| ModelFileError::Refused {
            plugin: h.plugin.clone(),
            what,
            message,
            path: path.to_owned(),
        };
        let mut model = plugin
            .create_json(&config, d, p)
            .map_err(|e| refused("configuration", e.to_string()))?;
        gpn_gp_core::model::OnlineModel::restore_state_bytes(&mut model, &self.state)
            .map_err(|e| refused("state", e.to_string()))?;
        Ok(ReadyModel {
            model: Box::new(model),
            standardizer,
            hyper: h.hyper.clone(),
        })
    }
}
