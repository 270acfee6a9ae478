//! [`Viz`]: opens the rerun sink, starts the logger thread, hands it one frame per tick and
//! waits for it at the end.

use std::net::{TcpStream, ToSocketAddrs};
use std::sync::mpsc::{Receiver, RecvTimeoutError, sync_channel};
use std::thread::JoinHandle;
use std::time::Duration;

use re_sdk::RecordingStreamBuilder;

use gpn_dynamics::Model;

use super::error::{Result, VizError};
use super::logger::Logger;
use super::pool::{FrameSender, frame_pool};
use super::robot3d::Robot3d;
use super::{FRAME_POOL, RERUN_VERSION, VizSource, VizSummary, VizTarget, VizTick};

/// The rerun application id of every recording.
const APPLICATION_ID: &str = "gp-node";

/// How long [`Viz::start`] tries to reach a viewer for [`VizTarget::Connect`].
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// How long [`Viz::finish`] waits for the logger to drain and flush. Only a viewer that
/// stops taking data makes it wait that long (rerun's gRPC client then blocks its sender).
const FINISH_TIMEOUT: Duration = Duration::from_secs(30);

/// The rerun logger of one run: the tick side of the frame pool and the logger thread.
pub struct Viz {
    frames: FrameSender,
    thread: JoinHandle<Result<u64>>,
    /// Disconnected when the logger thread is done (its sink flushed and closed).
    done: Receiver<()>,
}

/// Fails unless something listens at the `HOST:PORT` of a rerun gRPC `url`: rerun's client
/// would otherwise retry forever and block the logger, and with it [`Viz::finish`].
fn check_listening(url: &str) -> Result<()> {
    let authority = url
        .split_once("://")
        .map_or(url, |(_, rest)| rest)
        .split('/')
        .next()
        .unwrap_or_default();
    let reachable = authority
        .to_socket_addrs()
        .map(|addrs| {
            addrs
                .into_iter()
                .any(|addr| TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT).is_ok())
        })
        .unwrap_or(false);
    if reachable {
        Ok(())
    } else {
        Err(VizError::Open {
            action: format!("connect to {url}"),
            message: "no rerun viewer is listening there (start one with `rerun`, or use \
                      --spawn or --rrd)"
                .into(),
        })
    }
}

impl Viz {
    /// Opens `target`, logs the static entities (the robot's visuals from `urdf`, the XML
    /// `robot` was built from, if given; a simulated payload of `source`) and starts the
    /// logger thread; times are on `source`'s timeline. Allocates the frame
    /// pool; call it before the control loop starts.
    ///
    /// Errors: the sink cannot be opened (file not writable, no `rerun` executable on `PATH`
    /// for [`VizTarget::Spawn`], no viewer listening for [`VizTarget::Connect`]), the URDF
    /// cannot be parsed, or the thread cannot be started.
    pub fn start(
        target: &VizTarget,
        robot: &Model,
        urdf: Option<&str>,
        source: VizSource<'_>,
        recording_name: &str,
    ) -> Result<Self> {
        let robot3d = Robot3d::new(
            robot,
            urdf.map(|xml| (xml, robot.source_name())),
            source.payload(),
        )?;
        let builder = RecordingStreamBuilder::new(APPLICATION_ID).recording_name(recording_name);
        let opened = match target {
            VizTarget::File(path) => builder.save(path),
            VizTarget::Spawn => builder.spawn(),
            VizTarget::Connect(addr) => {
                let url = VizTarget::connect_url(addr);
                check_listening(&url)?;
                builder.connect_grpc_opts(url)
            }
        };
        let rec = opened.map_err(|e| VizError::Open {
            action: target.to_string(),
            message: match target {
                // rerun's own message is a page of install hints; keep its first line.
                VizTarget::Spawn => format!(
                    "{} (the viewer comes with `pip install rerun-sdk=={RERUN_VERSION}`; or \
                     write a file with --rrd)",
                    e.to_string()
                        .lines()
                        .next()
                        .unwrap_or_default()
                        .trim_end_matches('.')
                ),
                _ => e.to_string(),
            },
        })?;
        let logger = Logger::new(rec, robot.joint_names(), robot3d, source.timeline())?;
        let (frames, receiver) = frame_pool(robot.nv(), FRAME_POOL);
        let (done_tx, done) = sync_channel::<()>(0);
        let thread = std::thread::Builder::new()
            .name("gpn-viz".into())
            .spawn(move || {
                let result = logger.run(receiver);
                drop(done_tx);
                result
            })
            .map_err(|e| VizError::Thread(format!("cannot start: {e}")))?;
        Ok(Self {
            frames,
            thread,
            done,
        })
    }

    /// Hands one tick to the logger thread, or counts a drop if it lags (no free frame).
    ///
    /// Real-time: no allocation or I/O, and never waits for the logger (see the module doc).
    pub fn log_tick(&mut self, tick: &VizTick<'_>) {
        self.frames.send(tick);
    }

    /// Ticks dropped so far.
    pub fn dropped(&self) -> u64 {
        self.frames.dropped()
    }

    /// Closes the queue, waits for the logger to log what it holds, flush the sink and close
    /// it (an `.rrd` file is complete when this returns), and reports the counts.
    ///
    /// Errors: the logger failed or panicked, or it did not finish within 30 s (a viewer
    /// that stopped taking data; the thread is then left behind).
    pub fn finish(self) -> Result<VizSummary> {
        let Self {
            frames,
            thread,
            done,
        } = self;
        let (logged, dropped) = (frames.sent(), frames.dropped());
        drop(frames);
        match done.recv_timeout(FINISH_TIMEOUT) {
            Err(RecvTimeoutError::Disconnected) | Ok(()) => {}
            Err(RecvTimeoutError::Timeout) => {
                return Err(VizError::Thread(format!(
                    "did not finish within {} s: is the rerun viewer still taking data?",
                    FINISH_TIMEOUT.as_secs()
                )));
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pinned_versions_agree() {
        assert_eq!(re_sdk::build_info().version.to_string(), RERUN_VERSION);
        let requirements = include_str!("../../../ci/requirements.txt");
        assert!(
            requirements
                .lines()
                .any(|l| l.trim() == format!("rerun-sdk=={RERUN_VERSION}")),
            "ci/requirements.txt must pin rerun-sdk=={RERUN_VERSION}"
        );
    }

    #[test]
    fn connecting_where_nothing_listens_fails_at_once() {
        // Port 9 (discard) on the loopback: nothing listens in a test environment.
        let err = check_listening("rerun+http://127.0.0.1:9/proxy").expect_err("refused");
        assert!(err.to_string().contains("no rerun viewer"), "{err}");
        let err = check_listening("not a url").expect_err("unresolvable");
        assert!(err.to_string().contains("not a url"), "{err}");
    }

    #[test]
    fn connecting_where_something_listens_passes() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        check_listening(&VizTarget::connect_url(&addr.to_string())).expect("listening");
    }
}
