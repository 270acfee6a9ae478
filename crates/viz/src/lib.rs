//! rerun logging of `gp-node sim` and `gp-node run`, from a logger thread the control tick
//! never waits on. The node re-exports this crate as `gp_node::viz`.
//!
//! Boundary: this crate knows rerun, the tick's output ([`TickOutput`], `gpn_control`) and
//! the robot model (`gpn_dynamics`); it knows nothing of ROS, plugins or the simulator's
//! physics. The control loop hands every output to a [`VizListener`] (an `OutputListener`),
//! which calls [`Viz::log_tick`] once per tick; everything else happens on the logger thread.
//!
//! # Feature flag
//! `rerun` (on by default here; gp_node's own `rerun` feature turns it on, and the `gp-node`
//! binary needs it for `gp-node sim`'s logging). Without it, [`Viz`] keeps its API but
//! [`Viz::start`] returns [`VizError::NotBuilt`] ("built without rerun"), and [`ENABLED`]
//! is false.
//!
//! # Real time
//! [`Viz::start`] allocates a fixed pool of [`FRAME_POOL`] frames and starts the logger
//! thread, which owns the rerun `RecordingStream` and makes every rerun call. Frames
//! circulate through two bounded `sync_channel`s: [`Viz::log_tick`] takes a free frame with
//! `try_recv`, copies the tick's slices into it and hands it over with `try_send`; the
//! logger polls (every 10 ms it takes what is queued), so the tick never has to wake it. On
//! a robot ([`VizSource::Node`]) the logger thread, and the threads rerun starts from it,
//! are background work (`SCHED_IDLE`, nice 19 on Linux): they use only CPU time the control
//! loop's threads leave. If the logger lags and no frame is free, the tick is dropped and
//! counted ([`VizSummary::dropped`]; `gp-node sim` prints "viz: N frames dropped").
//! `log_tick` never allocates, does no I/O and never waits for the logger: both calls return
//! at once; the only shared state is the channels' own short internal locks
//! (`node/tests/viz_alloc.rs` counts its allocations). [`Viz::finish`] closes the queue, lets the logger drain it,
//! flushes and closes the sink and joins the thread (at most 30 s: a viewer that stops
//! taking data blocks rerun's gRPC client, never the tick).
//!
//! # What is logged
//! Timelines: the time axis of the [`VizSource`] — `sim_time` (simulated time, s) for
//! `gp-node sim`, `node_time` (the node's timeline: the joint-state stamps, s) for
//! `gp-node run` — as a duration, and `tick` (the tick index).
//! Scalars are logged every tick, in columns of [`BATCH_TICKS`] ticks; non-finite values are
//! left out (η_cal is NaN until calibrated, so the band starts when calibration ends; there
//! is no expert count before a model is active). `J` is the URDF joint name, e.g.
//! `panda_joint1`.
//!
//! | entity | archetype | value |
//! |---|---|---|
//! | `joints/J/position/q` | Scalars | joint position q, rad: the true one in simulation, the measured one on a robot |
//! | `joints/J/position/q_d` | Scalars | reference q_d, rad |
//! | `joints/J/tracking_error` | Scalars | true tracking error q − q_d, rad |
//! | `joints/J/torque/applied` | Scalars | command u applied to the robot, N·m |
//! | `joints/J/torque/rbd` | Scalars | τ_RBD(q, q̇, q̈_cmd) of the nominal model, N·m |
//! | `joints/J/residual/true` | Scalars | true residual at the query point x*, N·m (simulation only) |
//! | `joints/J/residual/measured` | Scalars | the residual the learner measured: the target of the learning sample formed at this tick (of the interval that just ended), N·m |
//! | `joints/J/residual/predicted` | Scalars | predicted residual μ(x*) used in the law, N·m |
//! | `joints/J/residual/upper` | Scalars | μ + η_cal, upper edge of the ±η band, N·m |
//! | `joints/J/residual/lower` | Scalars | μ − η_cal, lower edge of the ±η band, N·m |
//! | `joints/J/sigma` | Scalars | latent posterior standard deviation σ, N·m |
//! | `nominal/joints/J/position/q`, `nominal/joints/J/tracking_error`, `nominal/joints/J/torque/applied` | Scalars | the same of the nominal run (`VizRun::Nominal`), named "… (nominal)" |
//! | `tick/latency_us` | Scalars | wall time of the control tick, µs |
//! | `dynamics/events` | TextLog | the learned run's events: changes of the dynamics, models going live (first, refit, swap), the law switching between nominal and learned |
//! | `model/experts` | Scalars | experts (or components) of the active model |
//! | `robot` | ViewCoordinates (static) | right-handed, Z up (the URDF world frame) |
//! | `robot/links/L` | Transform3D | `world_from_body` of the body whose link is `L` |
//! | `robot/links/L/V_k` | Boxes3D, Cylinders3D, Capsules3D, Ellipsoids3D, Asset3D (static) | visual k of URDF link `V` welded to `L`, with its static Transform3D |
//! | `robot/skeleton` | LineStrips3D | a segment from each joint origin to its parent's, world frame |
//! | `robot/links/L/payload` | Transform3D (static), Ellipsoids3D | the simulated payload ([`VizPayload`]): a sphere at its centre of mass, as large as its mass of steel, logged again when the mass steps |
//!
//! Both runs of `gp-node sim` go to one recording on the same timelines (each run starts at
//! `sim_time` 0), the learned run at the root and the nominal run under `nominal/`; the 3-D
//! robot, the model's series and the events are the learned run's. Every recording carries
//! the viewer layout of `blueprint.rs`.
//!
//! Every scalar entity also carries a static `SeriesLines` with its name, logged with its
//! first value (an entity that never gets a value, e.g. the true residual on a robot, is not
//! in the recording). The 3-D robot is
//! logged at [`POSE_RATE_HZ`] of simulated time, from the frame's q, by forward kinematics
//! on the logger thread. Visuals are the URDF's primitive shapes (box, cylinder, capsule,
//! sphere) and its meshes in the formats rerun reads (STL, OBJ, glTF, GLB; `Asset3D`), found
//! through `package://` (the ament prefixes' `share/`, `$ROS_PACKAGE_PATH`), `file://` or a
//! path relative to the URDF file; other meshes (Collada `.dae`, not found) are skipped and
//! listed by [`Viz::visuals`] (the skeleton still shows their links).
//!
//! Size: about 2 MB per simulated second of the learned run at 1 kHz, 0.6 MB of the nominal
//! one (the default 30 s `gp-node sim` writes about 80 MB), mostly rerun's 16-byte row id
//! per scalar row.
//!
//! # Example
//! ```no_run
//! # #[cfg(feature = "rerun")] {
//! use gpn_control::control::TickOutput;
//! use gpn_dynamics::Model;
//! use gpn_viz::{Viz, VizRun, VizSource, VizTarget, VizTick, VizUrdf};
//!
//! let path = std::path::Path::new("urdf/panda.urdf");
//! let urdf = std::fs::read_to_string(path)?;
//! let robot = Model::from_urdf_str(&urdf, "panda.urdf")?;
//! let target = VizTarget::File("run.rrd".into());
//! let urdf = VizUrdf::file(&urdf, path);
//! let mut viz = Viz::start(&target, &robot, Some(&urdf), VizSource::Simulation(None), "example")?;
//! let (q, out, truth) = (vec![0.0; 7], TickOutput::new(7), vec![0.0; 7]);
//! viz.log_tick(&VizTick {
//!     run: VizRun::Learned,
//!     tick: 0,
//!     t_secs: 0.0,
//!     q: &q,
//!     q_d: &q,
//!     out: &out,
//!     true_residual: &truth,
//!     measured_residual: None,
//!     exec_micros: 12.0,
//!     experts: None,
//!     coverage: None,
//!     change: None,
//!     adopted_model: false,
//!     law: gpn_control::control_loop::Mode::Nominal,
//! });
//! let summary = viz.finish()?;
//! assert_eq!(summary.dropped, 0);
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

