//! Shared by the control-loop and ROS-node tests: robot-sized scripted models (one of them
//! knows the simulator's true residual exactly, so a loop driven by it tracks almost
//! perfectly), and the input of a tick that holds the robot still.
#![allow(dead_code)] // each test file uses a subset

use gp_node::control::TickInput;
use gp_node::embedded_sim::{SimParams, SimState, Simulator};
use gp_node::learn::ModelFactory;
use gp_node::robot::Model;
use gpn_gp_core::model::{ModelError, ModelStats, OnlineModel};

/// What a [`Scripted`] model predicts at `x` (q, v, q̈ of the 7 joints).
pub trait Script: Send + 'static {
    /// Writes the 7 means and variances.
    fn predict(&mut self, x: &[f64], mean: &mut [f64], var: &mut [f64]) -> Result<(), ModelError>;
}

/// A model of the 7-joint robot (28 inputs: [q, q̇, q̈, friction features]; 7 outputs) that
/// predicts what its script says and learns nothing.
pub struct Scripted<S>(pub S);

impl<S: Script> OnlineModel for Scripted<S> {
    fn input_dim(&self) -> usize {
        28
    }
    fn output_dim(&self) -> usize {
        7
    }
    fn predict(&mut self, x: &[f64], mean: &mut [f64], var: &mut [f64]) -> Result<(), ModelError> {
        self.0.predict(x, mean, var)
    }
    fn update(&mut self, _: &[f64], _: &[f64], _: f64, _: &[f64]) -> Result<(), ModelError> {
        Ok(())
    }
    fn stats(&self) -> ModelStats {
        ModelStats::default()
    }
}

/// A factory of [`Scripted`] models, each with the script `make` returns.
pub fn scripted_factory<S: Script>(make: impl Fn() -> S + Send + 'static) -> ModelFactory {
    Box::new(move |_, _, _| Ok(Box::new(Scripted(make())) as Box<dyn OnlineModel>))
}

/// Predicts the same value on every joint, with a small variance (0.01).
pub struct Constant(pub f64);

impl Script for Constant {
    fn predict(&mut self, _: &[f64], mean: &mut [f64], var: &mut [f64]) -> Result<(), ModelError> {
        mean.fill(self.0);
        var.fill(0.01);
        Ok(())
    }
}

/// Predicts the simulator's true residual exactly (its own copy of the true robot).
pub struct Exact {
    sim: Simulator,
    state: SimState,
}

impl Script for Exact {
    fn predict(&mut self, x: &[f64], mean: &mut [f64], var: &mut [f64]) -> Result<(), ModelError> {
        self.state.q.copy_from_slice(&x[..7]);
        self.state.v.copy_from_slice(&x[7..14]);
        self.sim
            .true_residual(&self.state, &x[14..21], mean)
            .map_err(|e| ModelError::Other(e.to_string()))?;
        var.fill(1e-6);
        Ok(())
    }
}

/// A factory of [`Exact`] models for `robot` with the true robot of `sim`.
pub fn exact_factory(robot: &Model, sim: &SimParams) -> ModelFactory {
    let (robot, sim) = (robot.clone(), sim.clone());
    Box::new(move |_, _, _| {
        let model = Exact {
            sim: Simulator::new(&robot, &sim).map_err(|e| e.to_string())?,
            state: SimState::at_rest(&[0.0; 7]),
        };
        Ok(Box::new(Scripted(model)) as Box<dyn OnlineModel>)
    })
}

/// The input of a tick at `t_secs` that holds the robot still at `q`: no velocity, torque
/// or reference motion (`zeros` holds one zero per joint).
pub fn holding_still<'a>(t_secs: f64, q: &'a [f64], zeros: &'a [f64]) -> TickInput<'a> {
    TickInput {
        t_secs,
        q,
        v: zeros,
        tau: zeros,
        q_d: q,
        qd_d: zeros,
        qdd_d: zeros,
    }
}

/// The reference the earlier built-in Panda scenario used (the ready pose, 0.21–0.67 Hz, 0.3
/// rad), for tests whose bounds were set on it rather than on the derived one.
pub fn ready_pose_reference(reference: &mut gp_node::app::ReferenceParams) {
    use std::f64::consts::PI;
    reference.center_rad = vec![
        0.0,
        -PI / 4.0,
        0.0,
        -3.0 * PI / 4.0,
        0.0,
        PI / 2.0,
        PI / 4.0,
    ];
    reference.amplitude_rad = gp_node::robot::JointValues::All(0.3);
    reference.frequencies_hz = vec![0.21, 0.29, 0.37, 0.43, 0.53, 0.59, 0.67];
}

/// The scenario's closed loop on the embedded simulator at 1 kHz with a simulated clock
/// (the robot waits for the model, so no tick overruns however loaded the machine): each
/// [`SimulatedLoop::step`] samples the reference, measures, runs one tick and steps the
/// simulator with the command. Allocates nothing once built.
pub struct SimulatedLoop {
    tick: gp_node::control::Tick,
    sim: Simulator,
    reference: gp_node::app::ReferenceParams,
    state: SimState,
    q_d: Vec<f64>,
    qd_d: Vec<f64>,
    qdd_d: Vec<f64>,
    out: gp_node::control::TickOutput,
    tau: Vec<f64>,
}

impl SimulatedLoop {
    /// Starts on the reference: the robot at q and q̇ of its t = 0 sample.
    pub fn new(robot: &Model, params: &gp_node::app::NodeParams) -> SimulatedLoop {
        let nv = robot.nv();
        let tick = gp_node::control::Tick::new(
            robot,
            &params.control,
            gp_node::control::BudgetClock::Simulated,
        )
        .expect("tick");
        let sim = Simulator::new(robot, &params.sim).expect("sim");
        let reference = params.run.reference.clone();
        let (mut q_d, mut qd_d, mut qdd_d) = (vec![0.0; nv], vec![0.0; nv], vec![0.0; nv]);
        reference.sample(0.0, &mut q_d, &mut qd_d, &mut qdd_d);
        let state = SimState {
            t_secs: 0.0,
            q: q_d.clone(),
            v: qd_d.clone(),
        };
        SimulatedLoop {
            tick,
            sim,
            reference,
            state,
            q_d,
            qd_d,
            qdd_d,
            out: gp_node::control::TickOutput::new(nv),
            tau: vec![0.0; nv],
        }
    }

    /// Tick `k` (t = k ms).
    pub fn step(
        &mut self,
        k: usize,
        learner: &mut gp_node::learn::Learner,
    ) -> gp_node::control::TickStatus {
        let t = k as f64 * 1e-3;
        self.state.t_secs = t;
        self.reference
            .sample(t, &mut self.q_d, &mut self.qd_d, &mut self.qdd_d);
        let m = self.sim.measure(&self.state, &self.tau).expect("measure");
        let input = TickInput {
            t_secs: t,
            q: &m.q,
            v: &m.v,
            tau: &m.tau,
            q_d: &self.q_d,
            qd_d: &self.qd_d,
            qdd_d: &self.qdd_d,
        };
        let status = self.tick.step(&input, learner, &mut self.out);
        self.sim.step(&mut self.state, &self.out.u).expect("step");
        self.tau.copy_from_slice(&self.out.u);
        status
    }
}
