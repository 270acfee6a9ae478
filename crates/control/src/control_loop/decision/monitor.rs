//! Whether the learned law makes things worse. Checked on every tick the learned law
//! commanded; any of these makes it fall back to the nominal law at once (the next tick):
//!
//! - a joint's tracking error e or velocity error ė, as RMS over `tracking_window_s`,
//!   exceeds `tracking_ratio` × what the nominal law had on it (RMS over
//!   `baseline_window_s` of nominal ticks) plus `tracking_floor_rad` (for ė
//!   `tracking_floor_rad_s`, except while the joint returns to the reference no faster than
//!   its closed loop decays, e·ė < 0 and |ė| ≤ √K_p·|e|: right after an adoption the learned
//!   law removes the nominal law's error, fast on a stiff light joint);
//! - a joint moves faster than `velocity_fraction` of its URDF velocity limit;
//! - a residual |μ| above `mu_effort_fraction` of the joint's effort limit (the tick already
//!   refused to apply it: [`Fallback::Implausible`]);
//! - `saturation_ticks` ticks in a row with a saturated joint.
//!
//! After a fallback the model is on probation: it predicts in shadow while the nominal law
//! commands, for `probation_s` (doubled at each further fallback, at most 64×); an
//! implausible residual restarts the time; at its end the model is re-adopted if the
//! learner's ±η_cal coverage is at least `readopt_coverage` (once η_cal is calibrated). The nominal law's ticks,
//! probation included, keep the baseline current. Real-time: no allocation after `new`.

use crate::control::{Fallback, FallbackParams, TickResult};
use crate::robot::JointLimits;

/// Why the learned law fell back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FallbackReason {
    /// Tracking error grew beyond what the nominal law had.
    TrackingWorse,
    /// A joint moved faster than the velocity limit allows.
    VelocityLimit,
    /// The residual was larger than the effort limits make plausible.
    ImplausibleResidual,
    /// The command saturated for too long.
    Saturation,
}

impl FallbackReason {
    /// Every reason, in the order of [`FallbackReason::index`].
    pub const ALL: [FallbackReason; 4] = [
        FallbackReason::TrackingWorse,
        FallbackReason::VelocityLimit,
        FallbackReason::ImplausibleResidual,
        FallbackReason::Saturation,
    ];

    /// Index in [`FallbackReason::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Short name (diagnostics keys, reports).
    pub fn name(self) -> &'static str {
        match self {
            FallbackReason::TrackingWorse => "tracking worse than the nominal law",
            FallbackReason::VelocityLimit => "velocity limit",
            FallbackReason::ImplausibleResidual => "implausible residual",
            FallbackReason::Saturation => "saturation",
        }
    }
}

/// What the monitor decided at a tick.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing changes.
    Keep,
    /// The learned law falls back (reason, and the joint that showed it if one did:
    /// saturation streaks are the command's, not one joint's).
    FallBack(FallbackReason, Option<usize>),
    /// The model passed its probation: the learned law may command again.
    Readopt,
}

/// One tick as the monitor sees it.
#[derive(Debug, Clone, Copy)]
pub struct TickView<'a> {
    /// What the tick did.
    pub result: TickResult,
    /// Tracking error q − q_d.
    pub e: &'a [f64],
    /// Velocity error q̇ − q̇_d.
    pub ed: &'a [f64],
    /// Measured velocity.
    pub v: &'a [f64],
    /// Joints saturated.
    pub saturated: usize,
    /// The joint whose residual the tick found implausible.
    pub implausible_joint: Option<usize>,
    /// Time since the previous tick, s.
    pub dt_secs: f64,
    /// The learner's ±η_cal coverage over its recent samples.
    pub coverage: Option<f64>,
}

