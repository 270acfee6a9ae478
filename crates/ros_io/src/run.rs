//! `gp-node run`: the node on the ROS 2 graph. Wires rcl (through r2r) to the one control
//! loop ([`ControlLoop`] over the [`RosPlant`], on the [`WallClock`]) with four threads and
//! bounded channels of preallocated frames:
//!
//! ```text
//!  spin thread (rcl wait, take)   control thread                  publish thread
//!  joint_states → StateFrame ─►  RosPlant::read ─► ControlLoop    command, ~/residual,
//!  reference → Trajectory   ─►   TopicReference (switch at a tick) /diagnostics, latency
//!  command (learn mode)          RosPlant::write ─► Outgoing ─────► (in the loop's order)
//!        ▲ free StateFrames ◄──  PublishQueue (listener) ─► Outgoing
//!  services, parameter sets ─►   ChannelOperations ◄─► operations thread (answers them)
//!  parameter reads (answered)
//! ```
//!
//! The spin thread owns the rcl node: it waits on rcl, then runs the receiving code on what
//! arrived (one local executor, no other thread polls it). The publish and operations
//! threads publish and answer through rcl handles, which rcl allows from any thread.
//!
//! The control thread never allocates, locks or does I/O after start-up; a state that finds
//! no free frame (a burst the loop cannot absorb) is dropped and counted by the spin
//! thread; a command or output that finds no free frame is not published. In a burst every
//! queued state is ticked (the learner sees all data) but only the newest one's command and
//! estimate are published. Stops on SIGINT/SIGTERM or after `--duration`, then prints a
//! summary.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gpn_app::realtime::{RealtimeParams, RealtimeSetup};
use gpn_app::ros_params::Mode;
use gpn_app::{
    NodeParams, RosParams, check_model_configs, hosted_model_factory, load_robot, plugin_search,
};
use gpn_control::control::Tick;
use gpn_control::control_loop::{
    Clock as _, CommandDecision, ControlCommand, ControlLoop, ControlReply, LoopCounters,
    MeasuredReference, ReferenceSource, WallClock, Watchdog,
};
use gpn_control::learn::{Learner, ProbeOffer};
use gpn_dynamics::Model;
use gpn_msgs::diagnostic_msgs::DiagnosticArray;
use gpn_msgs::gp_learning_node_msgs::{ChangeEvent, ResidualEstimate};
use gpn_msgs::sensor_msgs::JointState;
use gpn_msgs::std_msgs::{Empty, Float64MultiArray};
use gpn_msgs::trajectory_msgs::JointTrajectory;
use gpn_plugin_host::SearchPath;
use gpn_viz::{Viz, VizListener, VizRun, VizTarget};

use super::follow_joint_trajectory::{ActionServer, GoalRequests, GoalRules};
use super::ingest::{IngestCounters, IngestSnapshot};
use super::joint_state::JointStateReader;
use super::lifecycle_services::{LifecycleServices, TransitionEvents};
use super::node_log::NodeLog;
use super::op_refusals::OpRefusals;
use super::ops::{Ops, SharedStatus, node_model_host};
use super::parameters::{ParamEvents, ParamServices, ParamSnapshot, apply_overrides};
use super::plant::{self, ChannelOperations, PublishEnd, PublishQueue, RosPlant};
use super::publish::{ProbeCounts, Published, Publisher_, offer_probes};
use super::receive::Receiver_;
use super::rerun_log::{self, RerunReport};
use super::robot_description;
use super::services::{OpsInput, Services, ops_thread, send_to_ops};
use super::trajectory::{ReferenceInput, TopicReference, Trajectory};
use super::transport::{NodeClock, Publisher, RosError, Subscription, TopicQos, Transport};
use gpn_app::record::{NodeRecording, RecordReport, RecordedTopics, Recorder, wall_clock_ns};
use gpn_control::latency::LatencyHistogram;

/// Frames in each pool: enough for a burst of this many states queued at the control thread.
const POOL_FRAMES: usize = 16;

/// How to run.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Stop after this much wall time, s (None: until SIGINT/SIGTERM).
    pub duration_s: Option<f64>,
}

