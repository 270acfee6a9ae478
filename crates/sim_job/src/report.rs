//! The main job's report: tracking of the nominal and the learned law, residual accuracy,
//! bound coverage and sharpness, tick latency — as a table and as JSON (DESIGN.md §6).

use serde_json::json;

use super::runner::RunLog;
use super::stats::StepStats;

/// Numbers of one run pair (nominal and learned), over the last half unless stated.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SimReport {
    /// Plugin name.
    pub plugin: String,
    /// Scenario name.
    pub scenario: String,
    /// Duration, s.
    pub duration_s: f64,
    /// Joint names.
    pub joints: Vec<String>,
    /// Per joint, ticks at a limit: [nominal run, learned run].
    pub limit_ticks: [Vec<super::runner::JointLimitTicks>; 2],
    /// Nominal law: RMS tracking error per joint, rad.
    pub nominal_rms_rad: Vec<f64>,
    /// Nominal law: max tracking error per joint, rad.
    pub nominal_max_rad: Vec<f64>,
    /// Nominal law: RMS over joints per 1 s window, rad.
    pub nominal_windows_rad: Vec<f64>,
    /// Learned law: RMS tracking error per joint, rad.
    pub learned_rms_rad: Vec<f64>,
    /// Learned law: max tracking error per joint, rad.
    pub learned_max_rad: Vec<f64>,
    /// Learned law: RMS over joints per 1 s window, rad.
    pub learned_windows_rad: Vec<f64>,
    /// Residual RMSE per joint (μ vs the true residual at x*), N·m.
    pub residual_rmse_nm: Vec<f64>,
    /// Residual RMSE pooled over joints, N·m.
    pub residual_rmse_pooled_nm: f64,
    /// Fraction of (tick, joint) with |true − μ| ≤ η_cal.
    pub bound_coverage: f64,
    /// Median η_cal, N·m.
    pub median_eta_cal_nm: f64,
    /// Fraction with |true − μ| ≤ η_thm.
    pub bound_coverage_thm: f64,
    /// Median η_thm, N·m.
    pub median_eta_thm_nm: f64,
    /// Theorem-2 ultimate tracking bound at the end, in ‖[e; ė]‖ units.
    pub tracking_bound: f64,
    /// Tick latency of the learned run, µs: p50, p99, max.
    pub tick_us: [f64; 3],
    /// Wall time of both runs, s.
    pub wall_s: f64,
    /// Model adoption time, s.
    pub model_adopted_at_s: Option<f64>,
    /// Fit + warm-up wall time, s.
    pub fit_s: f64,
    /// Refits that took over, and refits the held-out check kept out.
    pub refits: [u64; 2],
    /// Experts at the end.
    pub experts: Option<u64>,
    /// β_cal per joint.
    pub beta_cal: Vec<Option<f64>>,
    /// Ticks whose model work overran the budget.
    pub overruns: u64,
    /// Samples learned, and refused by the gate.
    pub learned_samples: u64,
    /// Samples refused by the gate.
    pub gated_samples: u64,
    /// Ticks of the learned run.
    pub ticks: usize,
    /// Ticks of the learned run that took longer than the tick period.
    pub late_ticks: u64,
    /// The first late ticks with their cause.
    pub late: Vec<super::runner::LateTick>,
    /// With `run.realtime`: the loop thread's scheduling and memory locking.
    pub realtime: Option<gpn_app::RealtimeSetup>,
    /// Hyperparameters of the learned run's model (standardised units).
    pub hyper: Option<serde_json::Value>,
    /// Hot swaps of the learned run.
    pub swaps: Vec<super::swaps::SwapRecord>,
    /// Ticks on which a due swap found the learner busy.
    pub swap_busy_ticks: u64,
    /// Changes of the dynamics the learner noticed in the learned run.
    pub changes: Vec<gpn_control::learn::ChangeNotice>,
    /// Payload mass change found by the last re-identification, kg.
    pub reidentified_mass_kg: f64,
    /// Probing trajectories planned after changes.
    pub probes: Vec<super::probing::ProbeRecord>,
    /// Recovery after a step change of the dynamics (scenario `payload-step`).
    pub after_step: Option<AfterStep>,
    /// Who commanded the learned run, and how it ended against the nominal run.
    pub law: LawSummary,
}

