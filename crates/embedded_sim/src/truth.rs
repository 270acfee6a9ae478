//! The true robot: the nominal model plus payload and armature (as rigid-body changes) and
//! joint friction (as a velocity-dependent torque), with their schedules.
//!
//! True dynamics: M_true(q) q̈ + h_true(q, q̇) = τ_applied + τ_f(q̇, t), where
//! τ_f = −k(t)·b⊙q̇ − c⊙tanh(q̇/v_s) and k(t) is the friction drift factor. The residual a
//! learner sees against the nominal model is
//! d(q, q̇, q̈) = τ − τ_RBD,nominal(q, q̇, q̈) = (RNEA_true − RNEA_nominal)(q, q̇, q̈) − τ_f(q̇).

use super::error::{SimError, SimResult};
use super::params::{FrictionDrift, SimParams};
use gpn_dynamics::{Data, Model, aba, rnea};

/// Friction law and its drift schedule.
struct Friction {
    viscous: Vec<f64>,
    coulomb: Vec<f64>,
    smoothing: f64,
    drift: Option<FrictionDrift>,
}

impl Friction {
    /// Friction torque of joint j at velocity `v` and time `t_secs` (opposes motion).
    fn torque(&self, j: usize, v: f64, t_secs: f64) -> f64 {
        let k = self.drift.as_ref().map_or(1.0, |d| d.factor_at(t_secs));
        -(k * self.viscous[j] * v + self.coulomb[j] * (v / self.smoothing).tanh())
    }
}

/// The true rigid-body models: before the payload step (or always), and after it.
struct TrueModels {
    before: Model,
    after: Option<(f64, Model)>,
}

impl TrueModels {
    fn at(&self, t_secs: f64) -> &Model {
        match &self.after {
            Some((at, model)) if t_secs >= *at => model,
            _ => &self.before,
        }
    }
}

/// The true robot with its scratch buffers. Real-time after construction: no allocation.
pub(super) struct TrueRobot {
    models: TrueModels,
    friction: Friction,
    data: Data,
    /// Scratch: τ_applied + τ_f.
    tau_net: Vec<f64>,
}

impl TrueRobot {
    pub(super) fn new(nominal: &Model, params: &SimParams) -> SimResult<Self> {
        let nv = nominal.nv();
        let armature = params.armature_kgm2.expand("armature_kgm2", nv)?;
        let build = |mass_kg: f64| -> SimResult<Model> {
            Ok(params
                .payload
                .added_to(nominal, mass_kg)?
                .with_armature(&armature)?)
        };
        let models = TrueModels {
            before: build(params.payload.mass_kg)?,
            after: match &params.payload.step {
                Some(step) => Some((step.at_secs, build(step.mass_kg)?)),
                None => None,
            },
        };
        let friction = Friction {
            viscous: params
                .friction
                .viscous_nms_per_rad
                .expand("friction.viscous_nms_per_rad", nv)?,
            coulomb: params
                .friction
                .coulomb_nm
                .expand("friction.coulomb_nm", nv)?,
            smoothing: params.friction.coulomb_smoothing_rad_s,
            drift: params.friction.drift.clone(),
        };
        Ok(Self {
            data: Data::new(&models.before),
            models,
            friction,
            tau_net: vec![0.0; nv],
        })
    }

    /// True acceleration q̈ for the applied torque, into `ddq`. Real-time.
    pub(super) fn acceleration(
        &mut self,
        t_secs: f64,
        q: &[f64],
        v: &[f64],
        tau: &[f64],
        ddq: &mut [f64],
    ) -> SimResult<()> {
        for (j, net) in self.tau_net.iter_mut().enumerate() {
            *net = tau[j] + self.friction.torque(j, v[j], t_secs);
        }
        let a = aba(self.models.at(t_secs), &mut self.data, q, v, &self.tau_net)?;
        ddq.copy_from_slice(a);
        Ok(())
    }

    /// The residual d(q, q̇, q̈) the nominal model misses at time `t_secs`, into `out`:
    /// RNEA_true(q, q̇, q̈) − τ_f(q̇) − RNEA_nominal(q, q̇, q̈). `nominal_data` is the
    /// caller's scratch for the nominal model. Real-time.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn residual(
        &mut self,
        nominal: &Model,
        nominal_data: &mut Data,
        t_secs: f64,
        q: &[f64],
        v: &[f64],
        a: &[f64],
        out: &mut [f64],
    ) -> SimResult<()> {
        out.copy_from_slice(rnea(self.models.at(t_secs), &mut self.data, q, v, a)?);
        let tau_nominal = rnea(nominal, nominal_data, q, v, a)?;
        for (j, d) in out.iter_mut().enumerate() {
            *d -= self.friction.torque(j, v[j], t_secs) + tau_nominal[j];
        }
        if out.iter().any(|x| !x.is_finite()) {
            return Err(SimError::Diverged { t_secs });
        }
        Ok(())
    }
}
