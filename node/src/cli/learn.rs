//! `gp-node learn`: learn a model from a rosbag2 recording, as the node would have learned it
//! live, and write the model file `gp-node run` can start from.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::bag::Recording;
use crate::replay::{self, LearnOptions, LearnReport, Progress, ReplayTopics};
use anyhow::Context;

/// Arguments of `gp-node learn`.
#[derive(clap::Args)]
pub struct LearnArgs {
    /// The recording: a rosbag2 folder (with metadata.yaml), or one .mcap or .db3 file
    /// (optionally .zstd-compressed).
    #[arg(long, value_name = "PATH")]
    bag: PathBuf,
    /// Parameter file (the node's: plugin, learner, `ros.torque_source`, topic names);
    /// default: the built-in parameters.
    #[arg(long)]
    params: Option<PathBuf>,
    /// The robot (URDF; overrides `robot.urdf`); default: the recording's
    /// /robot_description.
    #[arg(long, value_name = "FILE.urdf")]
    urdf: Option<PathBuf>,
    /// The joints, comma-separated URDF names (overrides `robot.joints`).
    #[arg(long, value_name = "A,B,C", value_delimiter = ',')]
    joints: Vec<String>,
    /// Model plugin name (overrides `model.plugin`; looked up as for `gp-node run`).
    #[arg(long)]
    plugin: Option<String>,
    /// Directory searched for plugins first (repeatable).
    #[arg(long = "plugin-path", value_name = "DIR")]
    plugin_path: Vec<PathBuf>,
    /// The model file to write (default: the recording's name with .gpn, here).
    #[arg(long, value_name = "FILE.gpn")]
    out: Option<PathBuf>,
    /// Fraction of the joint states at the end held out of learning and scored.
    #[arg(long, value_name = "FRACTION", default_value_t = 0.1)]
    hold_out: f64,
    /// sensor_msgs/JointState topic as recorded (default: `ros.topics.joint_states`).
    #[arg(long, value_name = "TOPIC")]
    joint_states_topic: Option<String>,
    /// std_msgs/Float64MultiArray effort-command topic, used where a joint state has no
    /// effort (default: `ros.topics.command`).
    #[arg(long, value_name = "TOPIC")]
    command_topic: Option<String>,
    /// std_msgs/String robot-description topic, read without --urdf.
    #[arg(long, value_name = "TOPIC", default_value = "/robot_description")]
    robot_description_topic: String,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// Runs `gp-node learn`.
pub fn run(args: LearnArgs) -> anyhow::Result<ExitCode> {
    let mut params =
        super::robot_params(args.params.as_deref(), args.urdf.as_deref(), &args.joints)?;
    if let Some(plugin) = &args.plugin {
        params.model.select_plugin(plugin);
    }
    params.model.search_first(args.plugin_path.clone());
    let mut topics = ReplayTopics::of(&params.ros.topics);
    if let Some(t) = args.joint_states_topic {
        topics.joint_states = t;
    }
    if let Some(t) = args.command_topic {
        topics.command = t;
    }
    topics.robot_description = args.robot_description_topic;
    let recording = Recording::open(&args.bag)?;
    let out = args
        .out
        .unwrap_or_else(|| replay::default_model_path(&args.bag));
    let options = LearnOptions {
        params,
        topics,
        hold_out: args.hold_out,
        out,
    };
    let progress = Arc::new(Progress::default());
    let shown = std::io::stderr().is_terminal() && !args.json;
    let display = ProgressDisplay::start(progress.clone(), shown);
    let result = replay::learn(&recording, &options, &progress);
    display.finish();
    let report = result.with_context(|| format!("learning from {}", args.bag.display()))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_report(&report);
    }
    Ok(ExitCode::SUCCESS)
}

/// A progress bar on stderr, fed from the replay's counters by a thread of its own.
struct ProgressDisplay {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ProgressDisplay {
    fn start(progress: Arc<Progress>, shown: bool) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = shown.then(|| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let bar = indicatif::ProgressBar::new_spinner();
                bar.set_style(
                    indicatif::ProgressStyle::with_template(
                        "{prefix:>8} [{bar:40}] {pos}/{len} messages {elapsed}",
                    )
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                    .progress_chars("=> "),
                );
                while !stop.load(Ordering::Relaxed) {
                    let total = progress.total.load(Ordering::Relaxed);
                    if total == 0 {
                        bar.set_prefix("reading");
                        bar.set_length(0);
                        bar.set_position(progress.scanned.load(Ordering::Relaxed));
                    } else {
                        bar.set_prefix("learning");
                        bar.set_length(total);
                        bar.set_position(progress.replayed.load(Ordering::Relaxed));
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
                bar.finish_and_clear();
            })
        });
        Self { stop, thread }
    }

    fn finish(self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread {
            let _ = t.join();
        }
    }
}

fn print_report(r: &LearnReport) {
    println!(
        "recording {} ({}), {:.1} s: {} joint states ({} with effort), {} commands",
        r.recording, r.storage, r.duration_s, r.joint_states, r.with_effort, r.commands
    );
    println!("robot     {} ({} joints)", r.robot, r.joints);
    if let Some(o) = &r.clock_offset {
        println!(
            "clocks    log time − stamp: median {:.3} ms (5–95 %: {:.3} to {:.3} ms)",
            o.median_ms, o.p05_ms, o.p95_ms
        );
    }
    println!(
        "learned   {} samples ({} passed the gate, {} ticks); {} commands superseded, {} messages undecodable, {} stamp resyncs",
        r.samples_learned,
        r.samples_passed_gate,
        r.ticks,
        r.commands_superseded,
        r.undecodable,
        r.stamp_resyncs
    );
    for refusal in &r.refused {
        println!(
            "refused   {} {}: {}",
            refusal.of, refusal.reason, refusal.count
        );
    }
    match &r.held_out {
        Some(h) => {
            let fmt = |v: &[f64]| {
                v.iter()
                    .map(|x| format!("{x:.3}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            println!(
                "held out  last {:.0} %: {} samples scored of {}",
                r.hold_out * 100.0,
                h.samples,
                h.samples_in_tail
            );
            println!("  SMSE         {}", fmt(&h.smse));
            println!("  MSLL         {}", fmt(&h.msll));
            println!("  RMSE, N·m    {}", fmt(&h.rmse_nm));
            println!("  ±2σ coverage {}", fmt(&h.coverage_2sigma));
            let eta: Vec<String> = h
                .coverage_eta_cal
                .iter()
                .map(|c| c.map_or("—".into(), |c| format!("{c:.3}")))
                .collect();
            println!("  η_cal cover. {}", eta.join(" "));
        }
        None => println!("held out  nothing (--hold-out 0, or no sample formed in the tail)"),
    }
    println!(
        "model     {} {} → {} ({} samples, {} bytes of state)",
        r.plugin, r.plugin_version, r.model_file, r.samples_in_model, r.model_state_bytes
    );
    println!(
        "speed     {:.1} s wall, {:.0} joint states/s",
        r.wall_s, r.states_per_s
    );
    if let Some(why) = &r.ended_early {
        println!("warning   the recording ended early: {why}; what came before was used");
    }
}