/// Who commanded the learned run: the command decision's counters, the fallbacks and
/// re-adoptions, and the verdict against the nominal run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct LawSummary {
    /// "learned law better", "learned law worse than the nominal law", "model never
    /// adopted".
    pub verdict: &'static str,
    /// Whether the learned run tracked worse than the nominal one (RMS over joints, last
    /// half): `gp-node sim` then exits non-zero.
    pub learned_worse: bool,
    /// RMS tracking error over all joints (last half): nominal run, learned run, rad.
    pub pooled_rms_rad: [f64; 2],
    /// Fraction of the learned run's ticks commanded by the learned law.
    pub learned_tick_fraction: f64,
    /// Fallbacks of the learned law, per reason.
    pub fallbacks: std::collections::BTreeMap<&'static str, u64>,
    /// Re-adoptions after probation.
    pub readoptions: u64,
    /// Fallbacks and re-adoptions in order (time s, event).
    pub events: Vec<(f64, super::runner::LawEvent)>,
    /// Ticks answered by the safe output (implausible or unusable states).
    pub safe_ticks: u64,
    /// Sampled references the validator refused.
    pub references_refused: u64,
    /// Blends between laws or models.
    pub handovers: u64,
    /// Commands the torque-rate limit changed.
    pub rate_limited_ticks: u64,
    /// Largest change between two commands, N·m.
    pub max_command_step_nm: f64,
    /// Largest true speed as a fraction of the URDF velocity limit.
    pub max_speed_fraction: f64,
    /// Largest true excursion beyond the URDF position limits, rad.
    pub position_limit_excess_rad: f64,
}

impl LawSummary {
    fn new(nominal_rms: &[f64], learned_rms: &[f64], learned: &RunLog) -> Self {
        let pooled =
            |rms: &[f64]| (rms.iter().map(|r| r * r).sum::<f64>() / rms.len().max(1) as f64).sqrt();
        let pooled_rms_rad = [pooled(nominal_rms), pooled(learned_rms)];
        let d = &learned.decision;
        let learned_worse = pooled_rms_rad[1] > pooled_rms_rad[0];
        let ticks = learned.ticks.max(1) as f64;
        Self {
            verdict: if learned.model_adopted_at_secs.is_none() {
                "model never adopted"
            } else if learned_worse {
                "learned law worse than the nominal law"
            } else {
                "learned law better"
            },
            learned_worse,
            pooled_rms_rad,
            learned_tick_fraction: d.learned_ticks as f64 / ticks,
            fallbacks: d.fallbacks_by_reason().collect(),
            readoptions: d.readoptions,
            events: learned.law_events.clone(),
            safe_ticks: d.safe_ticks,
            references_refused: d.references_refused.iter().sum(),
            handovers: d.handovers,
            rate_limited_ticks: d.rate_limited,
            max_command_step_nm: d.max_command_step_nm,
            max_speed_fraction: learned.max_speed_fraction,
            position_limit_excess_rad: learned.position_limit_excess_rad,
        }
    }
}

/// How the learned law recovers from a step change at `step_s`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct AfterStep {
    /// Time of the step, s.
    pub step_s: f64,
    /// RMS tracking error over joints in the 5 s before the step, rad.
    pub pre_step_rms_rad: f64,
    /// RMS over joints in 1 s windows from the step on, rad.
    pub windows_rad: Vec<f64>,
    /// Recovery time, s after the step: the start of the first window from which every
    /// later 1 s window's RMS is within 2× the pre-step level (0: it never left; None: the
    /// last window is still above).
    pub recovery_s: Option<f64>,
    /// Fraction of (tick, joint) after the step with |true − μ| ≤ η_cal.
    pub bound_coverage: f64,
    /// The same from 2 s after the step on.
    pub bound_coverage_from_2s: f64,
}

