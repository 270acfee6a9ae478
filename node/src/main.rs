//! `gp-node`: the command-line front end of gp-learning-node.
//!
//! A short `main`: parse the subcommand, call the library, print one actionable error line
//! and return an exit code. Each subcommand lives in its own file under `cli/`.

mod cli;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

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
    Dynamics(cli::dynamics::DynamicsCommand),
    /// Stream a CSV through a model, predict-then-update, and report accuracy and speed.
    Eval(cli::eval::EvalArgs),
    /// List the model plugins found, or print one plugin's configuration keys.
    Plugins(cli::plugins::PluginsArgs),
    /// The main job: the learning control loop on the embedded simulator (nominal vs learned).
    Sim(cli::sim::SimArgs),
    /// The ROS 2 node: joint states in, compensated effort command and estimates out.
    /// ROS 2 arguments follow `--ros-args` as for any node (`-r`, `-p`, `--params-file`).
    Run(cli::run::RunArgs),
}

fn main() -> ExitCode {
    // Everything from `--ros-args` on is rcl's (it reads the process's arguments itself).
    let args: Vec<std::ffi::OsString> = std::env::args_os()
        .take_while(|a| a.as_os_str() != "--ros-args")
        .collect();
    let cli = Cli::parse_from(args);
    let result = match cli.command {
        Command::Dynamics(cmd) => cli::dynamics::run(cmd),
        Command::Eval(args) => cli::eval::run(args),
        Command::Plugins(args) => cli::plugins::run(args),
        Command::Sim(args) => cli::sim::run(args),
        Command::Run(args) => cli::run::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}
