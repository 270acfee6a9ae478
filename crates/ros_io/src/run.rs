//! `gp-node run`: the node on the ROS 2 graph. Wires the transport to the one control loop
//! ([`ControlLoop`] over the [`RosPlant`], on the [`WallClock`]) with three threads and
//! bounded channels of preallocated frames:
//!
//! ```text
//!  receive thread (DDS)           control thread                  publish thread
//!  joint_states → StateFrame ─►  RosPlant::read ─► ControlLoop    command, ~/residual,
//!  reference → Trajectory   ─►   TopicReference (switch at a tick) /diagnostics, latency
//!  command (learn mode)          RosPlant::write ─► Outgoing ─────► (in the loop's order)
//!        ▲ free StateFrames ◄──  PublishQueue (listener) ─► Outgoing
//!                                ChannelOperations ◄─► operations thread (services, params)
//! ```
//!
//! The control thread never allocates, locks or does I/O after start-up; a state that finds
//! no free frame (a burst the loop cannot absorb) is dropped and counted by the receive
//! thread; a command or output that finds no free frame is not published. In a burst every
//! queued state is ticked (the learner sees all data) but only the newest one's command and
//! estimate are published. Stops on SIGINT/SIGTERM or after `--duration`, then prints a
//! summary.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc::sync_channel;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gpn_app::param_schema::{self};
use gpn_app::ros_params::Mode;
use gpn_app::{NodeParams, check_model_configs, model_factory, plugin_search};
use gpn_control::control::Tick;
use gpn_control::control_loop::{
    Clock as _, CommandDecision, ControlCommand, ControlLoop, ControlReply, LoopCounters,
    MeasuredReference, ReferenceSource, WallClock, Watchdog,
};
use gpn_control::learn::Learner;
use gpn_dynamics::Model;
use gpn_msgs::diagnostic_msgs::DiagnosticArray;
use gpn_msgs::gp_learning_node_msgs::{
    AnnounceChange, ChangeEvent, LoadModel, ResetLearning, ResidualEstimate, SaveModel, SwapModel,
};
use gpn_msgs::sensor_msgs::JointState;
use gpn_msgs::std_msgs::{Empty, Float64MultiArray};
use gpn_msgs::trajectory_msgs::JointTrajectory;

use super::ingest::IngestCounters;
use super::joint_state::JointStateReader;
use super::latency::LatencyHistogram;
use super::ops::{Ops, SharedStatus};
use super::plant::{self, ChannelOperations, PublishQueue, RosPlant};
use super::publish::{ProbeCounts, Publisher_, offer_probes};
use super::receive::Receiver_;
use super::services::{
    ParamRequest, SERVICE_ANNOUNCE, SERVICE_LOAD, SERVICE_RESET, SERVICE_SAVE, SERVICE_SWAP,
    Services, apply_param, ops_thread, validate_param,
};
use super::trajectory::{TopicReference, Trajectory};
use super::transport::{Publisher, RosError, Subscription, TopicQos, Transport, to_ros};

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
    /// Node's fully qualified name.
    pub node: String,
    /// DDS domain.
    pub domain_id: u16,
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
    /// Joint-state samples the transport could not decode.
    pub joint_states_undecodable: u64,
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