/// The monitor's state.
#[derive(Debug, Clone)]
pub struct LearnedLawMonitor {
    params: FallbackParams,
    velocity_limit: Vec<f64>,
    /// √K_p per joint, s⁻¹: the fastest a critically damped correction returns.
    bandwidth: Vec<f64>,
    /// Mean squares of e (first nv) and ė (last nv): the nominal law's, the learned law's.
    baseline_sq: Vec<f64>,
    has_baseline: bool,
    recent_sq: Vec<f64>,
    learned_before: bool,
    saturation_streak: u32,
    /// Probation time left, s (None: not on probation).
    probation_left_s: Option<f64>,
    fallbacks: u64,
}

impl LearnedLawMonitor {
    /// A monitor for joints with these limits and position gains K_p (s⁻², one per joint).
    pub fn new(limits: &[JointLimits], kp_per_s2: &[f64], params: &FallbackParams) -> Self {
        let nv = limits.len();
        Self {
            params: params.clone(),
            velocity_limit: limits.iter().map(|l| l.velocity).collect(),
            bandwidth: kp_per_s2.iter().map(|k| k.max(0.0).sqrt()).collect(),
            baseline_sq: vec![0.0; 2 * nv],
            has_baseline: false,
            recent_sq: vec![0.0; 2 * nv],
            learned_before: false,
            saturation_streak: 0,
            probation_left_s: None,
            fallbacks: 0,
        }
    }

    /// Whether the model is on probation (shadow: the nominal law commands).
    pub fn on_probation(&self) -> bool {
        self.probation_left_s.is_some()
    }

    /// Judges one tick.
    pub fn on_tick(&mut self, tick: &TickView<'_>) -> Verdict {
        let learned_law = matches!(
            tick.result,
            TickResult::Learned | TickResult::Nominal(Fallback::NonFinite)
        );
        let verdict = match tick.result {
            _ if learned_law => self.judge_learned(tick),
            TickResult::Nominal(Fallback::Implausible) if !self.on_probation() => {
                Verdict::FallBack(FallbackReason::ImplausibleResidual, tick.implausible_joint)
            }
            TickResult::BadInput => Verdict::Keep,
            TickResult::Nominal(reason) => {
                self.update_baseline(tick);
                self.probation_step(tick, reason)
            }
            TickResult::Learned => Verdict::Keep,
        };
        self.learned_before = learned_law;
        if let Verdict::FallBack(..) = verdict {
            self.fallbacks += 1;
            let doublings = (self.fallbacks - 1).min(6) as i32;
            self.probation_left_s = Some(self.params.probation_s * 2f64.powi(doublings));
            self.saturation_streak = 0;
        }
        verdict
    }

    fn update_baseline(&mut self, tick: &TickView<'_>) {
        let alpha = (tick.dt_secs / self.params.baseline_window_s).clamp(0.0, 1.0);
        for (b, e) in self
            .baseline_sq
            .iter_mut()
            .zip(tick.e.iter().chain(tick.ed))
        {
            *b = if self.has_baseline {
                *b + alpha * (e * e - *b)
            } else {
                e * e
            };
        }
        self.has_baseline = true;
    }

