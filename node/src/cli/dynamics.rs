//! `gp-node dynamics ...`: argument parsing and printing for the rigid-body dynamics tools;
//! the work is done by `crate::robot` (the comparison by `robot::fixture_check`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;

use crate::robot::Model;
use crate::robot::fixture_check::{
    CheckReport, FD_TOLERANCE_PER_COND, Fixture, RELATIVE_TOLERANCE, check_fixture,
};

/// Rigid-body dynamics subcommands.
#[derive(clap::Subcommand)]
pub enum DynamicsCommand {
    /// Compare RNEA, CRBA, gravity, nonlinear effects and ABA with reference values, for one
    /// robot (--urdf, --fixture) or every robot of a folder (--dir).
    ///
    /// Agreement: τ, M, g and C q̇ + g within 1e-8·max(1, max|reference|); q̈ of forward
    /// dynamics within cond(M)·1e-14·max(1, max|reference|) per sample. Exit status: 0 if
    /// every quantity of every robot agrees, 1 if one disagrees, 2 on bad input (unreadable
    /// files, joints that do not match by name, ...).
    Check(CheckArgs),
}

/// Arguments of `gp-node dynamics check`.
#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("what").required(true).args(["urdf", "dir"])))]
pub struct CheckArgs {
    /// The robot description (URDF; meshes are never opened).
    #[arg(long, value_name = "FILE.urdf", requires = "fixture")]
    pub urdf: Option<PathBuf>,
    /// Reference values (JSON, format in testing/robots/README.md); joints matched by name.
    #[arg(long, value_name = "FILE.json", requires = "urdf")]
    pub fixture: Option<PathBuf>,
    /// A folder of robots: every NAME.json beside a NAME.urdf (e.g. testing/robots).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["urdf", "fixture"])]
    pub dir: Option<PathBuf>,
}

/// Runs a dynamics subcommand; `Err` is bad input (exit 2 in `main`).
pub fn run(cmd: DynamicsCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        DynamicsCommand::Check(args) => check(&args),
    }
}

fn check(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let pairs = match (&args.dir, &args.urdf, &args.fixture) {
        (Some(dir), _, _) => robots_in(dir)?,
        (None, Some(urdf), Some(fixture)) => vec![(urdf.clone(), fixture.clone())],
        _ => anyhow::bail!("give --urdf FILE --fixture FILE, or --dir DIR"),
    };
    let mut summary = Vec::with_capacity(pairs.len());
    for (urdf, fixture_path) in &pairs {
        let model = Model::from_urdf_file(urdf)?;
        for warning in model.warnings() {
            eprintln!("warning: {warning}");
        }
        let fixture = Fixture::from_file(fixture_path)?;
        let report = check_fixture(&model, &fixture)?;
        print!("{}", render(&report, urdf, fixture_path));
        summary.push(report);
    }
    if summary.len() > 1 {
        print!("{}", render_summary(&summary));
    }
    Ok(if summary.iter().all(CheckReport::passed) {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Every `NAME.json` of `dir` with a `NAME.urdf` beside it, by name.
fn robots_in(dir: &Path) -> anyhow::Result<Vec<(PathBuf, PathBuf)>> {
    let mut pairs = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "json") {
            let urdf = path.with_extension("urdf");
            if urdf.is_file() {
                pairs.push((urdf, path));
            }
        }
    }
    pairs.sort();
    anyhow::ensure!(
        !pairs.is_empty(),
        "{}: no NAME.json with a NAME.urdf beside it",
        dir.display()
    );
    Ok(pairs)
}

/// One line per robot: joints, cond(M), the worst quantity (|Δ| / tolerance) and the verdict.
fn render_summary(reports: &[CheckReport]) -> String {
    let mut out = format!(
        "\nsummary: {} robots\n{:<24} {:>4} {:>10} {:>10} {:<10} {:>10}  result\n",
        reports.len(),
        "robot",
        "nv",
        "cond(M)max",
        "median",
        "worst",
        "|Δ|/tol"
    );
    for r in reports {
        let worst = r.quantities.iter().max_by(|a, b| {
            (a.max_abs_diff / a.tolerance).total_cmp(&(b.max_abs_diff / b.tolerance))
        });
        let (name, ratio) =
            worst.map_or(("-", f64::NAN), |q| (q.name, q.max_abs_diff / q.tolerance));
        out += &format!(
            "{:<24} {:>4} {:>10.3e} {:>10.3e} {:<10} {:>10.3e}  {}\n",
            r.robot,
            r.nv,
            r.cond_m_max,
            r.cond_m_median,
            name,
            ratio,
            if r.passed() { "PASS" } else { "FAIL" }
        );
    }
    out
}

fn render(report: &CheckReport, urdf: &Path, fixture: &Path) -> String {
    let mut out = format!(
        "dynamics check: robot '{}', {} joints, {} samples, cond(M) max {:.3e} median {:.3e}\n  \
         urdf:    {}\n  fixture: {}\n\n",
        report.robot,
        report.nv,
        report.n_samples,
        report.cond_m_max,
        report.cond_m_median,
        urdf.display(),
        fixture.display()
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
    let rule = format!(
        "{RELATIVE_TOLERANCE:e}·max(1, max|ref|), ddq_aba within cond(M)·\
         {FD_TOLERANCE_PER_COND:e}·max(1, max|ref|) per sample"
    );
    if failed.is_empty() {
        out += &format!(
            "\nPASS: all {} quantities agree within {rule}\n",
            report.quantities.len()
        );
    } else {
        out += &format!("\nFAIL: {} disagree beyond {rule}\n", failed.join(", "));
    }
    out
}
