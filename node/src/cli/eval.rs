//! `gp-node eval`: stream a CSV through a model (predict, then update) and report accuracy,
//! speed and, with truth columns, the calibrated error-bound coverage. Argument parsing and
//! printing only; the work is in `crate::eval`.

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use super::eval_robot::RobotDynamics;
use crate::eval::report::FitSummary;
use crate::eval::{
    config::{self, FitMode},
    contaminate::{Contamination, InverseDynamics},
    dataset::{Centering, ColumnSelection, Dataset},
    predictions::PredictionWriter,
    refit::{RefitPlan, Refitting},
    runner::{self, CalibrateOn, Pacing, RunOptions},
};
use crate::plugin_host::{Plugin, SearchPath};
use anyhow::Context as _;

/// Arguments of `gp-node eval`.
#[derive(clap::Args, Debug)]
#[command(after_long_help = AFTER_HELP)]
pub struct EvalArgs {
    /// Model plugin name, looked up as lib<NAME>.so, <NAME>.so or libgpn_<NAME>.so in the
    /// --plugin-path directories, then $GPN_PLUGIN_PATH, then beside the executable; a path
    /// is refused (put its directory on --plugin-path and pass the name).
    #[arg(long, default_value = "skygp")]
    pub plugin: String,
    /// Directory to search for model plugins before the others (repeatable; each value may
    /// be a ':'-separated list).
    #[arg(long = "plugin-path", value_name = "DIR")]
    pub plugin_path: Vec<PathBuf>,
    /// Model configuration, a JSON object (keys depend on the plugin).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// CSV file with a header row; rows are streamed in file order.
    #[arg(long, value_name = "FILE.csv", required_unless_present = "bag")]
    pub data: Option<PathBuf>,
    /// A rosbag2 recording (a folder with metadata.yaml, or one .mcap or .db3 file) instead of
    /// --data: its joint states, time-aligned with the effort command where they carry no
    /// effort, go through the node's reader and learner as in `gp-node learn` (nothing is
    /// fitted), giving the robot stream `gp-node sim --record` writes: inputs `x_0..` =
    /// [q, q̇, q̈], targets `y_0..`, the residual per joint, N·m. Then the default inputs
    /// are the `x_*` columns, the targets the `y_*` columns, and --dt-secs the median time
    /// between samples.
    #[arg(long, value_name = "PATH", conflicts_with = "data")]
    pub bag: Option<PathBuf>,
    /// With --bag: the node's parameter file (robot, learner, `ros.torque_source`, topic
    /// names); default: the built-in parameters. The robot: --urdf, else `robot.urdf`, else
    /// the recording's /robot_description.
    #[arg(long, value_name = "FILE", requires = "bag")]
    pub params: Option<PathBuf>,
    /// With --bag: the sensor_msgs/JointState topic (default: `ros.topics.joint_states`).
    #[arg(long, value_name = "TOPIC", requires = "bag")]
    pub joint_states_topic: Option<String>,
    /// With --bag: the effort-command topic, used where a joint state has no effort
    /// (default: `ros.topics.command`).
    #[arg(long, value_name = "TOPIC", requires = "bag")]
    pub command_topic: Option<String>,
    /// With --bag: the robot-description topic, read without --urdf.
    #[arg(long, value_name = "TOPIC", default_value = "/robot_description")]
    pub robot_description_topic: String,
    /// Input columns (COLS). Default: every column that is not a target or truth column.
    #[arg(long, value_name = "COLS")]
    pub inputs: Option<String>,
    /// Target columns (COLS), one model output each. Default: the last column.
    #[arg(long, value_name = "COLS")]
    pub targets: Option<String>,
    /// Noise-free truth columns (COLS), one per target: adds truth RMSE and bound coverage.
    #[arg(long, value_name = "COLS")]
    pub truth: Option<String>,
    /// Predict at these columns (COLS, one per input) instead of the inputs, which are then
    /// only learned from. For a `gp-node sim --record` stream, `x_clean_0..` (the sample the
    /// true state gives) with `--truth y_true_clean_0..` scores the model where the robot
    /// was, not at a glitched measurement.
    #[arg(long, value_name = "COLS", conflicts_with = "contaminate")]
    pub predict_inputs: Option<String>,
    /// Hyperparameter file: `datasets.<NAME>`, a top-level `hyper` (as `--json` prints it) or
    /// the top level, holding `{sigma_f, sigma_n, lengthscales}` shared by all targets or an
    /// array of one such object per target; merged into the config's "hyper".
    #[arg(long, value_name = "FILE")]
    pub hyper: Option<PathBuf>,
    /// Which entry of the hyperparameter file's `datasets` to use.
    #[arg(long, value_name = "NAME", requires = "hyper")]
    pub hyper_key: Option<String>,
    /// Centring before streaming: whole-file means of inputs and targets (reference
    /// protocol), or none.
    #[arg(long, value_enum, default_value_t = CenterArg::WholeFile)]
    pub center: CenterArg,
    /// Print one JSON object (DESIGN.md §6 keys, plus `model_info`: the model's own
    /// diagnostics, e.g. VBKS's kernel belief) instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Override a config key: `--set variant=dense --set n_cal=4`; the value is parsed as
    /// JSON, else taken as a string; `a.b=v` sets a nested key. Applied last.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// How fitted hyperparameters are shared when none are given: lengthscales shared by
    /// all targets (σ_f, σ_n per target), or every target its own.
    #[arg(long, value_enum, default_value_t = FitModeArg::Shared)]
    pub fit_mode: FitModeArg,
    /// Samples used to fit hyperparameters when none are given.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub fit_samples: usize,
    /// Refits of the fitted hyperparameters as the stream grows (only when none are
    /// given): refit k is due after fit-samples·2^k samples and fits on fit-samples of all
    /// the samples so far, evenly spaced; a fresh model with the new values learns those
    /// samples and takes over, at the step the refit was due (with --rate: when ready).
    /// A refit takes over only if it predicts the samples it was not fitted on better than
    /// the values in use (held-out NLPD). 0: fit once.
    #[arg(long, value_name = "K", default_value_t = 3)]
    pub max_refits: usize,
    /// Time between samples passed to the model's update (seconds); default 1, or with
    /// --bag the recording's median time between samples.
    #[arg(long, value_name = "SECS")]
    pub dt_secs: Option<f64>,
    /// Floor on the latent variance in the MSLL: VAR in target units² (the reference
    /// protocol's 1e-3, for standardised targets), or `rel:F`, F times each target's variance
    /// over the stream (for targets in physical units, e.g. torques).
    #[arg(long, value_name = "VAR|rel:F", default_value = "1e-3", value_parser = parse_var_floor)]
    pub var_floor: VarFloor,
    /// Quantile level of the calibrated bound η_cal = β_cal·σ.
    #[arg(long, value_name = "LEVEL", default_value_t = 0.95)]
    pub bound_level: f64,
    /// Calibrate β_cal on the observed targets (as deployed) or on the truth columns.
    #[arg(long, value_enum, default_value_t = CalibrateArg::Target)]
    pub calibrate_on: CalibrateArg,
    /// Contaminate what the model learns from: KIND:RATE, KIND one of asymmetric, uniform,
    /// focused (RCaGP paper protocols) or, on a robot stream, torque-spike,
    /// encoder-spike[:SIZE] (needs --urdf), drop, duplicate (sensor and transport faults);
    /// RATE the fraction of samples. Predictions are made at the clean inputs and scored
    /// against the clean targets.
    #[arg(long, value_name = "KIND:RATE")]
    pub contaminate: Option<String>,
    /// Seed of the contamination.
    #[arg(long, value_name = "N", default_value_t = 0, requires = "contaminate")]
    pub contaminate_seed: u64,
    /// The robot a robot stream was recorded on (URDF), for `--contaminate encoder-spike`,
    /// which recomputes the targets τ − τ_RBD at the spiked positions.
    #[arg(long, value_name = "FILE.urdf")]
    pub urdf: Option<PathBuf>,
    /// The URDF's movable joints the stream's columns are, comma-separated (default: all).
    #[arg(long, value_name = "NAMES", requires = "urdf")]
    pub joints: Option<String>,
    /// Stream at HZ samples per second of wall-clock time, never waiting for the model's
    /// background work (what a robot at that rate gets). Default: after every update wait
    /// until the model has taken in every sample, so each prediction reflects all earlier
    /// ones.
    #[arg(long, value_name = "HZ", value_parser = positive_rate)]
    pub rate: Option<f64>,
    /// Longest wait for the model's background work at one step before eval fails
    /// (without --rate).
    #[arg(
        long,
        value_name = "SECS",
        default_value_t = 600.0,
        conflicts_with = "rate"
    )]
    pub wait_timeout: f64,
    /// Also write every prediction to this CSV: `step`, then per target `mu_T`, `sigma_T`
    /// (latent), `T` (the clean target) and the truth columns, in the data's units.
    #[arg(long, value_name = "FILE.csv")]
    pub predictions: Option<PathBuf>,
}

