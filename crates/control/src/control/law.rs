//! The learning computed-torque law (SkyGP eq. 21 in our residual convention, with the
//! spec's sign fixes):
//!
//! q̈_cmd = q̈_d − K_d ė − K_p e,  e = q − q_d,
//! u = τ_RBD(q, q̇, q̈_cmd) + μ(x*) − M(q)⁻¹ (P₂₁ e + P₂₂ ė) / (2ε),  x* = [q, q̇, q̈_cmd],
//!
//! with P solving AᵀP + PA = −I for A = [[0, I], [−K_p, −K_d]] (per-joint 2×2 blocks, since
//! the gains are diagonal), then saturated at the URDF effort limits.
//! Real-time: no allocation, lock or I/O after `new`.

use super::ControlError;
use super::lyapunov::{JointLyapunov, joints_lyapunov_identity};
use super::params::ControlParams;
use crate::robot::{Data, Model, crba, rnea};

/// Gains and the Lyapunov solution, per joint.
#[derive(Debug, Clone)]
pub struct Gains {
    /// K_p, s⁻².
    pub kp: Vec<f64>,
    /// K_d, s⁻¹.
    pub kd: Vec<f64>,
    /// Per-joint P blocks.
    pub lyapunov: Vec<JointLyapunov>,
    /// λ̲(P), λ̄(P) of the full P.
    pub p_eigen_min_max: (f64, f64),
    /// ε.
    pub epsilon: f64,
}

impl Gains {
    /// Gains from the parameters, checked (positive, finite) for `nv` joints.
    pub fn new(params: &ControlParams, nv: usize) -> Result<Self, ControlError> {
        let kp = params.kp_per_s2.expand("kp_per_s2", nv)?;
        let kd = params.kd_per_s.expand("kd_per_s", nv)?;
        if !(params.epsilon.is_finite() && params.epsilon > 0.0) {
            return Err(ControlError::Param {
                key: "epsilon",
                reason: format!("must be > 0, found {}", params.epsilon),
            });
        }
        let (lyapunov, lo, hi) =
            joints_lyapunov_identity(&kp, &kd).map_err(|e| ControlError::Param {
                key: "kp_per_s2/kd_per_s",
                reason: e.to_string(),
            })?;
        Ok(Self {
            kp,
            kd,
            lyapunov,
            p_eigen_min_max: (lo, hi),
            epsilon: params.epsilon,
        })
    }

    /// The Theorem-2 factor sqrt(ε λ̄(P) / (λ̲(Q) λ̲(P))) with Q = I (square-root fix).
    pub fn tracking_factor(&self) -> f64 {
        let (lo, hi) = self.p_eigen_min_max;
        (self.epsilon * hi / lo).sqrt()
    }
}

/// The control law with its scratch buffers.
pub struct ControlLaw {
    gains: Gains,
    effort_limit: Vec<f64>,
    data: Data,
    /// Cholesky factor of M (row-major, lower), reused every tick.
    chol: Vec<f64>,
    rhs: Vec<f64>,
}

impl ControlLaw {
    /// A law for `robot` with these parameters.
    pub fn new(robot: &Model, params: &ControlParams) -> Result<Self, ControlError> {
        let nv = robot.nv();
        let fraction = params.effort_limit_fraction;
        if !(fraction.is_finite() && fraction > 0.0 && fraction <= 1.0) {
            return Err(ControlError::Param {
                key: "effort_limit_fraction",
                reason: format!("must be in (0, 1], found {fraction}"),
            });
        }
        Ok(Self {
            gains: Gains::new(params, nv)?,
            effort_limit: robot.limits().iter().map(|l| l.effort * fraction).collect(),
            data: Data::new(robot),
            chol: vec![0.0; nv * nv],
            rhs: vec![0.0; nv],
        })
    }

    /// The effort limits the command saturates at (URDF limit × fraction), per joint.
    pub fn effort_limits(&self) -> &[f64] {
        &self.effort_limit
    }

    /// g(q), unsaturated, into `g`.
    pub fn gravity(&mut self, robot: &Model, q: &[f64], g: &mut [f64]) -> Result<(), ControlError> {
        g.copy_from_slice(crate::robot::gravity(robot, &mut self.data, q)?);
        Ok(())
    }

    /// τ = M(q)q̈ + C(q, q̇)q̇ + g(q), into `tau`.
    pub fn inverse_dynamics(
        &mut self,
        robot: &Model,
        (q, v, a): (&[f64], &[f64], &[f64]),
        tau: &mut [f64],
    ) -> Result<(), ControlError> {
        tau.copy_from_slice(rnea(robot, &mut self.data, q, v, a)?);
        Ok(())
    }

    /// The gains in use.
    pub fn gains(&self) -> &Gains {
        &self.gains
    }

    /// Tracking errors and the commanded acceleration, into `e`, `ed`, `qdd_cmd`.
    #[allow(clippy::too_many_arguments)]
    pub fn commanded_accel(
        &self,
        q: &[f64],
        v: &[f64],
        q_d: &[f64],
        qd_d: &[f64],
        qdd_d: &[f64],
        e: &mut [f64],
        ed: &mut [f64],
        qdd_cmd: &mut [f64],
    ) {
        for j in 0..q.len() {
            e[j] = q[j] - q_d[j];
            ed[j] = v[j] - qd_d[j];
            qdd_cmd[j] = qdd_d[j] - self.gains.kd[j] * ed[j] - self.gains.kp[j] * e[j];
        }
    }

