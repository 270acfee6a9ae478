//! `ControlParams`: gains, the robustness margin ε, error-bound constants and the
//! supervisor's budget, with units and defaults.

use crate::robot::JointValues;

/// Constants of the Lemma-1 bound η_thm = β·σ + γ (SkyGP spec §4 with its recommended choices).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BoundParams {
    /// Failure probability δ per output (the union bound over experts needs δ < 1/Ncal).
    pub delta: f64,
    /// Grid constant τ of the covering argument, in input units.
    pub grid_tau: f64,
    /// RKHS-norm bound Γ of the standardised residual.
    pub rkhs_norm: f64,
    /// Largest |standardised target| assumed when bounding the mean's Lipschitz constant.
    pub target_bound: f64,
    /// Points per local model assumed in the constants (SkyGP: N̄).
    pub points_per_model: f64,
    /// Largest |q̈| of the input box, rad/s² (q and q̇ come from the URDF limits).
    pub accel_box_rad_s2: f64,
}

impl Default for BoundParams {
    fn default() -> Self {
        Self {
            delta: 0.01,
            grid_tau: 1e-4,
            rkhs_norm: 1.0,
            target_bound: 5.0,
            points_per_model: 50.0,
            accel_box_rad_s2: 100.0,
        }
    }
}

/// The safety supervisor's settings.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SupervisorParams {
    /// Budget for the model's work in one tick (learn + predict), µs; over it, the tick's
    /// prediction is discarded (nominal law).
    pub budget_micros: f64,
    /// Consecutive overruns or failures after which the model is quarantined.
    pub max_consecutive_faults: u32,
    /// Ticks a quarantined model is left alone (neither learning nor predicting).
    pub quarantine_ticks: u32,
}

impl Default for SupervisorParams {
    fn default() -> Self {
        Self {
            budget_micros: 500.0,
            max_consecutive_faults: 5,
            quarantine_ticks: 1000,
        }
    }
}

/// What a joint torque value includes: the robot's interface convention, for the command the
/// node sends and for the `effort` it measures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TorqueConvention {
    /// The whole joint torque, gravity included: the node compensates gravity (the embedded
    /// simulator, MuJoCo and Gazebo effort interfaces, most ros2_control effort joints).
    #[default]
    Full,
    /// The torque on top of the gravity compensation the robot adds itself (libfranka's
    /// torque interface, and other arms whose controllers compensate gravity): the node sends
    /// u − g(q), and a measured effort of this kind is τ − g(q).
    GravityCompensatedByRobot,
}

impl TorqueConvention {
    /// Whether g(q) is left out (the robot adds it).
    pub fn without_gravity(self) -> bool {
        self == TorqueConvention::GravityCompensatedByRobot
    }
}

/// When the learned law gives way to the nominal one, and when it may come back
/// (`CommandDecision`). Checked every tick on which the learned law ran.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FallbackParams {
    /// Fall back when a joint's recent RMS tracking error exceeds this multiple of what the
    /// nominal law had on it (plus `tracking_floor_rad`).
    pub tracking_ratio: f64,
    /// Added to the threshold: tracking errors below it never count as worse, rad.
    pub tracking_floor_rad: f64,
    /// The same for the velocity error ė (checked the same way: a divergence shows in ė
    /// first), rad/s.
    pub tracking_floor_rad_s: f64,
    /// Averaging time of the learned law's recent tracking error, s.
    pub tracking_window_s: f64,
    /// Averaging time of the nominal law's tracking error (the baseline), s.
    pub baseline_window_s: f64,
    /// A residual is implausible (fall back) when even |μ| − η_cal exceeds this fraction of
    /// the joint's effort limit: the model claims more than the actuator can produce.
    pub mu_effort_fraction: f64,
    /// Fall back after this many consecutive ticks in which the learned law saturated a joint.
    pub saturation_ticks: u32,
    /// Fall back when a joint moves faster than this fraction of its URDF velocity limit.
    pub velocity_fraction: f64,
    /// After a fallback the model runs in shadow (predicting, not commanding) at least this
    /// long, doubled at each further fallback (up to 64×), and is re-adopted only if its
    /// residuals stayed plausible throughout and its bound coverage is ≥ `readopt_coverage`, s.
    pub probation_s: f64,
    /// Coverage of ±η_cal over the learner's recent samples needed to re-adopt.
    pub readopt_coverage: f64,
}

impl Default for FallbackParams {
    fn default() -> Self {
        Self {
            tracking_ratio: 3.0,
            tracking_floor_rad: 0.02,
            tracking_floor_rad_s: 0.2,
            tracking_window_s: 0.01,
            baseline_window_s: 2.0,
            mu_effort_fraction: 1.0,
            saturation_ticks: 100,
            velocity_fraction: 1.0,
            probation_s: 0.5,
            readopt_coverage: 0.8,
        }
    }
}

