//! `SimParams`: every knob of the true robot and its sensors, with units and defaults.
//!
//! Defaults are the main job's default scenario (Panda, payload 1.5 kg 0.08 m beyond the
//! flange, viscous 0.5 N·m·s/rad and Coulomb 0.5 N·m on every joint, armature 0.1 kg·m²,
//! torque noise σ 0.05 N·m, encoder noise σ 1e-5 rad, no glitches, 1 kHz, RK4).

use serde::{Deserialize, Serialize};

pub use gpn_dynamics::JointValues;

use super::error::{SimError, SimResult};

/// Numerical integration scheme of one simulator step (the command is held over the step).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Integrator {
    /// v ← v + h·q̈(q, v); q ← q + h·v. One forward-dynamics call per substep.
    SemiImplicitEuler,
    /// Classical fourth-order Runge–Kutta. Four forward-dynamics calls per substep.
    Rk4,
}

/// A point payload rigidly attached to a link, missing from the nominal model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PayloadParams {
    /// URDF link the payload is attached to; `None` or empty: the tool link (the child link
    /// of the joint with the most joints above it).
    pub link: Option<String>,
    /// Payload mass in kg (0 = no payload; negative: derived from the robot's mass).
    pub mass_kg: f64,
    /// Centre of mass in the link frame, m.
    pub com_m: [f64; 3],
    /// Rotational inertia about the centre of mass, principal moments in the link's axes, kg·m².
    pub inertia_diag_kgm2: [f64; 3],
    /// Optional change of the payload mass at a given time (a step).
    pub step: Option<PayloadStep>,
}

impl Default for PayloadParams {
    fn default() -> Self {
        Self {
            link: None,
            mass_kg: -1.0,
            com_m: [0.0, 0.0, 0.08],
            inertia_diag_kgm2: [0.0; 3],
            step: None,
        }
    }
}

impl PayloadParams {
    /// The link it is attached to: `link`, or (when `None` or empty) the tool link of
    /// `nominal` ([`Model::tool_body`](gpn_dynamics::Model::tool_body)); `None` when the
    /// robot has no joint.
    pub fn link_on(&self, nominal: &gpn_dynamics::Model) -> Option<String> {
        match self.link.as_deref() {
            Some(name) if !name.is_empty() => Some(name.to_owned()),
            _ => nominal
                .tool_body()
                .map(|b| nominal.body_link_name(b).to_owned()),
        }
    }

    /// `nominal` carrying this payload with mass `mass_kg` on [`PayloadParams::link_on`]
    /// (`nominal` itself for a zero mass).
    pub fn added_to(
        &self,
        nominal: &gpn_dynamics::Model,
        mass_kg: f64,
    ) -> gpn_dynamics::Result<gpn_dynamics::Model> {
        let link = self.link_on(nominal).unwrap_or_default();
        if mass_kg == 0.0 {
            return Ok(nominal.clone());
        }
        let inertia =
            nalgebra::Matrix3::from_diagonal(&nalgebra::Vector3::from(self.inertia_diag_kgm2));
        nominal.with_added_inertia(&link, mass_kg, nalgebra::Vector3::from(self.com_m), inertia)
    }
}

/// A payload step: from `at_secs` on, the payload mass is `mass_kg` (same CoM and inertia).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PayloadStep {
    /// Time of the step, s.
    pub at_secs: f64,
    /// Payload mass after the step, kg.
    pub mass_kg: f64,
}

/// Joint friction: τ_f = −(b·q̇ + c·tanh(q̇/v_s)), scaled by an optional linear drift.
///
/// Coulomb friction is smoothed by tanh with velocity scale v_s so that the dynamics stay
/// Lipschitz and the fixed-step integrator does not chatter around q̇ = 0.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FrictionParams {
    /// Viscous coefficient b per joint, N·m·s/rad (N·s/m for prismatic joints).
    pub viscous_nms_per_rad: JointValues,
    /// Coulomb level c per joint, N·m (N for prismatic joints).
    pub coulomb_nm: JointValues,
    /// Velocity scale v_s of the tanh smoothing, rad/s.
    pub coulomb_smoothing_rad_s: f64,
    /// Optional drift of the viscous coefficients over time.
    pub drift: Option<FrictionDrift>,
}

impl Default for FrictionParams {
    fn default() -> Self {
        Self {
            viscous_nms_per_rad: JointValues::Each(Vec::new()),
            coulomb_nm: JointValues::Each(Vec::new()),
            coulomb_smoothing_rad_s: 0.01,
            drift: None,
        }
    }
}

/// Linear drift of the viscous coefficients: factor 1 at t = 0 rising linearly to
/// `factor_at_end` at `over_secs`, constant afterwards.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FrictionDrift {
    /// Viscous multiplier reached at `over_secs`.
    pub factor_at_end: f64,
    /// Duration of the ramp, s.
    pub over_secs: f64,
}

impl FrictionDrift {
    /// The viscous multiplier at time `t_secs`.
    pub fn factor_at(&self, t_secs: f64) -> f64 {
        let s = (t_secs / self.over_secs).clamp(0.0, 1.0);
        1.0 + (self.factor_at_end - 1.0) * s
    }
}

