//! `Simulator`: advances a [`SimState`] by one tick with the command held, and measures it.

use super::error::{SimError, SimResult};
use super::params::{Integrator, SimParams};
use super::sensors::{Measurement, Sensors};
use super::truth::TrueRobot;
use gpn_dynamics::{Data, Model};

/// The true robot's state: time, joint positions and velocities (joint order of the model).
#[derive(Debug, Clone, PartialEq)]
pub struct SimState {
    /// Simulated time, s.
    pub t_secs: f64,
    /// Joint positions, rad (m for prismatic joints).
    pub q: Vec<f64>,
    /// Joint velocities, rad/s.
    pub v: Vec<f64>,
}

impl SimState {
    /// At rest at `q`, time 0.
    pub fn at_rest(q: &[f64]) -> Self {
        Self {
            t_secs: 0.0,
            q: q.to_vec(),
            v: vec![0.0; q.len()],
        }
    }
}

/// Scratch vectors of one integration step (allocated once).
struct Scratch {
    q: Vec<f64>,
    v: Vec<f64>,
    /// Stage derivatives: dq (= v) and dv (= q̈) for the four RK4 stages.
    dq: [Vec<f64>; 4],
    dv: [Vec<f64>; 4],
}

/// The embedded simulator. Owns only the true model, sensors and scratch buffers; the
/// state is the caller's. After [`Simulator::new`], stepping and measuring allocate nothing.
pub struct Simulator {
    truth: TrueRobot,
    sensors: Sensors,
    nominal: Model,
    nominal_data: Data,
    integrator: Integrator,
    substeps: u32,
    dt_secs: f64,
    scratch: Scratch,
    measurement: Measurement,
}

impl Simulator {
    /// Builds the true robot from the nominal model and the parameters (checked here).
    pub fn new(nominal: &Model, params: &SimParams) -> SimResult<Self> {
        params.check()?;
        let nv = nominal.nv();
        let zeros = || vec![0.0; nv];
        Ok(Self {
            truth: TrueRobot::new(nominal, params)?,
            sensors: Sensors::new(params, nv)?,
            nominal: nominal.clone(),
            nominal_data: Data::new(nominal),
            integrator: params.integrator,
            substeps: params.substeps,
            dt_secs: params.dt_secs(),
            scratch: Scratch {
                q: zeros(),
                v: zeros(),
                dq: [zeros(), zeros(), zeros(), zeros()],
                dv: [zeros(), zeros(), zeros(), zeros()],
            },
            measurement: Measurement::zeros(nv),
        })
    }

    /// Degrees of freedom.
    pub fn nv(&self) -> usize {
        self.nominal.nv()
    }

    /// Length of one step (one control tick), s.
    pub fn dt_secs(&self) -> f64 {
        self.dt_secs
    }

    fn check_len(&self, what: &'static str, found: usize) -> SimResult<()> {
        if found == self.nv() {
            Ok(())
        } else {
            Err(SimError::Dimension {
                what,
                expected: self.nv(),
                found,
            })
        }
    }

    fn check_state(&self, state: &SimState) -> SimResult<()> {
        self.check_len("state.q", state.q.len())?;
        self.check_len("state.v", state.v.len())
    }

    /// Advances `state` by one step with `tau` (N·m) held constant. A non-finite command is
    /// refused and the state left unchanged; a diverging integration returns
    /// [`SimError::Diverged`] (the state is then unspecified). Real-time: no allocation.
    pub fn step(&mut self, state: &mut SimState, tau: &[f64]) -> SimResult<()> {
        self.check_state(state)?;
        self.check_len("tau", tau.len())?;
        if let Some((joint, &value)) = tau.iter().enumerate().find(|(_, t)| !t.is_finite()) {
            return Err(SimError::NonFiniteCommand { joint, value });
        }
        let h = self.dt_secs / f64::from(self.substeps);
        for _ in 0..self.substeps {
            match self.integrator {
                Integrator::SemiImplicitEuler => self.euler_substep(state, tau, h)?,
                Integrator::Rk4 => self.rk4_substep(state, tau, h)?,
            }
            state.t_secs += h;
        }
        if state.q.iter().chain(&state.v).any(|x| !x.is_finite()) {
            return Err(SimError::Diverged {
                t_secs: state.t_secs,
            });
        }
        Ok(())
    }