mod error;

#[cfg(feature = "rerun")]
mod blueprint;
#[cfg(feature = "rerun")]
mod logger;
#[cfg(feature = "rerun")]
mod mesh;
#[cfg(feature = "rerun")]
mod pool;
#[cfg(feature = "rerun")]
mod robot3d;
#[cfg(feature = "rerun")]
mod stream;

#[cfg(not(feature = "rerun"))]
mod disabled;

mod listener;
mod setting;

use std::fmt;
use std::path::{Path, PathBuf};

use gpn_control::control::TickOutput;

pub use error::{Result, VizError};
pub use listener::VizListener;

#[cfg(not(feature = "rerun"))]
pub use disabled::Viz;
#[cfg(feature = "rerun")]
pub use stream::Viz;

/// Whether this build can log to rerun (the `rerun` feature).
pub const ENABLED: bool = cfg!(feature = "rerun");

/// The rerun version this build logs with; open its files with the same version of the
/// viewer (`pip install rerun-sdk==RERUN_VERSION`, then `rerun FILE.rrd`).
pub const RERUN_VERSION: &str = "0.36.3";

/// Frames in the pool between the tick and the logger thread (2 s of ticks at 1 kHz).
pub const FRAME_POOL: usize = 2048;

/// Ticks per column batch of the scalar entities.
pub const BATCH_TICKS: usize = 250;

