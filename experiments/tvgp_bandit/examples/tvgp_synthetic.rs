//! The full-size synthetic experiment of the time-varying GP bandit spec (§5.1): SparQ-GP-UCB,
//! its budget-matched ablations and the baselines, T = 500, 40 seeds; prints the Markdown
//! tables of `docs/results/tvgp-synthetic.md`.
//!
//! ```sh
//! cargo run --release -p gpn_tvgp_bandit --example tvgp_synthetic -- --seeds 40 --threads 2
//! ```
//!
//! Flags (all optional): `--seeds N` (40), `--horizon T` (500), `--grid-step h` (0.1),
//! `--threads k` (2), `--tune-seeds N` (3, seeds 1000…), `--sweep-seeds N` (10).

use std::time::Instant;

use gpn_tvgp_bandit::bandit::{BanditConfig, Method, RunLog, SYNTHETIC_HYPER, SparqConfig};
use gpn_tvgp_bandit::experiment::{Entry, markdown_table, mean_std, run_seeds, summarize, tune};
use gpn_tvgp_bandit::problem::{Synthetic1d, TimeVaryingProblem};
use gpn_tvgp_bandit::side_query::{Placement, QSchedule};

struct Args {
    seeds: u64,
    horizon: usize,
    grid_step: f64,
    threads: usize,
    tune_seeds: u64,
    sweep_seeds: u64,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        seeds: 40,
        horizon: 500,
        grid_step: 0.1,
        threads: 2,
        tune_seeds: 3,
        sweep_seeds: 10,
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < argv.len() {
        let value = argv
            .get(i + 1)
            .ok_or_else(|| format!("{} needs a value", argv[i]))?;
        let bad = |_| format!("bad value {value} for {}", argv[i]);
        match argv[i].as_str() {
            "--seeds" => a.seeds = value.parse().map_err(bad)?,
            "--horizon" => a.horizon = value.parse().map_err(bad)?,
            "--grid-step" => a.grid_step = value.parse().map_err(|_| format!("bad {value}"))?,
            "--threads" => a.threads = value.parse().map_err(bad)?,
            "--tune-seeds" => a.tune_seeds = value.parse().map_err(bad)?,
            "--sweep-seeds" => a.sweep_seeds = value.parse().map_err(bad)?,
            other => return Err(format!("unknown flag {other}")),
        }
        i += 2;
    }
    Ok(a)
}