impl AfterStep {
    /// The recovery from the step `stats` measured.
    pub fn new(stats: &StepStats) -> Self {
        let pre_step_rms_rad = stats.pre_step_rms_rad();
        let windows_rad = stats.windows_rad();
        let recovered_from = windows_rad
            .iter()
            .rposition(|w| *w > 2.0 * pre_step_rms_rad)
            .map_or(0, |last_above| last_above + 1);
        let recovery_s = (recovered_from < windows_rad.len()).then_some(recovered_from as f64);
        let [bound_coverage, bound_coverage_from_2s] = stats.coverage();
        Self {
            step_s: stats.step_s,
            pre_step_rms_rad,
            windows_rad,
            recovery_s,
            bound_coverage,
            bound_coverage_from_2s,
        }
    }
}

/// Summary of a run's hot swaps.
#[derive(Debug, Clone, serde::Serialize)]
pub struct SwapSummary {
    /// Swaps planned.
    pub planned: usize,
    /// Adopted.
    pub adopted: usize,
    /// Failed or not adopted before the end.
    pub not_adopted: usize,
    /// Adoption delay in ticks (1: the next tick after the model was ready): histogram as
    /// (delay, count).
    pub adoption_delay_ticks: Vec<(u64, usize)>,
    /// Median request → ready time, s.
    pub median_build_s: f64,
    /// Median of (RMS after ÷ RMS before) over adopted swaps.
    pub median_rms_after_over_before: f64,
    /// Largest such ratio.
    pub max_rms_after_over_before: f64,
    /// Ticks on which a due swap found the learner busy.
    pub busy_ticks: u64,
}

impl SwapSummary {
    /// Summarises `records`.
    pub fn new(records: &[super::swaps::SwapRecord], busy_ticks: u64) -> Self {
        let adopted: Vec<_> = records
            .iter()
            .filter(|r| r.adopted_at_s.is_some())
            .collect();
        let mut delays: Vec<(u64, usize)> = Vec::new();
        for d in adopted.iter().filter_map(|r| r.adoption_delay_ticks) {
            match delays.iter_mut().find(|(k, _)| *k == d) {
                Some((_, n)) => *n += 1,
                None => delays.push((d, 1)),
            }
        }
        delays.sort_unstable();
        let mut build: Vec<f64> = adopted.iter().filter_map(|r| r.build_s).collect();
        let mut ratios: Vec<f64> = adopted
            .iter()
            .filter_map(|r| Some(r.rms_after_rad? / r.rms_before_rad?))
            .collect();
        Self {
            planned: records.len(),
            adopted: adopted.len(),
            not_adopted: records.len() - adopted.len(),
            adoption_delay_ticks: delays,
            median_build_s: quantile(&mut build, 0.5),
            median_rms_after_over_before: quantile(&mut ratios, 0.5),
            max_rms_after_over_before: ratios.iter().copied().fold(f64::NAN, f64::max),
            busy_ticks,
        }
    }
}

/// ": 2 model adoption, 1 outside the model" for the late ticks kept (empty without).
fn late_causes(late: &[super::runner::LateTick]) -> String {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for tick in late {
        match counts.iter_mut().find(|(cause, _)| *cause == tick.cause) {
            Some((_, n)) => *n += 1,
            None => counts.push((tick.cause, 1)),
        }
    }
    let parts: Vec<String> = counts.iter().map(|(c, n)| format!("{n} {c}")).collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(": {}", parts.join(", "))
    }
}

/// Quantile (linear interpolation) of finite values; NaN if none.
pub fn quantile(values: &mut [f64], level: f64) -> f64 {
    let mut finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if finite.is_empty() {
        return f64::NAN;
    }
    finite.sort_unstable_by(f64::total_cmp);
    let h = level * (finite.len() - 1) as f64;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(finite.len() - 1);
    finite[lo] + (h - lo as f64) * (finite[hi] - finite[lo])
}

