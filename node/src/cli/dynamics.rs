//! `gp-node dynamics ...`: argument parsing and printing for the rigid-body dynamics tools;
//! the work is done by `crate::robot` (the comparison by `robot::fixture_check`).

use std::path::PathBuf;
use std::process::ExitCode;

use crate::robot::Model;
use crate::robot::fixture_check::{CheckReport, Fixture, RELATIVE_TOLERANCE, check_fixture};

/// Rigid-body dynamics subcommands.
#[derive(clap::Subcommand)]
pub enum DynamicsCommand {
    /// Compare RNEA, CRBA, gravity, nonlinear effects and ABA with reference values.
    ///
    /// Exit status: 0 if every quantity agrees within 1e-8·max(1, max|reference|), 1 if one
    /// disagrees, 2 on bad input (unreadable files, joints that do not match by name, ...).
    Check(CheckArgs),
}

/// Arguments of `gp-node dynamics check`.
#[derive(clap::Args)]
pub struct CheckArgs {
    /// The robot description (URDF; meshes are never opened).
    #[arg(long, value_name = "FILE.urdf")]
    pub urdf: PathBuf,
    /// Reference values (JSON, format in fixtures/dynamics/README.md); joints matched by name.
    #[arg(long, value_name = "FILE.json")]
    pub fixture: PathBuf,
}

/// Runs a dynamics subcommand; `Err` is bad input (exit 2 in `main`).
pub fn run(cmd: DynamicsCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        DynamicsCommand::Check(args) => check(&args),
    }
}

fn check(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let model = Model::from_urdf_file(&args.urdf)?;
    let fixture = Fixture::from_file(&args.fixture)?;
    let report = check_fixture(&model, &fixture)?;
    print!("{}", render(&report, args));
    Ok(if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn render(report: &CheckReport, args: &CheckArgs) -> String {
    let mut out = format!(
        "dynamics check: robot '{}', {} joints, {} samples\n  urdf:    {}\n  fixture: {}\n\n",
        report.robot,
        report.nv,
        report.n_samples,
        args.urdf.display(),
        args.fixture.display()
    );
    out += &format!(
        "{:<10} {:>11} {:>11} {:>11}  {:<6} worst at (sample, joint)\n",
        "quantity", "max |Δ|", "max |ref|", "tolerance", "result"
    );
    for q in &report.quantities {
        out += &format!(
            "{:<10} {:>11.3e} {:>11.3e} {:>11.3e}  {:<6} #{} {}\n",
            q.name,
            q.max_abs_diff,
            q.max_abs_ref,
            q.tolerance,
            if q.passed { "PASS" } else { "FAIL" },
            q.worst_sample,
            q.worst_entry
        );
    }
    let failed: Vec<&str> = report
        .quantities
        .iter()
        .filter(|q| !q.passed)
        .map(|q| q.name)
        .collect();
    if failed.is_empty() {
        out += &format!(
            "\nPASS: all {} quantities agree within {RELATIVE_TOLERANCE:e}·max(1, max|ref|)\n",
            report.quantities.len()
        );
    } else {
        out += &format!(
            "\nFAIL: {} disagree beyond {RELATIVE_TOLERANCE:e}·max(1, max|ref|)\n",
            failed.join(", ")
        );
    }
    out
}