    #[allow(clippy::needless_range_loop)]
    fn euler_substep(&mut self, state: &mut SimState, tau: &[f64], h: f64) -> SimResult<()> {
        let ddq = &mut self.scratch.dv[0];
        self.truth
            .acceleration(state.t_secs, &state.q, &state.v, tau, ddq)?;
        for j in 0..state.q.len() {
            state.v[j] += h * ddq[j];
            state.q[j] += h * state.v[j];
        }
        Ok(())
    }

    fn rk4_substep(&mut self, state: &mut SimState, tau: &[f64], h: f64) -> SimResult<()> {
        let s = &mut self.scratch;
        let t0 = state.t_secs;
        // Stage i evaluates at (q + c·h·dq[i−1], v + c·h·dv[i−1]), c = ½, ½, 1.
        for stage in 0..4 {
            let (c, dt) = match stage {
                0 => (0.0, 0.0),
                1 | 2 => (0.5 * h, 0.5 * h),
                _ => (h, h),
            };
            if stage == 0 {
                s.q.copy_from_slice(&state.q);
                s.v.copy_from_slice(&state.v);
            } else {
                for j in 0..state.q.len() {
                    s.q[j] = state.q[j] + c * s.dq[stage - 1][j];
                    s.v[j] = state.v[j] + c * s.dv[stage - 1][j];
                }
            }
            s.dq[stage].copy_from_slice(&s.v);
            self.truth
                .acceleration(t0 + dt, &s.q, &s.v, tau, &mut s.dv[stage])?;
        }
        for j in 0..state.q.len() {
            state.q[j] += h / 6.0 * (s.dq[0][j] + 2.0 * s.dq[1][j] + 2.0 * s.dq[2][j] + s.dq[3][j]);
            state.v[j] += h / 6.0 * (s.dv[0][j] + 2.0 * s.dv[1][j] + 2.0 * s.dv[2][j] + s.dv[3][j]);
        }
        Ok(())
    }

    /// What the robot reports at `state`, with `tau_applied` the torque acting on the
    /// joints (the command held since the last step). Real-time: no allocation.
    pub fn measure(&mut self, state: &SimState, tau_applied: &[f64]) -> SimResult<&Measurement> {
        self.check_state(state)?;
        self.check_len("tau_applied", tau_applied.len())?;
        self.sensors.measure(
            state.t_secs,
            &state.q,
            &state.v,
            tau_applied,
            &mut self.measurement,
        );
        Ok(&self.measurement)
    }

    /// The true residual d(q, q̇, a) = τ − τ_RBD,nominal(q, q̇, a) at the state's q, q̇ and
    /// time for joint accelerations `a`, into `out` (N·m). Real-time: no allocation.
    pub fn true_residual(&mut self, state: &SimState, a: &[f64], out: &mut [f64]) -> SimResult<()> {
        self.check_state(state)?;
        self.check_len("a", a.len())?;
        self.check_len("out", out.len())?;
        self.truth.residual(
            &self.nominal,
            &mut self.nominal_data,
            state.t_secs,
            &state.q,
            &state.v,
            a,
            out,
        )
    }

    /// The true joint accelerations at `state` under `tau` (for tests and diagnostics).
    pub fn true_acceleration(
        &mut self,
        state: &SimState,
        tau: &[f64],
        out: &mut [f64],
    ) -> SimResult<()> {
        self.check_state(state)?;
        self.check_len("tau", tau.len())?;
        self.check_len("out", out.len())?;
        self.truth
            .acceleration(state.t_secs, &state.q, &state.v, tau, out)
    }
}