/// Runs the node with `params` on the robot `robot` until stopped.
pub fn run(
    robot: &Model,
    params: &NodeParams,
    options: &RunOptions,
) -> Result<RunSummary, RosError> {
    let ros = params.ros.clone();
    ros.check().map_err(RosError::Param)?;
    params.check_ranges().map_err(RosError::Param)?;
    check_model_configs(params).map_err(RosError::Param)?;
    let domain_id = ros
        .resolved_domain_id(std::env::var("ROS_DOMAIN_ID").ok().as_deref())
        .map_err(RosError::Param)?;
    let nv = robot.nv();
    let joints = robot.joint_names().to_vec();

    // The loop first: a bad model or control parameter fails before joining the graph.
    let search = plugin_search(params);
    let factory = model_factory(
        &search,
        &params.model.plugin,
        &params.model.config,
        3 * nv,
        nv,
    );
    let hyper = params.model.config.get("hyper").cloned();
    // A robot does not wait for the model: its work is charged on the wall clock.
    let tick = Tick::new(robot, &params.control, WallClock.budget())
        .map_err(|e| RosError::Param(e.to_string()))?;
    let mut learner = Learner::new(robot, params.learn.clone(), hyper, factory)
        .map_err(|e| RosError::Param(e.to_string()))?;
    // Side query (b), `learn.probe.enabled`: the worker plans, the node only offers.
    let probe_offers = learner.offer_probes();
    let timeout = Duration::try_from_secs_f64(ros.watchdog_timeout_s)
        .map_err(|e| RosError::Param(format!("ros.watchdog_timeout_s: {e}")))?;
    let decision =
        CommandDecision::with_watchdog(Watchdog::new(timeout, Instant::now()), ros.watchdog_action);

    let localhost_only = ros.resolved_localhost_only(|k| std::env::var(k).ok());
    // Parameters: declared from the schema with the values in force; sets are validated
    // here and applied by the operations thread (which answers before the value is stored,
    // so a change that cannot take effect is refused).
    let started = Arc::new(AtomicBool::new(false));
    let (param_tx, param_rx) = futures::channel::mpsc::channel::<ParamRequest>(4);
    let mut node_options = ros2_client::NodeOptions::new();
    for spec in param_schema::SCHEMA {
        if let Some(value) = param_schema::value_of(params, spec) {
            node_options = node_options.declare_parameter(spec.name, to_ros(&value));
        }
    }
    let validator_started = started.clone();
    let node_options = node_options
        .parameter_validator(Box::new(move |name, value| {
            validate_param(name, value, nv, validator_started.load(Ordering::SeqCst))
        }))
        .parameter_set_action({
            let started = started.clone();
            let sender = Mutex::new(param_tx);
            Box::new(move |name, value| {
                if !started.load(Ordering::SeqCst) {
                    return Ok(());
                }
                apply_param(&sender, name, value)
            })
        });
    let mut transport = Transport::new(&ros, domain_id, localhost_only, node_options)?;
    started.store(true, Ordering::SeqCst);
    let topics = &ros.topics;
    let joint_states: Subscription<JointState> = transport.subscription(
        "joint_states topic",
        &topics.joint_states,
        TopicQos::SensorData,
    )?;
    let reference: Subscription<JointTrajectory> =
        transport.subscription("reference topic", &topics.reference, TopicQos::Latched)?;
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
    let residual: Publisher<ResidualEstimate> =
        transport.publisher("residual topic", &topics.residual, TopicQos::Reliable(10))?;
    let events_pub: Publisher<ChangeEvent> =
        transport.publisher("events topic", EVENTS_TOPIC, TopicQos::Reliable(10))?;
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
    let payload_changed: Subscription<Empty> = transport.subscription(
        "payload_changed topic",
        PAYLOAD_CHANGED_TOPIC,
        TopicQos::Reliable(10),
    )?;
    let diagnostics_pub: Publisher<DiagnosticArray> = transport.publisher(
        "diagnostics topic",
        &topics.diagnostics,
        TopicQos::Reliable(10),
    )?;
    let services = Services {
        swap: transport.server::<SwapModel>(SERVICE_SWAP, ros.service_framing)?,
        save: transport.server::<SaveModel>(SERVICE_SAVE, ros.service_framing)?,
        load: transport.server::<LoadModel>(SERVICE_LOAD, ros.service_framing)?,
        reset: transport.server::<ResetLearning>(SERVICE_RESET, ros.service_framing)?,
        announce: transport.server::<AnnounceChange>(SERVICE_ANNOUNCE, ros.service_framing)?,
    };
    let spinner = transport.spinner()?;
    let node_fqn = transport.node().fully_qualified_name();

    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        // A second handler cannot be installed (tests run several nodes in one process);
        // then only --duration stops this one.
        let _ = ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst));
    }

    let probes = Arc::new(ProbeCounts::default());
    if let Some((offers, publisher)) = probe_offer {
        let (stop, probes, joints) = (stop.clone(), probes.clone(), joints.clone());
        spawn("gpn-ros-probe", move || {
            offer_probes(&offers, &publisher, &joints, &stop, &probes);
        })?;
    }

    let ingest = Arc::new(IngestCounters::default());
    let last_rejection = Arc::new(Mutex::new(None::<String>));
    let (plant, queue, receive_end, publish_end) =
        plant::channels(nv, POOL_FRAMES, ros.mode == Mode::Control);
    let (traj_tx, traj_rx) = sync_channel::<Box<Trajectory>>(4);
    let (trash_tx, trash_rx) = sync_channel::<Box<Trajectory>>(4);
    let (command_tx, command_rx) = sync_channel::<ControlCommand>(8);
    let (reply_tx, reply_rx) = sync_channel::<ControlReply>(32);
    let shared = SharedStatus {
        model_label: Arc::new(Mutex::new(params.model.plugin.clone())),
        residual_every: Arc::new(AtomicU32::new(ros.residual_every)),
    };

    let receiver = Receiver_ {
        reader: JointStateReader::new(&joints, ros.torque_source, ros.mode == Mode::Learn),
        joints: joints.clone(),
        limits: robot.limits().to_vec(),
        ingest: ingest.clone(),
        last_rejection: last_rejection.clone(),
        free: receive_end.free_states,
        spare: None,
        full: receive_end.states,
        trajectories: traj_tx,
        commands: command_tx.clone(),
    };
    spawn("gpn-ros-receive", move || {
        receiver.run(joint_states, reference, command_in, payload_changed)
    })?;
    spawn("gpn-ros-spin", move || {
        let _ = futures::executor::block_on(spinner.spin());
    })?;
    let ops = Ops::new(
        params.clone(),
        robot.clone(),
        search,
        command_tx,
        reply_rx,
        shared.clone(),
    );
    spawn("gpn-ros-ops", move || ops_thread(ops, services, param_rx))?;

    let operations = ChannelOperations {
        commands: command_rx,
        replies: reply_tx,
    };
    let control = match ros.mode {
        Mode::Control => {
            let reference = TopicReference::new(nv).fed_by(traj_rx, trash_tx);
            let control_loop = ControlLoop::new(tick, learner, reference, decision, true);
            spawn_control(control_loop, plant, operations, queue, stop.clone())
        }
        Mode::Learn => {
            let control_loop = ControlLoop::new(tick, learner, MeasuredReference, decision, false);
            spawn_control(control_loop, plant, operations, queue, stop.clone())
        }
    }
    .map_err(|e| RosError::Param(format!("cannot start the control thread: {e}")))?;

    let publisher = Publisher_ {
        node_name: ros.node_name.clone(),
        robot: robot.name().to_owned(),
        coverage_alarm: params.learn.change.coverage_alarm,
        events: events_pub,
        shared,
        joints,
        ros: ros.clone(),
        command: command_out,
        residual,
        diagnostics: diagnostics_pub,
        ingest: ingest.clone(),
        last_rejection,
    };
    let publish = std::thread::Builder::new()
        .name("gpn-ros-publish".into())
        .spawn(move || publisher.run(&publish_end, &trash_rx))
        .map_err(|e| RosError::Param(format!("cannot start the publish thread: {e}")))?;

    let start = Instant::now();
    let deadline = options
        .duration_s
        .map(Duration::try_from_secs_f64)
        .transpose()
        .map_err(|e| RosError::Param(format!("duration: {e}")))?;
    while !stop.load(Ordering::SeqCst) && !control.is_finished() {
        if deadline.is_some_and(|d| start.elapsed() >= d) {
            stop.store(true, Ordering::SeqCst);
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    stop.store(true, Ordering::SeqCst);
    let counters = control
        .join()
        .map_err(|_| RosError::Param("the control thread panicked".into()))?;
    let published = publish
        .join()
        .map_err(|_| RosError::Param("the publish thread panicked".into()))?;
    let ingest = ingest.snapshot();
    Ok(RunSummary {
        node: node_fqn,
        domain_id,
        mode: ros.mode,
        plugin: params.model.plugin.clone(),
        use_model: params.control.use_model,
        wall_s: start.elapsed().as_secs_f64(),
        joint_states_received: ingest.joint_states,
        joint_states_refused: ingest.rejected(),
        joint_states_dropped_busy: ingest.dropped_busy,
        joint_states_undecodable: ingest.decode_errors,
        ticks: counters.ticks,
        learned_ticks: counters.learned_ticks,
        out_of_order: ingest.rejected_out_of_order,
        implausible_stamps: ingest.rejected_implausible_stamp,
        stamp_resyncs: ingest.stamp_resyncs,
        repeated: counters.repeated,
        commands_published: published.commands,
        watchdog_trips: counters.watchdog_trips,
        samples_learned: counters.learn.learned,
        models_adopted: counters.adoptions,
        probes_offered: probes.offered.load(Ordering::Relaxed),
        probes_refused: probes.refused.load(Ordering::Relaxed),
        latency_us: LatencySummary::of(&published.latency),
        tick_us: LatencySummary::of(&published.tick_time),
    })
}

/// Starts the control thread: the loop over the ROS plant on the wall clock, its outputs to
/// the publish thread.
fn spawn_control<R: ReferenceSource + Send + 'static>(
    mut control_loop: ControlLoop<R>,
    mut plant: RosPlant,
    mut operations: ChannelOperations,
    mut queue: PublishQueue,
    stop: Arc<AtomicBool>,
) -> std::io::Result<std::thread::JoinHandle<LoopCounters>> {
    std::thread::Builder::new()
        .name("gpn-control".into())
        .spawn(move || {
            let Ok(()) = control_loop.run(
                &mut plant,
                &mut WallClock,
                &mut operations,
                &mut [&mut queue],
                &stop,
            );
            control_loop.counters()
        })
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