/// Rate of the 3-D robot pose, Hz of simulated time.
pub const POSE_RATE_HZ: f64 = 50.0;

/// The `rerun` address `--connect` uses by default.
pub const DEFAULT_CONNECT_ADDR: &str = "127.0.0.1:9876";

/// Where the recording goes.
#[derive(Debug, Clone, PartialEq)]
pub enum VizTarget {
    /// Write an `.rrd` file (open it with `rerun FILE.rrd`).
    File(PathBuf),
    /// Spawn a rerun viewer (the `rerun` executable on `PATH`) and stream to it.
    Spawn,
    /// Stream to a running viewer: `HOST:PORT` or a full `rerun+http://HOST:PORT/proxy` URL.
    Connect(String),
}

impl VizTarget {
    /// The gRPC URL of a [`VizTarget::Connect`] address (`HOST:PORT` becomes
    /// `rerun+http://HOST:PORT/proxy`; a URL is kept as given).
    pub fn connect_url(addr: &str) -> String {
        if addr.contains("://") {
            addr.to_owned()
        } else {
            format!("rerun+http://{addr}/proxy")
        }
    }
}

impl fmt::Display for VizTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VizTarget::File(path) => write!(f, "write {}", path.display()),
            VizTarget::Spawn => f.write_str("spawn a rerun viewer"),
            VizTarget::Connect(addr) => write!(f, "connect to {}", Self::connect_url(addr)),
        }
    }
}

/// What one tick hands to the logger (per-joint slices in the model's joint order).
#[derive(Debug, Clone, Copy)]
pub struct VizTick<'a> {
    /// Which run of `gp-node sim` the tick belongs to.
    pub run: VizRun,
    /// Tick index (the `tick` timeline).
    pub tick: u64,
    /// Simulated time, s (the `sim_time` timeline).
    pub t_secs: f64,
    /// Joint positions, rad (true in simulation, measured on a robot).
    pub q: &'a [f64],
    /// Reference positions, rad.
    pub q_d: &'a [f64],
    /// The tick's output: u, τ_RBD, μ, σ, η_cal.
    pub out: &'a TickOutput,
    /// True residual at the query point, N·m (NaN where unknown: not logged).
    pub true_residual: &'a [f64],
    /// The residual the learner measured at this tick (a learning sample's target), N·m.
    pub measured_residual: Option<&'a [f64]>,
    /// Wall time of the tick, µs.
    pub exec_micros: f64,
    /// Experts of the active model, if one is active.
    pub experts: Option<u64>,
    /// Coverage of ±η_cal over the learner's recent window, once known.
    pub coverage: Option<f64>,
    /// A change of the dynamics noticed at this tick.
    pub change: Option<gpn_control::learn::ChangeNotice>,
    /// A model went live at this tick (the first one, a refit or a hot swap).
    pub adopted_model: bool,
    /// Who commanded this tick's output.
    pub law: gpn_control::control_loop::Mode,
}

