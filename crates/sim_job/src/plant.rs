//! The embedded simulator as a [`Plant`]: tick k reads the true robot's state at t = k·dt
//! through the sensors (the torque that acted since tick k−1 included), and writing the
//! command integrates the true robot over one period with it held. It knows the truth: the
//! true state and the true residual at x* = [q, q̇, q̈_cmd] for the report.
//!
//! It is the robot of the node's torque conventions: with `gravity_compensated_by_robot` it
//! adds g(q) at its measured pose to the command (of its own — the nominal — model, as
//! libfranka adds its model's gravity), and reports its effort minus that g(q).

use std::time::{Duration, Instant};

use gpn_control::control::TorqueConvention;
use gpn_control::control_loop::{Command, Plant, Read, StateFrame, Timing, TorqueOrigin, Truth};
use gpn_dynamics::{Data, Model};
use gpn_embedded_sim::{SimError, SimParams, SimState, Simulator};

/// The simulated robot for a run of `ticks` ticks.
pub(super) struct SimPlant {
    sim: Simulator,
    state: SimState,
    tau_prev: Vec<f64>,
    k: usize,
    ticks: usize,
    dt: f64,
    /// The robot's own gravity compensation, if its interface has one (command, effort).
    compensation: Option<GravityCompensation>,
    applied: Vec<f64>,
}

/// What a robot that compensates gravity itself needs: its model and its measured pose.
struct GravityCompensation {
    model: Model,
    data: Data,
    command: bool,
    effort: bool,
    q_measured: Vec<f64>,
    g: Vec<f64>,
}

impl GravityCompensation {
    fn update(&mut self, q: &[f64]) -> Result<(), SimError> {
        self.q_measured.copy_from_slice(q);
        let g = gpn_dynamics::gravity(&self.model, &mut self.data, q)?;
        self.g.copy_from_slice(g);
        Ok(())
    }
}

impl SimPlant {
    /// The true robot at `q0` with velocity `v0` (time 0), for `ticks` ticks.
    pub(super) fn new(
        robot: &Model,
        params: &SimParams,
        conventions: (TorqueConvention, TorqueConvention),
        q0: &[f64],
        v0: &[f64],
        ticks: usize,
    ) -> Result<Self, SimError> {
        let sim = Simulator::new(robot, params)?;
        let (command, effort) = (
            conventions.0.without_gravity(),
            conventions.1.without_gravity(),
        );
        let nv = robot.nv();
        let compensation = (command || effort).then(|| GravityCompensation {
            model: robot.clone(),
            data: Data::new(robot),
            command,
            effort,
            q_measured: vec![0.0; nv],
            g: vec![0.0; nv],
        });
        Ok(Self {
            compensation,
            applied: vec![0.0; nv],
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
        if let Some(c) = self.compensation.as_mut() {
            c.update(&measured.q)?;
            if c.effort {
                for (t, g) in frame.tau.iter_mut().zip(&c.g) {
                    *t -= g;
                }
            }
        }
        frame.tau_origin = TorqueOrigin::Given;
        Ok(Read::State { more_queued: false })
    }

    fn write(&mut self, command: Command<'_>) -> Result<(), SimError> {
        self.applied.copy_from_slice(command.u);
        if let Some(c) = self.compensation.as_ref().filter(|c| c.command) {
            for (u, g) in self.applied.iter_mut().zip(&c.g) {
                *u += g;
            }
        }
        self.sim.step(&mut self.state, &self.applied)?;
        self.tau_prev.copy_from_slice(&self.applied);
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
