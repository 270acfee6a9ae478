//! `gp-node learn`: scan the recording, build the node's loop over the bag plant, replay it
//! in bag time as fast as it goes (the loop waits for background fits, as the simulator's
//! does, so a replay is reproducible), hold the tail out, then save the model and score it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use gpn_app::{NodeParams, load_robot, load_robot_description, model_factory, plugin_search};
use gpn_bag::Recording;
use gpn_control::control::Tick;
use gpn_control::control_loop::{
    Clock as _, CommandDecision, ControlCommand, ControlLoop, ControlReply, LoopCounters,
    MeasuredReference, SimulatedClock,
};
use gpn_control::learn::Learner;
use gpn_dynamics::Model;
use gpn_plugin_host::ModelFile;
use gpn_ros_io::JointStateReader;

use crate::holdout::{HeldOutScores, HoldOutOps, HoldOutRecorder};
use crate::plant::{BagPlant, HoldOutStart, Progress};
use crate::report::{LearnReport, Refusal};
use crate::scan::{Scan, scan};
use crate::topics::ReplayTopics;

/// Why a recording could not be learned from.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The recording cannot be read.
    #[error(transparent)]
    Bag(#[from] gpn_bag::BagError),
    /// Something else, said in full.
    #[error("{0}")]
    Failed(String),
}

pub(crate) fn failed(message: impl Into<String>) -> ReplayError {
    ReplayError::Failed(message.into())
}

/// What `gp-node learn` is asked.
#[derive(Debug, Clone)]
pub struct LearnOptions {
    /// The node's parameters (plugin, learner, torque source; `robot.urdf` empty: the
    /// recording's robot description).
    pub params: NodeParams,
    /// The topics to read.
    pub topics: ReplayTopics,
    /// Fraction of the joint states at the end that is not learned but scored, in [0, 0.5].
    pub hold_out: f64,
    /// The model file to write.
    pub out: PathBuf,
}

/// Learns from `recording` as `options` say; writes the model file and reports.
pub fn learn(
    recording: &Recording,
    options: &LearnOptions,
    progress: &Arc<Progress>,
) -> Result<LearnReport, ReplayError> {
    let start = Instant::now();
    if !(0.0..=0.5).contains(&options.hold_out) {
        return Err(failed(format!(
            "--hold-out {}: give a fraction from 0 to 0.5",
            options.hold_out
        )));
    }
    // A mistyped model key fails here, naming the nearest key, not after the recording has
    // been scanned and replayed up to the first fit.
    gpn_app::check_model_configs(&options.params).map_err(failed)?;
    let Prepared {
        found,
        robot,
        robot_source,
        params,
    } = prepare(recording, &options.params, &options.topics, progress)?;
    let params = &params;
    let nv = robot.nv();
    let mut control_loop = node_loop(&robot, params)?;

    let reached = Arc::new(AtomicBool::new(false));
    let holding = Arc::new(AtomicBool::new(false));
    let learned_states = ((1.0 - options.hold_out) * found.joint_states as f64).floor() as u64;
    let reader = JointStateReader::new(robot.joint_names(), params.ros.torque_source, true);
    let mut plant = BagPlant::new(
        recording.messages(&options.topics.wanted()),
        reader,
        nv,
        found.offset.map_or(0, |o| o.median_ns),
        HoldOutStart {
            after_states: if options.hold_out > 0.0 {
                learned_states
            } else {
                u64::MAX
            },
            reached: reached.clone(),
        },
    );
    plant.progress = progress.clone();
    let mut ops = HoldOutOps {
        reached,
        holding: holding.clone(),
    };
    // Samples as the loop reports them: [q, q̇, q̈] (the learner adds its features).
    let mut recorder = HoldOutRecorder::new(holding, 3 * nv, nv);
    let stop = AtomicBool::new(false);
    let Ok(()) = control_loop.run(
        &mut plant,
        &mut SimulatedClock,
        &mut ops,
        &mut [&mut recorder],
        &stop,
    );

    let report = control_loop.model_report();
    let snapshot = match control_loop.command(ControlCommand::Save { id: 0 }) {
        Some(ControlReply::Saved { result, .. }) => result,
        _ => Err("the loop did not answer the save".into()),
    }
    .map_err(|why| {
        let learned = report.counts.learned;
        let mut cause = report.failure.clone().unwrap_or_else(|| {
            format!(
                "{learned} samples were learned; the first hyperparameter fit needs learn.fit_samples = {} samples that pass the gate",
                params.learn.fit_samples
            )
        });
        let ingest = plant.ingest.snapshot();
        let refused: Vec<String> = ingest
            .joint_state_refusals()
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(reason, n)| format!("{reason} {n}"))
            .collect();
        if !refused.is_empty() {
            cause.push_str(&format!(
                "; joint states refused: {} (the last: {})",
                refused.join(", "),
                plant.last_refusal.as_deref().unwrap_or("?")
            ));
        }
        failed(format!("no model to save ({why}): {cause}"))
    })?;
    let scores: Option<HeldOutScores> = recorder.score(control_loop.learner_mut());
    let file = ModelFile::from_snapshot(*snapshot, &params.model.config);
    file.write_atomic(&options.out)
        .map_err(|e| failed(format!("{}: {e}", options.out.display())))?;

    let counters = control_loop.counters();
    let wall_s = start.elapsed().as_secs_f64();
    let refused = refusals(&plant, &counters);
    let gate = counters.learn.gate;
    Ok(LearnReport {
        recording: recording.path().display().to_string(),
        storage: recording.storage().identifier(),
        robot: robot_source,
        joints: nv,
        plugin: file.header.plugin.clone(),
        plugin_version: file.header.plugin_version.clone(),
        duration_s: found
            .log_range_ns
            .map_or(0.0, |(a, b)| (b - a) as f64 * 1e-9),
        joint_states: found.joint_states,
        with_effort: found.with_effort,
        commands: found.commands,
        commands_superseded: plant.commands_superseded(),
        undecodable: found.undecodable,
        stamp_resyncs: plant.stamp_resyncs(),
        clock_offset: found.offset.map(Into::into),
        ticks: counters.ticks,
        samples_passed_gate: gate.passed,
        samples_learned: counters.learn.learned,
        refused,
        hold_out: options.hold_out,
        held_out: scores,
        model_file: options.out.display().to_string(),
        model_state_bytes: file.state.len() as u64,
        samples_in_model: file.header.samples_seen,
        wall_s,
        states_per_s: found.joint_states as f64 / wall_s.max(1e-9),
        ended_early: plant.ended_early.clone().or(found.ended_early),
    })
}