    /// u = τ_RBD(q, q̇, q̈_cmd) + μ − M⁻¹(P₂₁e + P₂₂ė)/(2ε), saturated; `tau_rbd` receives
    /// τ_RBD. Returns the number of saturated joints.
    #[allow(clippy::too_many_arguments)]
    pub fn torque(
        &mut self,
        robot: &Model,
        q: &[f64],
        v: &[f64],
        qdd_cmd: &[f64],
        e: &[f64],
        ed: &[f64],
        mu: &[f64],
        tau_rbd: &mut [f64],
        u: &mut [f64],
    ) -> Result<usize, ControlError> {
        let nv = q.len();
        tau_rbd.copy_from_slice(rnea(robot, &mut self.data, q, v, qdd_cmd)?);
        for j in 0..nv {
            let p = &self.gains.lyapunov[j];
            self.rhs[j] = (p.p12 * e[j] + p.p22 * ed[j]) / (2.0 * self.gains.epsilon);
        }
        let m = crba(robot, &mut self.data, q)?;
        cholesky_solve_in_place(m.as_slice(), nv, &mut self.chol, &mut self.rhs)
            .ok_or(ControlError::SingularInertia)?;
        let mut saturated = 0;
        for j in 0..nv {
            let raw = tau_rbd[j] + mu[j] - self.rhs[j];
            let limit = self.effort_limit[j];
            u[j] = raw.clamp(-limit, limit);
            if u[j] != raw {
                saturated += 1;
            }
        }
        Ok(saturated)
    }

    /// Gravity compensation g(q), saturated: the safe output for bad input.
    pub fn hold(&mut self, robot: &Model, q: &[f64], u: &mut [f64]) -> Result<(), ControlError> {
        let g = crate::robot::gravity(robot, &mut self.data, q)?;
        for j in 0..q.len() {
            u[j] = g[j].clamp(-self.effort_limit[j], self.effort_limit[j]);
        }
        Ok(())
    }
}

/// Solves M x = b for symmetric positive-definite M (column-major nv×nv, as nalgebra
/// stores it) by Cholesky in the `l` buffer; `b` becomes x. None if M is not PD.
fn cholesky_solve_in_place(m: &[f64], n: usize, l: &mut [f64], b: &mut [f64]) -> Option<()> {
    for i in 0..n {
        for j in 0..=i {
            let mut s = m[j * n + i];
            for k in 0..j {
                s -= l[i * n + k] * l[j * n + k];
            }
            if i == j {
                if s.is_nan() || s <= 0.0 {
                    return None;
                }
                l[i * n + i] = s.sqrt();
            } else {
                l[i * n + j] = s / l[j * n + j];
            }
        }
    }
    for i in 0..n {
        let s = b[i] - (0..i).map(|k| l[i * n + k] * b[k]).sum::<f64>();
        b[i] = s / l[i * n + i];
    }
    for i in (0..n).rev() {
        let s = b[i] - (i + 1..n).map(|k| l[k * n + i] * b[k]).sum::<f64>();
        b[i] = s / l[i * n + i];
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cholesky_solve_matches_a_direct_solve() {
        let m =
            nalgebra::DMatrix::from_row_slice(3, 3, &[4.0, 1.0, 0.5, 1.0, 3.0, 0.2, 0.5, 0.2, 2.0]);
        let b = nalgebra::DVector::from_vec(vec![1.0, -2.0, 0.5]);
        let expected = m.clone().lu().solve(&b).expect("invertible");
        let mut x = b.as_slice().to_vec();
        let mut l = vec![0.0; 9];
        cholesky_solve_in_place(m.as_slice(), 3, &mut l, &mut x).expect("PD");
        for i in 0..3 {
            assert!((x[i] - expected[i]).abs() < 1e-12);
        }
        let not_pd = nalgebra::DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 1.0]);
        assert!(cholesky_solve_in_place(not_pd.as_slice(), 2, &mut l, &mut x).is_none());
    }

    #[test]
    fn spec_example_gains_give_the_published_lyapunov_solution() {
        let params = ControlParams {
            kp_per_s2: crate::robot::JointValues::All(5.0),
            kd_per_s: crate::robot::JointValues::All(10.0),
            epsilon: 1.0,
            ..ControlParams::default()
        };
        let gains = Gains::new(&params, 1).expect("valid");
        let p = gains.lyapunov[0];
        assert!(
            (p.p11 - 1.3).abs() < 1e-12
                && (p.p12 - 0.1).abs() < 1e-12
                && (p.p22 - 0.06).abs() < 1e-12
        );
        // Theorem-2 factor (square-root form) with ε = 1: sqrt(λ̄/λ̲) ≈ sqrt(25.2).
        assert!((gains.tracking_factor() - 25.15_f64.sqrt()).abs() < 0.05);
    }
}
