//! `gp-node eval --bag`: the robot stream of a recording (its learning samples as the node
//! forms them), with what was refused reported on stderr.

use std::path::Path;
use std::sync::Arc;

use super::eval::EvalArgs;
use crate::bag::Recording;
use crate::replay::{self, Progress, RecordedSamples, ReplayTopics};
use anyhow::Context as _;

/// The samples of the recording `bag` under the arguments' parameters, robot and topics.
pub fn robot_stream(bag: &Path, args: &EvalArgs) -> anyhow::Result<RecordedSamples> {
    let joints: Vec<String> = args
        .joints
        .as_deref()
        .map(|j| j.split(',').map(str::to_owned).collect())
        .unwrap_or_default();
    let params = super::robot_params(args.params.as_deref(), args.urdf.as_deref(), &joints)?;
    let mut topics = ReplayTopics::of(&params.ros.topics);
    if let Some(t) = &args.joint_states_topic {
        topics.joint_states.clone_from(t);
    }
    if let Some(t) = &args.command_topic {
        topics.command.clone_from(t);
    }
    topics
        .robot_description
        .clone_from(&args.robot_description_topic);
    let recording = Recording::open(bag)?;
    let stream = replay::samples(&recording, &params, &topics, &Arc::new(Progress::default()))
        .with_context(|| format!("reading the samples of {}", bag.display()))?;
    eprintln!(
        "eval: {} samples of {} joints from {} joint states of {} (robot: {}){}",
        stream.len(),
        stream.joints.len(),
        stream.joint_states,
        bag.display(),
        stream.robot,
        stream
            .period_s
            .map(|p| format!(", one every {:.3} ms", p * 1e3))
            .unwrap_or_default()
    );
    for r in &stream.refused {
        eprintln!("eval: refused {} {}: {}", r.of, r.reason, r.count);
    }
    Ok(stream)
}
