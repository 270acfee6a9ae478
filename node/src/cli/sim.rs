//! `gp-node sim`: the main job — the learning control loop on the embedded simulator.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::app;
use crate::app::param_ranges::check_value;
use crate::app::{DEFAULT_URDF, NodeParams};
use crate::simulate::{self, Recorder, RunLog, RunRecord, Scenario, Series, SimBag, SimReport};
use crate::viz::{self, Viz, VizTarget};
use anyhow::Context;

/// Where the rerun recording goes without `--rrd`, `--spawn`, `--connect` or `--no-viz`.
const DEFAULT_RRD: &str = "gp-node-sim.rrd";

/// Arguments of `gp-node sim`.
#[derive(clap::Args)]
pub struct SimArgs {
    /// Parameter file (ROS 2 parameter YAML, `gp_learning_node: ros__parameters: …`);
    /// default: the built-in `config/sim_default.yaml`.
    #[arg(long)]
    params: Option<PathBuf>,
    /// The robot (URDF; overrides `robot.urdf`). Any fixed-base robot: every robot-specific
    /// value the parameters leave empty is derived from it (README, "Any robot").
    #[arg(long, value_name = "FILE.urdf")]
    urdf: Option<PathBuf>,
    /// The joints to control, comma-separated URDF names (overrides `robot.joints`); the
    /// others are locked at `robot.locked_positions` or 0 clamped to their limits, and merged.
    #[arg(long, value_name = "A,B,C", value_delimiter = ',')]
    joints: Vec<String>,
    /// Scenario applied on top of the parameters.
    #[arg(long, value_enum, default_value_t = Scenario::Default)]
    scenario: Scenario,
    /// Model plugin name (overrides `model.plugin`; another plugin than the file's starts
    /// from its own default configuration, `model.config` = {}), looked up as lib<NAME>.so, <NAME>.so or
    /// libgpn_<NAME>.so in the `--plugin-path` directories and `model.plugin_path`, then
    /// $GPN_PLUGIN_PATH, then beside the executable; a path is refused (put its directory
    /// on --plugin-path and pass the name).
    #[arg(long)]
    plugin: Option<String>,
    /// Start the learned run from this model file (`gp-node learn`, `~/save_model`; overrides
    /// `model.file`): its plugin, configuration and learned state.
    #[arg(long, value_name = "FILE.gpn", conflicts_with = "plugin")]
    model: Option<PathBuf>,
    /// Directory searched for plugins before `model.plugin_path` and the others
    /// (repeatable; each value may be a ':'-separated list).
    #[arg(long = "plugin-path", value_name = "DIR")]
    plugin_path: Vec<std::path::PathBuf>,
    /// Run duration, s (overrides `run.duration_s`).
    #[arg(long)]
    duration: Option<f64>,
    /// Pace the run to the wall clock at the tick rate (overrides `run.realtime`).
    #[arg(long)]
    realtime: bool,
    /// Hot-swap the model every S seconds of the learned run (overrides `run.swap_every_s`),
    /// cycling through the configured model and the `--swap-to` ones.
    #[arg(long, value_name = "S")]
    swap_every: Option<f64>,
    /// A model to swap to, `PLUGIN` or `PLUGIN:CONFIG_JSON` (repeatable; overrides
    /// `run.swap_to`), e.g. `--swap-to 'skygp:{"variant":"fast"}'`.
    #[arg(long, value_name = "PLUGIN[:JSON]")]
    swap_to: Vec<String>,
    /// Random seed of the simulator (overrides `sim.seed`).
    #[arg(long)]
    seed: Option<u64>,
    /// Announce the payload step to the learner when it happens, as a gripper's "payload
    /// changed" event would; it reacts by `learn.change.action` (overrides
    /// `run.announce_changes`).
    #[arg(long)]
    announce_changes: bool,
    /// Record the learned run: `FILE.csv`, one row per tick with the simulator's truth (the
    /// stream `gp-node eval` reads); any other path, a rosbag2 folder (MCAP, Jazzy
    /// `metadata.yaml`; it must not exist) with the topics the ROS node records — the
    /// measured joint states, the command, the residual estimates, change events and the
    /// robot description — which `gp-node learn --bag` reads.
    #[arg(long, value_name = "FILE.csv|DIR")]
    record: Option<PathBuf>,
    /// Write the rerun recording of both runs here, the nominal one under `nominal/`
    /// (default: gp-node-sim.rrd in the current directory unless --spawn, --connect or --no-viz).
    #[arg(long, value_name = "FILE.rrd", conflicts_with_all = ["spawn", "connect", "skip_viz"])]
    rrd: Option<PathBuf>,
    /// Stream both runs to a new rerun viewer (the `rerun` executable on PATH).
    #[arg(long, conflicts_with_all = ["connect", "skip_viz"])]
    spawn: bool,
    /// Stream both runs to a running rerun viewer (HOST:PORT or a rerun+http:// URL).
    #[arg(
        long,
        value_name = "ADDR",
        num_args = 0..=1,
        default_missing_value = viz::DEFAULT_CONNECT_ADDR,
        conflicts_with = "skip_viz"
    )]
    connect: Option<String>,
    /// Do not log to rerun.
    #[arg(long = "no-viz")]
    skip_viz: bool,
    /// Print the report as JSON (keys of DESIGN.md §6) instead of the table.
    #[arg(long)]
    json: bool,
    /// Print the parameters of this run as a parameter file, every value derived from the
    /// robot filled in (what the run would simulate), and exit without running. The MuJoCo
    /// driver reads such a file.
    #[arg(long)]
    print_params: bool,
    /// Skip the nominal run (the report's nominal columns then repeat the learned run).
    #[arg(long)]
    learned_only: bool,
}