/// `--center` values.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CenterArg {
    /// Subtract whole-file means of inputs and targets.
    WholeFile,
    /// Raw values.
    None,
}

/// `--fit-mode` values.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FitModeArg {
    /// One set of lengthscales for all targets; σ_f and σ_n per target.
    Shared,
    /// σ_f, lengthscales and σ_n per target.
    PerOutput,
}

/// `--calibrate-on` values.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CalibrateArg {
    /// The observed targets.
    Target,
    /// The truth columns.
    Truth,
}

const AFTER_HELP: &str = "\
COLS: comma-separated items, each a header name (x1), a 0-based column index (3), or an
inclusive range of names or indices in header order (x1..x8, 0..7). Example:
  --inputs x1..x8 --targets y      --inputs 0..7,9 --targets 8

Protocol: step 0 is not predicted (SMSE_0 = 1, NLL_0 = 0); each later row is predicted, then
learned. SMSE and MSLL are prequential (anchors/README.md §1.4): \"final\" is the last value of
the running curve, \"mean\" the mean of the whole curve. The MSLL uses s² = max(σ², VAR) + σ_n²
with σ_n from the hyperparameters in use. Without --hyper and without \"hyper\" in the config,
hyperparameters are fitted by marginal likelihood on the first N samples (--fit-samples;
--fit-mode: lengthscales shared across targets, or per target). With --truth: RMSE of μ
against the truth, and the fraction of the second half of the stream where
|truth − μ| ≤ η_cal = β_cal·σ (σ the latent standard deviation; β_cal the LEVEL quantile of
|y − μ|/σ over the first half).

