//! The Lyapunov side of SkyGP's Theorem 2 (`specs/skygp.md` §5.2, square-root fix): the
//! matrix P ≻ 0 solving AᵀP + PA = −Q for the closed loop A = [[0, I], [−K_p, −K_d]], and
//! the ultimate tracking bound lim ‖z‖ ≤ η̄·sqrt(ε λ̄(P)/(λ̲(Q) λ̲(P))) it gives.
//!
//! With diagonal gains and a Q made of per-joint 2×2 blocks ([`JointLyapunov`]), the
//! equation decouples into one 2×2 equation per joint in the coordinates (e_j, ė_j);
//! [`solve_lyapunov`] solves the general dense case (for checks).
//!
//! These are control quantities (gains, closed loop), so they live here and not with the GP
//! numerics of `gpn_gp_core::bound`, which supplies η̄.
//!
//! ```
//! use gpn_control::control::lyapunov::{joint_lyapunov, tracking_factor};
//! let p = joint_lyapunov(5.0, 10.0, [[1.0, 0.0], [0.0, 1.0]]).unwrap();
//! assert!((p.p11 - 1.3).abs() < 1e-12 && (p.p12 - 0.1).abs() < 1e-12 && (p.p22 - 0.06).abs() < 1e-12);
//! let (lo, hi) = p.eigenvalues();
//! assert!((tracking_factor(hi, 1.0, lo) - 25.2).abs() < 0.1);
//! ```

use gpn_gp_core::bound::BoundError;
use nalgebra::{DMatrix, DVector};

/// Errors of the Lyapunov and tracking-bound computations.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LyapunovError {
    /// An argument outside its domain or of the wrong length: the numerics' argument
    /// errors, so that both layers word them the same.
    #[error(transparent)]
    Argument(#[from] BoundError),
    /// The Lyapunov equation has no (unique, positive-definite) solution.
    #[error("Lyapunov equation not solvable: {0}")]
    NotSolvable(String),
}

/// Result alias of this module.
pub type Result<T> = std::result::Result<T, LyapunovError>;

/// `value` if it is finite and `holds`, else a [`BoundError::Invalid`] naming `what`
/// and the requirement `why`.
fn checked(what: &'static str, value: f64, holds: bool, why: &'static str) -> Result<f64> {
    if value.is_finite() && holds {
        return Ok(value);
    }
    Err(BoundError::Invalid { what, value, why }.into())
}

fn positive(what: &'static str, value: f64) -> Result<f64> {
    checked(what, value, value > 0.0, "must be finite and > 0")
}

fn non_negative(what: &'static str, value: f64) -> Result<f64> {
    checked(what, value, value >= 0.0, "must be finite and >= 0")
}

/// Theorem 2's factor λ̄(P)/(λ̲(Q) λ̲(P)) (≈ 25.2 for the spec §5.3 example).
pub fn tracking_factor(lambda_max_p: f64, lambda_min_q: f64, lambda_min_p: f64) -> f64 {
    lambda_max_p / (lambda_min_q * lambda_min_p)
}

/// Theorem 2's ultimate bound with the square-root fix:
/// lim ‖z‖ ≤ η̄·sqrt(ε λ̄(P)/(λ̲(Q) λ̲(P))).
pub fn tracking_bound(
    eta_bar: f64,
    epsilon: f64,
    lambda_max_p: f64,
    lambda_min_q: f64,
    lambda_min_p: f64,
) -> Result<f64> {
    non_negative("eta_bar", eta_bar)?;
    positive("epsilon", epsilon)?;
    positive("lambda_max_p", lambda_max_p)?;
    positive("lambda_min_q", lambda_min_q)?;
    positive("lambda_min_p", lambda_min_p)?;
    Ok(eta_bar * (epsilon * tracking_factor(lambda_max_p, lambda_min_q, lambda_min_p)).sqrt())
}