/// Rare sensor glitches: per sample and joint, with probability `probability_per_sample`,
/// either a torque-sensor spike of uniform size in `torque_spike_nm` (random sign) or an
/// encoder spike of ± `encoder_spike_rad` (each kind equally likely).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GlitchParams {
    /// Probability of a glitch per sample and joint.
    pub probability_per_sample: f64,
    /// Range of torque spike magnitudes, N·m.
    pub torque_spike_nm: [f64; 2],
    /// Encoder spike magnitude, rad.
    pub encoder_spike_rad: f64,
}

impl Default for GlitchParams {
    fn default() -> Self {
        Self {
            probability_per_sample: 0.0,
            torque_spike_nm: [5.0, 20.0],
            encoder_spike_rad: 0.05,
        }
    }
}

/// Everything the simulator needs besides the nominal model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimParams {
    /// Step rate, Hz (one control tick per step).
    pub rate_hz: f64,
    /// Integration substeps per step (the command is held over all of them).
    pub substeps: u32,
    /// Integration scheme.
    pub integrator: Integrator,
    /// Seed of every random draw (noise, glitches).
    pub seed: u64,
    /// End-effector payload.
    pub payload: PayloadParams,
    /// Joint friction.
    pub friction: FrictionParams,
    /// Rotor inertia reflected to each joint, kg·m².
    pub armature_kgm2: JointValues,
    /// Standard deviation of the joint-torque sensor noise, N·m (N for prismatic joints),
    /// one value or one per joint.
    pub torque_noise_std_nm: JointValues,
    /// Standard deviation of the encoder (position) noise, rad.
    pub encoder_noise_std_rad: f64,
    /// Standard deviation of the measured-velocity noise, rad/s.
    pub velocity_noise_std_rad_s: f64,
    /// Rare sensor glitches.
    pub glitches: GlitchParams,
}

impl Default for SimParams {
    fn default() -> Self {
        Self {
            rate_hz: 1000.0,
            substeps: 1,
            integrator: Integrator::Rk4,
            seed: 1,
            payload: PayloadParams::default(),
            friction: FrictionParams::default(),
            armature_kgm2: JointValues::Each(Vec::new()),
            torque_noise_std_nm: JointValues::All(0.05),
            encoder_noise_std_rad: 1e-5,
            velocity_noise_std_rad_s: 0.0,
            glitches: GlitchParams::default(),
        }
    }
}

fn require(ok: bool, key: &'static str, reason: impl Into<String>) -> SimResult<()> {
    if ok {
        Ok(())
    } else {
        Err(SimError::Param {
            key,
            reason: reason.into(),
        })
    }
}

impl SimParams {
    /// Checks every scalar for range; per-joint values are checked against the model later.
    pub fn check(&self) -> SimResult<()> {
        let finite_nonneg = |v: f64| v.is_finite() && v >= 0.0;
        require(
            self.rate_hz.is_finite() && self.rate_hz > 0.0,
            "rate_hz",
            "must be > 0",
        )?;
        require(self.substeps >= 1, "substeps", "must be ≥ 1")?;
        require(
            finite_nonneg(self.payload.mass_kg),
            "payload.mass_kg",
            "must be ≥ 0",
        )?;
        require(
            self.payload.com_m.iter().all(|v| v.is_finite()),
            "payload.com_m",
            "must be finite",
        )?;
        require(
            self.payload
                .inertia_diag_kgm2
                .iter()
                .all(|v| finite_nonneg(*v)),
            "payload.inertia_diag_kgm2",
            "must be ≥ 0",
        )?;
        if let Some(step) = &self.payload.step {
            require(
                finite_nonneg(step.at_secs),
                "payload.step.at_secs",
                "must be ≥ 0",
            )?;
            require(
                finite_nonneg(step.mass_kg),
                "payload.step.mass_kg",
                "must be ≥ 0",
            )?;
        }
        require(
            self.friction.coulomb_smoothing_rad_s.is_finite()
                && self.friction.coulomb_smoothing_rad_s > 0.0,
            "friction.coulomb_smoothing_rad_s",
            "must be > 0",
        )?;
        if let Some(drift) = &self.friction.drift {
            require(
                finite_nonneg(drift.factor_at_end),
                "friction.drift.factor_at_end",
                "must be ≥ 0",
            )?;
            require(
                drift.over_secs.is_finite() && drift.over_secs > 0.0,
                "friction.drift.over_secs",
                "must be > 0",
            )?;
        }
        require(
            finite_nonneg(self.encoder_noise_std_rad),
            "encoder_noise_std_rad",
            "must be ≥ 0",
        )?;
        require(
            finite_nonneg(self.velocity_noise_std_rad_s),
            "velocity_noise_std_rad_s",
            "must be ≥ 0",
        )?;
        let g = &self.glitches;
        require(
            (0.0..=1.0).contains(&g.probability_per_sample),
            "glitches.probability_per_sample",
            "must be in [0, 1]",
        )?;
        require(
            finite_nonneg(g.torque_spike_nm[0])
                && g.torque_spike_nm[1].is_finite()
                && g.torque_spike_nm[0] <= g.torque_spike_nm[1],
            "glitches.torque_spike_nm",
            "must be [min, max] with 0 ≤ min ≤ max",
        )?;
        require(
            finite_nonneg(g.encoder_spike_rad),
            "glitches.encoder_spike_rad",
            "must be ≥ 0",
        )?;
        Ok(())
    }

    /// Step length, s.
    pub fn dt_secs(&self) -> f64 {
        1.0 / self.rate_hz
    }
}
