//! Loading a [`Model`] from URDF text or a file: the constructors, on top of the parser
//! (`urdf`), which builds the model. Kept apart from `model` so that the model's definition
//! does not depend on its parser.

use std::path::Path;

use super::error::{Result, RobotError};
use super::model::Model;
use super::urdf::{
    EffortLimits, JointSelection, MAX_URDF_BYTES, model_from_urdf_str, model_from_urdf_str_selected,
};

impl Model {
    /// Loads a URDF file for dynamics (see the `urdf` module doc for what is read and what
    /// is ignored). Effort limits are optional: a movable joint without a usable one gets
    /// `+∞`. Anything that commands torques loads with
    /// [`Model::from_urdf_file_with_effort_limits`] instead.
    ///
    /// Errors: the file cannot be read or is larger than 64 MiB, or any problem
    /// [`Model::from_urdf_str`] reports.
    pub fn from_urdf_file(path: impl AsRef<Path>) -> Result<Model> {
        let path = path.as_ref();
        let xml = read_urdf(path)?;
        model_from_urdf_str(&xml, &path.display().to_string(), EffortLimits::Optional)
    }

    /// Parses URDF text for dynamics; `source_name` is used in error messages in place of a
    /// file name. Effort limits are optional, as for [`Model::from_urdf_file`].
    ///
    /// Errors name the element: text over 64 MiB or nested more than 256 elements deep,
    /// malformed XML, unknown or unsupported joint types, joints whose links are missing,
    /// cycles, links with two parents, several roots, zero-length axes, non-finite numbers,
    /// negative mass, and a singular joint-space inertia (a movable joint that moves no inertia).
    pub fn from_urdf_str(xml: &str, source_name: &str) -> Result<Model> {
        model_from_urdf_str(xml, source_name, EffortLimits::Optional)
    }

    /// Loads a URDF file for a controller: every movable joint gets a finite effort limit > 0
    /// (N·m, N for a prismatic joint), from `effort_limits` or else from the URDF.
    ///
    /// `effort_limits` (the node's parameter `control.effort_limits_nm`): empty, the URDF's
    /// `<limit effort>`, required on every movable joint; one value, for every movable joint;
    /// or one per movable joint in [`Model::joint_names`] order. Given values replace the
    /// URDF's, which may then be missing. Limits on fixed joints are never read.
    ///
    /// Errors: those of [`Model::from_urdf_file`]; [`RobotError::NoEffortLimit`] naming the
    /// movable joints whose URDF effort limit is missing, ≤ 0, infinite or NaN (when
    /// `effort_limits` is empty); [`RobotError::InvalidArgument`] for a given value that is
    /// not finite and > 0, or a count that is neither 1 nor nv.
    pub fn from_urdf_file_with_effort_limits(
        path: impl AsRef<Path>,
        effort_limits: &[f64],
    ) -> Result<Model> {
        let path = path.as_ref();
        let xml = read_urdf(path)?;
        model_from_urdf_str(
            &xml,
            &path.display().to_string(),
            EffortLimits::required_unless_given(effort_limits),
        )
    }

    /// As [`Model::from_urdf_file_with_effort_limits`], keeping only the joints `selection`
    /// keeps: the others are locked and merged into their parent body (Pinocchio's
    /// `buildReducedModel`); effort limits are needed (or given) for the kept joints only.
    /// Errors also name a selected joint that is not a movable joint of the robot.
    pub fn from_urdf_file_selected(
        path: impl AsRef<Path>,
        effort_limits: &[f64],
        selection: &JointSelection,
    ) -> Result<Model> {
        let path = path.as_ref();
        let xml = read_urdf(path)?;
        Self::from_urdf_str_selected(&xml, &path.display().to_string(), effort_limits, selection)
    }

    /// As [`Model::from_urdf_file_selected`], from URDF text.
    pub fn from_urdf_str_selected(
        xml: &str,
        source_name: &str,
        effort_limits: &[f64],
        selection: &JointSelection,
    ) -> Result<Model> {
        model_from_urdf_str_selected(
            xml,
            source_name,
            EffortLimits::required_unless_given(effort_limits),
            selection,
        )
    }

    /// As [`Model::from_urdf_file_with_effort_limits`], from URDF text; `source_name` is used
    /// in error messages in place of a file name.
    pub fn from_urdf_str_with_effort_limits(
        xml: &str,
        source_name: &str,
        effort_limits: &[f64],
    ) -> Result<Model> {
        model_from_urdf_str(
            xml,
            source_name,
            EffortLimits::required_unless_given(effort_limits),
        )
    }
}

/// The text of a URDF file, refusing one larger than [`MAX_URDF_BYTES`] without reading past
/// the limit.
fn read_urdf(path: &Path) -> Result<String> {
    use std::io::Read;
    let io_error = |error| RobotError::Io {
        what: "URDF",
        error,
        path: path.to_path_buf(),
    };
    let file = std::fs::File::open(path).map_err(io_error)?;
    let mut bytes = Vec::new();
    file.take(MAX_URDF_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(io_error)?;
    if bytes.len() > MAX_URDF_BYTES {
        return Err(RobotError::TooLarge {
            limit_bytes: MAX_URDF_BYTES,
            file: path.display().to_string(),
        });
    }
    String::from_utf8(bytes)
        .map_err(|e| io_error(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))
}