fn progress_bar(label: &'static str, enabled: bool) -> impl FnMut(f64) {
    let bar = if enabled {
        indicatif::ProgressBar::new(100)
    } else {
        indicatif::ProgressBar::hidden()
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template("{prefix:>8} [{bar:40}] {pos:>3}% {elapsed}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_prefix(label);
    move |fraction: f64| {
        bar.set_position((fraction * 100.0).round() as u64);
        if fraction >= 1.0 {
            bar.finish();
        }
    }
}

/// The rerun target the flags ask for; the default file only if this build has rerun.
fn viz_target(args: &SimArgs) -> Option<VizTarget> {
    if args.skip_viz {
        None
    } else if args.spawn {
        Some(VizTarget::Spawn)
    } else if let Some(addr) = &args.connect {
        Some(VizTarget::Connect(addr.clone()))
    } else if let Some(path) = &args.rrd {
        Some(VizTarget::File(path.clone()))
    } else if viz::ENABLED {
        Some(VizTarget::File(PathBuf::from(DEFAULT_RRD)))
    } else {
        None
    }
}

/// `PLUGIN` or `PLUGIN:CONFIG_JSON`.
fn parse_swap_target(spec: &str) -> anyhow::Result<app::SwapTarget> {
    let (plugin, config) = match spec.split_once(':') {
        Some((plugin, json)) => (
            plugin,
            serde_json::from_str(json)
                .with_context(|| format!("--swap-to {spec}: the config is not JSON"))?,
        ),
        None => (spec, serde_json::json!({})),
    };
    anyhow::ensure!(!plugin.is_empty(), "--swap-to {spec}: no plugin name");
    Ok(app::SwapTarget {
        plugin: plugin.to_owned(),
        config,
    })
}

/// `--record` writes a CSV (else a rosbag2 folder).
fn is_csv(path: &std::path::Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"))
}

/// The robot's URDF text, for the recording's robot description.
fn robot_urdf(params: &NodeParams) -> anyhow::Result<String> {
    if params.robot.urdf.as_os_str().is_empty() {
        Ok(DEFAULT_URDF.to_owned())
    } else {
        std::fs::read_to_string(&params.robot.urdf)
            .with_context(|| format!("reading {}", params.robot.urdf.display()))
    }
}

/// Exit status of a run whose learned law tracked worse than the nominal law.
const LEARNED_WORSE: u8 = 3;

/// Runs `gp-node sim`.
pub fn run(args: SimArgs) -> anyhow::Result<ExitCode> {
    let viz_target = viz_target(&args);
    let mut params = params_from_args(&args)?;
    if params.run.realtime {
        // Before any thread allocates: the heap reserve is the process's one arena.
        app::realtime::prepare_memory(&params.realtime);
    }
    let robot = app::load_robot(&params)?;
    for warning in robot.warnings() {
        eprintln!("gp-node sim: warning: {warning}");
    }
    let derived = app::derive_defaults(&robot, &mut params)?;
    if args.print_params {
        print!(
            "{}",
            params
                .to_yaml()
                .map_err(|e| anyhow::anyhow!("printing the parameters: {e}"))?
        );
        return Ok(ExitCode::SUCCESS);
    }
    let show = !args.json && std::io::stderr().is_terminal();
    let mut viz = match &viz_target {
        Some(target) => Some(start_viz(target, &args, &params, &robot)?),
        None => None,
    };

    let nominal = if args.learned_only {
        None
    } else {
        Some(
            simulate::run_with_viz(
                &robot,
                &params,
                false,
                Series::Summaries,
                None,
                viz.as_mut(),
                &mut progress_bar("nominal", show),
            )
            .context("nominal run")?,
        )
    };
    let mut recorder = match &args.record {
        Some(path) if is_csv(path) => Some(RunRecord::Csv(Recorder::create(
            path,
            robot.nv(),
            params.learn.accel.clone(),
        )?)),
        Some(path) => {
            let urdf = robot_urdf(&params)?;
            Some(RunRecord::Bag(SimBag::create(
                path,
                &robot,
                Some(&urdf),
                &params,
            )?))
        }
        None => None,
    };
    let learned = simulate::run_with_viz(
        &robot,
        &params,
        true,
        Series::Summaries,
        recorder.as_mut(),
        viz.as_mut(),
        &mut progress_bar("learned", show),
    )
    .context("learned run")?;
    if let Some(viz) = viz.take() {
        finish_viz(viz, viz_target.as_ref())?;
    }
    if let Some(RunRecord::Bag(bag)) = recorder {
        let report = bag.finish();
        if let Some(error) = &report.error {
            anyhow::bail!("--record {}: {error}", report.path);
        }
        if report.dropped > 0 {
            eprintln!(
                "gp-node sim: warning: the recording dropped {} of {} messages (the disk was behind)",
                report.dropped,
                report.written + report.dropped
            );
        }
    }
    for warning in learned.realtime.iter().flat_map(|r| &r.warnings) {
        eprintln!("gp-node sim: warning: {warning}");
    }
    let nominal = nominal.unwrap_or_else(|| RunLog {
        // Not run: its columns repeat the learned run, its wall time is none.
        wall_secs: 0.0,
        ..learned.clone()
    });
    let report = SimReport::new(
        &params.model.plugin,
        args.scenario.name(),
        params.run.duration_s,
        robot.joint_names(),
        &nominal,
        &learned,
    );
    let model = serde_json::json!({
        "plugin": params.model.plugin,
        "config": app::effective_model_config(&params).map_err(|e| anyhow::anyhow!(e))?,
    });
    print_report(
        &report,
        &robot_summary(&robot, &params, &derived),
        &model,
        &args,
    )?;
    if report.law.learned_worse && !args.learned_only {
        eprintln!(
            "gp-node sim: the learned run tracked worse than the nominal run (RMS {:.4} rad \
             against {:.4} rad): exit status 3",
            report.law.pooled_rms_rad[1], report.law.pooled_rms_rad[0]
        );
        return Ok(ExitCode::from(LEARNED_WORSE));
    }
    Ok(ExitCode::SUCCESS)
}

/// The parameters (the file or the built-in ones), the command-line overrides, then the
/// scenario, checked together.
fn params_from_args(args: &SimArgs) -> anyhow::Result<NodeParams> {
    let mut params =
        super::robot_params(args.params.as_deref(), args.urdf.as_deref(), &args.joints)?;
    if let Some(plugin) = &args.plugin {
        params.model.select_plugin(plugin);
    }
    params.model.search_first(args.plugin_path.clone());
    if let Some(file) = &args.model {
        params.model.file = file.clone();
    }
    app::read_start_model(&mut params).map_err(anyhow::Error::msg)?;
    if let Some(duration) = args.duration {
        check_value("run.duration_s", duration).map_err(|e| anyhow::anyhow!("--duration: {e}"))?;
        params.run.duration_s = duration;
    }
    if args.realtime {
        params.run.realtime = true;
    }
    if let Some(every) = args.swap_every {
        anyhow::ensure!(every > 0.0, "--swap-every must be > 0 s, got {every}");
        check_value("run.swap_every_s", every).map_err(|e| anyhow::anyhow!("--swap-every: {e}"))?;
        params.run.swap_every_s = every;
    }
    if !args.swap_to.is_empty() {
        params.run.swap_to = args
            .swap_to
            .iter()
            .map(|spec| parse_swap_target(spec))
            .collect::<anyhow::Result<_>>()?;
    }
    if let Some(seed) = args.seed {
        params.sim.seed = seed;
    }
    if args.announce_changes {
        params.run.announce_changes = true;
    }
    args.scenario.apply(&mut params);
    params
        .check_ranges()
        .map_err(|e| anyhow::anyhow!("parameters after the command-line options: {e}"))?;
    Ok(params)
}

/// Starts logging to rerun, with the robot's URDF (the built-in one unless configured).
fn start_viz(
    target: &VizTarget,
    args: &SimArgs,
    params: &NodeParams,
    robot: &crate::robot::Model,
) -> anyhow::Result<Viz> {
    let urdf = if params.robot.urdf.as_os_str().is_empty() {
        DEFAULT_URDF.to_owned()
    } else {
        std::fs::read_to_string(&params.robot.urdf)
            .with_context(|| format!("reading {}", params.robot.urdf.display()))?
    };
    let name = format!("sim {} {}", args.scenario.name(), params.model.plugin);
    let payload = &params.sim.payload;
    // After `derive_defaults` the payload has its link (the tool link unless configured).
    let payload = payload.link.as_ref().map(|link| viz::VizPayload {
        link: link.clone(),
        com_m: payload.com_m,
        mass_kg: payload.mass_kg,
        step: payload.step.as_ref().map(|s| (s.at_secs, s.mass_kg)),
    });
    let urdf = if params.robot.urdf.as_os_str().is_empty() {
        viz::VizUrdf::text(&urdf)
    } else {
        viz::VizUrdf::file(&urdf, &params.robot.urdf)
    };
    let viz = Viz::start(
        target,
        robot,
        Some(&urdf),
        viz::VizSource::Simulation(payload.as_ref()),
        &name,
    )?;
    let visuals = viz.visuals();
    if visuals.meshes_drawn > 0 || !visuals.meshes_skipped.is_empty() {
        eprintln!("viz: {visuals}");
    }
    Ok(viz)
}

/// Ends the rerun log and says what it kept (and, for a file, how to open it).
fn finish_viz(viz: Viz, target: Option<&VizTarget>) -> anyhow::Result<()> {
    let summary = viz.finish()?;
    eprintln!(
        "viz: {} frames dropped ({} ticks and {} robot poses logged)",
        summary.dropped, summary.logged, summary.poses
    );
    if let Some(VizTarget::File(path)) = target {
        eprintln!(
            "viz: open it with: rerun {} (pip install rerun-sdk=={})",
            path.display(),
            viz::RERUN_VERSION
        );
    }
    Ok(())
}

/// The robot and the values the run used that were derived from it (`robot` in the JSON).
fn robot_summary(
    robot: &crate::robot::Model,
    params: &NodeParams,
    derived: &app::DerivedDefaults,
) -> serde_json::Value {
    let reference = &params.run.reference;
    serde_json::json!({
        "name": robot.name(),
        "urdf": robot.source_name(),
        "joints": robot.joint_names(),
        "moving_mass_kg": derived.moving_mass_kg,
        "warnings": robot.warnings(),
        "derived": derived.keys,
        "home_rad": reference.center_rad,
        "home_moved_from_mid_range": derived.home_moved,
        "home_gravity_effort_ratio": {"max": derived.home_gravity_ratio.0, "joint": derived.home_gravity_ratio.1},
        "amplitude_rad": reference.amplitude_rad,
        "frequencies_hz": reference.frequencies_hz,
        "kp_per_s2": params.control.kp_per_s2,
        "kd_per_s": params.control.kd_per_s,
        "epsilon": params.control.epsilon,
        "payload": {
            "link": params.sim.payload.link,
            "mass_kg": params.sim.payload.mass_kg,
            "com_m": params.sim.payload.com_m,
        },
        "torque_noise_std_nm": params.sim.torque_noise_std_nm,
        "coulomb_nm": params.sim.friction.coulomb_nm,
        "viscous_nms_per_rad": params.sim.friction.viscous_nms_per_rad,
        "armature_kgm2": params.sim.armature_kgm2,
    })
}

/// The report as JSON (`--json`, with the `robot` summary) or as the table (after a short
/// robot line), then where the recording went.
fn print_report(
    report: &SimReport,
    robot: &serde_json::Value,
    model: &serde_json::Value,
    args: &SimArgs,
) -> anyhow::Result<()> {
    if args.json {
        let mut value = report.to_json();
        value["robot"] = robot.clone();
        // The configuration the model ran with, the plugin's defaults included.
        value["model"] = model.clone();
        println!("{}", serde_json::to_string_pretty(&value)?);
    } else {
        println!(
            "robot '{}' ({}), {} joints, {:.2} kg moving; derived from it: {}",
            robot["name"].as_str().unwrap_or(""),
            robot["urdf"].as_str().unwrap_or(""),
            report.joints.len(),
            robot["moving_mass_kg"].as_f64().unwrap_or(f64::NAN),
            robot["derived"]
                .as_array()
                .map(|keys| keys
                    .iter()
                    .filter_map(|k| k.as_str())
                    .collect::<Vec<_>>()
                    .join(", "))
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "nothing (every key given)".into())
        );
        print!("{}", report.table());
        if let Some(path) = &args.record {
            println!("recorded               {}", path.display());
        }
    }
    Ok(())
}
