//! rerun logging of the node (`ros.rerun`, `gp-node run --rerun`): the same recording and
//! layout as `gp-node sim`'s learned run, on the node's timeline (`node_time`), with the
//! measured positions and the learner's measured residual in place of the simulator's truth.
//! The control thread hands every tick to `gpn_viz`'s frame pool ([`gpn_viz::VizListener`]),
//! which never blocks; the logger thread does the rest and drops what it cannot take.

use gpn_dynamics::Model;
use gpn_viz::{Viz, VizSource, VizTarget, VizUrdf};

use super::node_log::NodeLog;
use super::transport::RosError;

/// What the rerun logging did (`gp-node run --json`: `rerun`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct RerunReport {
    /// Where the recording went (`write FILE`, `spawn a rerun viewer`, `connect to URL`).
    pub target: String,
    /// Ticks handed to the logger thread.
    pub logged: u64,
    /// Ticks dropped because the logger lagged.
    pub dropped: u64,
    /// Robot poses logged.
    pub poses: u64,
    /// Why the recording may be incomplete (the logger failed, or a viewer stopped taking
    /// data); the run itself is not affected.
    pub error: Option<String>,
}

/// The target `ros.rerun` asks for (None: off). Errors: a setting of no accepted form.
pub(crate) fn target(setting: &str) -> Result<Option<VizTarget>, RosError> {
    VizTarget::from_setting(setting).map_err(|e| RosError::Param(format!("ros.rerun {e}")))
}

/// Starts logging `robot` (its visuals from `urdf`, if known, with the file it came from)
/// to `target`, before the
/// control loop starts. Errors: the target cannot be opened (no viewer listening, no `rerun`
/// on `PATH`, a file that cannot be written) or this build has no rerun; the node does not
/// start, so that a requested recording is never silently missing.
pub(crate) fn start(
    target: &VizTarget,
    robot: &Model,
    urdf: Option<(&str, Option<&std::path::Path>)>,
    node: &str,
    log: &NodeLog,
) -> Result<(VizTarget, Viz), RosError> {
    let urdf = urdf.map(|(xml, file)| match file {
        Some(path) => VizUrdf::file(xml, path),
        None => VizUrdf::text(xml),
    });
    let viz = Viz::start(
        target,
        robot,
        urdf.as_ref(),
        VizSource::Node,
        &format!("node {node}"),
    )
    .map_err(|e| RosError::Param(format!("ros.rerun: cannot {target}: {e}")))?;
    log.info(&format!(
        "rerun: {target} (layout and series as gp-node sim's; {})",
        viz.visuals()
    ));
    Ok((target.clone(), viz))
}

/// Ends the logging after the control loop stopped: the logger drains, flushes and closes
/// (at most 30 s), and says what it kept.
pub(crate) fn finish(target: &VizTarget, viz: Viz, log: &NodeLog) -> RerunReport {
    let dropped_so_far = viz.dropped();
    match viz.finish() {
        Ok(summary) => {
            log.info(&format!(
                "rerun: {} ticks and {} robot poses logged, {} ticks dropped{}",
                summary.logged,
                summary.poses,
                summary.dropped,
                match target {
                    VizTarget::File(path) => format!(
                        "; open it with: rerun {} (pip install rerun-sdk=={})",
                        path.display(),
                        gpn_viz::RERUN_VERSION
                    ),
                    _ => String::new(),
                }
            ));
            RerunReport {
                target: target.to_string(),
                logged: summary.logged,
                dropped: summary.dropped,
                poses: summary.poses,
                error: None,
            }
        }
        Err(e) => {
            log.error(&format!("rerun: the recording may be incomplete: {e}"));
            RerunReport {
                target: target.to_string(),
                logged: 0,
                dropped: dropped_so_far,
                poses: 0,
                error: Some(e.to_string()),
            }
        }
    }
}