/// Solution of one joint's 2×2 Lyapunov equation AᵀP + PA = −Q, A = [[0, 1], [−k_p, −k_d]],
/// in the coordinates (e, ė): P = [[p11, p12], [p12, p22]].
///
/// For A = [[0, I], [−K_p, −K_d]] with diagonal K_p, K_d and a Q whose only non-zero entries
/// couple e_j with itself and with ė_j (per-joint 2×2 blocks, e.g. Q = I), the full P has the
/// same structure: P = [[diag p11, diag p12], [diag p12, diag p22]] in the ordering
/// z = [e; ė], and its eigenvalues are the union of the joints' 2×2 eigenvalues.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JointLyapunov {
    /// P_{ee}.
    pub p11: f64,
    /// P_{eė}.
    pub p12: f64,
    /// P_{ėė}.
    pub p22: f64,
}

impl JointLyapunov {
    /// (λ_min, λ_max) of the 2×2 block.
    pub fn eigenvalues(&self) -> (f64, f64) {
        let mean = 0.5 * (self.p11 + self.p22);
        let half = 0.5 * (self.p11 - self.p22);
        let r = (half * half + self.p12 * self.p12).sqrt();
        (mean - r, mean + r)
    }
}

/// Solves one joint's AᵀP + PA = −Q for A = [[0, 1], [−k_p, −k_d]] in closed form
/// (k_p, k_d > 0 make A Hurwitz; Q symmetric, only its upper triangle is read):
/// p12 = q11/(2k_p), p22 = (2p12 + q22)/(2k_d), p11 = k_p p22 + k_d p12 − q12.
/// Errors if the gains are not positive or the resulting P is not positive definite.
pub fn joint_lyapunov(k_p: f64, k_d: f64, q: [[f64; 2]; 2]) -> Result<JointLyapunov> {
    positive("k_p", k_p)?;
    positive("k_d", k_d)?;
    let p12 = q[0][0] / (2.0 * k_p);
    let p22 = (2.0 * p12 + q[1][1]) / (2.0 * k_d);
    let p11 = k_p * p22 + k_d * p12 - q[0][1];
    let sol = JointLyapunov { p11, p12, p22 };
    let (lo, _) = sol.eigenvalues();
    if lo.is_nan() || lo <= 0.0 {
        return Err(LyapunovError::NotSolvable(format!(
            "P is not positive definite (λ_min = {lo}); is Q ≻ 0?"
        )));
    }
    Ok(sol)
}

/// Per-joint Lyapunov solutions for diagonal gains `k_p`, `k_d` (one entry per joint) and
/// Q = I, with the extreme eigenvalues (λ̲(P), λ̄(P)) of the full P.
pub fn joints_lyapunov_identity(
    k_p: &[f64],
    k_d: &[f64],
) -> Result<(Vec<JointLyapunov>, f64, f64)> {
    if k_p.len() != k_d.len() {
        return Err(BoundError::Dimension {
            what: "k_d",
            expected: k_p.len(),
            found: k_d.len(),
        }
        .into());
    }
    let mut out = Vec::with_capacity(k_p.len());
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (&kp, &kd) in k_p.iter().zip(k_d) {
        let s = joint_lyapunov(kp, kd, [[1.0, 0.0], [0.0, 1.0]])?;
        let (a, b) = s.eigenvalues();
        lo = lo.min(a);
        hi = hi.max(b);
        out.push(s);
    }
    Ok((out, lo, hi))
}

/// Solves the dense Lyapunov equation AᵀP + PA = −Q (A, Q: n×n, Q symmetric) by the
/// Kronecker form (I ⊗ Aᵀ + Aᵀ ⊗ I) vec P = −vec Q, an n²×n² LU solve: for checks and
/// small systems (n ≤ ~20), not for a control loop. The result is symmetrised.
pub fn solve_lyapunov(a: &DMatrix<f64>, q: &DMatrix<f64>) -> Result<DMatrix<f64>> {
    let n = a.nrows();
    if a.ncols() != n {
        return Err(BoundError::Dimension {
            what: "A columns",
            expected: n,
            found: a.ncols(),
        }
        .into());
    }
    if q.nrows() != n || q.ncols() != n {
        return Err(BoundError::Dimension {
            what: "Q rows",
            expected: n,
            found: q.nrows(),
        }
        .into());
    }
    let nn = n * n;
    // Column-major vec: vec(AᵀP)[i + n j] = Σ_k A[k,i] P[k,j]; vec(PA)[i + n j] = Σ_k P[i,k] A[k,j].
    let mut m = DMatrix::<f64>::zeros(nn, nn);
    for j in 0..n {
        for i in 0..n {
            let row = i + n * j;
            for k in 0..n {
                m[(row, k + n * j)] += a[(k, i)];
                m[(row, i + n * k)] += a[(k, j)];
            }
        }
    }
    let rhs = DVector::<f64>::from_iterator(nn, q.iter().map(|v| -v));
    let sol = m.lu().solve(&rhs).ok_or_else(|| {
        LyapunovError::NotSolvable("singular system (A has eigenvalues λ_i + λ_j = 0)".into())
    })?;
    let p = DMatrix::<f64>::from_column_slice(n, n, sol.as_slice());
    Ok((&p + p.transpose()) * 0.5)
}