/// What a run did (printed at the end; `--json` keys).
#[derive(Debug, Clone, serde::Serialize)]
pub struct RunSummary {
    /// Node's fully qualified name (after `--ros-args` remapping).
    pub node: String,
    /// DDS domain.
    pub domain_id: u16,
    /// Where the robot came from: the URDF file, or `topic robot_description`.
    pub robot: String,
    /// The node's clock was `/clock` (`use_sim_time`).
    pub use_sim_time: bool,
    /// `control` or `learn`.
    pub mode: Mode,
    /// Plugin configured.
    pub plugin: String,
    /// Whether the learned residual was used in the law.
    pub use_model: bool,
    /// Wall time, s.
    pub wall_s: f64,
    /// Joint states received / refused / dropped in bursts.
    pub joint_states_received: u64,
    /// Refused for any reason.
    pub joint_states_refused: u64,
    /// Dropped because the control thread was busy.
    pub joint_states_dropped_busy: u64,
    /// Messages refused, per input and reason (the keys of `/diagnostics`).
    pub refused: Refusals,
    /// Reference trajectories accepted.
    pub references_accepted: u64,
    /// Ticks run.
    pub ticks: u64,
    /// Ticks on the learned law.
    pub learned_ticks: u64,
    /// Joint states refused for an out-of-order stamp.
    pub out_of_order: u64,
    /// Joint states refused for a stamp far beyond the predicted one.
    pub implausible_stamps: u64,
    /// Times the stamp clock re-synchronised on a jumped sender clock.
    pub stamp_resyncs: u64,
    /// Repeated stamps answered with the last command.
    pub repeated: u64,
    /// Commands published.
    pub commands_published: u64,
    /// Watchdog trips (safe outputs published).
    pub watchdog_trips: u64,
    /// Samples learned.
    pub samples_learned: u64,
    /// Models adopted.
    pub models_adopted: u64,
    /// Probing trajectories offered on `~/probe_offer` (`learn.probe.enabled`).
    pub probes_offered: u64,
    /// Changes after which no safe probe was found.
    pub probes_refused: u64,
    /// Joint state received → command published, µs.
    pub latency_us: LatencySummary,
    /// Tick execution time, µs.
    pub tick_us: LatencySummary,
    /// Who commanded: the command decision's summary.
    pub law: LawCounts,
    /// rerun logging (`ros.rerun`), when on.
    pub rerun: Option<RerunReport>,
    /// The recording (`ros.record`), when on.
    pub record: Option<RecordReport>,
    /// The control thread's scheduling and memory locking (`realtime.*`).
    pub realtime: RealtimeSetup,
}

/// The command decision over a run (`gp-node run --json`: `law`).
#[derive(Debug, Clone, serde::Serialize)]
pub struct LawCounts {
    /// Whether the node was commanding at the end (`ros.active`).
    pub active: bool,
    /// States answered per mode.
    pub learned_ticks: u64,
    /// On the nominal law.
    pub nominal_ticks: u64,
    /// By the safe output (implausible or unusable states).
    pub safe_ticks: u64,
    /// While inactive.
    pub inactive_ticks: u64,
    /// Activations.
    pub activations: u64,
    /// Fallbacks of the learned law, per reason.
    pub fallbacks: std::collections::BTreeMap<&'static str, u64>,
    /// Re-adoptions after probation.
    pub readoptions: u64,
    /// Sampled references the loop's validator refused.
    pub references_refused_in_loop: u64,
    /// Commands the rate limit changed.
    pub rate_limited: u64,
    /// Largest change between two commands, N·m.
    pub max_command_step_nm: f64,
}

impl LawCounts {
    fn of(counters: &LoopCounters) -> Self {
        let d = counters.decision;
        Self {
            active: counters.active,
            learned_ticks: d.learned_ticks,
            nominal_ticks: d.nominal_ticks,
            safe_ticks: d.safe_ticks,
            inactive_ticks: d.inactive_ticks,
            activations: d.activations,
            fallbacks: d.fallbacks_by_reason().collect(),
            readoptions: d.readoptions,
            references_refused_in_loop: d.references_refused.iter().sum(),
            rate_limited: d.rate_limited,
            max_command_step_nm: d.max_command_step_nm,
        }
    }
}

/// Refused messages per input, each per reason.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Refusals {
    /// `joint_states`.
    pub joint_states: std::collections::BTreeMap<&'static str, u64>,
    /// `~/reference`.
    pub reference: std::collections::BTreeMap<&'static str, u64>,
    /// The other controller's command (learn mode).
    pub command: std::collections::BTreeMap<&'static str, u64>,
    /// Model swaps, loads and saves through the services ("swap refused: not_found"…;
    /// only reasons that occurred).
    pub operations: std::collections::BTreeMap<String, u64>,
}

impl Refusals {
    fn of(ingest: &IngestSnapshot, operations: &OpRefusals) -> Self {
        Self {
            joint_states: ingest.joint_state_refusals().into_iter().collect(),
            reference: ingest.reference_refusals().into_iter().collect(),
            command: ingest.command_refusals().into_iter().collect(),
            operations: operations.snapshot().into_iter().collect(),
        }
    }
}

/// Quantiles of a latency histogram, µs.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct LatencySummary {
    /// Values.
    pub count: u64,
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest.
    pub max: f64,
}

impl LatencySummary {
    fn of(h: &LatencyHistogram) -> Self {
        Self {
            count: h.count(),
            p50: h.quantile(0.5),
            p99: h.quantile(0.99),
            max: h.max(),
        }
    }
}