--contaminate KIND:RATE changes round(RATE·N) samples, chosen with --contaminate-seed, in the
copy streamed to update (and to a hyperparameter fit on the stream): asymmetric y − U(3σ̄, 9σ̄);
uniform ±U(3σ̄, 9σ̄) on two halves; focused x → med(X) + 0.1·MAD(X)·U(0,1) and
y → median(y) − 3·std(y) − 0.1·MAD(y)·U(0,1) (σ̄ the clean target's std). On a robot stream
(inputs [q, q̇, q̈], one residual target per joint, as `gp-node sim --record` writes): torque-spike
adds U(3σ̄, 9σ̄) to round(RATE·N) targets of every joint, chosen per joint; encoder-spike[:SIZE]
moves one joint's q by ±SIZE (default 0.05) in round(RATE·N) samples and recomputes every target
τ − τ_RBD at the moved q with --urdf; drop leaves round(RATE·N) samples out of update; duplicate
gives them to update twice. predict is called at the clean x, SMSE/MSLL use the clean y, truth
columns are untouched; β_cal is calibrated on the targets update received (--calibrate-on
target; not on dropped samples) or on the truth.

Readiness: after every update eval waits until the model's background work (RCaGP's worker,
VBKS's offline phase) has taken in every sample, unless --rate HZ streams at a wall-clock rate.
Per target, prior_fraction is the fraction of predictions made from the prior alone,
ready_at_step the first step answered from data, prior_fraction_after_ready the fraction from
the prior after it (null: the plugin does not report its readiness).

Example (the SkyGP reference protocol on KIN40K):
  gp-node eval --plugin skygp --data kin40k.csv --hyper hyperparams.json --hyper-key kin40k \\
      --set preset=reference --set variant=dense";

/// Runs `gp-node eval`.
pub fn run(args: EvalArgs) -> anyhow::Result<ExitCode> {
    let (data, period_s) = load_data(&args)?;
    let dt_secs = args.dt_secs.or(period_s).unwrap_or(1.0);
    // Opened before any fitting, so that a bad path fails at once.
    let mut writer = match &args.predictions {
        Some(path) => Some(
            std::fs::File::create(path)
                .map(std::io::BufWriter::new)
                .and_then(|file| PredictionWriter::new(file, &data))
                .with_context(|| format!("cannot write predictions: {}", path.display()))?,
        ),
        None => None,
    };
    let (d, p) = (data.input_dim(), data.output_dim());
    warn_floor_dominates(&args, &data);
    let (cfg, fit) = model_config(&args, &data)?;
    let noise_var = config::noise_vars(&cfg, p)?;
    let search = SearchPath::standard(&args.plugin_path);
    let plugin = Plugin::find(&args.plugin, &search)?;
    let model = plugin.create_json(&cfg, d, p)?;

    let opts = RunOptions {
        noise_var,
        var_floor: args.var_floor.value,
        var_floor_relative: args.var_floor.relative,
        dt_secs,
        bound_level: args.bound_level,
        calibrate_on: match args.calibrate_on {
            CalibrateArg::Target => CalibrateOn::Target,
            CalibrateArg::Truth => CalibrateOn::Truth,
        },
        pacing: pacing(&args)?,
    };
    let bar = progress_bar(&args, &data);
    let mut waiting = WaitNotice::new(&args.plugin, !args.json && !bar.is_hidden());
    let mut write_error = None;
    let refits = match (&fit, args.max_refits) {
        (Some(_), k) if k > 0 => k,
        _ => 0,
    };
    let plan = RefitPlan {
        first: args.fit_samples,
        max_refits: refits,
        max_points: args.fit_samples,
        // Asked only when refitting: other plugins' configs may name other kernels.
        kind: if refits > 0 {
            config::kernel_kind(&cfg)?
        } else {
            Default::default()
        },
        mode: fit_mode(args.fit_mode).0,
        background: matches!(opts.pacing, Pacing::Rate { .. }),
        dt_secs,
        ready_timeout: Duration::from_secs_f64(args.wait_timeout),
    };
    let mut slot = Refitting::new(model, plugin.clone(), cfg, plan);
    let mut report = runner::run_stream_in_slot(
        &args.plugin,
        &mut slot,
        &data,
        &opts,
        &mut |done| {
            bar.set_position(done as u64);
            bar.set_message("");
        },
        &mut |step, mean, var| {
            if let Some(w) = writer.as_mut().filter(|_| write_error.is_none()) {
                let written = w.row(step, mean, var, data.y_row(step), data.truth_row(step));
                write_error = written.err();
            }
        },
        &mut |step, behind, waited| waiting.report(&bar, step, behind, waited),
    )?;
    bar.finish_and_clear();
    if let (Some(w), Some(path)) = (writer, &args.predictions) {
        let finished = match write_error {
            Some(e) => Err(e),
            None => w.finish().map(drop),
        };
        finished.with_context(|| format!("cannot write predictions: {}", path.display()))?;
        eprintln!("eval: predictions written to {}", path.display());
    }
    // The model's own diagnostics (e.g. VBKS's kernel belief), if it reports any.
    report.model_info = slot
        .current()
        .describe()
        .context("asking the model for its diagnostics (describe)")?;
    // The config and hyperparameters of the model at the end (the last refit's).
    report.config = Some(plugin.effective_config(slot.config()));
    report.hyper = config::hyper_per_output(slot.config(), p);
    report.fit = fit;
    report.refits = slot.log().to_vec();

    if args.json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.to_table());
    }
    Ok(ExitCode::SUCCESS)
}