#[cfg(test)]
mod tests {
    //! The spec §5.3 example and the dense solver against the closed form (moved with the
    //! code from `gpn_gp_core`'s bound tests).

    use super::*;

    #[test]
    fn spec_example_lyapunov_and_factor() {
        let p = joint_lyapunov(5.0, 10.0, [[1.0, 0.0], [0.0, 1.0]]).unwrap();
        assert!((p.p11 - 1.3).abs() < 1e-12);
        assert!((p.p12 - 0.1).abs() < 1e-12);
        assert!((p.p22 - 0.06).abs() < 1e-12);
        let (lo, hi) = p.eigenvalues();
        assert!(
            (hi - 1.3080).abs() < 1e-4 && (lo - 0.0520).abs() < 1e-4,
            "{lo} {hi}"
        );
        let f = tracking_factor(hi, 1.0, lo);
        assert!((f - 25.2).abs() < 0.05, "factor {f}");
        // lim ‖z‖ ≤ η̄·sqrt(ε·factor), ε = 1.
        let b = tracking_bound(0.5, 1.0, hi, 1.0, lo).unwrap();
        assert!((b - 0.5 * f.sqrt()).abs() < 1e-12);
        assert!(tracking_bound(0.5, 0.0, hi, 1.0, lo).is_err());
    }

    #[test]
    fn dense_solver_matches_closed_form_and_residual() {
        // Three joints, z = [e; ė], A = [[0, I], [−Kp, −Kd]].
        let kp = [5.0, 20.0, 1.5];
        let kd = [10.0, 3.0, 2.5];
        let n = 3;
        let mut a = DMatrix::<f64>::zeros(2 * n, 2 * n);
        for j in 0..n {
            a[(j, n + j)] = 1.0;
            a[(n + j, j)] = -kp[j];
            a[(n + j, n + j)] = -kd[j];
        }
        let q = DMatrix::<f64>::identity(2 * n, 2 * n);
        let p = solve_lyapunov(&a, &q).unwrap();
        let resid = a.transpose() * &p + &p * &a + &q;
        assert!(resid.amax() < 1e-10);
        let (blocks, lo, hi) = joints_lyapunov_identity(&kp, &kd).unwrap();
        for j in 0..n {
            assert!((p[(j, j)] - blocks[j].p11).abs() < 1e-10);
            assert!((p[(j, n + j)] - blocks[j].p12).abs() < 1e-10);
            assert!((p[(n + j, n + j)] - blocks[j].p22).abs() < 1e-10);
        }
        let eig = p.symmetric_eigenvalues();
        assert!((eig.min() - lo).abs() < 1e-10 && (eig.max() - hi).abs() < 1e-10);
        // A general (non-block) Hurwitz A.
        let a2 = DMatrix::from_row_slice(3, 3, &[-2.0, 1.0, 0.3, 0.0, -1.0, 0.5, 0.2, -0.4, -3.0]);
        let q2 = DMatrix::from_row_slice(3, 3, &[2.0, 0.1, 0.0, 0.1, 1.0, 0.2, 0.0, 0.2, 1.5]);
        let p2 = solve_lyapunov(&a2, &q2).unwrap();
        assert!((a2.transpose() * &p2 + &p2 * &a2 + &q2).amax() < 1e-10);
        assert!(joint_lyapunov(-1.0, 1.0, [[1.0, 0.0], [0.0, 1.0]]).is_err());
    }
}