/// Runs the node with `params` until stopped: joins the ROS 2 graph, applies the
/// `--ros-args` parameter overrides, loads the robot they name, and runs the loop.
pub fn run(params: &NodeParams, options: &RunOptions) -> Result<RunSummary, RosError> {
    let mut params = params.clone();
    let domain_id = checked_domain_id(&params)?;
    middleware_environment(&params.ros, domain_id);
    let mut transport = Transport::new(&params.ros)?;
    let log = NodeLog::open(&mut transport)?;
    for (name, why) in apply_overrides(transport.node_mut(), &mut params)? {
        log.warn(&format!("ignored the --ros-args parameter {name}: {why}"));
    }
    let (node_name, namespace) = transport.names();
    (params.ros.node_name, params.ros.namespace) = (node_name, namespace);
    params.check_ranges().map_err(RosError::Param)?;
    // `model.file`: its plugin and configuration are the run's.
    gpn_app::read_start_model(&mut params).map_err(RosError::Param)?;
    check_model_configs(&params).map_err(RosError::Param)?;
    let rerun_target = rerun_log::target(&params.ros.rerun)?;
    if params.use_sim_time {
        transport.use_sim_time()?;
    }
    let stop = stop_on_signal();
    let start = Instant::now();
    let deadline = run_deadline(options, start)?;
    let (robot, urdf, robot_source) = if params.robot.urdf.as_os_str().is_empty() {
        let (robot, urdf) =
            robot_description::wait_for_robot(&mut transport, &params, &log, &stop, deadline)?
                .ok_or_else(|| {
                    RosError::Param(format!(
                        "stopped before a robot description arrived on {} (std_msgs/String, \
                     transient local); publish one (robot_state_publisher) or set robot.urdf",
                        robot_description::TOPIC
                    ))
                })?;
        (
            robot,
            Some(urdf),
            format!("topic {}", robot_description::TOPIC),
        )
    } else {
        let robot = load_robot(&params).map_err(|e| RosError::Param(e.to_string()))?;
        // Only the 3-D view and the recording need the XML; unreadable now, the view shows
        // the skeleton alone and the recording has no robot description.
        let urdf = (rerun_target.is_some() || !params.ros.record.is_empty())
            .then(|| std::fs::read_to_string(&params.robot.urdf).ok())
            .flatten();
        (robot, urdf, params.robot.urdf.display().to_string())
    };
    let derived = gpn_app::derive_node_defaults(&robot, &mut params)
        .map_err(|e| RosError::Param(format!("defaults from the robot: {e}")))?;
    if !derived.keys.is_empty() {
        log.info(&format!(
            "derived from the robot: {} (K_p {:?} s⁻², K_d {:?} s⁻¹, ε {})",
            derived.keys.join(", "),
            params.control.kp_per_s2,
            params.control.kd_per_s,
            params.control.epsilon
        ));
    }
    let nv = robot.nv();
    log.info(&format!(
        "node {} on {} joints of {}, {} mode, model {} ({}); Ctrl-C stops",
        transport.fully_qualified_name(),
        nv,
        robot.name(),
        match params.ros.mode {
            Mode::Control => "control",
            Mode::Learn => "learn",
        },
        params.model.plugin,
        if params.control.use_model {
            "learned law"
        } else {
            "nominal law only"
        }
    ));

    let mut parts = LoopParts::build(&robot, &params)?;
    if let Some(start) = &parts.started_from {
        log.info(&format!("starting from the model file: {start}"));
    }
    let endpoints = Endpoints::open(&mut transport, &params.ros, parts.probe_offers.take())?;

    let node_fqn = transport.fully_qualified_name();
    let rerun = match &rerun_target {
        Some(target) => {
            // A URDF file's folder is where its relative mesh paths start.
            let file = (!params.robot.urdf.as_os_str().is_empty()).then_some(&*params.robot.urdf);
            let urdf = urdf.as_deref().map(|xml| (xml, file));
            Some(rerun_log::start(target, &robot, urdf, &node_fqn, &log)?)
        }
        None => None,
    };
    let recording = start_recording(&params, &node_fqn, urdf.as_deref(), &log)?;
    let running = start_threads(
        &robot, &params, parts, endpoints, transport, &log, &stop, rerun, recording,
    )?;
    wait_for_stop(deadline, &stop, &running.control);
    let ended = running.join(&log)?;
    Ok(ended.summary(node_fqn, domain_id, robot_source, &params, start))
}

/// `ros.record`: the recording folder created and its thread started (None: off).
fn start_recording(
    params: &NodeParams,
    node_fqn: &str,
    urdf: Option<&str>,
    log: &NodeLog,
) -> Result<Option<(std::path::PathBuf, Recorder, NodeRecording)>, RosError> {
    if params.ros.record.is_empty() {
        return Ok(None);
    }
    let path = std::path::PathBuf::from(&params.ros.record);
    let topics = RecordedTopics::resolve(
        &params.ros.topics,
        EVENTS_TOPIC,
        node_fqn,
        &params.ros.namespace,
    );
    let (recorder, recording) = NodeRecording::start(&path, &topics, urdf, wall_clock_ns())
        .map_err(|e| RosError::Param(format!("ros.record: {e}")))?;
    log.info(&format!(
        "recording to {} (rosbag2, MCAP){}",
        path.display(),
        if urdf.is_none() {
            "; the robot description is not in it (unreadable)"
        } else {
            ""
        }
    ));
    Ok(Some((path, recorder, recording)))
}

/// When `--duration` ends the run (from `start`, the robot description's wait included).
fn run_deadline(options: &RunOptions, start: Instant) -> Result<Option<Instant>, RosError> {
    options
        .duration_s
        .map(|s| Duration::try_from_secs_f64(s).map(|d| start + d))
        .transpose()
        .map_err(|e| RosError::Param(format!("duration: {e}")))
}

/// Checks the parameters and resolves the DDS domain (`ROS_DOMAIN_ID` may override it).
fn checked_domain_id(params: &NodeParams) -> Result<u16, RosError> {
    let ros = &params.ros;
    ros.check().map_err(RosError::Param)?;
    params.check_ranges().map_err(RosError::Param)?;
    ros.resolved_domain_id(std::env::var("ROS_DOMAIN_ID").ok().as_deref())
        .map_err(RosError::Param)
}

