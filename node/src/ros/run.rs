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

use std::cell::RefCell;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use gpn_msgs::builtin_interfaces::Time;
use gpn_msgs::diagnostic_msgs::DiagnosticArray;
use gpn_msgs::gp_learning_node_msgs::{
    AnnounceChange, AnnounceChangeRequest, AnnounceChangeResponse, ChangeEvent, LoadModel,
    LoadModelRequest, LoadModelResponse, ResetLearning, ResetLearningRequest,
    ResetLearningResponse, ResidualEstimate, SaveModel, SaveModelRequest, SaveModelResponse,
    SwapModel, SwapModelRequest, SwapModelResponse,
};
use gpn_msgs::sensor_msgs::JointState;
use gpn_msgs::std_msgs::{Empty, Float64MultiArray, Header};
use gpn_msgs::trajectory_msgs::JointTrajectory;
use ros2_client::service::RmwRequestId;

use super::diagnostics::{DiagnosticsInput, diagnostics};
use super::ingest::{IngestCounters, IngestSnapshot};
use super::joint_state::{JointStateReader, StateFrame};
use super::latency::LatencyHistogram;
use super::ops::{self, Ops, SharedStatus};
use super::plant::{self, ChannelOperations, Outgoing, PublishEnd, PublishQueue, RosPlant};
use super::trajectory::{TopicReference, Trajectory};
use super::transport::{
    Publisher, RosError, Server, Subscription, TopicQos, Transport, from_ros, to_ros,
};
use crate::app::param_schema::{self, ParamValue};
use crate::app::ros_params::{Mode, RosParams};
use crate::app::{NodeParams, model_factory, plugin_search};
use crate::control::Tick;
use crate::control_loop::{
    CommandDecision, ControlCommand, ControlLoop, ControlReply, LoopCounters, LoopOutput,
    MeasuredReference, OutKind, ReferenceSource, WallClock, Watchdog,
};
use crate::learn::Learner;
use crate::robot::Model;

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
    let tick = Tick::new(
        robot,
        &params.control,
        crate::control_loop::Clock::budget(&WallClock),
    )
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

/// Probe offers published and refusals logged.
#[derive(Default)]
struct ProbeCounts {
    offered: AtomicU64,
    refused: AtomicU64,
}

