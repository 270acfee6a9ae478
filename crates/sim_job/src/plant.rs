//! The embedded simulator as a [`Plant`]: tick k reads the true robot's state at t = k·dt
//! through the sensors (the torque that acted since tick k−1 included), and writing the
//! command integrates the true robot over one period with it held. It knows the truth: the
//! true state and the true residual at x* = [q, q̇, q̈_cmd] for the report.

use std::time::{Duration, Instant};

use gpn_control::control_loop::{Command, Plant, Read, StateFrame, Timing, TorqueOrigin, Truth};
use gpn_dynamics::Model;
use gpn_embedded_sim::{SimError, SimParams, SimState, Simulator};

/// The simulated robot for a run of `ticks` ticks.
pub(super) struct SimPlant {
    sim: Simulator,
    state: SimState,
    tau_prev: Vec<f64>,
    k: usize,
    ticks: usize,
    dt: f64,
}

impl SimPlant {
    /// The true robot at `q0` with velocity `v0` (time 0), for `ticks` ticks.
    pub(super) fn new(
        robot: &Model,
        params: &SimParams,
        q0: &[f64],
        v0: &[f64],
        ticks: usize,
    ) -> Result<Self, SimError> {
        let sim = Simulator::new(robot, params)?;
        Ok(Self {
            sim,
            state: SimState {
                t_secs: 0.0,
                q: q0.to_vec(),
                v: v0.to_vec(),
            },
            tau_prev: vec![0.0; robot.nv()],
            k: 0,
            ticks,
            dt: params.dt_secs(),
        })
    }
}

impl Plant for SimPlant {
    type Error = SimError;

    fn nv(&self) -> usize {
        self.sim.nv()
    }

    fn accepts_commands(&self) -> bool {
        true
    }

    fn read(&mut self, frame: &mut StateFrame, _: Duration) -> Result<Read, SimError> {
        if self.k >= self.ticks {
            return Ok(Read::Closed);
        }
        let t = self.k as f64 * self.dt;
        self.state.t_secs = t;
        let measured = self.sim.measure(&self.state, &self.tau_prev)?;
        frame.t_secs = t;
        frame.stamp_secs = t;
        frame.timing = Timing::New;
        frame.received = Instant::now();
        frame.q.copy_from_slice(&measured.q);
        frame.v.copy_from_slice(&measured.v);
        frame.tau.copy_from_slice(&measured.tau);
        frame.tau_origin = TorqueOrigin::Given;
        Ok(Read::State { more_queued: false })
    }

    fn write(&mut self, command: Command<'_>) -> Result<(), SimError> {
        self.sim.step(&mut self.state, command.u)?;
        self.tau_prev.copy_from_slice(command.u);
        self.k += 1;
        Ok(())
    }

    fn truth(&mut self, qdd: &[f64], truth: &mut Truth) -> Result<bool, SimError> {
        truth.q.copy_from_slice(&self.state.q);
        truth.v.copy_from_slice(&self.state.v);
        self.sim
            .true_residual(&self.state, qdd, &mut truth.residual)?;
        Ok(true)
    }
}