/// rcl takes the DDS domain and the discovery range from the environment only (r2r does not
/// expose rcl's init options): sets `ROS_DOMAIN_ID` and, with `ros.localhost_only`,
/// `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`, before rcl is initialised.
fn middleware_environment(ros: &RosParams, domain_id: u16) {
    let localhost_only = ros.resolved_localhost_only(|k| std::env::var(k).ok());
    // SAFETY: called before rcl is initialised and before this process starts any thread of
    // its own or of a library (the robot, the learner and the plugins are created after), so
    // no other thread reads the environment concurrently.
    unsafe {
        std::env::set_var("ROS_DOMAIN_ID", domain_id.to_string());
        if localhost_only {
            std::env::set_var("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST");
        }
    }
}

/// The control side of the node, built before it joins the graph.
struct LoopParts {
    /// Where the operations thread finds plugins (swap, load).
    search: SearchPath,
    control: ControlParts,
    /// Side query (b), `learn.probe.enabled`: the worker plans, the node only offers.
    probe_offers: Option<Receiver<ProbeOffer>>,
    /// The model file the learner starts from (`model.file`), said for the log.
    started_from: Option<String>,
}

/// What the control loop is made of.
struct ControlParts {
    tick: Tick,
    learner: Learner,
    decision: CommandDecision,
}

impl LoopParts {
    fn build(robot: &Model, params: &NodeParams) -> Result<Self, RosError> {
        let search = plugin_search(params);
        let host = node_model_host(params).map_err(RosError::Param)?;
        let factory =
            hosted_model_factory(&host, &search, &params.model.plugin, &params.model.config);
        let hyper = params.model.config.get("hyper").cloned();
        // A robot does not wait for the model: its work is charged on the wall clock.
        let tick = Tick::new(robot, &params.control, WallClock.budget())
            .map_err(|e| RosError::Param(e.to_string()))?;
        let mut learner = Learner::new(robot, params.learn.clone(), hyper, factory)
            .map_err(|e| RosError::Param(e.to_string()))?;
        let started_from =
            gpn_app::start_from_model_file(&mut learner, params, &host).map_err(RosError::Param)?;
        let probe_offers = learner.offer_probes();
        let ros = &params.ros;
        let timeout = Duration::try_from_secs_f64(ros.watchdog_timeout_s)
            .map_err(|e| RosError::Param(format!("ros.watchdog_timeout_s: {e}")))?;
        let decision = CommandDecision::new(robot, &params.control)
            .map_err(|e| RosError::Param(e.to_string()))?
            .with_watchdog(Watchdog::new(timeout, Instant::now()), ros.watchdog_action)
            .bumpless_start();
        let decision = if ros.active {
            decision
        } else {
            decision.inactive()
        };
        Ok(Self {
            search,
            control: ControlParts {
                tick,
                learner,
                decision,
            },
            probe_offers,
            started_from,
        })
    }
}

/// The node's topics and services (created in this order on the graph).
struct Endpoints {
    inputs: Inputs,
    /// Control mode: the node's own commands.
    command_out: Option<Publisher<Float64MultiArray>>,
    residual: Publisher<ResidualEstimate>,
    events: Publisher<ChangeEvent>,
    probe_offer: Option<(Receiver<ProbeOffer>, Publisher<JointTrajectory>)>,
    diagnostics: Publisher<DiagnosticArray>,
    services: Services,
    parameters: ParamServices,
    param_events: ParamEvents,
    clock: NodeClock,
    /// Control mode: `~/follow_joint_trajectory`'s goal requests.
    follow_joint_trajectory: Option<GoalRequests>,
    lifecycle: LifecycleServices,
    transition_events: TransitionEvents,
}

/// The subscriptions the receive thread reads.
struct Inputs {
    joint_states: Subscription<JointState>,
    /// `~/reference`, transient-local and volatile readers.
    reference: (Subscription<JointTrajectory>, Subscription<JointTrajectory>),
    /// Learn mode: the commands another controller sends.
    command_in: Option<Subscription<Float64MultiArray>>,
    payload_changed: Subscription<Empty>,
}

