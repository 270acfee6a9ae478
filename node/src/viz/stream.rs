//! [`Viz`]: opens the rerun sink, starts the logger thread, hands it one frame per tick and
//! joins it at the end.

use std::thread::JoinHandle;

use re_sdk::RecordingStreamBuilder;

use crate::robot::Model;

use super::error::{Result, VizError};
use super::logger::Logger;
use super::pool::{FrameSender, frame_pool};
use super::robot3d::Robot3d;
use super::{FRAME_POOL, RERUN_VERSION, VizSummary, VizTarget, VizTick};

/// The rerun application id of every recording.
const APPLICATION_ID: &str = "gp-node";

/// The rerun logger of one run: the tick side of the frame pool and the logger thread.
pub struct Viz {
    frames: FrameSender,
    thread: JoinHandle<Result<u64>>,
}

impl Viz {
    /// Opens `target`, logs the static entities (the robot's visuals from `urdf`, the XML
    /// `robot` was built from, if given) and starts the logger thread. Allocates the frame
    /// pool; call it before the control loop starts.
    ///
    /// Errors: the sink cannot be opened (file not writable, no `rerun` viewer on `PATH` for
    /// [`VizTarget::Spawn`], a malformed address), the URDF cannot be parsed, or the thread
    /// cannot be started.
    pub fn start(
        target: &VizTarget,
        robot: &Model,
        urdf: Option<&str>,
        recording_name: &str,
    ) -> Result<Self> {
        let robot3d = Robot3d::new(robot, urdf.map(|xml| (xml, robot.source_name())))?;
        let builder = RecordingStreamBuilder::new(APPLICATION_ID).recording_name(recording_name);
        let opened = match target {
            VizTarget::File(path) => builder.save(path),
            VizTarget::Spawn => builder.spawn(),
            VizTarget::Connect(addr) => builder.connect_grpc_opts(VizTarget::connect_url(addr)),
        };
        let rec = opened.map_err(|e| VizError::Open {
            action: target.to_string(),
            message: match target {
                VizTarget::Spawn => {
                    format!("{e} (the viewer comes with `pip install rerun-sdk=={RERUN_VERSION}`)")
                }
                _ => e.to_string(),
            },
        })?;
        let logger = Logger::new(rec, robot.joint_names(), robot3d)?;
        let (frames, receiver) = frame_pool(robot.nv(), FRAME_POOL);
        let thread = std::thread::Builder::new()
            .name("gpn-viz".into())
            .spawn(move || logger.run(receiver))
            .map_err(|e| VizError::Thread(format!("cannot start: {e}")))?;
        Ok(Self { frames, thread })
    }

    /// Hands one tick to the logger thread, or counts a drop if it lags (no free frame).
    ///
    /// Real-time: no allocation, lock or I/O, and never waits.
    pub fn log_tick(&mut self, tick: &VizTick<'_>) {
        self.frames.send(tick);
    }

    /// Ticks dropped so far.
    pub fn dropped(&self) -> u64 {
        self.frames.dropped()
    }

    /// Closes the queue, waits for the logger to log what it holds, flushes the sink (the
    /// `.rrd` file is complete when this returns) and reports the counts.
    pub fn finish(self) -> Result<VizSummary> {
        let Self { frames, thread } = self;
        let (logged, dropped) = (frames.sent(), frames.dropped());
        drop(frames);
        let poses = thread
            .join()
            .map_err(|_| VizError::Thread("panicked".into()))??;
        Ok(VizSummary {
            logged,
            dropped,
            poses,
        })
    }
}