impl SimReport {
    /// Builds the report from a nominal and a learned run of the same scenario and seed.
    pub fn new(
        plugin: &str,
        scenario: &str,
        duration_s: f64,
        joints: &[String],
        nominal: &RunLog,
        learned: &RunLog,
    ) -> Self {
        let (nominal_rms_rad, nominal_max_rad) = nominal.stats.tracking();
        let (learned_rms_rad, learned_max_rad) = learned.stats.tracking();
        let law = LawSummary::new(&nominal_rms_rad, &learned_rms_rad, learned);
        let stats = &learned.stats;
        let (residual_rmse_nm, residual_rmse_pooled_nm) = stats.residual_rmse_nm();
        let (bound_coverage, median_eta_cal_nm) = stats.bound(0);
        let (bound_coverage_thm, median_eta_thm_nm) = stats.bound(1);
        let ticks = stats.tick_micros();
        Self {
            plugin: plugin.into(),
            scenario: scenario.into(),
            duration_s,
            joints: joints.to_vec(),
            nominal_rms_rad,
            nominal_max_rad,
            nominal_windows_rad: nominal.stats.windows_rad(),
            learned_rms_rad,
            learned_max_rad,
            learned_windows_rad: stats.windows_rad(),
            residual_rmse_nm,
            residual_rmse_pooled_nm,
            bound_coverage,
            median_eta_cal_nm,
            bound_coverage_thm,
            median_eta_thm_nm,
            tracking_bound: learned.final_tracking_bound,
            limit_ticks: [nominal.limit_ticks.clone(), learned.limit_ticks.clone()],
            tick_us: [ticks.quantile(0.5), ticks.quantile(0.99), ticks.max()],
            wall_s: nominal.wall_secs + learned.wall_secs,
            model_adopted_at_s: learned.model_adopted_at_secs,
            fit_s: learned.fit_secs,
            refits: learned.refits,
            experts: learned.experts,
            beta_cal: learned.beta_cal.clone(),
            overruns: learned.overruns,
            learned_samples: learned.learned_samples,
            gated_samples: learned.gated_samples,
            hyper: learned.hyper.clone(),
            ticks: learned.ticks,
            late_ticks: learned.late_ticks,
            late: learned.late.clone(),
            realtime: learned.realtime.clone(),
            swaps: learned.swaps.clone(),
            swap_busy_ticks: learned.swap_busy_ticks,
            changes: learned.changes.clone(),
            reidentified_mass_kg: learned.reidentified_mass_kg,
            probes: learned.probes.clone(),
            after_step: stats.step().map(AfterStep::new),
            law,
        }
    }

    /// Nominal ÷ learned RMS per joint.
    pub fn improvement(&self) -> Vec<f64> {
        self.nominal_rms_rad
            .iter()
            .zip(&self.learned_rms_rad)
            .map(|(n, l)| n / l)
            .collect()
    }

    /// The JSON object of DESIGN.md §6 (plus a few extra keys).
    pub fn to_json(&self) -> serde_json::Value {
        let mut value = self.base_json();
        value["changes"] = json!(self.changes);
        value["law"] = json!(self.law);
        value["probes"] = json!(self.probes);
        value["reidentified_mass_kg"] = json!(
            self.reidentified_mass_kg
                .is_finite()
                .then_some(self.reidentified_mass_kg)
        );
        if let Some(after) = &self.after_step {
            value["after_step"] = json!(after);
        }
        if !self.swaps.is_empty() {
            value["swaps"] = json!({
                "summary": SwapSummary::new(&self.swaps, self.swap_busy_ticks),
                "records": self.swaps,
            });
        }
        value
    }

    fn base_json(&self) -> serde_json::Value {
        json!({
            "plugin": self.plugin,
            "scenario": self.scenario,
            "duration_s": self.duration_s,
            "joints": self.joints,
            "nominal": {
                "rms_tracking_error_rad": self.nominal_rms_rad,
                "max_tracking_error_rad": self.nominal_max_rad,
                "tracking_rms_windows_rad": self.nominal_windows_rad,
            },
            "learned": {
                "rms_tracking_error_rad": self.learned_rms_rad,
                "max_tracking_error_rad": self.learned_max_rad,
                "tracking_rms_windows_rad": self.learned_windows_rad,
            },
            "improvement_rms": self.improvement(),
            "limit_ticks": {
                "nominal": self.limit_ticks[0],
                "learned": self.limit_ticks[1],
            },
            "residual_rmse_nm": self.residual_rmse_nm,
            "residual_rmse_pooled_nm": self.residual_rmse_pooled_nm,
            "bound_coverage": self.bound_coverage,
            "median_eta_cal_nm": self.median_eta_cal_nm,
            "bound_coverage_thm": self.bound_coverage_thm,
            "median_eta_thm_nm": self.median_eta_thm_nm,
            "tracking_bound": self.tracking_bound,
            "tick_us": {"p50": self.tick_us[0], "p99": self.tick_us[1], "max": self.tick_us[2]},
            "wall_s": self.wall_s,
            "model_adopted_at_s": self.model_adopted_at_s,
            "fit_s": self.fit_s,
            "refits": {"adopted": self.refits[0], "kept_out": self.refits[1]},
            "experts": self.experts,
            "beta_cal": self.beta_cal,
            "overruns": self.overruns,
            "learned_samples": self.learned_samples,
            "gated_samples": self.gated_samples,
            "hyper": self.hyper,
            "ticks": self.ticks,
            "late_ticks": self.late_ticks,
            "late": self.late,
            "realtime": self.realtime,
        })
    }