    fn judge_learned(&mut self, tick: &TickView<'_>) -> Verdict {
        if !self.learned_before {
            // The law just changed: the recent average starts from the nominal level.
            self.recent_sq.copy_from_slice(&self.baseline_sq);
            self.saturation_streak = 0;
        }
        let alpha = (tick.dt_secs / self.params.tracking_window_s).clamp(0.0, 1.0);
        let nv = tick.e.len();
        let errors = tick.e.iter().chain(tick.ed);
        for (i, (r, e)) in self.recent_sq.iter_mut().zip(errors).enumerate() {
            *r += alpha * (e * e - *r);
            let floor = if i < nv {
                self.params.tracking_floor_rad
            } else {
                self.params.tracking_floor_rad_s
            };
            let limit = self.params.tracking_ratio * self.baseline_sq[i].sqrt() + floor;
            // A velocity error that brings the joint back to the reference (e·ė < 0) no
            // faster than the closed loop decays (|ė| ≤ √K_p·|e| for a critically damped
            // correction) is the learned law correcting the nominal law's error, not making
            // it worse; a growing or overshooting error is judged.
            let receding = i >= nv && {
                let (e, ed) = (tick.e[i - nv], tick.ed[i - nv]);
                e * ed < 0.0
                    && ed.abs() <= self.bandwidth.get(i - nv).copied().unwrap_or(0.0) * e.abs()
            };
            if r.sqrt() > limit && !receding {
                return Verdict::FallBack(FallbackReason::TrackingWorse, Some(i % nv));
            }
        }
        for (j, (v, limit)) in tick.v.iter().zip(&self.velocity_limit).enumerate() {
            if v.abs() > limit * self.params.velocity_fraction {
                return Verdict::FallBack(FallbackReason::VelocityLimit, Some(j));
            }
        }
        self.saturation_streak = if tick.saturated > 0 {
            self.saturation_streak + 1
        } else {
            0
        };
        if self.saturation_streak >= self.params.saturation_ticks {
            return Verdict::FallBack(FallbackReason::Saturation, None);
        }
        Verdict::Keep
    }

