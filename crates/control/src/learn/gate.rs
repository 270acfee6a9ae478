//! Gating of impossible learning samples.
//!
//! A sample that cannot be a real state of the robot would teach the model something false.
//! Checks, in order: non-finite values; positions beyond the URDF limits (plus a margin);
//! velocities and torques beyond their limits (times a factor); position jumps larger than
//! the velocity allows over the interval (encoder glitches); accelerations beyond a bound.
//! The learner adds one check that needs the model: isolated outliers against the model's
//! prediction (torque glitches). The jump, acceleration and outlier checks can be switched
//! off, so that an evaluation can let glitches reach a model on purpose. Real-time: no
//! allocation.

use crate::robot::JointLimits;

/// Settings of the gate.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GateParams {
    /// Allowed excursion beyond the URDF position limits, rad.
    pub position_margin_rad: f64,
    /// Velocities up to this multiple of the URDF velocity limit pass.
    pub velocity_factor: f64,
    /// Torques up to this multiple of the URDF effort limit pass (limits ≤ 0: none).
    pub effort_factor: f64,
    /// Reject position jumps not explained by the velocity (encoder glitches).
    pub check_jumps: bool,
    /// Largest unexplained position change between samples, rad.
    pub jump_tolerance_rad: f64,
    /// Reject accelerations beyond `max_accel_rad_s2`.
    pub check_accel: bool,
    /// Largest plausible joint acceleration, rad/s².
    pub max_accel_rad_s2: f64,
    /// Refuse isolated outliers against the model's own prediction (torque glitches): a
    /// sample whose target differs from the prediction by more than
    /// max(`innovation_sigmas`·σ_pred, `innovation_limit_nm`) on any joint, unless the
    /// previous `max_consecutive_outliers` samples were outliers too (then it is a real
    /// change, e.g. a payload, and is learned).
    pub check_innovation: bool,
    /// Outlier threshold in predictive standard deviations.
    pub innovation_sigmas: f64,
    /// Outlier threshold floor, N·m.
    pub innovation_limit_nm: f64,
    /// Consecutive outliers after which samples are learned again.
    pub max_consecutive_outliers: u32,
}

/// The check of [`GateParams::check_innovation`], with its run of consecutive outliers. The
/// learner applies it to every sample; a model warmed off the control thread applies it to
/// its warm-up samples, to leave out what the learner's change detector would not see.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct InnovationGate {
    consecutive: u32,
}

impl InnovationGate {
    /// Whether this sample is an isolated outlier to refuse: standardised target `y`,
    /// prediction `mu`, latent variance `var` and noise variance `noise_var` (standardised),
    /// `scale` the output map's standard deviations (to N·m). Real-time.
    pub fn refuses(
        &mut self,
        g: &GateParams,
        scale: &[f64],
        (y, mu): (&[f64], &[f64]),
        (var, noise_var): (&[f64], &[f64]),
    ) -> bool {
        if !g.check_innovation {
            return false;
        }
        let outlier = (0..y.len()).any(|j| {
            let sigma_nm = (var[j].max(0.0) + noise_var[j]).sqrt() * scale[j];
            let innovation_nm = (y[j] - mu[j]).abs() * scale[j];
            innovation_nm > (g.innovation_sigmas * sigma_nm).max(g.innovation_limit_nm)
        });
        if outlier && self.consecutive < g.max_consecutive_outliers {
            self.consecutive += 1;
            return true;
        }
        self.consecutive = 0;
        false
    }

    /// Forgets the run of outliers (a new model).
    pub fn reset(&mut self) {
        self.consecutive = 0;
    }
}

impl Default for GateParams {
    fn default() -> Self {
        Self {
            position_margin_rad: 0.05,
            velocity_factor: 1.5,
            effort_factor: 1.5,
            check_jumps: true,
            jump_tolerance_rad: 0.005,
            check_accel: true,
            max_accel_rad_s2: 100.0,
            check_innovation: true,
            innovation_sigmas: 8.0,
            innovation_limit_nm: 3.0,
            max_consecutive_outliers: 3,
        }
    }
}

/// Why a sample was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    /// NaN or infinity somewhere in the sample.
    NonFinite,
    /// A position beyond the joint limits.
    PositionLimit,
    /// A velocity beyond the limit.
    VelocityLimit,
    /// A torque beyond the limit.
    EffortLimit,
    /// A position jump the velocity cannot explain.
    Jump,
    /// An implausible acceleration.
    Acceleration,
    /// An isolated outlier against the model's prediction.
    Innovation,
}