/// The selected columns of `--data` (or of the robot stream of `--bag`, with its sample
/// period), centred, contaminated if asked (each step reported).
fn load_data(args: &EvalArgs) -> anyhow::Result<(Dataset, Option<f64>)> {
    let mut selection = ColumnSelection {
        inputs: args.inputs.clone(),
        targets: args.targets.clone(),
        truth: args.truth.clone(),
        predict_inputs: args.predict_inputs.clone(),
    };
    let (mut data, period_s) = match (&args.bag, &args.data) {
        (Some(bag), _) => {
            let stream = super::eval_bag::robot_stream(bag, args)?;
            let nv = stream.joints.len();
            selection
                .inputs
                .get_or_insert_with(|| format!("x_0..x_{}", 3 * nv - 1));
            selection
                .targets
                .get_or_insert_with(|| format!("y_0..y_{}", nv - 1));
            let source = bag.display().to_string();
            let data = Dataset::from_reader(stream.to_csv().as_bytes(), &source, &selection)?;
            (data, stream.period_s)
        }
        (None, Some(path)) => (Dataset::from_path(path, &selection)?, None),
        (None, None) => anyhow::bail!("give --data FILE.csv or --bag PATH"),
    };
    if data.skipped_rows > 0 {
        eprintln!(
            "eval: left out {} rows with a `nan` (missing) value in a selected column",
            data.skipped_rows
        );
    }
    data.center(match args.center {
        CenterArg::WholeFile => Centering::WholeFile,
        CenterArg::None => Centering::None,
    });
    let mut robot = match &args.urdf {
        Some(path) => Some(
            RobotDynamics::load(path, args.joints.as_deref())
                .with_context(|| format!("cannot load the robot: {}", path.display()))?,
        ),
        None => None,
    };
    if let Some(spec) = &args.contaminate {
        let contamination = Contamination::parse(spec, args.contaminate_seed)?;
        let robot = robot.as_mut().map(|r| r as &mut dyn InverseDynamics);
        let summary = contamination.apply(&mut data, robot)?;
        eprintln!(
            "eval: contamination {}:{} (seed {}) of {} samples: {} {}",
            summary.kind.name(),
            summary.rate,
            summary.seed,
            data.len(),
            summary.count,
            summary.kind.counted()
        );
    }
    Ok((data, period_s))
}