    /// The human-readable table.
    #[allow(clippy::needless_range_loop)]
    pub fn table(&self) -> String {
        use std::fmt::Write as _;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "gp-node sim — plugin {}, scenario {}, {} s (tracking over the last half)",
            self.plugin, self.scenario, self.duration_s
        );
        self.write_joint_rows(&mut s);
        self.write_bounds_and_timing(&mut s);
        self.write_changes_and_probes(&mut s);
        self.write_after_step(&mut s);
        self.write_swaps(&mut s);
        self.write_law(&mut s);
        let _ = writeln!(s, "wall time              {:.2} s (both runs)", self.wall_s);
        s
    }

    /// Who commanded the learned run, and the verdict.
    fn write_law(&self, s: &mut String) {
        use std::fmt::Write as _;
        let law = &self.law;
        let fallbacks: Vec<String> = law
            .events
            .iter()
            .map(|(t, event)| match event {
                super::runner::LawEvent::Fallback { reason, joint } => format!(
                    "fell back at {t:.3} s ({}{})",
                    reason.name(),
                    joint
                        .and_then(|j| self.joints.get(j))
                        .map_or(String::new(), |name| format!(", {name}"))
                ),
                super::runner::LawEvent::Readopted => format!("re-adopted at {t:.3} s"),
            })
            .collect();
        let _ = writeln!(
            s,
            "law                    {}; learned law on {:.1} % of ticks{}",
            law.verdict,
            100.0 * law.learned_tick_fraction,
            if fallbacks.is_empty() {
                String::new()
            } else {
                format!("; {}", fallbacks.join(", "))
            }
        );
        let _ = writeln!(
            s,
            "commands               largest step {:.3} N·m, {} rate-limited, {} blends; top speed {:.2} of the limits",
            law.max_command_step_nm, law.rate_limited_ticks, law.handovers, law.max_speed_fraction
        );
    }

    /// The per-joint tracking and residual table, with its two header lines.
    fn write_joint_rows(&self, s: &mut String) {
        use std::fmt::Write as _;
        let _ = writeln!(
            s,
            "{:<14} {:>12} {:>12} {:>12} {:>12} {:>9} {:>12}",
            "joint",
            "nominal RMS",
            "learned RMS",
            "nominal max",
            "learned max",
            "ratio",
            "resid RMSE"
        );
        let _ = writeln!(
            s,
            "{:<14} {:>12} {:>12} {:>12} {:>12} {:>9} {:>12}",
            "", "rad", "rad", "rad", "rad", "nom/lrn", "N·m"
        );
        let ratio = self.improvement();
        for (j, joint) in self.joints.iter().enumerate() {
            let _ = writeln!(
                s,
                "{:<14} {:>12.3e} {:>12.3e} {:>12.3e} {:>12.3e} {:>9.1} {:>12.3e}",
                joint,
                self.nominal_rms_rad[j],
                self.learned_rms_rad[j],
                self.nominal_max_rad[j],
                self.learned_max_rad[j],
                ratio[j],
                self.residual_rmse_nm[j]
            );
        }
        self.write_limit_flags(s);
    }

    /// One line per joint that reached a limit in either run (ticks: position, velocity,
    /// saturated command), or one line saying none did.
    fn write_limit_flags(&self, s: &mut String) {
        use std::fmt::Write as _;
        let mut any = false;
        for (j, joint) in self.joints.iter().enumerate() {
            let [n, l] = [&self.limit_ticks[0], &self.limit_ticks[1]]
                .map(|t| t.get(j).copied().unwrap_or_default());
            if n == Default::default() && l == Default::default() {
                continue;
            }
            any = true;
            let _ = writeln!(
                s,
                "limits {joint:<14} ticks nominal/learned: position {}/{}, velocity {}/{}, \
                 saturated {}/{}",
                n.position, l.position, n.velocity, l.velocity, n.saturated, l.saturated
            );
        }
        if !any {
            let _ = writeln!(
                s,
                "limits                 no joint reached a position, velocity or effort limit"
            );
        }
    }

    /// Pooled residual error, bound coverage, tick latency, the model and late ticks.
    fn write_bounds_and_timing(&self, s: &mut String) {
        use std::fmt::Write as _;
        let _ = writeln!(
            s,
            "residual RMSE pooled   {:.4} N·m",
            self.residual_rmse_pooled_nm
        );
        let _ = writeln!(
            s,
            "η_cal coverage         {:.2} %   median η_cal {:.4} N·m ({:.2}× RMSE)",
            100.0 * self.bound_coverage,
            self.median_eta_cal_nm,
            self.median_eta_cal_nm / self.residual_rmse_pooled_nm
        );
        let _ = writeln!(
            s,
            "η_thm coverage         {:.2} %   median η_thm {:.4} N·m",
            100.0 * self.bound_coverage_thm,
            self.median_eta_thm_nm
        );
        let _ = writeln!(
            s,
            "Theorem-2 bound        {:.4} (‖[e; ė]‖ at the end)",
            self.tracking_bound
        );
        let _ = writeln!(
            s,
            "tick latency           p50 {:.1} µs   p99 {:.1} µs   max {:.1} µs",
            self.tick_us[0], self.tick_us[1], self.tick_us[2]
        );
        let adopted = self
            .model_adopted_at_s
            .map_or("never".to_owned(), |t| format!("{t:.3} s"));
        let experts = self.experts.map_or("-".to_owned(), |e| e.to_string());
        let _ = writeln!(
            s,
            "model                  adopted at {adopted} (fit + warm-up {:.2} s; refits: {} adopted, {} kept out by the held-out check), {experts} experts, {} samples learned, {} gated, {} overruns",
            self.fit_s,
            self.refits[0],
            self.refits[1],
            self.learned_samples,
            self.gated_samples,
            self.overruns
        );
        let _ = writeln!(
            s,
            "late ticks             {} (longer than the tick period){}",
            self.late_ticks,
            late_causes(&self.late)
        );
        if let Some(rt) = &self.realtime {
            let _ = writeln!(
                s,
                "real time              control thread {}, memory {}{}",
                rt.thread_priority
                    .map_or("at normal priority".into(), |p| format!("SCHED_FIFO {p}")),
                match (rt.memory_locked, rt.heap_reserved_mb) {
                    (false, _) => "not locked".to_owned(),
                    (true, 0) => "locked".to_owned(),
                    (true, mb) => format!("locked, {mb} MiB of heap reserved"),
                },
                rt.heap.map_or(String::new(), |h| format!(
                    "; heap at the end {:.1} MiB held, {:.1} MiB in use",
                    h.system_mb, h.in_use_mb
                ))
            );
        }
    }

    /// One line per detected dynamics change and per offered probe.
    fn write_changes_and_probes(&self, s: &mut String) {
        use std::fmt::Write as _;
        for c in &self.changes {
            let _ = writeln!(
                s,
                "change                 {}",
                gpn_control::learn::describe_change(c)
            );
        }
        for p in &self.probes {
            let _ = writeln!(
                s,
                "probe                  t = {:.3} s: {} ({} waypoints, {:.1} s, worst |τ|+βσ = {:.0} % of the limit, planned in {:.0} ms)",
                p.t_secs,
                p.outcome,
                p.waypoints,
                p.duration_s,
                p.worst_effort_ratio * 100.0,
                p.plan_ms
            );
        }
    }

    /// Recovery after a payload step (scenarios with one).
    fn write_after_step(&self, s: &mut String) {
        use std::fmt::Write as _;
        if let Some(a) = &self.after_step {
            let windows: Vec<String> = a
                .windows_rad
                .iter()
                .take(5)
                .map(|w| format!("{:.2}", w * 1e3))
                .collect();
            let _ = writeln!(
                s,
                "after the step         pre-step RMS {:.2} mrad; 1 s windows from the step: {} mrad; back within 2× after {}; η_cal coverage {:.1} % (from +2 s: {:.1} %)",
                a.pre_step_rms_rad * 1e3,
                windows.join(", "),
                a.recovery_s
                    .map_or("never".to_owned(), |r| format!("{r:.0} s")),
                a.bound_coverage * 100.0,
                a.bound_coverage_from_2s * 100.0
            );
        }
    }

    /// Hot swaps (scenarios with any): adoption, build time, the effect on tracking, and
    /// each swap not adopted.
    fn write_swaps(&self, s: &mut String) {
        use std::fmt::Write as _;
        if !self.swaps.is_empty() {
            let sum = SwapSummary::new(&self.swaps, self.swap_busy_ticks);
            let delays: Vec<String> = sum
                .adoption_delay_ticks
                .iter()
                .map(|(d, n)| format!("{n}×{d}"))
                .collect();
            let _ = writeln!(
                s,
                "hot swaps              {} planned, {} adopted (delay in ticks after ready: {}), median build {:.3} s, {} busy ticks",
                sum.planned,
                sum.adopted,
                delays.join(", "),
                sum.median_build_s,
                sum.busy_ticks
            );
            let _ = writeln!(
                s,
                "                       tracking RMS 0.25 s after ÷ before a swap: median {:.2}, max {:.2}",
                sum.median_rms_after_over_before, sum.max_rms_after_over_before
            );
            for r in self.swaps.iter().filter(|r| r.adopted_at_s.is_none()) {
                let _ = writeln!(
                    s,
                    "                       swap {} ({}): {}",
                    r.id, r.label, r.outcome
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The step statistics of a one-joint run at 100 Hz with a step at 10 s, whose tracking
    /// error is `level(t)`, with the residual inside the bound except where `outside(t)`.
    fn after_step(
        secs: f64,
        level: impl Fn(f64) -> f64,
        outside: impl Fn(f64) -> bool,
    ) -> AfterStep {
        let n = (secs * 100.0) as usize;
        let mut stats = crate::RunStats::new(1, 0.01, n, Some(10.0), 0);
        for k in 0..n {
            let t = k as f64 * 0.01;
            stats.record(&crate::TickValues {
                error_rad: &[level(t)],
                true_residual_nm: &[if outside(t) { 2.0 } else { 0.5 }],
                mu_nm: &[0.0],
                eta_nm: [&[1.0], &[1.0]],
                tick_micros: 1.0,
                adopted_model: false,
            });
        }
        AfterStep::new(stats.step().expect("a step"))
    }

    #[test]
    fn recovery_waits_for_every_later_window_to_stay_low() {
        // Pre-step level 1; after the step at 10 s: 5, 1, 3, 1, 1 (a relapse in window 3).
        let level = |t: f64| match t {
            t if t < 10.0 => 1.0,
            t if t < 11.0 => 5.0,
            t if t < 12.0 => 1.0,
            t if t < 13.0 => 3.0,
            _ => 1.0,
        };
        let a = after_step(15.0, level, |t| (10.0..10.5).contains(&t));
        assert!((a.pre_step_rms_rad - 1.0).abs() < 1e-12);
        assert_eq!(a.windows_rad.len(), 5);
        assert_eq!(a.recovery_s, Some(3.0));
        assert!((a.bound_coverage - 0.9).abs() < 1e-9);
        assert!((a.bound_coverage_from_2s - 1.0).abs() < 1e-12);
        // Never leaving the band is a recovery time of 0; ending above it is None.
        let flat = after_step(15.0, |_| 1.0, |_| false);
        assert_eq!(flat.recovery_s, Some(0.0));
        let worse = after_step(15.0, |t| if t < 10.0 { 1.0 } else { 3.0 }, |_| false);
        assert_eq!(worse.recovery_s, None);
    }
}
