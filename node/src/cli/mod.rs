//! The `gp-node` command line: parse the subcommand, call the library, print one
//! actionable error line and return an exit code. Each subcommand lives in its own file.
//! In the library so that every executable of the CLI (`gp-node`, and `gp_learning_node`
//! of the ROS 2 package) is this one front end.

mod dynamics;
mod eval;
mod eval_bag;
mod eval_robot;
mod learn;
mod plugins;
mod ros2_control;
mod run;
mod sim;

use std::process::ExitCode;

use clap::{CommandFactory as _, FromArgMatches as _, Parser, Subcommand};

use crate::plugin_host::process;

/// Learn a robot's unmodelled dynamics online with Gaussian-process plugins.
#[derive(Parser)]
#[command(name = "gp-node", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Rigid-body dynamics tools (check the engine against reference values).
    #[command(subcommand)]
    Dynamics(dynamics::DynamicsCommand),
    /// Stream a CSV through a model, predict-then-update, and report accuracy and speed.
    // Boxed: its many flags make it the largest variant by far (clippy::large_enum_variant).
    Eval(Box<eval::EvalArgs>),
    /// Learn a model from a rosbag2 recording (MCAP or SQLite), as the node learns live, and
    /// write the model file `gp-node run` starts from.
    Learn(learn::LearnArgs),
    /// List the model plugins found, or print one plugin's configuration keys.
    Plugins(plugins::PluginsArgs),
    /// The main job: the learning control loop on the embedded simulator (nominal vs learned).
    Sim(sim::SimArgs),
    /// The ros2_control side of a robot for the node: the controllers YAML, or the joints
    /// for the shipped xacro macro (urdf/ros2_control.urdf.xacro), derived from its model.
    #[command(name = "ros2-control")]
    Ros2Control(ros2_control::Ros2ControlArgs),
    /// The ROS 2 node: joint states in, compensated effort command and estimates out.
    /// ROS 2 arguments follow `--ros-args` as for any node (`-r`, `-p`, `--params-file`).
    Run(run::RunArgs),
}

/// The parameter file (or the built-in parameters) with the robot of `--urdf` and the joints of
/// `--joints`, if given.
fn robot_params(
    file: Option<&std::path::Path>,
    urdf: Option<&std::path::Path>,
    joints: &[String],
) -> anyhow::Result<crate::app::NodeParams> {
    let mut params = match file {
        Some(path) => crate::app::NodeParams::from_file(path)?,
        None => crate::app::NodeParams::from_yaml(crate::app::DEFAULT_PARAMS_YAML)
            .map_err(|e| anyhow::anyhow!("built-in parameters: {e}"))?,
    };
    if let Some(urdf) = urdf {
        params.robot.urdf = urdf.to_path_buf();
    }
    if !joints.is_empty() {
        params.robot.joints = joints.to_vec();
    }
    Ok(params)
}

/// Runs the command line of this process as the executable `name` (shown in help and
/// usage lines).
pub fn main(name: &'static str) -> ExitCode {
    // The plugin process of `model.isolation: process` (started by the node, not a user
    // command: not in the help).
    let mut argv = std::env::args_os().skip(1);
    if argv.next().as_deref() == Some(std::ffi::OsStr::new(process::SUBCOMMAND)) {
        let rest: Vec<String> = argv.map(|a| a.to_string_lossy().into_owned()).collect();
        return ExitCode::from(u8::try_from(process::serve_main(&rest)).unwrap_or(1));
    }
    // Everything from `--ros-args` on is rcl's (it reads the process's arguments itself).
    let args: Vec<std::ffi::OsString> = std::env::args_os()
        .take_while(|a| a.as_os_str() != "--ros-args")
        .collect();
    let matches = Cli::command()
        .name(name)
        .bin_name(name)
        .get_matches_from(args);
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let result = match cli.command {
        Command::Dynamics(cmd) => dynamics::run(cmd),
        Command::Eval(args) => eval::run(*args),
        Command::Learn(args) => learn::run(args),
        Command::Plugins(args) => plugins::run(args),
        Command::Sim(args) => sim::run(args),
        Command::Run(args) => run::run(args),
        Command::Ros2Control(args) => ros2_control::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}