/// The payload the simulator carries, as the 3-D view draws it: a sphere at its centre of
/// mass, as large as that mass of steel, on the body its link belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct VizPayload {
    /// URDF link it is attached to.
    pub link: String,
    /// Centre of mass in the link's frame, m.
    pub com_m: [f64; 3],
    /// Mass, kg (0: none).
    pub mass_kg: f64,
    /// A step of the mass: (time, s; mass after it, kg).
    pub step: Option<(f64, f64)>,
}

impl VizPayload {
    /// The mass at simulated time `t_secs`, kg.
    pub fn mass_at(&self, t_secs: f64) -> f64 {
        match self.step {
            Some((at, mass)) if t_secs >= at => mass,
            _ => self.mass_kg,
        }
    }
}

/// The URDF the robot was built from, for its visuals in the 3-D view.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VizUrdf<'a> {
    /// The XML.
    pub xml: &'a str,
    /// The folder of the file it was read from: relative mesh paths start there (None:
    /// text from a topic or built in).
    pub dir: Option<&'a Path>,
}

impl<'a> VizUrdf<'a> {
    /// URDF text with no file (from a topic, or built in).
    pub fn text(xml: &'a str) -> Self {
        Self { xml, dir: None }
    }

    /// URDF text read from the file `path`.
    pub fn file(xml: &'a str, path: &'a Path) -> Self {
        Self {
            xml,
            dir: path.parent(),
        }
    }
}

/// How the robot's visuals were drawn, from [`Viz::visuals`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VizVisuals {
    /// Mesh visuals drawn (STL, OBJ, glTF, GLB files found).
    pub meshes_drawn: usize,
    /// Mesh visuals not drawn, each with the reason (not found, a format rerun does not
    /// read); their links still show in the skeleton.
    pub meshes_skipped: Vec<String>,
}

impl fmt::Display for VizVisuals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} mesh visuals drawn", self.meshes_drawn)?;
        if let Some(first) = self.meshes_skipped.first() {
            write!(
                f,
                ", {} skipped (the skeleton shows their links), e.g. {first}",
                self.meshes_skipped.len()
            )?;
        }
        Ok(())
    }
}

/// Where a recording's ticks come from: it names the time axis, and a simulation may carry
/// a payload for the 3-D view.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum VizSource<'a> {
    /// `gp-node sim`: time is simulated time (`sim_time`); the payload the simulator
    /// carries, if any.
    Simulation(Option<&'a VizPayload>),
    /// `gp-node run` on a robot: time is the node's timeline (`node_time`, the joint-state
    /// stamps, s).
    Node,
}

impl<'a> VizSource<'a> {
    /// Name of the time axis (a rerun timeline of durations, s).
    pub fn timeline(self) -> &'static str {
        match self {
            VizSource::Simulation(_) => "sim_time",
            VizSource::Node => "node_time",
        }
    }

    /// The simulated payload, if any.
    pub fn payload(self) -> Option<&'a VizPayload> {
        match self {
            VizSource::Simulation(payload) => payload,
            VizSource::Node => None,
        }
    }
}

/// The run a tick belongs to: both runs of `gp-node sim` go to one recording, on the same
/// timelines, so the viewer can overlay them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VizRun {
    /// The nominal law (no model): logged under `nominal/` — q, the tracking error and the
    /// applied torque per joint.
    Nominal,
    /// The learned law: everything, from the root.
    Learned,
}

/// What the logger did, from [`Viz::finish`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VizSummary {
    /// Ticks handed to the logger thread.
    pub logged: u64,
    /// Ticks dropped because the logger lagged (or a slice had the wrong length).
    pub dropped: u64,
    /// Robot poses logged.
    pub poses: u64,
}
