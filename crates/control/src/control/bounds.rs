//! Error bounds published with every prediction.
//!
//! * η_thm,j = β·σ_j + γ_j — Lemma 1 of the SkyGP paper with the spec's recommended choices
//!   (`gpn_gp_core::bound`). β (eq. 13) covers the input box of x = [q, q̇, q̈]: the URDF
//!   position limits (±π for continuous joints), ± the velocity limits, and ± a configured
//!   acceleration bound, and [−1, 1] for each friction feature when the model has them
//!   (`learn::InputLayout`). γ_j = β·ω_σ(τ) + Γ√(2L_κτ) + L_μ·τ with conservative constants
//!   from output j's hyperparameters (standardised units, then scaled to N·m):
//!   L_κ = σ_f² e^{−½}/min ℓ, ‖(K + σ_n²I)⁻¹‖ ≤ 1/σ_n², and ‖α‖₁ ≤ N̄·Y/σ_n² for N̄
//!   points per local model and standardised targets bounded by Y. σ_j is the model's
//!   latent posterior standard deviation (the aggregated σ̃, as the ABI reports it).
//! * The Theorem-2 ultimate tracking bound lim‖z‖ ≤ η̄·sqrt(ε λ̄(P)/(λ̲(Q) λ̲(P))) with
//!   Q = I (square-root fix), η̄ the largest ‖η_thm‖ seen since the model became active.
//! * η_cal = β_cal·σ (calibrated, see `learn`), published as the practical bound.

use gpn_gp_core::bound::{beta, expert_gamma, kernel_lipschitz_se, sigma_modulus};

use super::ControlError;
use super::params::BoundParams;
use crate::robot::Model;

/// Lemma-1 constants per joint and the running η̄.
#[derive(Debug, Clone)]
pub struct TheoremBound {
    params: BoundParams,
    beta: f64,
    /// β over [q, q̇, q̈] and over [q, q̇, q̈, friction features].
    beta_physical: f64,
    beta_with_friction: f64,
    /// γ_j in N·m, once a model's hyperparameters are known (NaN before).
    gamma_nm: Vec<f64>,
    eta_bar: f64,
    tracking_factor: f64,
}

impl TheoremBound {
    /// β for the robot's input box; γ waits for hyperparameters ([`TheoremBound::set_hyper`]).
    pub fn new(
        robot: &Model,
        params: &BoundParams,
        tracking_factor: f64,
    ) -> Result<Self, ControlError> {
        let nv = robot.nv();
        let (mut lower, mut upper) = (Vec::with_capacity(3 * nv), Vec::with_capacity(3 * nv));
        let limits = robot.limits();
        for l in limits {
            let finite = l.position_lower.is_finite() && l.position_upper.is_finite();
            lower.push(if finite {
                l.position_lower
            } else {
                -std::f64::consts::PI
            });
            upper.push(if finite {
                l.position_upper
            } else {
                std::f64::consts::PI
            });
        }
        for l in limits {
            let v = if l.velocity.is_finite() {
                l.velocity
            } else {
                10.0
            };
            lower.push(-v);
            upper.push(v);
        }
        for _ in 0..nv {
            lower.push(-params.accel_box_rad_s2);
            upper.push(params.accel_box_rad_s2);
        }
        let beta_of = |lower: &[f64], upper: &[f64]| {
            beta(lower, upper, params.grid_tau, params.delta).map_err(|e| ControlError::Param {
                key: "bound",
                reason: e.to_string(),
            })
        };
        let beta_physical = beta_of(&lower, &upper)?;
        lower.resize(4 * nv, -1.0);
        upper.resize(4 * nv, 1.0);
        let beta_with_friction = beta_of(&lower, &upper)?;
        Ok(Self {
            params: params.clone(),
            beta: beta_physical,
            beta_physical,
            beta_with_friction,
            gamma_nm: vec![f64::NAN; nv],
            eta_bar: 0.0,
            tracking_factor,
        })
    }

    /// β of eq. 13 for the model's input box.
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// Computes γ_j from the model's hyperparameters (the config's `"hyper"` array, one
    /// `{sigma_f, sigma_n, lengthscales}` per output, in the model's standardised units) and
    /// each output's scale (N·m per standardised unit); `input_dim` is the model's (β
    /// covers the friction features' box when it has them). No allocation.
    pub fn set_hyper(&mut self, hyper: &serde_json::Value, scale_nm: &[f64], input_dim: usize) {
        self.beta = if input_dim > 3 * self.gamma_nm.len() {
            self.beta_with_friction
        } else {
            self.beta_physical
        };
        let n = self.params.points_per_model;
        let tau = self.params.grid_tau;
        for (j, gamma) in self.gamma_nm.iter_mut().enumerate() {
            let entry = match hyper {
                serde_json::Value::Array(items) => items.get(j),
                single => Some(single),
            };
            *gamma = entry
                .and_then(|h| {
                    let sf = h.get("sigma_f")?.as_f64()?;
                    let sn = h.get("sigma_n")?.as_f64()?;
                    let min_l = h
                        .get("lengthscales")?
                        .as_array()?
                        .iter()
                        .filter_map(serde_json::Value::as_f64)
                        .fold(f64::INFINITY, f64::min);
                    let l_kappa = kernel_lipschitz_se(sf, &[min_l]).ok()?;
                    let inv_norm = 1.0 / (sn * sn);
                    let omega = sigma_modulus(tau, l_kappa, n as usize, inv_norm, sf);
                    let l_mu = l_kappa * n * self.params.target_bound * inv_norm;
                    let g =
                        expert_gamma(self.beta, omega, self.params.rkhs_norm, l_kappa, l_mu, tau);
                    Some(g * scale_nm.get(j).copied().unwrap_or(1.0))
                })
                .unwrap_or(f64::NAN);
        }
    }

    /// η_thm per joint for latent standard deviations `sigma_nm`, into `eta`; updates η̄.
    /// NaN while γ is unknown. Real-time.
    pub fn eta(&mut self, sigma_nm: &[f64], eta: &mut [f64]) {
        let mut norm2 = 0.0;
        for j in 0..eta.len() {
            eta[j] = self.beta * sigma_nm[j] + self.gamma_nm[j];
            norm2 += eta[j] * eta[j];
        }
        if norm2.is_finite() {
            self.eta_bar = self.eta_bar.max(norm2.sqrt());
        }
    }

    /// The Theorem-2 ultimate tracking bound from the η̄ seen so far, in the units of ‖z‖.
    pub fn tracking_bound(&self) -> f64 {
        self.eta_bar * self.tracking_factor
    }

    /// Changes the Theorem-2 factor (new gains). Real-time.
    pub fn set_tracking_factor(&mut self, tracking_factor: f64) {
        self.tracking_factor = tracking_factor;
    }

    /// Restarts η̄ (a new model).
    pub fn reset_eta_bar(&mut self) {
        self.eta_bar = 0.0;
    }
}