impl Endpoints {
    fn open(
        transport: &mut Transport,
        ros: &RosParams,
        probe_offers: Option<Receiver<ProbeOffer>>,
    ) -> Result<Self, RosError> {
        let topics = &ros.topics;
        let joint_states = transport.subscription(
            "joint_states topic",
            &topics.joint_states,
            TopicQos::SensorData,
        )?;
        // A reader matches a writer of at least its durability: the volatile reader matches
        // every writer (`ros2 topic pub`, rclpy/rclcpp defaults), the transient-local one
        // also receives what a latched writer sent before the node joined.
        let reference = (
            transport.subscription("reference topic", &topics.reference, TopicQos::Latched)?,
            transport.subscription("reference topic", &topics.reference, TopicQos::Reliable(1))?,
        );
        let (command_in, command_out) = match ros.mode {
            Mode::Learn => (
                Some(transport.subscription::<Float64MultiArray>(
                    "command topic",
                    &topics.command,
                    TopicQos::BestEffort(10),
                )?),
                None,
            ),
            Mode::Control => (
                None,
                Some(transport.publisher::<Float64MultiArray>(
                    "command topic",
                    &topics.command,
                    TopicQos::Reliable(10),
                )?),
            ),
        };
        let residual =
            transport.publisher("residual topic", &topics.residual, TopicQos::Reliable(10))?;
        let events = transport.publisher("events topic", EVENTS_TOPIC, TopicQos::Reliable(10))?;
        let probe_offer = match probe_offers {
            Some(offers) => Some((
                offers,
                transport.publisher::<JointTrajectory>(
                    "probe offer topic",
                    PROBE_OFFER_TOPIC,
                    TopicQos::Latched,
                )?,
            )),
            None => None,
        };
        let payload_changed = transport.subscription(
            "payload_changed topic",
            PAYLOAD_CHANGED_TOPIC,
            TopicQos::Reliable(10),
        )?;
        let diagnostics = transport.publisher(
            "diagnostics topic",
            &topics.diagnostics,
            TopicQos::Reliable(10),
        )?;
        let follow_joint_trajectory = match ros.mode {
            Mode::Control => Some(
                transport
                    .action_server::<r2r::control_msgs::action::FollowJointTrajectory::Action>(
                        &topics.follow_joint_trajectory,
                    )?,
            ),
            Mode::Learn => None,
        };
        let services = Services::open(transport)?;
        let parameters = ParamServices::open(transport)?;
        let param_events = ParamEvents::open(transport)?;
        let (lifecycle, transition_events) = LifecycleServices::open(transport)?;
        Ok(Self {
            inputs: Inputs {
                joint_states,
                reference,
                command_in,
                payload_changed,
            },
            command_out,
            residual,
            events,
            probe_offer,
            diagnostics,
            services,
            parameters,
            param_events,
            clock: transport.clock(),
            follow_joint_trajectory,
            lifecycle,
            transition_events,
        })
    }
}

/// A stop flag raised by SIGINT/SIGTERM.
fn stop_on_signal() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    // A second handler cannot be installed (tests run several nodes in one process);
    // then only --duration stops this one.
    let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    stop
}

/// The node's threads once started: what the summary needs from them.
struct Running {
    control: std::thread::JoinHandle<(LoopCounters, Option<Viz>)>,
    /// What the control thread got of `realtime.*`.
    realtime: RealtimeSetup,
    /// Where the rerun logging goes, when on.
    rerun: Option<VizTarget>,
    publish: std::thread::JoinHandle<Published>,
    /// The spin thread, stopped last (the publishers need the node).
    spin: std::thread::JoinHandle<()>,
    spin_stop: Arc<AtomicBool>,
    ingest: Arc<IngestCounters>,
    probes: Arc<ProbeCounts>,
    op_refusals: Arc<OpRefusals>,
    /// Learn mode: the unused reference channel (see [`start_threads`]).
    idle_reference: Option<IdleReference>,
    /// `ros.record`: the recording's folder and thread, finished once the others end.
    recorder: Option<(std::path::PathBuf, Recorder)>,
}

/// Both ends of the reference channel the receive thread feeds and the loop drains.
type IdleReference = (Receiver<ReferenceInput>, SyncSender<Box<Trajectory>>);