fn main() {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = report(&args) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

fn report(a: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let started = Instant::now();
    let p = Synthetic1d::with_horizon(a.horizon);
    let mut config = BanditConfig::synthetic_default(a.horizon)?;
    config.grid_step = a.grid_step;
    print_setup(a, &p, &config);
    let tuned = tune_baselines(a, &p, &config)?;
    let sparq_logs = main_table(a, &p, &config, tuned)?;
    print_step_log(a, &sparq_logs);
    budget_sweep(a, &p, &config)?;
    eprintln!("total {:.1} s", started.elapsed().as_secs_f64());
    Ok(())
}

/// The setup line and the reference policies' regret.
fn print_setup(a: &Args, p: &Synthetic1d, config: &BanditConfig) {
    let s2 = p.noise_var();
    let (sf, ell, m0) = SYNTHETIC_HYPER;
    println!(
        "Setup: T = {}, {} seeds (0…{}), grid step {}, σ² = {s2}, SE kernel σ_f = {sf}, ℓ = {ell}, m0 = {m0}, δ = {}, B = {}, β scale {}.\n",
        a.horizon,
        a.seeds,
        a.seeds.saturating_sub(1),
        a.grid_step,
        config.delta,
        config.b_norm,
        config.beta_scale
    );
    println!(
        "Reference policies (average regret over t = 1…{}): stay at 0 = {:.4}, uniform random = {:.4}, stay at 10π = {:.4}.\n",
        a.horizon,
        p.stay_regret(0.0, a.horizon),
        p.random_regret(a.horizon),
        p.stay_regret(10.0 * std::f64::consts::PI, a.horizon)
    );
}

/// The baselines' parameter grids, one family each.
fn baseline_families() -> Vec<(&'static str, Vec<Entry>)> {
    vec![
        (
            "SW-GP-UCB",
            [10, 25, 50, 100]
                .iter()
                .map(|&w| Entry::new(format!("SW-GP-UCB (W={w})"), Method::sw_gp_ucb(w)))
                .collect(),
        ),
        (
            "R-GP-UCB",
            [10, 25, 50, 100]
                .iter()
                .map(|&w| Entry::new(format!("R-GP-UCB (w={w})"), Method::r_gp_ucb(w)))
                .collect(),
        ),
        (
            "TV-GP-UCB",
            [0.001, 0.01, 0.03, 0.1]
                .iter()
                .map(|&e| Entry::new(format!("TV-GP-UCB (ε={e})"), Method::tv_gp_ucb(e)))
                .collect(),
        ),
        (
            "W-GP-UCB",
            [0.9, 0.95, 0.99]
                .iter()
                .map(|&g| Entry::new(format!("W-GP-UCB (γ={g})"), Method::w_gp_ucb(g)))
                .collect(),
        ),
    ]
}

/// Tunes each baseline family on separate seeds (§5.1 [rec]), prints the tuning table and
/// returns the chosen entry of every family.
fn tune_baselines(
    a: &Args,
    p: &Synthetic1d,
    config: &BanditConfig,
) -> Result<Vec<Entry>, Box<dyn std::error::Error>> {
    let tune_seeds: Vec<u64> = (1000..1000 + a.tune_seeds).collect();
    println!("## Baseline tuning (mean R_T/T on seeds {tune_seeds:?})\n");
    println!("| baseline | parameter: mean R_T/T | chosen |\n|---|---|---|");
    let mut tuned = Vec::new();
    for (family, candidates) in &baseline_families() {
        let (best, scores) = tune(p, candidates, config, &tune_seeds, a.threads)?;
        let cells: Vec<String> = candidates
            .iter()
            .zip(&scores)
            .map(|(c, s)| format!("{}: {s:.3}", c.name))
            .collect();
        println!(
            "| {family} | {} | {} |",
            cells.join("; "),
            candidates[best].name
        );
        tuned.push(candidates[best].clone());
    }
    println!();
    Ok(tuned)
}

/// SparQ-GP-UCB, its variants and ablations, and GP-UCB (the tuned baselines follow).
fn main_entries(s2: f64) -> Vec<Entry> {
    vec![
        Entry::new("SparQ-GP-UCB (greedy DPP)", Method::sparq(s2)),
        Entry::new("SparQ-GP-UCB (greedy + swap chain)", Method::sparq_mcmc(s2)),
        Entry::new(
            "SparQ-GP-UCB (fixed Q = 37)",
            Method::SparQ(SparqConfig {
                schedule: QSchedule::Fixed(37),
                ..SparqConfig::paper(s2)
            }),
        ),
        Entry::new("ablation: expert answers only", Method::expert_only(s2)),
        Entry::new(
            "ablation: Q_t at random past points",
            Method::random_past_refresh(s2),
        ),
        Entry::new(
            "ablation: Q_t at random points of D",
            Method::random_domain_refresh(s2),
        ),
        Entry::new(
            "ablation: GP-UCB + Q_t at random points of D",
            Method::gp_ucb_random_queries(s2),
        ),
        Entry::new(
            "injection + window, no side queries",
            Method::injection_window(s2),
        ),
        Entry::new(
            "injection, no window, no side queries",
            Method::injection_all(s2),
        ),
        Entry::new("GP-UCB", Method::gp_ucb()),
    ]
}

/// Runs every entry (then the `tuned` baselines) on the main seeds and prints the main
/// table; returns the logs of the first entry (SparQ-GP-UCB).
fn main_table(
    a: &Args,
    p: &Synthetic1d,
    config: &BanditConfig,
    tuned: Vec<Entry>,
) -> Result<Vec<RunLog>, Box<dyn std::error::Error>> {
    let seeds: Vec<u64> = (0..a.seeds).collect();
    let mut entries = main_entries(p.noise_var());
    entries.extend(tuned);
    let mut summaries = Vec::new();
    let mut sparq_logs: Vec<RunLog> = Vec::new();
    for e in &entries {
        let t0 = Instant::now();
        let logs = run_seeds(p, &e.method, config, &seeds, a.threads)?;
        eprintln!("{}: {:.1} s", e.name, t0.elapsed().as_secs_f64());
        if sparq_logs.is_empty() {
            sparq_logs = logs.clone();
        }
        summaries.push(summarize(&e.name, &logs));
    }
    println!("## Main table ({} seeds)\n", a.seeds);
    println!("{}", markdown_table(&summaries));
    Ok(sparq_logs)
}

/// Per-step log of SparQ (§5.3: Q_t, kept, β, Ĉ_KL, wall time), means over seeds.
fn print_step_log(a: &Args, sparq_logs: &[RunLog]) {
    println!("## SparQ-GP-UCB per-step log (mean over seeds)\n");
    println!(
        "| t | Q_t | kept | model size | β_t+1 | Ĉ_KL | ε_t | R_t/t | ms |\n|---|---|---|---|---|---|---|---|---|"
    );
    for t in [1usize, 2, 5, 10, 50, 100, 200, 300, 400, 500] {
        if t > a.horizon {
            continue;
        }
        let n = sparq_logs.len().max(1) as f64;
        let m = |f: &dyn Fn(&RunLog) -> f64| sparq_logs.iter().map(f).sum::<f64>() / n;
        let s = |l: &RunLog| l.steps[t - 1];
        println!(
            "| {t} | {:.1} | {:.1} | {:.1} | {:.2} | {:.2e} | {:.2e} | {:.3} | {:.2} |",
            m(&|l| s(l).queries as f64),
            m(&|l| s(l).kept as f64),
            m(&|l| s(l).model_size as f64),
            m(&|l| s(l).beta),
            m(&|l| s(l).c_kl),
            m(&|l| s(l).eps_t),
            m(&|l| l.average_regret_at(t)),
            m(&|l| s(l).wall_ns as f64 / 1e6),
        );
    }
    println!();
}

/// Budget sweep: regret against evaluations per step, DPP vs random placement.
fn budget_sweep(
    a: &Args,
    p: &Synthetic1d,
    config: &BanditConfig,
) -> Result<(), Box<dyn std::error::Error>> {
    let s2 = p.noise_var();
    let sweep_seeds: Vec<u64> = (0..a.sweep_seeds).collect();
    println!(
        "## Budget sweep: fixed Q per step ({} seeds; Q = 0 is injection + window alone)\n",
        a.sweep_seeds
    );
    println!(
        "| Q | evals/step | DPP placement R_T/T | random points of D R_T/T | random past points R_T/T |\n|---|---|---|---|---|"
    );
    let base = SparqConfig::paper(s2);
    for q in [0usize, 1, 2, 4, 8, 16, 37] {
        let mut cells = Vec::new();
        let mut evals = 0.0;
        for placement in [
            Placement::Greedy,
            Placement::RandomDomain,
            Placement::RandomPast,
        ] {
            let method = if q == 0 {
                Method::injection_window(s2)
            } else {
                Method::SparQ(SparqConfig {
                    schedule: QSchedule::Fixed(q),
                    placement,
                    ..base.clone()
                })
            };
            let logs = run_seeds(p, &method, config, &sweep_seeds, a.threads)?;
            let finals: Vec<f64> = logs.iter().map(RunLog::average_regret).collect();
            let (mean, std) = mean_std(&finals);
            if placement == Placement::Greedy {
                evals = logs
                    .iter()
                    .map(|l| l.total_evaluations() as f64)
                    .sum::<f64>()
                    / logs.len().max(1) as f64
                    / a.horizon as f64;
            }
            cells.push(format!("{mean:.3} ± {std:.3}"));
        }
        println!("| {q} | {evals:.2} | {} |", cells.join(" | "));
    }
    println!();
    Ok(())
}