/// The model's configuration: the file, the hyperparameter file, the `--set` overrides,
/// then hyperparameters fitted on the stream when none were given.
fn model_config(
    args: &EvalArgs,
    data: &Dataset,
) -> anyhow::Result<(serde_json::Value, Option<FitSummary>)> {
    let mut cfg = config::load_config(args.config.as_deref())?;
    if let Some(path) = &args.hyper {
        config::merge_hyper(
            &mut cfg,
            config::load_hyper_file(path, args.hyper_key.as_deref())?,
        )?;
    }
    for s in &args.set {
        config::apply_set(&mut cfg, s)?;
    }
    if config::has_hyper(&cfg) {
        return Ok((cfg, None));
    }
    let n_fit = args.fit_samples.min(data.len());
    let (mode, name, how) = fit_mode(args.fit_mode);
    eprintln!(
        "no hyperparameters given (--hyper or \"hyper\" in the config): fitting them by marginal likelihood on the first {n_fit} samples, {how}…"
    );
    let kind = config::kernel_kind(&cfg)?;
    let start = Instant::now();
    // Fitted on what the model is given (contaminated, if so).
    let (hyper, fit) = config::fit_hyper(&data.as_streamed(), kind, args.fit_samples, mode, None)
        .context("fitting hyperparameters")?;
    let seconds = start.elapsed().as_secs_f64();
    eprintln!(
        "fitted in {seconds:.2} s (NLML {:.3} from {:.3}): {hyper}",
        fit.nlml, fit.nlml_init
    );
    config::merge_hyper(&mut cfg, hyper)?;
    let summary = FitSummary {
        mode: name,
        samples: fit.n_used,
        seconds,
        nlml_init: fit.nlml_init,
        nlml: fit.nlml,
        nlml_per_output: fit.nlml_per_output,
    };
    Ok((cfg, Some(summary)))
}

