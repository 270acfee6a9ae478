//! The learning samples a recording gives the node, for `gp-node eval --bag`: the recording
//! replayed through the node's loop as `gp-node learn` replays it (the same reader, time
//! alignment, q̈ estimate, gate and targets), with every sample held out, so that nothing is
//! fitted and the samples are those any plugin would have been given. They come out as the
//! robot stream `gp-node sim --record` writes: inputs `x_0..` = [q, q̇, q̈], targets `y_0..`,
//! the residual per joint, N·m.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use gpn_bag::Recording;
use gpn_control::control_loop::{LoopOutput, OutputListener, SimulatedClock};
use gpn_ros_io::JointStateReader;

use crate::holdout::HoldOutOps;
use crate::job::{Prepared, ReplayError, failed, node_loop, prepare, refusals};
use crate::plant::{BagPlant, HoldOutStart, Progress};
use crate::report::Refusal;
use crate::topics::ReplayTopics;

/// The samples of a recording, in recorded order.
#[derive(Debug, Clone)]
pub struct RecordedSamples {
    /// The robot's joints, in model order.
    pub joints: Vec<String>,
    /// Where the robot came from.
    pub robot: String,
    /// Inputs, n × 3·nv, row-major: [q, q̇, q̈].
    pub x: Vec<f64>,
    /// Targets, n × nv: the residual τ − τ_RBD, N·m.
    pub y: Vec<f64>,
    /// Median time between consecutive samples, s (None: fewer than two).
    pub period_s: Option<f64>,
    /// Joint states in the recording.
    pub joint_states: u64,
    /// Messages and samples refused, by reason.
    pub refused: Vec<Refusal>,
}

impl RecordedSamples {
    /// Samples.
    pub fn len(&self) -> usize {
        self.y.len() / self.joints.len().max(1)
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }

    /// As CSV text with a header (`x_0..x_{3nv−1}`, `y_0..y_{nv−1}`), values in Rust's
    /// shortest round-trip form, as `gp-node sim --record` names its columns.
    pub fn to_csv(&self) -> String {
        let nv = self.joints.len();
        let mut header: Vec<String> = (0..3 * nv).map(|k| format!("x_{k}")).collect();
        header.extend((0..nv).map(|j| format!("y_{j}")));
        let mut text = header.join(",");
        text.push('\n');
        for (x, y) in self.x.chunks(3 * nv).zip(self.y.chunks(nv)) {
            let row: Vec<String> = x.iter().chain(y).map(f64::to_string).collect();
            text.push_str(&row.join(","));
            text.push('\n');
        }
        text
    }
}

/// Collects every sample the loop forms, with its time.
struct Collector {
    d: usize,
    p: usize,
    x: Vec<f64>,
    y: Vec<f64>,
    t: Vec<f64>,
}

impl OutputListener for Collector {
    fn on_output(&mut self, out: &LoopOutput) {
        if out.has_sample && out.sample_x.len() == self.d && out.sample_y.len() == self.p {
            self.x.extend_from_slice(&out.sample_x);
            self.y.extend_from_slice(&out.sample_y);
            self.t.push(out.t_secs);
        }
    }
}

/// The samples of `recording` under `params` (robot, learner, torque source), reading
/// `topics`.
pub fn samples(
    recording: &Recording,
    params: &gpn_app::NodeParams,
    topics: &ReplayTopics,
    progress: &Arc<Progress>,
) -> Result<RecordedSamples, ReplayError> {
    let Prepared {
        found,
        robot,
        robot_source,
        params,
    } = prepare(recording, params, topics, progress)?;
    let nv = robot.nv();
    let mut control_loop = node_loop(&robot, &params)?;
    let reached = Arc::new(AtomicBool::new(false));
    let reader = JointStateReader::new(robot.joint_names(), params.ros.torque_source, true);
    let mut plant = BagPlant::new(
        recording.messages(&topics.wanted()),
        reader,
        nv,
        found.offset.map_or(0, |o| o.median_ns),
        // Held out from the first state: formed, never learned, so nothing is fitted.
        HoldOutStart {
            after_states: 0,
            reached: reached.clone(),
        },
    );
    plant.progress = progress.clone();
    let mut ops = HoldOutOps {
        reached,
        holding: Arc::new(AtomicBool::new(false)),
    };
    let mut collector = Collector {
        d: 3 * nv,
        p: nv,
        x: Vec::new(),
        y: Vec::new(),
        t: Vec::new(),
    };
    let stop = AtomicBool::new(false);
    let Ok(()) = control_loop.run(
        &mut plant,
        &mut SimulatedClock,
        &mut ops,
        &mut [&mut collector],
        &stop,
    );
    let refused = refusals(&plant, &control_loop.counters());
    if collector.y.is_empty() {
        let why = refused
            .iter()
            .map(|r| format!("{} {} {}", r.of, r.reason, r.count))
            .collect::<Vec<_>>()
            .join(", ");
        return Err(failed(format!(
            "the recording gave no learning sample ({} joint states; refused: {}{})",
            found.joint_states,
            if why.is_empty() { "none" } else { &why },
            plant
                .last_refusal
                .as_deref()
                .map(|l| format!("; the last: {l}"))
                .unwrap_or_default()
        )));
    }
    let mut gaps: Vec<f64> = collector.t.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort_by(f64::total_cmp);
    Ok(RecordedSamples {
        joints: robot.joint_names().to_vec(),
        robot: robot_source,
        x: collector.x,
        y: collector.y,
        period_s: gaps.get(gaps.len() / 2).copied(),
        joint_states: found.joint_states,
        refused,
    })
}