/// Starts the probe, receive, spin, operations, control and publish threads (in this
/// order), wired by the bounded channels of preallocated frames; the control thread also
/// hands every tick to the rerun logger, when on.
#[allow(clippy::too_many_arguments)]
fn start_threads(
    robot: &Model,
    params: &NodeParams,
    parts: LoopParts,
    endpoints: Endpoints,
    transport: Transport,
    log: &NodeLog,
    stop: &Arc<AtomicBool>,
    rerun: Option<(VizTarget, Viz)>,
    recording: Option<(std::path::PathBuf, Recorder, NodeRecording)>,
) -> Result<Running, RosError> {
    let (recorder, recording) = match recording {
        Some((path, recorder, recording)) => (Some((path, recorder)), Some(recording)),
        None => (None, None),
    };
    let ros = &params.ros;
    let nv = robot.nv();
    let joints = robot.joint_names().to_vec();
    let probes = spawn_prober(endpoints.probe_offer, &joints, stop, log)?;

    let ingest = Arc::new(IngestCounters::default());
    let last_rejection = Arc::new(Mutex::new(None::<String>));
    let (plant, queue, receive_end, publish_end) =
        plant::channels(nv, POOL_FRAMES, ros.mode == Mode::Control);
    let (traj_tx, traj_rx) = sync_channel::<ReferenceInput>(4);
    let (trash_tx, trash_rx) = sync_channel::<Box<Trajectory>>(4);
    let (command_tx, command_rx) = sync_channel::<ControlCommand>(8);
    let (reply_tx, reply_rx) = sync_channel::<ControlReply>(32);
    let shared = SharedStatus {
        model_label: Arc::new(Mutex::new(params.model.plugin.clone())),
        residual_every: Arc::new(AtomicU32::new(ros.residual_every)),
        refusals: Arc::new(OpRefusals::default()),
    };
    let op_refusals = shared.refusals.clone();

    let receiver = Receiver_ {
        reader: JointStateReader::new(&joints, ros.torque_source, ros.mode == Mode::Learn),
        joints: joints.clone(),
        limits: parts.control.decision.reference_limits().clone(),
        ingest: ingest.clone(),
        last_rejection: last_rejection.clone(),
        free: receive_end.free_states,
        spare: None,
        full: receive_end.states,
        trajectories: traj_tx.clone(),
        commands: command_tx.clone(),
        recording: recording.clone(),
    };
    // Control mode: the action server, which feeds the same reference as the topic.
    let action = match endpoints.follow_joint_trajectory {
        Some(goals) => {
            let limits = parts.control.decision.reference_limits().clone();
            let rules = GoalRules::new(ros, &joints, limits).map_err(RosError::Param)?;
            let (server, reports) = ActionServer::new(
                rules,
                ros.action_monitor_rate,
                traj_tx,
                endpoints.clock.clone(),
                log.clone(),
            );
            Some((server, goals, reports))
        }
        None => None,
    };
    let (action, reports) = match action {
        Some((server, goals, reports)) => (Some((server, goals)), Some(reports)),
        None => (None, None),
    };
    let ops = Ops::new(
        params.clone(),
        robot.clone(),
        parts.search,
        command_tx,
        reply_rx,
        shared.clone(),
    );
    let snapshot: ParamSnapshot = Arc::new(Mutex::new(params.clone()));
    let (ops_tx, ops_rx) = sync_channel::<OpsInput>(8);
    let ops_snapshot = snapshot.clone();
    let param_events = endpoints.param_events;
    let transition_events = endpoints.transition_events;
    let lifecycle_state = ops.lifecycle_state();
    spawn("gpn-ros-ops", move || {
        ops_thread(
            ops,
            &ops_rx,
            &ops_snapshot,
            &param_events,
            &transition_events,
        );
    })?;
    let spin_stop = Arc::new(AtomicBool::new(false));
    let spin = spawn_spin(
        transport,
        SpinWork {
            receiver,
            inputs: endpoints.inputs,
            services: endpoints.services,
            parameters: endpoints.parameters,
            snapshot,
            ops: ops_tx,
            action,
            lifecycle: (endpoints.lifecycle, lifecycle_state),
        },
        spin_stop.clone(),
        log.clone(),
    )?;

    let operations = ChannelOperations {
        commands: command_rx,
        replies: reply_tx,
    };
    let (reference, idle_reference) = topic_reference(ros.mode, nv, (traj_rx, trash_tx));
    let reference = reference.map(|r| match reports {
        Some(reports) => r.reporting_to(reports),
        None => r,
    });
    let (rerun, viz) = rerun.unzip();
    let (control, realtime) = spawn_control_loop(
        parts.control,
        reference,
        plant,
        operations,
        (queue, viz),
        (&params.realtime, stop),
    )?;
    match realtime.thread_priority {
        Some(priority) => log.info(&format!(
            "control thread at SCHED_FIFO priority {priority}{}",
            if realtime.memory_locked {
                ", memory locked"
            } else {
                ""
            }
        )),
        None if params.realtime.thread_priority == 0 => {
            log.info("control thread at normal priority (realtime.thread_priority 0)")
        }
        None => {}
    }
    for warning in &realtime.warnings {
        log.warn(warning);
    }

    let publisher = Publisher_ {
        node_name: ros.node_name.clone(),
        robot: robot.name().to_owned(),
        coverage_alarm: params.learn.change.coverage_alarm,
        events: endpoints.events,
        shared,
        joints,
        ros: ros.clone(),
        command: endpoints.command_out,
        residual: endpoints.residual,
        diagnostics: endpoints.diagnostics,
        ingest: ingest.clone(),
        last_rejection,
        clock: endpoints.clock,
        log: log.clone(),
        recording,
    };
    let publish = spawn_publisher(publisher, publish_end, trash_rx)?;
    Ok(Running {
        control,
        realtime,
        rerun,
        publish,
        spin,
        spin_stop,
        ingest,
        probes,
        op_refusals,
        idle_reference,
        recorder,
    })
}

/// What the spin thread runs besides rcl: the receiving side, the services' forwarding
/// and the parameter services.
struct SpinWork {
    receiver: Receiver_,
    inputs: Inputs,
    services: Services,
    parameters: ParamServices,
    snapshot: ParamSnapshot,
    ops: SyncSender<OpsInput>,
    /// Control mode: the FollowJointTrajectory server and its goal requests.
    action: Option<(ActionServer, GoalRequests)>,
    /// The lifecycle services and the state the operations thread keeps.
    lifecycle: (LifecycleServices, Arc<std::sync::atomic::AtomicU8>),
}

/// How long one rcl wait lasts at most: the spin thread sees `stop` this often.
const SPIN_WAIT: Duration = Duration::from_millis(20);

