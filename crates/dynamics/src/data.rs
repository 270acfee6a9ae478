//! [`Data`]: every buffer the dynamics algorithms write, allocated once by [`Data::new`]
//! (Pinocchio's `Data`). After `Data::new`, no algorithm allocates.
//!
//! Results land in the public fields, documented with frame and dimension; the per-body
//! scratch of the recursions stays private.

use nalgebra::{DMatrix, DVector};

use super::error::{Result, RobotError};
use super::model::Model;
use super::spatial::{ArticulatedInertia, Force, Motion, RigidInertia, Transform};

/// Number of inertial parameters per body (columns of [`Data::regressor`]).
pub const N_INERTIAL_PARAMS: usize = 10;

/// Per-body kinematic state of the last recursion (all in body frames).
#[derive(Clone, Debug)]
pub(crate) struct BodyState {
    /// Placement of body i in its parent's frame (world for root bodies) at the last q.
    pub(crate) parent_from_body: Vec<Transform>,
    /// Spatial velocity of body i.
    pub(crate) v: Vec<Motion>,
    /// Spatial acceleration of body i, offset by −gravity (Featherstone §5.3 trick).
    pub(crate) a: Vec<Motion>,
    /// Net spatial force on body i (RNEA), then the force transmitted by joint i.
    pub(crate) f: Vec<Force>,
}

/// Scratch of the articulated-body algorithm (Featherstone Table 7.1 names).
#[derive(Clone, Debug)]
pub(crate) struct AbaState {
    /// Articulated-body inertia `Iᴬ_i`, body frame.
    pub(crate) inertia: Vec<ArticulatedInertia>,
    /// Articulated bias force `pᴬ_i`, body frame.
    pub(crate) bias: Vec<Force>,
    /// Velocity-product acceleration `c_i = v_i × S_i q̇_i`.
    pub(crate) c: Vec<Motion>,
    /// `U_i = Iᴬ_i S_i`.
    pub(crate) u_force: Vec<Force>,
    /// `1 / D_i`, `D_i = S_iᵀ U_i + armature_i`.
    pub(crate) d_inv: Vec<f64>,
    /// `u_i = τ_i − S_iᵀ pᴬ_i`.
    pub(crate) u: Vec<f64>,
}

/// Work and result buffers for one [`Model`] (Pinocchio's `Data`). Create with
/// [`Data::new`]; every algorithm checks that the model's `nv` matches and then writes here
/// without allocating.
#[derive(Clone, Debug)]
pub struct Data {
    nv: usize,
    /// Placement of each body frame in the world (root link) frame, `nv` entries; written by
    /// [`forward_kinematics`](super::forward_kinematics).
    pub world_from_body: Vec<Transform>,
    /// Joint torques/forces τ (N·m or N), `nv`; written by [`rnea`](super::rnea).
    pub tau: DVector<f64>,
    /// Joint-space inertia matrix M(q), `nv × nv`, full and symmetric; written by
    /// [`crba`](super::crba).
    pub m: DMatrix<f64>,
    /// Generalised gravity g(q) (N·m or N), `nv`; written by [`gravity`](super::gravity).
    pub g: DVector<f64>,
    /// Nonlinear effects C(q, q̇)q̇ + g(q) (N·m or N), `nv`; written by
    /// [`nonlinear_effects`](super::nonlinear_effects).
    pub nle: DVector<f64>,
    /// Joint accelerations q̈ from forward dynamics (rad/s² or m/s²), `nv`; written by
    /// [`aba`](super::aba).
    pub ddq: DVector<f64>,
    /// Inertial-parameter regressor Y of one body, `nv × 10` (τ = Y·π); written by
    /// [`regressor`](super::regressor).
    pub regressor: DMatrix<f64>,
    pub(crate) state: BodyState,
    pub(crate) composite: Vec<RigidInertia>,
    pub(crate) aba: AbaState,
}

impl Data {
    /// Allocates every buffer for `model`. The only allocating call of the module's hot path.
    pub fn new(model: &Model) -> Data {
        let n = model.nv();
        Data {
            nv: n,
            world_from_body: vec![Transform::IDENTITY; n],
            tau: DVector::zeros(n),
            m: DMatrix::zeros(n, n),
            g: DVector::zeros(n),
            nle: DVector::zeros(n),
            ddq: DVector::zeros(n),
            regressor: DMatrix::zeros(n, N_INERTIAL_PARAMS),
            state: BodyState {
                parent_from_body: vec![Transform::IDENTITY; n],
                v: vec![Motion::ZERO; n],
                a: vec![Motion::ZERO; n],
                f: vec![Force::ZERO; n],
            },
            composite: vec![RigidInertia::ZERO; n],
            aba: AbaState {
                inertia: vec![ArticulatedInertia::default(); n],
                bias: vec![Force::ZERO; n],
                c: vec![Motion::ZERO; n],
                u_force: vec![Force::ZERO; n],
                d_inv: vec![0.0; n],
                u: vec![0.0; n],
            },
        }
    }

    /// The `nv` this `Data` was allocated for.
    pub fn nv(&self) -> usize {
        self.nv
    }

    /// Checks that this `Data` was made for a model of `model.nv()` and that no public buffer
    /// was replaced by one of another size.
    pub(crate) fn check(&self, model: &Model) -> Result<()> {
        let n = model.nv();
        let found = if self.nv != n {
            self.nv
        } else if self.world_from_body.len() != n {
            self.world_from_body.len()
        } else if self.tau.len() != n {
            self.tau.len()
        } else if self.m.shape() != (n, n) {
            self.m.nrows()
        } else if self.g.len() != n {
            self.g.len()
        } else if self.nle.len() != n {
            self.nle.len()
        } else if self.ddq.len() != n {
            self.ddq.len()
        } else if self.regressor.shape() != (n, N_INERTIAL_PARAMS) {
            self.regressor.nrows()
        } else {
            return Ok(());
        };
        Err(RobotError::SizeMismatch {
            argument: "data (a Data made for another model?)",
            expected: n,
            found,
            file: model.file.clone(),
        })
    }
}
