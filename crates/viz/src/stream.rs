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
use super::mesh::MeshSearch;
use super::pool::{FrameSender, frame_pool};
use super::robot3d::Robot3d;
use super::{
    FRAME_POOL, RERUN_VERSION, VizSource, VizSummary, VizTarget, VizTick, VizUrdf, VizVisuals,
};

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
    visuals: VizVisuals,
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

/// Makes the calling thread background work (Linux; elsewhere nothing): the `SCHED_IDLE`
/// policy and nice 19, which the threads it starts inherit. It then runs only when no other
/// thread wants the CPU, so it never delays the control loop's threads; when the CPU is
/// busy it lags and the tick side drops frames (counted). A failure leaves the thread as it
/// was.
fn run_in_background() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority/sched_setscheduler on the calling thread's own id change only its
    // scheduling; `param` is a valid sched_param that outlives the call.
    unsafe {
        let tid = libc::gettid();
        let _ = libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 19);
        let param = libc::sched_param { sched_priority: 0 };
        let _ = libc::sched_setscheduler(tid, libc::SCHED_IDLE, &param);
    }
}

/// Opens the rerun sink of `target` for a recording called `name`.
fn open_sink(target: &VizTarget, name: &str) -> Result<re_sdk::RecordingStream> {
    let builder = RecordingStreamBuilder::new(APPLICATION_ID).recording_name(name);
    let opened = match target {
        VizTarget::File(path) => builder.save(path),
        VizTarget::Spawn => builder.spawn(),
        VizTarget::Connect(addr) => builder.connect_grpc_opts(VizTarget::connect_url(addr)),
    };
    opened.map_err(|e| VizError::Open {
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
    })
}

impl Viz {
    /// Opens `target`, logs the static entities (the robot's visuals from `urdf`, the URDF
    /// `robot` was built from, if given, with its meshes looked up from its folder and the
    /// environment's package paths; a simulated payload of `source`) and starts the logger
    /// thread; times are on `source`'s timeline. Allocates the frame pool; call it before
    /// the control loop starts. For [`VizSource::Node`] (a robot) the logger thread and
    /// rerun's own threads are background work (`SCHED_IDLE`, nice 19 on Linux): they run
    /// only on CPU time nothing else wants, and ticks they cannot take are dropped.
    ///
    /// Errors: the sink cannot be opened (file not writable, no `rerun` executable on `PATH`
    /// for [`VizTarget::Spawn`], no viewer listening for [`VizTarget::Connect`]), the URDF
    /// cannot be parsed, or the thread cannot be started.
    pub fn start(
        target: &VizTarget,
        robot: &Model,
        urdf: Option<&VizUrdf<'_>>,
        source: VizSource<'_>,
        recording_name: &str,
    ) -> Result<Self> {
        let meshes = MeshSearch::from_env(urdf.and_then(|u| u.dir));
        let robot3d = Robot3d::new(robot, urdf.map(|u| (u, &meshes)), source.payload())?;
        let visuals = VizVisuals {
            meshes_drawn: robot3d.meshes_drawn(),
            meshes_skipped: robot3d.skipped_meshes().to_vec(),
        };
        if let VizTarget::Connect(addr) = target {
            check_listening(&VizTarget::connect_url(addr))?;
        }
        let (frames, receiver) = frame_pool(robot.nv(), FRAME_POOL);
        let (done_tx, done) = sync_channel::<()>(0);
        let (ready_tx, ready) = sync_channel::<Result<()>>(1);
        let (target, name) = (target.clone(), recording_name.to_owned());
        let (joints, timeline) = (robot.joint_names().to_vec(), source.timeline());
        // On a robot the sink is opened on the logger thread after it became background work,
        // so that the threads rerun starts for it (batcher, file or gRPC sink) are too.
        let background = source == VizSource::Node;
        let thread = std::thread::Builder::new()
            .name("gpn-viz".into())
            .spawn(move || {
                if background {
                    run_in_background();
                }
                let opened = open_sink(&target, &name)
                    .and_then(|rec| Logger::new(rec, &joints, robot3d, timeline));
                let logger = match opened {
                    Ok(logger) => logger,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return Ok(0);
                    }
                };
                let _ = ready_tx.send(Ok(()));
                let result = logger.run(receiver);
                drop(done_tx);
                result
            })
            .map_err(|e| VizError::Thread(format!("cannot start: {e}")))?;
        match ready.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                let _ = thread.join();
                return Err(e);
            }
            Err(_) => {
                let _ = thread.join();
                return Err(VizError::Thread("panicked while opening the sink".into()));
            }
        }
        Ok(Self {
            frames,
            thread,
            done,
            visuals,
        })
    }

    /// How the robot's visuals were drawn (meshes drawn and skipped).
    pub fn visuals(&self) -> &VizVisuals {
        &self.visuals
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
            ..
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

    #[cfg(target_os = "linux")]
    #[test]
    fn the_robots_logger_thread_is_background_work() {
        fn policy() -> i32 {
            // SAFETY: reads the calling thread's policy; no memory is passed.
            unsafe { libc::sched_getscheduler(libc::gettid()) }
        }
        fn nice() -> i32 {
            // SAFETY: reads the calling thread's nice value; no memory is passed.
            unsafe { libc::getpriority(libc::PRIO_PROCESS, libc::gettid() as libc::id_t) }
        }
        let before = (policy(), nice());
        let (inside, child) = std::thread::spawn(move || {
            run_in_background();
            // A thread it starts (as rerun's are) inherits it.
            let child = std::thread::spawn(move || (policy(), nice()))
                .join()
                .expect("child");
            ((policy(), nice()), child)
        })
        .join()
        .expect("thread");
        assert_eq!(inside, (libc::SCHED_IDLE, 19));
        assert_eq!(child, (libc::SCHED_IDLE, 19));
        assert_eq!((policy(), nice()), before, "only the logger thread changes");
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