/// Starts the spin thread: it owns the node, waits on rcl and runs what arrived on one
/// local executor, until `stop`; then the node is dropped (it leaves the graph).
fn spawn_spin(
    transport: Transport,
    work: SpinWork,
    stop: Arc<AtomicBool>,
    log: NodeLog,
) -> Result<std::thread::JoinHandle<()>, RosError> {
    std::thread::Builder::new()
        .name("gpn-ros-spin".into())
        .spawn(move || {
            let mut node = transport.into_node();
            let SpinWork {
                receiver,
                inputs,
                services,
                parameters,
                snapshot,
                ops,
                action,
                lifecycle,
            } = work;
            let mut pool = futures::executor::LocalPool::new();
            let spawner = pool.spawner();
            let to_ops = ops.clone();
            let (action, action_task) = match action {
                Some((server, goals)) => {
                    let server = std::rc::Rc::new(server);
                    let task: std::pin::Pin<Box<dyn std::future::Future<Output = ()>>> =
                        Box::pin(server.clone().serve(goals));
                    (Some(server), task)
                }
                None => (None, Box::pin(std::future::ready(())) as _),
            };
            let to_ops_lifecycle = ops.clone();
            let tasks: [std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>; 5] = [
                Box::pin(receiver.run(
                    inputs.joint_states,
                    inputs.reference,
                    inputs.command_in,
                    inputs.payload_changed,
                )),
                Box::pin(services.forward(ops)),
                Box::pin(parameters.serve(snapshot, move |r| {
                    send_to_ops(&to_ops, OpsInput::Params(r));
                })),
                action_task,
                Box::pin(lifecycle.0.serve(lifecycle.1, to_ops_lifecycle)),
            ];
            for task in tasks {
                if let Err(e) = futures::task::LocalSpawnExt::spawn_local(&spawner, task) {
                    log.error(&format!("cannot start the spin thread's work: {e}"));
                    return;
                }
            }
            while !stop.load(Ordering::SeqCst) {
                node.spin_once(SPIN_WAIT);
                pool.run_until_stalled();
                if let Some(action) = &action {
                    action.poll();
                }
            }
        })
        .map_err(|e| RosError::Param(format!("cannot start the spin thread: {e}")))
}

/// Control mode: the loop's reference, fed by the receive thread. Learn mode leaves the
/// reference channel's ends unused but open for the whole run (a reference received then
/// is held, not dropped), as they always were.
fn topic_reference(
    mode: Mode,
    nv: usize,
    (traj_rx, trash_tx): IdleReference,
) -> (Option<TopicReference>, Option<IdleReference>) {
    match mode {
        Mode::Control => (
            Some(TopicReference::new(nv).fed_by(traj_rx, trash_tx)),
            None,
        ),
        Mode::Learn => (None, Some((traj_rx, trash_tx))),
    }
}

/// Starts the publish thread: commands, estimates and diagnostics in the loop's order.
fn spawn_publisher(
    publisher: Publisher_,
    publish_end: PublishEnd,
    trash_rx: Receiver<Box<Trajectory>>,
) -> Result<std::thread::JoinHandle<Published>, RosError> {
    std::thread::Builder::new()
        .name("gpn-ros-publish".into())
        .spawn(move || publisher.run(&publish_end, &trash_rx))
        .map_err(|e| RosError::Param(format!("cannot start the publish thread: {e}")))
}

/// Starts the probe thread when the learner offers probes; its counts go to the summary.
fn spawn_prober(
    probe_offer: Option<(Receiver<ProbeOffer>, Publisher<JointTrajectory>)>,
    joints: &[String],
    stop: &Arc<AtomicBool>,
    log: &NodeLog,
) -> Result<Arc<ProbeCounts>, RosError> {
    let probes = Arc::new(ProbeCounts::default());
    if let Some((offers, publisher)) = probe_offer {
        let (stop, probes, joints, log) =
            (stop.clone(), probes.clone(), joints.to_vec(), log.clone());
        spawn("gpn-ros-probe", move || {
            offer_probes(&offers, &publisher, &joints, &stop, &probes, &log);
        })?;
    }
    Ok(probes)
}

/// Starts the control thread: in control mode (`reference` given) the loop tracks the
/// reference topic and commands; in learn mode it follows the measured state and only learns.
/// Its outputs go to the publish queue and, when on, to the rerun logger.
fn spawn_control_loop(
    parts: ControlParts,
    reference: Option<TopicReference>,
    plant: RosPlant,
    operations: ChannelOperations,
    outputs: (PublishQueue, Option<Viz>),
    (realtime, stop): (&RealtimeParams, &Arc<AtomicBool>),
) -> Result<(ControlThread, RealtimeSetup), RosError> {
    let ControlParts {
        tick,
        learner,
        decision,
    } = parts;
    match reference {
        Some(reference) => {
            let control_loop = ControlLoop::new(tick, learner, reference, decision, true);
            spawn_control(control_loop, plant, operations, outputs, (realtime, stop))
        }
        None => {
            let control_loop = ControlLoop::new(tick, learner, MeasuredReference, decision, false);
            spawn_control(control_loop, plant, operations, outputs, (realtime, stop))
        }
    }
    .map_err(|e| RosError::Param(format!("cannot start the control thread: {e}")))
}