/// Count of refused samples per reason.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GateCounts {
    /// Samples passed.
    pub passed: u64,
    /// Refused: non-finite.
    pub non_finite: u64,
    /// Refused: position limit.
    pub position_limit: u64,
    /// Refused: velocity limit.
    pub velocity_limit: u64,
    /// Refused: effort limit.
    pub effort_limit: u64,
    /// Refused: jump.
    pub jump: u64,
    /// Refused: acceleration.
    pub acceleration: u64,
    /// Refused: isolated outlier against the prediction.
    pub innovation: u64,
}

impl GateCounts {
    /// The refusals by reason, named as in reports.
    pub fn refusals(&self) -> [(&'static str, u64); 7] {
        [
            ("non_finite", self.non_finite),
            ("position_limit", self.position_limit),
            ("velocity_limit", self.velocity_limit),
            ("effort_limit", self.effort_limit),
            ("jump", self.jump),
            ("acceleration", self.acceleration),
            ("innovation", self.innovation),
        ]
    }
}

/// The gate: limits from the URDF, settings, and counters.
#[derive(Debug, Clone)]
pub struct Gate {
    params: GateParams,
    limits: Vec<JointLimits>,
    counts: GateCounts,
}

fn finite(values: &[f64]) -> bool {
    values.iter().all(|v| v.is_finite())
}

impl Gate {
    /// A gate for a robot with these joint limits.
    pub fn new(limits: &[JointLimits], params: GateParams) -> Self {
        Self {
            params,
            limits: limits.to_vec(),
            counts: GateCounts::default(),
        }
    }

    /// Checks one learning sample: the state (q, q̇) at the interval's start, the position at
    /// its end `q_next`, the interval `dt_secs`, the estimated q̈ and the applied torque.
    #[allow(clippy::too_many_arguments)]
    pub fn check(
        &mut self,
        q: &[f64],
        v: &[f64],
        q_next: &[f64],
        v_next: &[f64],
        dt_secs: f64,
        a: &[f64],
        tau: &[f64],
    ) -> Result<(), Rejection> {
        let verdict = self.verdict(q, v, q_next, v_next, dt_secs, a, tau);
        let c = &mut self.counts;
        match verdict {
            Ok(()) => c.passed += 1,
            Err(Rejection::NonFinite) => c.non_finite += 1,
            Err(Rejection::PositionLimit) => c.position_limit += 1,
            Err(Rejection::VelocityLimit) => c.velocity_limit += 1,
            Err(Rejection::EffortLimit) => c.effort_limit += 1,
            Err(Rejection::Jump) => c.jump += 1,
            Err(Rejection::Acceleration) => c.acceleration += 1,
            Err(Rejection::Innovation) => c.innovation += 1,
        }
        verdict
    }

    #[allow(clippy::too_many_arguments)]
    fn verdict(
        &self,
        q: &[f64],
        v: &[f64],
        q_next: &[f64],
        v_next: &[f64],
        dt_secs: f64,
        a: &[f64],
        tau: &[f64],
    ) -> Result<(), Rejection> {
        let p = &self.params;
        if ![q, v, q_next, v_next, a, tau].iter().all(|s| finite(s)) || !dt_secs.is_finite() {
            return Err(Rejection::NonFinite);
        }
        for (j, lim) in self.limits.iter().enumerate() {
            let m = p.position_margin_rad;
            if q[j] < lim.position_lower - m || q[j] > lim.position_upper + m {
                return Err(Rejection::PositionLimit);
            }
            if lim.velocity > 0.0 && v[j].abs() > p.velocity_factor * lim.velocity {
                return Err(Rejection::VelocityLimit);
            }
            if lim.effort > 0.0 && tau[j].abs() > p.effort_factor * lim.effort {
                return Err(Rejection::EffortLimit);
            }
            if p.check_jumps {
                // Trapezoidal prediction of the move over the interval.
                let explained = 0.5 * (v[j] + v_next[j]) * dt_secs;
                if (q_next[j] - q[j] - explained).abs() > p.jump_tolerance_rad {
                    return Err(Rejection::Jump);
                }
            }
            if p.check_accel && a[j].abs() > p.max_accel_rad_s2 {
                return Err(Rejection::Acceleration);
            }
        }
        Ok(())
    }

    /// New settings (plain values: no allocation).
    pub fn set_params(&mut self, params: &GateParams) {
        self.params.clone_from(params);
    }

    /// The settings.
    pub fn params(&self) -> &GateParams {
        &self.params
    }

    /// Records a sample refused as an outlier after it passed [`Gate::check`].
    pub fn count_innovation_rejection(&mut self) {
        self.counts.passed -= 1;
        self.counts.innovation += 1;
    }

    /// Counters since construction.
    pub fn counts(&self) -> GateCounts {
        self.counts
    }
}