    fn probation_step(&mut self, tick: &TickView<'_>, reason: Fallback) -> Verdict {
        let Some(left) = self.probation_left_s.as_mut() else {
            return Verdict::Keep;
        };
        match reason {
            Fallback::Implausible => {
                // Not yet: the whole probation again.
                let doublings = (self.fallbacks.max(1) - 1).min(6) as i32;
                *left = self.params.probation_s * 2f64.powi(doublings);
                Verdict::Keep
            }
            Fallback::Probation => {
                *left -= tick.dt_secs.max(0.0);
                // Before η_cal is calibrated there is no coverage to ask for.
                let covered = tick
                    .coverage
                    .is_none_or(|c| c >= self.params.readopt_coverage);
                // (A sum of tick periods: rounding must not cost a tick.)
                if *left <= 1e-9 && covered {
                    self.probation_left_s = None;
                    Verdict::Readopt
                } else {
                    Verdict::Keep
                }
            }
            // No model, an error, an overrun, a quarantine: the shadow check did not run.
            _ => Verdict::Keep,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn monitor() -> LearnedLawMonitor {
        let limits = vec![
            JointLimits {
                position_lower: -3.0,
                position_upper: 3.0,
                velocity: 2.0,
                effort: 50.0,
            };
            2
        ];
        let params = FallbackParams {
            probation_s: 2.0,
            ..FallbackParams::default()
        };
        LearnedLawMonitor::new(&limits, &[100.0, 100.0], &params)
    }

    fn view(result: TickResult, e: &[f64; 2]) -> TickView<'_> {
        TickView {
            result,
            e,
            ed: &[0.0, 0.0],
            v: &[0.0, 0.0],
            saturated: 0,
            implausible_joint: None,
            dt_secs: 0.001,
            coverage: Some(0.95),
        }
    }

    #[test]
    fn growing_error_under_the_learned_law_falls_back_and_probation_readopts() {
        let mut m = monitor();
        let nominal = TickResult::Nominal(Fallback::NoModel);
        for _ in 0..2000 {
            assert_eq!(m.on_tick(&view(nominal, &[0.01, 0.01])), Verdict::Keep);
        }
        // Learned and better: kept.
        for _ in 0..500 {
            assert_eq!(
                m.on_tick(&view(TickResult::Learned, &[0.002, 0.002])),
                Verdict::Keep
            );
        }
        // Learned and diverging on joint 1: 3 × 0.01 + 0.02 = 0.05 rad is the limit.
        let mut ticks = 0;
        let verdict = loop {
            ticks += 1;
            let e = 0.002 * 1.01f64.powi(ticks);
            match m.on_tick(&view(TickResult::Learned, &[0.002, e])) {
                Verdict::Keep => continue,
                other => break other,
            }
        };
        assert_eq!(
            verdict,
            Verdict::FallBack(FallbackReason::TrackingWorse, Some(1))
        );
        assert!(m.on_probation());
        // 2 s of plausible shadow predictions, then re-adopted.
        let shadow = TickResult::Nominal(Fallback::Probation);
        for _ in 0..1999 {
            assert_eq!(m.on_tick(&view(shadow, &[0.01, 0.01])), Verdict::Keep);
        }
        assert_eq!(m.on_tick(&view(shadow, &[0.01, 0.01])), Verdict::Readopt);
        assert!(!m.on_probation());
    }

    /// The first verdict other than Keep in 50 learned ticks with errors e and ė, after 2 s of
    /// the nominal law at e = 0.05 rad, ė = 0 on both joints (K_p 100: √K_p = 10 s⁻¹).
    fn first_verdict_after_nominal(e: &[f64; 2], ed: &[f64; 2]) -> Option<Verdict> {
        let mut m = monitor();
        for _ in 0..2000 {
            m.on_tick(&view(TickResult::Nominal(Fallback::NoModel), &[0.05, 0.05]));
        }
        let mut learned = view(TickResult::Learned, e);
        learned.ed = ed;
        (0..50)
            .map(|_| m.on_tick(&learned))
            .find(|v| *v != Verdict::Keep)
    }

    #[test]
    fn a_velocity_error_counts_unless_the_joint_returns_within_its_closed_loop_decay() {
        let worse = Some(Verdict::FallBack(FallbackReason::TrackingWorse, Some(1)));
        // ė = 0.4 rad/s is beyond 3 × 0 + 0.2 rad/s. Returning (e·ė < 0) with |ė| ≤ 10·|e|:
        // the correction after an adoption, kept.
        assert_eq!(
            first_verdict_after_nominal(&[0.05, 0.05], &[0.0, -0.4]),
            None
        );
        // Moving away (e·ė > 0): judged.
        assert_eq!(
            first_verdict_after_nominal(&[0.05, 0.05], &[0.0, 0.4]),
            worse
        );
        // Returning faster than the loop decays (|ė| > 10·|e|: an overshoot through the
        // reference): judged.
        assert_eq!(
            first_verdict_after_nominal(&[0.05, 0.01], &[0.0, -0.4]),
            worse
        );
    }

    #[test]
    fn speed_saturation_and_implausible_residuals_fall_back() {
        let mut m = monitor();
        let mut fast = view(TickResult::Learned, &[0.0, 0.0]);
        fast.v = &[0.0, 2.5];
        assert_eq!(
            m.on_tick(&fast),
            Verdict::FallBack(FallbackReason::VelocityLimit, Some(1))
        );
        let mut m = monitor();
        let mut saturated = view(TickResult::Learned, &[0.0, 0.0]);
        saturated.saturated = 1;
        for _ in 0..99 {
            assert_eq!(m.on_tick(&saturated), Verdict::Keep);
        }
        assert_eq!(
            m.on_tick(&saturated),
            Verdict::FallBack(FallbackReason::Saturation, None)
        );
        let mut m = monitor();
        let mut implausible = view(TickResult::Nominal(Fallback::Implausible), &[0.0, 0.0]);
        implausible.implausible_joint = Some(1);
        assert_eq!(
            m.on_tick(&implausible),
            Verdict::FallBack(FallbackReason::ImplausibleResidual, Some(1))
        );
        // On probation an implausible residual restarts the time, and a second fallback
        // doubles it (4 s).
        for _ in 0..1000 {
            m.on_tick(&view(TickResult::Nominal(Fallback::Probation), &[0.0, 0.0]));
        }
        m.on_tick(&view(
            TickResult::Nominal(Fallback::Implausible),
            &[0.0, 0.0],
        ));
        let readopted_after = (1..=3000)
            .find(|_| {
                m.on_tick(&view(TickResult::Nominal(Fallback::Probation), &[0.0, 0.0]))
                    == Verdict::Readopt
            })
            .expect("re-adopted");
        assert_eq!(readopted_after, 2000);
    }
}