/// The probe thread: publishes each plan the learning worker offers and logs every outcome
/// (a refusal is logged, not published). Ends at stop or when the learner is gone.
fn offer_probes(
    offers: &Receiver<crate::learn::ProbeOffer>,
    publisher: &Publisher<JointTrajectory>,
    joints: &[String],
    stop: &AtomicBool,
    counts: &ProbeCounts,
) {
    while !stop.load(Ordering::SeqCst) {
        let offer = match offers.recv_timeout(Duration::from_millis(100)) {
            Ok(offer) => offer,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => return,
        };
        eprintln!("gp-node: {}", super::probe_offer::describe_offer(&offer));
        match &offer.plan {
            Ok(plan) => {
                let msg = super::probe_offer::offer_message(plan, joints);
                if let Err(e) = publisher.publish(msg) {
                    eprintln!("gp-node: publishing the probe offer failed: {e:?}");
                }
                counts.offered.fetch_add(1, Ordering::Relaxed);
            }
            Err(_) => {
                counts.refused.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> Result<(), RosError> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .map(|_| ())
        .map_err(|e| RosError::Param(format!("cannot start thread {name}: {e}")))
}

/// Service names (private to the node: `~/…`).
const SERVICE_SWAP: &str = "~/swap_model";
const SERVICE_SAVE: &str = "~/save_model";
const SERVICE_LOAD: &str = "~/load_model";
const SERVICE_RESET: &str = "~/reset_learning";
const SERVICE_ANNOUNCE: &str = "~/announce_change";
/// Change events out, and the "payload changed" signal in.
const EVENTS_TOPIC: &str = "~/events";
const PROBE_OFFER_TOPIC: &str = "~/probe_offer";
const PAYLOAD_CHANGED_TOPIC: &str = "~/payload_changed";

/// The node's service servers.
struct Services {
    swap: Server<SwapModelRequest, SwapModelResponse>,
    save: Server<SaveModelRequest, SaveModelResponse>,
    load: Server<LoadModelRequest, LoadModelResponse>,
    reset: Server<ResetLearningRequest, ResetLearningResponse>,
    announce: Server<AnnounceChangeRequest, AnnounceChangeResponse>,
}

/// A parameter set, from the parameter service's callback to the operations thread.
struct ParamRequest {
    name: String,
    value: ParamValue,
    answer: SyncSender<Result<(), String>>,
}

/// The parameter validator: type and constraint from the schema; read-only ones refused
/// once the node runs.
fn validate_param(
    name: &str,
    value: &ros2_client::ParameterValue,
    nv: usize,
    started: bool,
) -> Result<(), String> {
    let Some(spec) = param_schema::find(name) else {
        return Err(format!("unknown parameter {name}"));
    };
    if started && spec.apply == param_schema::Apply::ReadOnly {
        return Err(format!(
            "{name} is read-only: it takes effect at start (parameter file or command line); restart the node"
        ));
    }
    let value = from_ros(value).ok_or_else(|| format!("{name}: unsupported parameter type"))?;
    param_schema::validate(spec, &value, nv)
}

/// The parameter set action: hands the change to the operations thread and waits for it
/// to take effect (ros2-client stores the value only if this returns Ok).
fn apply_param(
    sender: &Mutex<futures::channel::mpsc::Sender<ParamRequest>>,
    name: &str,
    value: &ros2_client::ParameterValue,
) -> Result<(), String> {
    let value = from_ros(value).ok_or_else(|| format!("{name}: unsupported parameter type"))?;
    let (answer, answered) = sync_channel(1);
    sender
        .lock()
        .map_err(|_| "the parameter channel is broken".to_owned())?
        .try_send(ParamRequest {
            name: name.to_owned(),
            value,
            answer,
        })
        .map_err(|_| "busy: another parameter change is being applied".to_owned())?;
    answered
        .recv_timeout(Duration::from_secs(90))
        .map_err(|_| format!("{name}: no answer from the node's operations thread"))?
}

enum OpsInput {
    Swap(RmwRequestId, SwapModelRequest),
    Save(RmwRequestId, SaveModelRequest),
    Load(RmwRequestId, LoadModelRequest),
    Reset(RmwRequestId, ResetLearningRequest),
    Announce(RmwRequestId, AnnounceChangeRequest),
    Param(ParamRequest),
}

/// The operations thread: services and parameter changes, one at a time.
fn ops_thread(
    mut ops: Ops,
    services: Services,
    params: futures::channel::mpsc::Receiver<ParamRequest>,
) {
    use futures::stream;
    futures::executor::block_on(async {
        let swap = services
            .swap
            .receive_request_stream()
            .filter_map(|r| async { r.ok().map(|(id, req)| OpsInput::Swap(id, req)) });
        let save = services
            .save
            .receive_request_stream()
            .filter_map(|r| async { r.ok().map(|(id, req)| OpsInput::Save(id, req)) });
        let load = services
            .load
            .receive_request_stream()
            .filter_map(|r| async { r.ok().map(|(id, req)| OpsInput::Load(id, req)) });
        let reset = services
            .reset
            .receive_request_stream()
            .filter_map(|r| async { r.ok().map(|(id, req)| OpsInput::Reset(id, req)) });
        let announce = services
            .announce
            .receive_request_stream()
            .filter_map(|r| async { r.ok().map(|(id, req)| OpsInput::Announce(id, req)) });
        let params = params.map(OpsInput::Param);
        let inputs = stream::select(
            stream::select(stream::select(swap, save), stream::select(load, reset)),
            stream::select(announce, params),
        );
        let mut inputs = pin!(inputs);
        while let Some(input) = inputs.next().await {
            match input {
                OpsInput::Swap(id, req) => {
                    let r = ops::guarded(&mut ops, "swap_model", |ops| {
                        ops.swap_model(&req.plugin, &req.config_json)
                    });
                    let (success, message) = outcome(r);
                    let _ = services
                        .swap
                        .send_response(id, SwapModelResponse { success, message });
                }
                OpsInput::Save(id, req) => {
                    let (success, message) = outcome(ops::guarded(&mut ops, "save_model", |ops| {
                        ops.save_model(&req.path)
                    }));
                    let _ = services
                        .save
                        .send_response(id, SaveModelResponse { success, message });
                }
                OpsInput::Load(id, req) => {
                    let (success, message) = outcome(ops::guarded(&mut ops, "load_model", |ops| {
                        ops.load_model(&req.path)
                    }));
                    let _ = services
                        .load
                        .send_response(id, LoadModelResponse { success, message });
                }
                OpsInput::Reset(id, req) => {
                    let (success, message) =
                        outcome(ops::guarded(&mut ops, "reset_learning", |ops| {
                            ops.reset_learning(req.keep_hyperparameters)
                        }));
                    let _ = services
                        .reset
                        .send_response(id, ResetLearningResponse { success, message });
                }
                OpsInput::Announce(id, req) => {
                    let (success, message) =
                        outcome(ops::guarded(&mut ops, "announce_change", |ops| {
                            ops.announce_change(&req.description)
                        }));
                    let _ = services
                        .announce
                        .send_response(id, AnnounceChangeResponse { success, message });
                }
                OpsInput::Param(req) => {
                    let result = ops::guarded(&mut ops, "set_parameters", |ops| {
                        ops.set_param(&req.name, &req.value).map(|()| String::new())
                    });
                    let _ = req.answer.try_send(result.map(|_| ()));
                }
            }
            ops.drain();
        }
    });
}

/// The events-topic message of a change; `joints` name the detector's joint index.
fn change_event(c: &crate::learn::ChangeNotice, joints: &[String]) -> ChangeEvent {
    use crate::learn::{ChangeAction, ChangeSource};
    ChangeEvent {
        header: Header {
            stamp: Time::from_secs_f64(c.t_secs),
            frame_id: String::new(),
        },
        onset: Time::from_secs_f64(c.onset_secs),
        source: match c.source {
            ChangeSource::Detected => "detected".into(),
            ChangeSource::Announced => "announced".into(),
        },
        joint: c
            .joint
            .and_then(|j| joints.get(j))
            .cloned()
            .unwrap_or_default(),
        action: match c.action {
            ChangeAction::Report => "report",
            ChangeAction::Inject => "inject",
            ChangeAction::Drop => "drop",
            ChangeAction::Reidentify => "reidentify",
        }
        .into(),
        description: crate::learn::describe_change(c),
    }
}

/// Runs one step of the publish thread; a panic (a defect) is logged and the thread goes on.
fn survive(what: &str, f: impl FnOnce()) {
    if let Err(panic) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        ops::internal_error(what, panic.as_ref());
    }
}

fn outcome(result: Result<String, String>) -> (bool, String) {
    match result {
        Ok(message) => (true, message),
        Err(message) => (false, message),
    }
}

/// State of the receive thread.
struct Receiver_ {
    reader: JointStateReader,
    joints: Vec<String>,
    limits: Vec<crate::robot::JointLimits>,
    ingest: Arc<IngestCounters>,
    last_rejection: Arc<Mutex<Option<String>>>,
    free: Receiver<StateFrame>,
    spare: Option<StateFrame>,
    full: SyncSender<StateFrame>,
    trajectories: SyncSender<Box<Trajectory>>,
    commands: SyncSender<ControlCommand>,
}

impl Receiver_ {
    fn run(
        mut self,
        joint_states: Subscription<JointState>,
        reference: Subscription<JointTrajectory>,
        command: Option<Subscription<Float64MultiArray>>,
        payload_changed: Subscription<Empty>,
    ) {
        let commanded = RefCell::new(None::<Vec<f64>>);
        let commands = self.commands.clone();
        let nv = self.joints.len();
        let ingest = self.ingest.clone();
        let last_rejection = self.last_rejection.clone();
        let joints = self.joints.clone();
        let limits = self.limits.clone();
        let trajectories = self.trajectories.clone();
        futures::executor::block_on(async {
            let states = async {
                let mut stream = pin!(joint_states.async_stream());
                while let Some(item) = stream.next().await {
                    let received = Instant::now();
                    ingest.count(&ingest.joint_states);
                    let msg = match item {
                        Ok((msg, _info)) => msg,
                        Err(_) => {
                            ingest.count(&ingest.decode_errors);
                            continue;
                        }
                    };
                    self.on_joint_state(&msg, commanded.borrow().as_deref(), received);
                }
            };
            let refs = async {
                let mut stream = pin!(reference.async_stream());
                while let Some(item) = stream.next().await {
                    let Ok((msg, _)) = item else {
                        ingest.count(&ingest.decode_errors);
                        continue;
                    };
                    match Trajectory::from_msg(&msg, &joints, &limits) {
                        Ok(t) => {
                            ingest.count(&ingest.trajectories_accepted);
                            let _ = trajectories.try_send(Box::new(t));
                        }
                        Err(e) => {
                            ingest.count(&ingest.trajectories_refused);
                            set_last(&last_rejection, e.to_string());
                        }
                    }
                }
            };
            let cmds = async {
                let Some(command) = command.as_ref() else {
                    return std::future::pending::<()>().await;
                };
                let mut stream = pin!(command.async_stream());
                while let Some(item) = stream.next().await {
                    let Ok((msg, _)) = item else {
                        ingest.count(&ingest.decode_errors);
                        continue;
                    };
                    if msg.data.len() == nv && msg.data.iter().all(|x| x.is_finite()) {
                        ingest.count(&ingest.commands_accepted);
                        *commanded.borrow_mut() = Some(msg.data);
                    } else {
                        ingest.count(&ingest.commands_refused);
                        set_last(
                            &last_rejection,
                            format!(
                                "commanded torque: {} values (expected {nv}) or a non-finite one",
                                msg.data.len()
                            ),
                        );
                    }
                }
            };
            let announcements = async {
                let mut stream = pin!(payload_changed.async_stream());
                while let Some(item) = stream.next().await {
                    if item.is_ok() {
                        let _ = commands.try_send(ControlCommand::AnnounceChange);
                    }
                }
            };
            futures::join!(states, refs, cmds, announcements);
        });
    }

    fn on_joint_state(&mut self, msg: &JointState, commanded: Option<&[f64]>, received: Instant) {
        let Some(mut frame) = self.spare.take().or_else(|| self.free.try_recv().ok()) else {
            self.ingest.count(&self.ingest.dropped_busy);
            return;
        };
        let read = self.reader.read(msg, commanded, received, &mut frame);
        self.ingest
            .stamp_resyncs
            .store(self.reader.stamp_resyncs(), Ordering::Relaxed);
        match read {
            Ok(()) => {
                if let Err(TrySendError::Full(f) | TrySendError::Disconnected(f)) =
                    self.full.try_send(frame)
                {
                    self.ingest.count(&self.ingest.dropped_busy);
                    self.spare = Some(f);
                }
            }
            Err(why) => {
                self.ingest.reject(&why);
                set_last(&self.last_rejection, why.to_string());
                // This thread holds the free pool's receiving end: keep the frame for next time.
                self.spare = Some(frame);
            }
        }
    }
}

fn set_last(slot: &Mutex<Option<String>>, message: String) {
    if let Ok(mut last) = slot.lock() {
        *last = Some(message);
    }
}

/// What the publish thread measured.
struct Published {
    commands: u64,
    latency: LatencyHistogram,
    tick_time: LatencyHistogram,
}

/// State of the publish thread.
struct Publisher_ {
    node_name: String,
    robot: String,
    coverage_alarm: f64,
    events: Publisher<ChangeEvent>,
    shared: SharedStatus,
    joints: Vec<String>,
    ros: RosParams,
    command: Option<Publisher<Float64MultiArray>>,
    residual: Publisher<ResidualEstimate>,
    diagnostics: Publisher<DiagnosticArray>,
    ingest: Arc<IngestCounters>,
    last_rejection: Arc<Mutex<Option<String>>>,
}

impl Publisher_ {
    fn run(self, end: &PublishEnd, trash: &Receiver<Box<Trajectory>>) -> Published {
        let mut published = Published {
            commands: 0,
            latency: LatencyHistogram::new(),
            tick_time: LatencyHistogram::new(),
        };
        // Checked at start (ros.diagnostics_period_s ≤ 1 h); a second as the fallback.
        let period = Duration::try_from_secs_f64(self.ros.diagnostics_period_s)
            .unwrap_or(Duration::from_secs(1));
        let mut last_diag = Instant::now();
        let mut latest = LoopCounters::default();
        let mut previous = LoopCounters::default();
        let mut ingest_previous = IngestSnapshot::default();
        let mut latest_t = 0.0;
        let mut ticks: u64 = 0;
        loop {
            match end
                .outgoing
                .recv_timeout(period.min(Duration::from_millis(100)))
            {
                Ok(message) => {
                    match &message {
                        Outgoing::Command(frame) => survive("publishing the command", || {
                            self.publish_command(&frame.u, frame.answers, &mut published);
                        }),
                        Outgoing::Output(frame) => {
                            latest = frame.counters;
                            latest_t = frame.stamp_secs;
                            survive("publishing", || {
                                self.publish_output(frame, &mut published, &mut ticks);
                            });
                        }
                    }
                    end.recycle(message);
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            while let Ok(old) = trash.try_recv() {
                drop(old);
            }
            if last_diag.elapsed() >= period {
                survive("diagnostics", || {
                    last_diag = Instant::now();
                    let ingest = self.ingest.snapshot();
                    let last_rejection = self.last_rejection.lock().ok().and_then(|l| l.clone());
                    let model = self.model_label();
                    let msg = diagnostics(&DiagnosticsInput {
                        node_name: &self.node_name,
                        robot: &self.robot,
                        model: &model,
                        mode: self.ros.mode,
                        watchdog_action: self.ros.watchdog_action,
                        watchdog_timeout_s: self.ros.watchdog_timeout_s,
                        counters: &latest,
                        previous: &previous,
                        ingest: &ingest,
                        ingest_previous: &ingest_previous,
                        last_rejection: last_rejection.as_deref(),
                        latency: &published.latency,
                        tick_time: &published.tick_time,
                        stamp: Time::from_secs_f64(latest_t),
                        coverage_alarm: self.coverage_alarm,
                    });
                    let _ = self.diagnostics.publish(msg);
                    previous = latest;
                    ingest_previous = ingest;
                });
            }
        }
        published
    }

    fn model_label(&self) -> String {
        self.shared
            .model_label
            .lock()
            .map(|l| l.clone())
            .unwrap_or_default()
    }

    fn publish_command(&self, u: &[f64], answers: Option<Instant>, published: &mut Published) {
        let Some(command) = &self.command else { return };
        let msg = Float64MultiArray {
            layout: Default::default(),
            data: u.to_vec(),
        };
        if command.publish(msg).is_ok() {
            published.commands += 1;
            if let Some(received) = answers {
                published
                    .latency
                    .record(received.elapsed().as_secs_f64() * 1e6);
            }
        }
    }

    fn publish_output(&self, frame: &LoopOutput, published: &mut Published, ticks: &mut u64) {
        if let Some(change) = frame.change {
            // This thread, not the tick, writes the log: a change rebuilds the model and may
            // discard data, which an operator should see without subscribing to ~/events.
            eprintln!("gp-node: {}", crate::learn::describe_change(&change));
            let _ = self.events.publish(change_event(&change, &self.joints));
        }
        if frame.kind != OutKind::Tick {
            return;
        }
        let Some(status) = frame.status else { return };
        published.tick_time.record(status.exec_micros);
        *ticks += 1;
        let every = u64::from(self.shared.residual_every.load(Ordering::Relaxed));
        if every == 0 || !(*ticks - 1).is_multiple_of(every) {
            return;
        }
        let stats = frame.stats.unwrap_or_default();
        let msg = ResidualEstimate {
            header: Header {
                stamp: Time::from_secs_f64(frame.stamp_secs),
                frame_id: String::new(),
            },
            model: if frame.stats.is_some() {
                self.model_label()
            } else {
                String::new()
            },
            joint_names: self.joints.clone(),
            mu: frame.mu.clone(),
            sigma: frame.sigma.clone(),
            eta: frame.eta.clone(),
            eta_thm: frame.eta_thm.clone(),
            fallback: frame.fallback.clone(),
            samples_seen: stats.samples_seen,
            samples_stored: stats.samples_stored,
            experts: stats.experts,
            model_us: status.model_micros,
            tick_us: status.exec_micros,
            tracking_bound: frame.tracking_bound,
        };
        if self.command.is_none() {
            // Learn mode: the estimate is the output whose latency counts.
            published
                .latency
                .record(frame.received.elapsed().as_secs_f64() * 1e6);
        }
        let _ = self.residual.publish(msg);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::{ChangeAction, ChangeNotice, ChangeSource};

    #[test]
    fn a_change_event_names_the_joint_whose_detector_fired() {
        let joints: Vec<String> = (1..=7).map(|i| format!("panda_joint{i}")).collect();
        let detected = ChangeNotice {
            source: ChangeSource::Detected,
            t_secs: 15.04,
            onset_secs: 15.01,
            joint: Some(3),
            action: ChangeAction::Drop,
        };
        let e = change_event(&detected, &joints);
        assert_eq!(
            (e.source.as_str(), e.joint.as_str(), e.action.as_str()),
            ("detected", "panda_joint4", "drop")
        );
        assert!(
            (e.onset.sec, e.onset.nanosec) == (15, 10_000_000),
            "{:?}",
            e.onset
        );
        let announced = ChangeNotice {
            source: ChangeSource::Announced,
            joint: None,
            ..detected
        };
        let e = change_event(&announced, &joints);
        assert_eq!((e.source.as_str(), e.joint.as_str()), ("announced", ""));
    }
}
