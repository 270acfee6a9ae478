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

/// Everything the control law needs besides the robot model.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ControlParams {
    /// Proportional gain K_p per joint, s⁻².
    pub kp_per_s2: JointValues,
    /// Derivative gain K_d per joint, s⁻¹.
    pub kd_per_s: JointValues,
    /// ε of the robustifying term −M⁻¹(P₂₁e + P₂₂ė)/(2ε) (> 0; larger is gentler).
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
            kp_per_s2: JointValues::All(100.0),
            kd_per_s: JointValues::All(20.0),
            epsilon: 1.0,
            use_model: true,
            apply_residual: true,
            effort_limit_fraction: 1.0,
            effort_limits_nm: JointValues::Each(Vec::new()),
            bound: BoundParams::default(),
            supervisor: SupervisorParams::default(),
        }
    }
}