/// A recording scanned, its robot loaded and the parameters completed from the robot.
pub(crate) struct Prepared {
    pub(crate) found: Scan,
    pub(crate) robot: Model,
    pub(crate) robot_source: String,
    pub(crate) params: NodeParams,
}

/// Checks `params`, scans the recording (the progress's first pass) and loads the robot.
pub(crate) fn prepare(
    recording: &Recording,
    params: &NodeParams,
    topics: &ReplayTopics,
    progress: &Arc<Progress>,
) -> Result<Prepared, ReplayError> {
    let mut params = params.clone();
    params.check_ranges().map_err(failed)?;
    let found = scan(recording, topics, &mut |n| {
        progress.scanned.store(n, Ordering::Relaxed);
    })?;
    if found.joint_states == 0 {
        return Err(failed(format!(
            "no sensor_msgs/msg/JointState on {} in {}; it has: {} (--joint-states-topic names another)",
            topics.joint_states,
            recording.path().display(),
            found.topic_list()
        )));
    }
    progress.total.store(
        found.joint_states + found.commands + u64::from(found.robot_description.is_some()),
        Ordering::Relaxed,
    );
    let (robot, robot_source) = robot(&params, &found, topics)?;
    gpn_app::derive_node_defaults(&robot, &mut params)
        .map_err(|e| failed(format!("defaults from the robot: {e}")))?;
    Ok(Prepared {
        found,
        robot,
        robot_source,
        params,
    })
}

/// The node's loop (learn mode: the measured state is the reference) with its learner.
pub(crate) fn node_loop(
    robot: &Model,
    params: &NodeParams,
) -> Result<ControlLoop<MeasuredReference>, ReplayError> {
    let search = plugin_search(params);
    let factory = model_factory(&search, &params.model.plugin, &params.model.config);
    let hyper = params.model.config.get("hyper").cloned();
    let tick = Tick::new(robot, &params.control, SimulatedClock.budget())
        .map_err(|e| failed(e.to_string()))?;
    let learner = Learner::new(robot, params.learn.clone(), hyper, factory)
        .map_err(|e| failed(e.to_string()))?;
    let decision =
        CommandDecision::new(robot, &params.control).map_err(|e| failed(e.to_string()))?;
    Ok(ControlLoop::new(
        tick,
        learner,
        MeasuredReference,
        decision,
        false,
    ))
}

/// What the replay refused, by reason: messages (the node's reader) and samples (the gate).
pub(crate) fn refusals(plant: &BagPlant<'_>, counters: &LoopCounters) -> Vec<Refusal> {
    let ingest = plant.ingest.snapshot();
    let mut refused: Vec<Refusal> = ingest
        .joint_state_refusals()
        .iter()
        .chain(&ingest.command_refusals())
        .filter(|(_, n)| *n > 0)
        .map(|&(reason, count)| Refusal::new("message", reason, count))
        .collect();
    refused.extend(
        counters
            .learn
            .gate
            .refusals()
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .map(|(reason, count)| Refusal::new("sample", reason, count)),
    );
    refused
}

/// The robot: `robot.urdf` (`--urdf`) if given, else the recording's robot description.
fn robot(
    params: &NodeParams,
    found: &Scan,
    topics: &ReplayTopics,
) -> Result<(Model, String), ReplayError> {
    if !params.robot.urdf.as_os_str().is_empty() {
        let model = load_robot(params).map_err(|e| failed(e.to_string()))?;
        return Ok((model, params.robot.urdf.display().to_string()));
    }
    let Some(urdf) = &found.robot_description else {
        return Err(failed(format!(
            "the recording has no {} and no --urdf was given: give the robot's URDF with --urdf",
            topics.robot_description
        )));
    };
    let source = format!("{} in the recording", topics.robot_description);
    let model = load_robot_description(params, urdf, &source).map_err(|e| failed(e.to_string()))?;
    Ok((model, source))
}

/// The default model file next to the recording: `<recording name>.gpn`.
pub fn default_model_path(recording: &Path) -> PathBuf {
    let name = recording
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("recording");
    let stem = name
        .trim_end_matches(".zstd")
        .trim_end_matches(".mcap")
        .trim_end_matches(".db3");
    PathBuf::from(format!("{stem}.gpn"))
}