/// The fit mode of `--fit-mode`, its report name, and how it reads.
fn fit_mode(arg: FitModeArg) -> (FitMode, &'static str, &'static str) {
    match arg {
        FitModeArg::Shared => (
            FitMode::SharedLengthscales,
            "shared",
            "lengthscales shared across targets",
        ),
        FitModeArg::PerOutput => (FitMode::PerOutput, "per_output", "one set per target"),
    }
}

/// `--var-floor`: a value, absolute or relative to each target's variance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VarFloor {
    /// The number given.
    pub value: f64,
    /// Given as `rel:F`.
    pub relative: bool,
}

fn parse_var_floor(s: &str) -> Result<VarFloor, String> {
    let (text, relative) = match s.strip_prefix("rel:") {
        Some(rest) => (rest, true),
        None => (s, false),
    };
    match text.trim().parse::<f64>() {
        Ok(value) if value.is_finite() && value >= 0.0 => Ok(VarFloor { value, relative }),
        _ => Err(format!(
            "expected a variance ≥ 0 (e.g. 1e-3) or rel:F (e.g. rel:1e-3), found {s}"
        )),
    }
}

/// Warns about each target whose variance an absolute MSLL floor dwarfs: its MSLL then
/// measures the floor, not the model.
fn warn_floor_dominates(args: &EvalArgs, data: &Dataset) {
    if args.var_floor.relative {
        return;
    }
    let floor = args.var_floor.value;
    for (name, var) in data.target_names.iter().zip(data.target_variances()) {
        if floor > 0.1 * var {
            eprintln!(
                "eval: warning: the MSLL's variance floor {floor:e} exceeds 10 % of target {name}'s variance ({var:.3e}); its MSLL measures the floor, not the model: use --var-floor rel:1e-3 (1e-3 of each target's variance) for targets in physical units"
            );
        }
    }
}

/// `--rate` or the wait for readiness.
fn pacing(args: &EvalArgs) -> anyhow::Result<Pacing> {
    Ok(match args.rate {
        Some(hz) => Pacing::Rate { hz },
        None => Pacing::WaitReady {
            timeout: Duration::try_from_secs_f64(args.wait_timeout)
                .ok()
                .filter(|t| !t.is_zero())
                .with_context(|| {
                    format!(
                        "--wait-timeout must be a positive number of seconds, found {}",
                        args.wait_timeout
                    )
                })?,
        },
    })
}

fn positive_rate(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(hz) if hz.is_finite() && hz > 0.0 => Ok(hz),
        _ => Err(format!(
            "expected a positive number of samples per second, found {s}"
        )),
    }
}

/// Tells the user that eval is waiting for the model: on the bar's message when there is a
/// bar, else one line on stderr per wait that lasts over a second (then every 10 s).
struct WaitNotice {
    plugin: String,
    bar_shown: bool,
    next_line: Duration,
    step: usize,
}

impl WaitNotice {
    fn new(plugin: &str, bar_shown: bool) -> Self {
        Self {
            plugin: plugin.to_string(),
            bar_shown,
            next_line: Duration::from_secs(1),
            step: usize::MAX,
        }
    }

    fn report(&mut self, bar: &indicatif::ProgressBar, step: usize, behind: u64, waited: Duration) {
        if step != self.step {
            self.step = step;
            self.next_line = Duration::from_secs(1);
        }
        let text = format!(
            "waiting for {}'s background work at sample {step}: {behind} samples behind, {:.0} s",
            self.plugin,
            waited.as_secs_f64()
        );
        if self.bar_shown {
            bar.set_message(text);
        } else if waited >= self.next_line {
            eprintln!("eval: {text}");
            self.next_line = waited + Duration::from_secs(10);
        }
    }
}

/// A bar over the samples on a terminal (hidden with `--json` or when stderr is not one).
fn progress_bar(args: &EvalArgs, data: &Dataset) -> indicatif::ProgressBar {
    if args.json || !std::io::stderr().is_terminal() {
        indicatif::ProgressBar::hidden()
    } else {
        let bar = indicatif::ProgressBar::new(data.len() as u64);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{bar:40} {pos}/{len} samples  {elapsed} (eta {eta})  {msg}",
        ) {
            bar.set_style(style);
        }
        bar
    }
}
