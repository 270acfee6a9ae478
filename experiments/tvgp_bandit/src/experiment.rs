//! Many seeds of many methods: runs them on a few threads, tunes the baselines' window,
//! restart and forgetting parameters on separate seeds (§5.1 [rec]), and summarises into
//! the table of `docs/results/tvgp-synthetic.md`.

use super::bandit::{BanditConfig, Method, RunLog, run};
use super::problem::TimeVaryingProblem;
use super::{Result, TvgpError};

/// A method with its table label.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Label, e.g. `SW-GP-UCB (W=25)`.
    pub name: String,
    /// The method.
    pub method: Method,
}

impl Entry {
    /// An entry.
    pub fn new(name: impl Into<String>, method: Method) -> Self {
        Self {
            name: name.into(),
            method,
        }
    }
}

/// Runs `method` for every seed on up to `threads` threads; logs in seed order.
pub fn run_seeds<P: TimeVaryingProblem>(
    problem: &P,
    method: &Method,
    config: &BanditConfig,
    seeds: &[u64],
    threads: usize,
) -> Result<Vec<RunLog>> {
    let threads = threads.clamp(1, seeds.len().max(1));
    let chunk = seeds.len().div_ceil(threads).max(1);
    let results: Vec<Result<Vec<RunLog>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = seeds
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|&s| run(problem, method, config, s))
                        .collect::<Result<Vec<_>>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(TvgpError::Config("a run panicked".into())))
            })
            .collect()
    });
    let mut out = Vec::with_capacity(seeds.len());
    for r in results {
        out.extend(r?);
    }
    Ok(out)
}

/// Mean and (population) standard deviation.
pub fn mean_std(values: &[f64]) -> (f64, f64) {
    let n = values.len().max(1) as f64;
    let m = values.iter().sum::<f64>() / n;
    let v = values.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n;
    (m, v.sqrt())
}

/// One method's numbers over seeds.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Label.
    pub name: String,
    /// Runs.
    pub runs: usize,
    /// R_T/T mean and std over runs.
    pub avg_regret: (f64, f64),
    /// Mean R_t/t at each checkpoint of [`Summary::checkpoints`].
    pub avg_regret_at: Vec<f64>,
    /// Checkpoints t.
    pub checkpoints: Vec<usize>,
    /// Mean instantaneous regret over the last 100 steps.
    pub late_regret: f64,
    /// Mean Q_T, kept observations at T, β_{T+1}, Ĉ_KL at T.
    pub q_last: f64,
    /// Kept bandit observations at T.
    pub kept_last: f64,
    /// β at T.
    pub beta_last: f64,
    /// Ĉ_KL at T.
    pub c_kl_last: f64,
    /// Mean evaluations (plays + queries) per run.
    pub evaluations: f64,
    /// Mean wall time per step, ms.
    pub ms_per_step: f64,
}

/// Summarises runs of one method.
pub fn summarize(name: &str, logs: &[RunLog]) -> Summary {
    let horizon = logs.first().map_or(0, |l| l.steps.len());
    let checkpoints: Vec<usize> = (1..=5)
        .map(|k| horizon * k / 5)
        .filter(|&t| t > 0)
        .collect();
    let finals: Vec<f64> = logs.iter().map(RunLog::average_regret).collect();
    let avg =
        |f: &dyn Fn(&RunLog) -> f64| logs.iter().map(f).sum::<f64>() / logs.len().max(1) as f64;
    let last =
        |f: fn(&super::bandit::StepLog) -> f64| avg(&|l: &RunLog| l.steps.last().map_or(0.0, f));
    Summary {
        name: name.to_string(),
        runs: logs.len(),
        avg_regret: mean_std(&finals),
        avg_regret_at: checkpoints
            .iter()
            .map(|&t| avg(&|l: &RunLog| l.average_regret_at(t)))
            .collect(),
        checkpoints,
        late_regret: avg(&|l: &RunLog| {
            l.mean_regret_between(horizon.saturating_sub(99).max(1), horizon)
        }),
        q_last: last(|s| s.queries as f64),
        kept_last: last(|s| s.kept as f64),
        beta_last: last(|s| s.beta),
        c_kl_last: last(|s| s.c_kl),
        evaluations: avg(&|l: &RunLog| l.total_evaluations() as f64),
        ms_per_step: avg(&|l: &RunLog| {
            l.steps.iter().map(|s| s.wall_ns as f64).sum::<f64>()
                / 1e6
                / l.steps.len().max(1) as f64
        }),
    }
}

/// Picks the entry with the lowest mean R_T/T on `seeds`; returns (index, each mean).
pub fn tune<P: TimeVaryingProblem>(
    problem: &P,
    candidates: &[Entry],
    config: &BanditConfig,
    seeds: &[u64],
    threads: usize,
) -> Result<(usize, Vec<f64>)> {
    let mut scores = Vec::with_capacity(candidates.len());
    for c in candidates {
        let logs = run_seeds(problem, &c.method, config, seeds, threads)?;
        let finals: Vec<f64> = logs.iter().map(RunLog::average_regret).collect();
        scores.push(mean_std(&finals).0);
    }
    let best = scores
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.total_cmp(b.1))
        .map(|(i, _)| i)
        .ok_or_else(|| TvgpError::Config("nothing to tune".into()))?;
    Ok((best, scores))
}

/// A Markdown table of summaries.
pub fn markdown_table(summaries: &[Summary]) -> String {
    let Some(first) = summaries.first() else {
        return String::new();
    };
    let mut s = String::from("| method | R_T/T (mean ± std) |");
    for t in &first.checkpoints {
        s.push_str(&format!(" R_t/t @{t} |"));
    }
    s.push_str(" mean r_t, last 100 | Q_T | kept | β_T | Ĉ_KL | evals/run | ms/step |\n|---|---|");
    for _ in &first.checkpoints {
        s.push_str("---|");
    }
    s.push_str("---|---|---|---|---|---|---|\n");
    for m in summaries {
        s.push_str(&format!(
            "| {} | {:.3} ± {:.3} |",
            m.name, m.avg_regret.0, m.avg_regret.1
        ));
        for v in &m.avg_regret_at {
            s.push_str(&format!(" {v:.3} |"));
        }
        s.push_str(&format!(
            " {:.3} | {:.1} | {:.1} | {:.2} | {:.1e} | {:.0} | {:.2} |\n",
            m.late_regret,
            m.q_last,
            m.kept_last,
            m.beta_last,
            m.c_kl_last,
            m.evaluations,
            m.ms_per_step
        ));
    }
    s
}
