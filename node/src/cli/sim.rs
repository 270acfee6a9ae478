//! `gp-node sim`: the main job — the learning control loop on the embedded simulator.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use gp_node::simulate::{self, DEFAULT_PARAMS_YAML, NodeParams, Recorder, Scenario, SimReport};

/// Arguments of `gp-node sim`.
#[derive(clap::Args)]
pub struct SimArgs {
    /// Parameter file (ROS 2 parameter YAML, `gp_learning_node: ros__parameters: …`);
    /// default: the built-in `launch/sim_default.yaml`.
    #[arg(long)]
    params: Option<PathBuf>,
    /// Scenario applied on top of the parameters.
    #[arg(long, value_enum, default_value_t = Scenario::Default)]
    scenario: Scenario,
    /// Model plugin (overrides `model.plugin`).
    #[arg(long)]
    plugin: Option<String>,
    /// Run duration, s (overrides `run.duration_s`).
    #[arg(long)]
    duration: Option<f64>,
    /// Pace the run to the wall clock at the tick rate (overrides `run.realtime`).
    #[arg(long)]
    realtime: bool,
    /// Random seed of the simulator (overrides `sim.seed`).
    #[arg(long)]
    seed: Option<u64>,
    /// Write one CSV row per tick of the learned run (the stream `gp-node eval` reads).
    #[arg(long, value_name = "FILE.csv")]
    record: Option<PathBuf>,
    /// Print the report as JSON (keys of DESIGN.md §6) instead of the table.
    #[arg(long)]
    json: bool,
    /// Skip the nominal run (the report then compares against nothing).
    #[arg(long, hide = true)]
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

/// Runs `gp-node sim`.
pub fn run(args: SimArgs) -> anyhow::Result<ExitCode> {
    let mut params = match &args.params {
        Some(path) => NodeParams::from_file(path)?,
        None => NodeParams::from_yaml(DEFAULT_PARAMS_YAML)
            .map_err(|e| anyhow::anyhow!("built-in parameters: {e}"))?,
    };
    if let Some(plugin) = args.plugin {
        params.model.plugin = plugin;
    }
    if let Some(duration) = args.duration {
        anyhow::ensure!(
            duration.is_finite() && duration > 0.0,
            "--duration must be > 0 s, got {duration}"
        );
        params.run.duration_s = duration;
    }
    if args.realtime {
        params.run.realtime = true;
    }
    if let Some(seed) = args.seed {
        params.sim.seed = seed;
    }
    args.scenario.apply(&mut params);
    let robot = simulate::load_robot(&params)?;
    let show = !args.json && std::io::stderr().is_terminal();

    let nominal = if args.learned_only {
        None
    } else {
        Some(
            simulate::run(
                &robot,
                &params,
                false,
                None,
                &mut progress_bar("nominal", show),
            )
            .context("nominal run")?,
        )
    };
    let mut recorder = match &args.record {
        Some(path) => Some(Recorder::create(path, robot.nv())?),
        None => None,
    };
    let learned = simulate::run(
        &robot,
        &params,
        true,
        recorder.as_mut(),
        &mut progress_bar("learned", show),
    )
    .context("learned run")?;
    let nominal = nominal.unwrap_or_else(|| learned.clone());
    let report = SimReport::new(
        &params.model.plugin,
        args.scenario.name(),
        params.run.duration_s,
        robot.joint_names(),
        &nominal,
        &learned,
    );
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report.to_json())?);
    } else {
        print!("{}", report.table());
        if let Some(path) = &args.record {
            println!("recorded               {}", path.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}
