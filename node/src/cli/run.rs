//! `gp-node run`: the ROS 2 node. Parses the arguments, applies them over the parameter
//! file, runs `crate::ros::run` until SIGINT/SIGTERM (or `--duration`) and prints the
//! summary. rcl reads the `--ros-args` part of the command line itself (`main` cuts it
//! off before parsing). Without the `ros` feature it only lists the parameters.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::app::{DEFAULT_PARAMS_YAML, NodeParams};
use crate::ros::Mode;

/// Arguments of `gp-node run`.
#[derive(clap::Args)]
pub struct RunArgs {
    /// Parameter file (ROS 2 parameter YAML, `gp_learning_node: ros__parameters: …`; the
    /// `ros:` section holds node, topic and watchdog settings); default: the built-in
    /// `config/sim_default.yaml`.
    #[arg(long)]
    params: Option<PathBuf>,
    /// `control` (publish the compensated effort command) or `learn` (learn from another
    /// controller's commands; publish estimates only). Overrides `ros.mode`.
    #[arg(long, value_enum)]
    mode: Option<ModeArg>,
    /// Node name (overrides `ros.node_name`).
    #[arg(long)]
    node_name: Option<String>,
    /// Namespace (overrides `ros.namespace`).
    #[arg(long)]
    namespace: Option<String>,
    /// DDS domain (overrides `ros.domain_id`; default `$ROS_DOMAIN_ID`, else 0).
    #[arg(long)]
    domain_id: Option<u16>,
    /// Model plugin name (overrides `model.plugin`; another plugin than the file's starts
    /// from its own default configuration, `model.config` = {}), looked up as lib<NAME>.so, <NAME>.so or
    /// libgpn_<NAME>.so in the `--plugin-path` directories and `model.plugin_path`, then
    /// $GPN_PLUGIN_PATH, then beside the executable, then the plugin packages of the ament
    /// index (its own install's, then $AMENT_PREFIX_PATH's); a path is refused (put its directory
    /// on --plugin-path and pass the name).
    #[arg(long)]
    plugin: Option<String>,
    /// Directory searched for plugins before `model.plugin_path` and the others
    /// (repeatable; each value may be a ':'-separated list).
    #[arg(long = "plugin-path", value_name = "DIR")]
    plugin_path: Vec<std::path::PathBuf>,
    /// Start from this model file (`gp-node learn`, `~/save_model`; sets `model.file`): its
    /// plugin, configuration and learned state, adopted at the first ticks.
    #[arg(long, value_name = "FILE.gpn", conflicts_with = "plugin")]
    model: Option<std::path::PathBuf>,
    /// Command the robot from the start (sets `ros.active`; without it the node starts
    /// inactive and commands nothing until `ros.active` is set true).
    #[arg(long)]
    autostart: bool,
    /// Run the nominal computed-torque law only (no learned residual in the law; the
    /// baseline of a comparison).
    #[arg(long)]
    nominal: bool,
    /// Stop after this many seconds of wall time (default: until Ctrl-C / SIGTERM).
    #[arg(long, value_name = "S")]
    duration: Option<f64>,
    /// Log to rerun, as `gp-node sim` does (sets `ros.rerun`): `spawn` (a new viewer, the
    /// `rerun` executable on PATH), `connect [HOST:PORT]` (a running viewer, default
    /// 127.0.0.1:9876) or `save FILE.rrd`. From a thread the control loop never waits on;
    /// ticks it cannot take are dropped and counted in the summary.
    #[arg(long, num_args = 1..=2, value_names = ["spawn|connect|save", "ADDR|FILE"])]
    rerun: Vec<String>,
    /// Record the run to this rosbag2 folder, which must not exist (sets `ros.record`): MCAP
    /// and a Jazzy `metadata.yaml` with the joint states and references received, and the
    /// command, residual estimates, diagnostics and events sent, and the robot description
    /// (`gp-node learn --bag` reads it back). From a thread the control loop never waits
    /// on; messages it cannot take are dropped and counted in the summary.
    #[arg(long, value_name = "DIR")]
    record: Option<std::path::PathBuf>,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    json: bool,
    /// Print the node's ROS 2 parameters (name, type, unit, constraint, how a change takes
    /// effect) as a markdown table and exit.
    #[arg(long)]
    list_params: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ModeArg {
    Control,
    Learn,
}

/// Runs `gp-node run`.
pub fn run(args: RunArgs) -> anyhow::Result<ExitCode> {
    if args.list_params {
        print!("{}", crate::app::param_schema::markdown_table());
        return Ok(ExitCode::SUCCESS);
    }
    let mut params = match &args.params {
        Some(path) => NodeParams::from_file(path)?,
        None => NodeParams::from_yaml(DEFAULT_PARAMS_YAML)
            .map_err(|e| anyhow::anyhow!("built-in parameters: {e}"))?,
    };
    if let Some(mode) = args.mode {
        params.ros.mode = match mode {
            ModeArg::Control => Mode::Control,
            ModeArg::Learn => Mode::Learn,
        };
    }
    if let Some(name) = args.node_name {
        params.ros.node_name = name;
    }
    if let Some(ns) = args.namespace {
        params.ros.namespace = ns;
    }
    if let Some(id) = args.domain_id {
        params.ros.domain_id = i32::from(id);
    }
    if let Some(plugin) = args.plugin {
        params.model.select_plugin(&plugin);
    }
    params.model.search_first(args.plugin_path);
    if let Some(file) = args.model {
        params.model.file = file;
    }
    if args.nominal {
        params.control.use_model = false;
    }
    if args.autostart {
        params.ros.active = true;
    }
    if !args.rerun.is_empty() {
        params.ros.rerun = args.rerun.join(" ");
        crate::viz::VizTarget::from_setting(&params.ros.rerun)
            .map_err(|e| anyhow::anyhow!("--rerun {e}"))?;
    }
    if let Some(dir) = args.record {
        params.ros.record = dir.to_string_lossy().into_owned();
    }
    if let Some(d) = args.duration {
        crate::app::param_ranges::check_value("run.duration_s", d)
            .map_err(|e| anyhow::anyhow!("--duration: {e}"))?;
    }
    params
        .check_ranges()
        .map_err(|e| anyhow::anyhow!("parameters after the command-line options: {e}"))?;
    // Before any thread allocates: the heap reserve is the process's one arena.
    crate::app::realtime::prepare_memory(&params.realtime);
    run_node(&params, args.duration, args.json)
}

#[cfg(not(feature = "ros"))]
fn run_node(_: &NodeParams, _: Option<f64>, _: bool) -> anyhow::Result<ExitCode> {
    anyhow::bail!(
        "this gp-node was built without ROS 2: build it with `--features ros` where ROS 2 \
         Jazzy is present (a sourced installation, or `bash ci/ros2_jazzy/setup.sh --msgs && \
         source .venv-jazzy/gpn/env.sh`; README, \"gp-node run\")"
    )
}

#[cfg(feature = "ros")]
fn run_node(params: &NodeParams, duration: Option<f64>, json: bool) -> anyhow::Result<ExitCode> {
    let summary = crate::ros::run::run(
        params,
        &crate::ros::run::RunOptions {
            duration_s: duration,
        },
    )?;
    if json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        eprint!("{}", table(&summary));
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(feature = "ros")]
fn table(s: &crate::ros::run::RunSummary) -> String {
    format!(
        "node {} (domain {}), {:.1} s\n\
         joint states: {} received, {} refused, {} dropped in bursts, {} out of order, {} repeated\n\
         ticks: {} ({} on the learned law), {} commands published, {} watchdog trips\n\
         model: {} samples learned, {} models adopted, {} probes offered, {} refused\n\
         state in -> command out: p50 {:.0} us, p99 {:.0} us, max {:.0} us ({} commands)\n\
         tick: p50 {:.1} us, p99 {:.1} us, max {:.1} us\n\
         law: {}; states on the learned law {}, nominal {}, safe output {}, inactive {}; \
         {} fallbacks, {} re-adoptions\n{}{}",
        s.node,
        s.domain_id,
        s.wall_s,
        s.joint_states_received,
        s.joint_states_refused,
        s.joint_states_dropped_busy,
        s.out_of_order,
        s.repeated,
        s.ticks,
        s.learned_ticks,
        s.commands_published,
        s.watchdog_trips,
        s.samples_learned,
        s.models_adopted,
        s.probes_offered,
        s.probes_refused,
        s.latency_us.p50,
        s.latency_us.p99,
        s.latency_us.max,
        s.latency_us.count,
        s.tick_us.p50,
        s.tick_us.p99,
        s.tick_us.max,
        if s.law.active {
            "active"
        } else {
            "inactive (ros.active false: nothing commanded)"
        },
        s.law.learned_ticks,
        s.law.nominal_ticks,
        s.law.safe_ticks,
        s.law.inactive_ticks,
        s.law.fallbacks.values().sum::<u64>(),
        s.law.readoptions,
        s.rerun.as_ref().map_or(String::new(), |r| side_output(
            "rerun",
            &r.target,
            &format!("{} ticks logged", r.logged),
            r.dropped,
            r.error.as_deref()
        )),
        s.record.as_ref().map_or(String::new(), |r| side_output(
            "recorded",
            &r.path,
            &format!("{} messages", r.written),
            r.dropped,
            r.error.as_deref()
        )),
    )
}

/// A summary line of an output written off the control thread (rerun, the recording).
#[cfg(feature = "ros")]
fn side_output(label: &str, target: &str, done: &str, dropped: u64, error: Option<&str>) -> String {
    format!(
        "{label}: {target}: {done}, {dropped} dropped{}\n",
        error
            .map(|e| format!(" (incomplete: {e})"))
            .unwrap_or_default()
    )
}