/// Waits until stopped (signal, the `--duration` deadline, or the control thread ending),
/// then raises `stop` for every thread.
fn wait_for_stop<T>(
    deadline: Option<Instant>,
    stop: &AtomicBool,
    control: &std::thread::JoinHandle<T>,
) {
    while !stop.load(Ordering::SeqCst) && !control.is_finished() {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    stop.store(true, Ordering::SeqCst);
}

/// What the threads reported once joined.
struct Ended {
    counters: LoopCounters,
    realtime: RealtimeSetup,
    rerun: Option<RerunReport>,
    published: Published,
    ingest: IngestSnapshot,
    probes: Arc<ProbeCounts>,
    op_refusals: Arc<OpRefusals>,
    record: Option<RecordReport>,
    /// Kept until the run ends (see [`Running::idle_reference`]).
    _idle_reference: Option<IdleReference>,
}

impl Running {
    /// Joins the control thread (and ends the rerun logging), the publish thread, then the
    /// spin thread.
    fn join(self, log: &NodeLog) -> Result<Ended, RosError> {
        let mut realtime = self.realtime;
        let (counters, viz) = self
            .control
            .join()
            .map_err(|_| RosError::Param("the control thread panicked".into()))?;
        let rerun = self
            .rerun
            .zip(viz)
            .map(|(target, viz)| rerun_log::finish(&target, viz, log));
        let published = self
            .publish
            .join()
            .map_err(|_| RosError::Param("the publish thread panicked".into()))?;
        self.spin_stop.store(true, Ordering::SeqCst);
        self.spin
            .join()
            .map_err(|_| RosError::Param("the spin thread panicked".into()))?;
        realtime.heap = gpn_app::realtime::heap_usage();
        // Every thread that records has ended: the recording is complete.
        let record = self
            .recorder
            .map(|(path, recorder)| RecordReport::of(&path, recorder.finish()));
        Ok(Ended {
            counters,
            realtime,
            rerun,
            published,
            ingest: self.ingest.snapshot(),
            probes: self.probes,
            op_refusals: self.op_refusals,
            record,
            _idle_reference: self.idle_reference,
        })
    }
}

impl Ended {
    fn summary(
        &self,
        node: String,
        domain_id: u16,
        robot: String,
        params: &NodeParams,
        start: Instant,
    ) -> RunSummary {
        let (ingest, counters) = (&self.ingest, &self.counters);
        RunSummary {
            node,
            domain_id,
            robot,
            use_sim_time: params.use_sim_time,
            mode: params.ros.mode,
            plugin: params.model.plugin.clone(),
            use_model: params.control.use_model,
            wall_s: start.elapsed().as_secs_f64(),
            joint_states_received: ingest.joint_states,
            joint_states_refused: ingest.rejected(),
            joint_states_dropped_busy: ingest.dropped_busy,
            refused: Refusals::of(ingest, &self.op_refusals),
            references_accepted: ingest.trajectories_accepted,
            ticks: counters.ticks,
            learned_ticks: counters.learned_ticks,
            out_of_order: ingest.rejected_out_of_order,
            implausible_stamps: ingest.rejected_implausible_stamp,
            stamp_resyncs: ingest.stamp_resyncs,
            repeated: counters.repeated,
            commands_published: self.published.commands,
            watchdog_trips: counters.watchdog_trips,
            samples_learned: counters.learn.learned,
            models_adopted: counters.adoptions,
            probes_offered: self.probes.offered.load(Ordering::Relaxed),
            probes_refused: self.probes.refused.load(Ordering::Relaxed),
            latency_us: LatencySummary::of(&self.published.latency),
            tick_us: LatencySummary::of(&self.published.tick_time),
            law: LawCounts::of(counters),
            rerun: self.rerun.clone(),
            record: self.record.clone(),
            realtime: self.realtime.clone(),
        }
    }
}

/// The control thread: it returns the loop's counters and the rerun logger.
type ControlThread = std::thread::JoinHandle<(LoopCounters, Option<Viz>)>;

/// Starts the control thread: real-time work as `realtime` asks, the loop over the ROS
/// plant on the wall clock, its outputs to the publish thread and, when on, to the rerun
/// logger (returned with the counters, to be finished off the control thread). Returns
/// with what the thread got of `realtime`, once it knows.
fn spawn_control<R: ReferenceSource + Send + 'static>(
    mut control_loop: ControlLoop<R>,
    mut plant: RosPlant,
    mut operations: ChannelOperations,
    (mut queue, mut viz): (PublishQueue, Option<Viz>),
    (realtime, stop): (&RealtimeParams, &Arc<AtomicBool>),
) -> std::io::Result<(ControlThread, RealtimeSetup)> {
    let nv = control_loop.nv();
    let (setup_tx, setup_rx) = sync_channel::<RealtimeSetup>(1);
    let realtime = realtime.clone();
    let stop = stop.clone();
    let handle = std::thread::Builder::new()
        .name("gpn-control".into())
        .spawn(move || {
            let setup = gpn_app::realtime::enter(&realtime);
            let _ = setup_tx.send(setup.clone());
            let mut rerun = viz
                .as_mut()
                .map(|viz| VizListener::new(viz, VizRun::Learned, nv));
            let Ok(()) = match rerun.as_mut() {
                Some(rerun) => control_loop.run(
                    &mut plant,
                    &mut WallClock,
                    &mut operations,
                    &mut [&mut queue, rerun],
                    &stop,
                ),
                None => control_loop.run(
                    &mut plant,
                    &mut WallClock,
                    &mut operations,
                    &mut [&mut queue],
                    &stop,
                ),
            };
            gpn_app::realtime::leave(&setup);
            drop(rerun);
            (control_loop.counters(), viz)
        })?;
    // The thread sends first thing; a thread that died before is reported when joined.
    let setup = setup_rx
        .recv_timeout(Duration::from_secs(5))
        .unwrap_or_default();
    Ok((handle, setup))
}

fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> Result<(), RosError> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .map(|_| ())
        .map_err(|e| RosError::Param(format!("cannot start thread {name}: {e}")))
}

/// Change events out, and the "payload changed" signal in.
const EVENTS_TOPIC: &str = "~/events";
const PROBE_OFFER_TOPIC: &str = "~/probe_offer";
const PAYLOAD_CHANGED_TOPIC: &str = "~/payload_changed";