/// What the node believes of a joint state or a reference (`CommandDecision`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PlausibilityParams {
    /// A measured position this far beyond its URDF limits is implausible: the safe output,
    /// rad (m for prismatic joints).
    pub position_margin_rad: f64,
    /// A measured speed above this multiple of the URDF velocity limit is implausible.
    pub velocity_factor: f64,
    /// A position change between two states larger than the velocity limit allows over
    /// their interval (times `velocity_factor`) plus this is an impossible jump, rad.
    pub jump_tolerance_rad: f64,
    /// Plausible states in a row that end a safe episode.
    pub resume_ticks: u32,
    /// The largest reference acceleration accepted, rad/s² (the URDF has none).
    pub reference_accel_rad_s2: f64,
}

impl Default for PlausibilityParams {
    fn default() -> Self {
        Self {
            position_margin_rad: 0.1,
            velocity_factor: 1.5,
            jump_tolerance_rad: 0.05,
            resume_ticks: 3,
            reference_accel_rad_s2: 100.0,
        }
    }
}

/// Everything the control law needs besides the robot model.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ControlParams {
    /// Proportional gain K_p per joint, s⁻² (empty: derived from the robot).
    pub kp_per_s2: JointValues,
    /// Derivative gain K_d per joint, s⁻¹ (empty: derived from the robot).
    pub kd_per_s: JointValues,
    /// ε of the robustifying term −M⁻¹(P₂₁e + P₂₂ė)/(2ε) (> 0; larger is gentler; 0:
    /// derived from the robot, at least 1).
    pub epsilon: f64,
    /// Use the learned residual μ in the law (false: the nominal computed-torque law).
    pub use_model: bool,
    /// Put the learned residual into the command (false: learn and predict, bounds and all,
    /// but command the nominal law — a learn-only run in the loop, e.g. to record a stream on
    /// the nominal law's trajectory).
    pub apply_residual: bool,
    /// The command saturates at this fraction of each joint's effort limit, in (0, 1].
    pub effort_limit_fraction: f64,
    /// Effort limits, N·m (N for prismatic joints), replacing the URDF's: one value for every
    /// movable joint or one per movable joint (joint order), each finite and > 0. Empty: the
    /// URDF's `<limit effort>`, which every movable joint must then have. Applied when the
    /// robot model is loaded (`app::load_robot`), so a change needs a restart.
    pub effort_limits_nm: JointValues,
    /// Error-bound constants.
    pub bound: BoundParams,
    /// Supervisor.
    pub supervisor: SupervisorParams,
    /// What the command includes: `full` (gravity too) or `gravity_compensated_by_robot`.
    pub command_convention: TorqueConvention,
    /// What the measured `effort` includes (same choices).
    pub effort_convention: TorqueConvention,
    /// Every switch between laws or models (and activation) blends from the last command to
    /// the new law over this time, s.
    pub handover_s: f64,
    /// Largest command change per second, N·m/s: one value or one per joint. Empty: 50 × the
    /// effort limit (the full range in 20 ms).
    pub torque_rate_limits_nm_per_s: JointValues,
    /// When the learned law gives way to the nominal one.
    pub fallback: FallbackParams,
    /// Plausibility of joint states and references.
    pub plausibility: PlausibilityParams,
}

impl ControlParams {
    /// [`ControlParams::effort_limits_nm`] as the robot loader takes it
    /// ([`Model::from_urdf_file_with_effort_limits`](crate::robot::Model::from_urdf_file_with_effort_limits)):
    /// empty (the URDF's), one value (every joint) or one per joint.
    pub fn given_effort_limits_nm(&self) -> &[f64] {
        match &self.effort_limits_nm {
            JointValues::All(value) => std::slice::from_ref(value),
            JointValues::Each(values) => values,
        }
    }
}

impl Default for ControlParams {
    fn default() -> Self {
        Self {
            // Empty: derived from the robot (gpn_app::robot_defaults).
            kp_per_s2: JointValues::Each(Vec::new()),
            kd_per_s: JointValues::Each(Vec::new()),
            epsilon: 0.0,
            use_model: true,
            apply_residual: true,
            effort_limit_fraction: 1.0,
            effort_limits_nm: JointValues::Each(Vec::new()),
            bound: BoundParams::default(),
            supervisor: SupervisorParams::default(),
            command_convention: TorqueConvention::Full,
            effort_convention: TorqueConvention::Full,
            handover_s: 0.05,
            torque_rate_limits_nm_per_s: JointValues::Each(Vec::new()),
            fallback: FallbackParams::default(),
            plausibility: PlausibilityParams::default(),
        }
    }
}
