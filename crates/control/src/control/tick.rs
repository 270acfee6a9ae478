//! The control tick: one plain function from (measured state, reference, learner) to the
//! command, called the same way by the embedded simulator, the ROS node, replay and tests.
//!
//! Order within a tick: adopt a model the learner finished (`poll`); learn from the
//! interval that just ended (`observe`); tracking errors and q̈_cmd; predict the residual at
//! x* = [q, q̇, q̈_cmd] under the supervisor; the law; the bounds.
//!
//! Time: the tick measures its own and the model's wall time ([`TickStatus`]) for latency
//! statistics, always. Whether the model's work overran `supervisor.budget_micros` is judged
//! on the tick's [`BudgetClock`], chosen by whoever builds it: [`BudgetClock::Wall`] on a
//! robot (`gp-node run`), [`BudgetClock::Simulated`] in `gp-node sim`, where the simulated
//! robot waits for the model, its work costs no simulated time, and the supervisor's
//! decisions (so the run) are the same under any CPU load.
//!
//! Real-time: no allocation, lock or I/O (every buffer is in [`TickOutput`] or the tick).

use std::time::Instant;

use super::ControlError;
use super::bounds::TheoremBound;
use super::budget_clock::BudgetClock;
use super::law::ControlLaw;
use super::params::ControlParams;
use super::params::SupervisorParams;
use super::supervisor::{Fallback, Supervisor, SupervisorCounts};
use crate::learn::Learner;
use crate::robot::Model;

/// One tick's inputs (joint order of the robot model; every slice has nv entries).
#[derive(Debug, Clone, Copy)]
pub struct TickInput<'a> {
    /// Stamp of the joint-state sample, s.
    pub t_secs: f64,
    /// Measured positions.
    pub q: &'a [f64],
    /// Measured velocities.
    pub v: &'a [f64],
    /// Torque that acted since the previous sample (measured, or the command held), N·m.
    pub tau: &'a [f64],
    /// Reference position, velocity and acceleration.
    pub q_d: &'a [f64],
    /// Reference velocity.
    pub qd_d: &'a [f64],
    /// Reference acceleration.
    pub qdd_d: &'a [f64],
}

/// Everything a tick computes (allocated once by [`TickOutput::new`]).
#[derive(Debug, Clone)]
pub struct TickOutput {
    /// The command, N·m (saturated at the effort limits).
    pub u: Vec<f64>,
    /// Position error e = q − q_d.
    pub e: Vec<f64>,
    /// Velocity error ė.
    pub ed: Vec<f64>,
    /// Commanded acceleration.
    pub qdd_cmd: Vec<f64>,
    /// τ_RBD(q, q̇, q̈_cmd).
    pub tau_rbd: Vec<f64>,
    /// Residual used in the law (0 on fallback), N·m.
    pub mu: Vec<f64>,
    /// Latent posterior standard deviation of the residual, N·m.
    pub sigma: Vec<f64>,
    /// η_thm per joint, N·m (NaN without a model).
    pub eta_thm: Vec<f64>,
    /// η_cal per joint, N·m (NaN until calibrated).
    pub eta_cal: Vec<f64>,
    /// Theorem-2 ultimate bound on ‖[e; ė]‖ from η̄ so far.
    pub tracking_bound: f64,
    /// The query point x* = [q, q̇, q̈_cmd].
    pub x_query: Vec<f64>,
    var: Vec<f64>,
}

impl TickOutput {
    /// Buffers for `nv` joints.
    pub fn new(nv: usize) -> Self {
        let z = || vec![0.0; nv];
        Self {
            u: z(),
            e: z(),
            ed: z(),
            qdd_cmd: z(),
            tau_rbd: z(),
            mu: z(),
            sigma: z(),
            eta_thm: vec![f64::NAN; nv],
            eta_cal: vec![f64::NAN; nv],
            tracking_bound: f64::NAN,
            x_query: vec![0.0; 3 * nv],
            var: z(),
        }
    }
}

/// What happened in a tick.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TickResult {
    /// The learned law ran on every joint.
    Learned,
    /// The nominal law ran on some or all joints, for this reason.
    Nominal(Fallback),
    /// The input was unusable (wrong length or non-finite); the output holds gravity
    /// compensation at the last good position, or zero torque if there was none.
    BadInput,
}

/// Result, execution time and period of a tick (ros2_control's `ControllerUpdateStatus`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TickStatus {
    /// What happened.
    pub result: TickResult,
    /// Wall time of the whole tick, µs.
    pub exec_micros: f64,
    /// Wall time of the model's work (learn + predict), µs (measured whatever the
    /// [`BudgetClock`]; the budget is judged on that clock).
    pub model_micros: f64,
    /// Stamp difference to the previous tick, s (0 on the first).
    pub period_secs: f64,
    /// Joints whose command hit the effort limit.
    pub saturated: usize,
    /// A new model was adopted at this tick.
    pub adopted_model: bool,
    /// The first joint whose residual was implausible ([`Fallback::Implausible`]).
    pub implausible_joint: Option<usize>,
}

/// The tick: the law, the bounds, the supervisor, and the nominal robot model.
pub struct Tick {
    robot: Model,
    law: ControlLaw,
    bound: TheoremBound,
    supervisor: Supervisor,
    budget_clock: BudgetClock,
    use_model: bool,
    apply_residual: bool,
    /// The model predicts but the nominal law commands (probation after a fallback).
    shadow: bool,
    /// |μ| above this (fraction × effort limit) is implausible, per joint.
    mu_limit: Vec<f64>,
    mu_effort_fraction: f64,
    /// μ = 0, for a tick that does not apply the residual.
    zeros: Vec<f64>,
    last_t: Option<f64>,
    last_good_q: Vec<f64>,
    has_good_q: bool,
}

impl Tick {
    /// A tick for `robot` with these parameters; the supervisor charges the model's work to
    /// its budget on `budget_clock` (the wall clock on a robot, simulated time in a simulator
    /// whose robot waits for the model).
    pub fn new(
        robot: &Model,
        params: &ControlParams,
        budget_clock: BudgetClock,
    ) -> Result<Self, ControlError> {
        let law = ControlLaw::new(robot, params)?;
        let bound = TheoremBound::new(robot, &params.bound, law.gains().tracking_factor())?;
        let fraction = params.fallback.mu_effort_fraction;
        if !(fraction.is_finite() && fraction > 0.0) {
            return Err(ControlError::Param {
                key: "fallback.mu_effort_fraction",
                reason: format!("must be > 0, found {fraction}"),
            });
        }
        let mu_limit = law.effort_limits().iter().map(|l| l * fraction).collect();
        Ok(Self {
            robot: robot.clone(),
            law,
            bound,
            supervisor: Supervisor::new(params.supervisor.clone()),
            budget_clock,
            use_model: params.use_model,
            apply_residual: params.apply_residual,
            shadow: false,
            mu_limit,
            mu_effort_fraction: fraction,
            zeros: vec![0.0; robot.nv()],
            last_t: None,
            last_good_q: vec![0.0; robot.nv()],
            has_good_q: false,
        })
    }

    /// Degrees of freedom.
    pub fn nv(&self) -> usize {
        self.robot.nv()
    }

    /// The law (gains).
    pub fn law(&self) -> &ControlLaw {
        &self.law
    }

    /// The Lemma-1 bound state (β, η̄).
    pub fn theorem_bound(&self) -> &TheoremBound {
        &self.bound
    }

    /// Puts `law` (new gains or effort limits, built off the control thread) in force; `law`
    /// receives the old one, to be dropped off the control thread. Real-time.
    pub fn swap_law(&mut self, law: &mut ControlLaw) {
        std::mem::swap(&mut self.law, law);
        self.bound
            .set_tracking_factor(self.law.gains().tracking_factor());
        for (m, l) in self.mu_limit.iter_mut().zip(self.law.effort_limits()) {
            *m = l * self.mu_effort_fraction;
        }
    }

    /// Predicts without commanding the residual (true: the model is on probation), from the
    /// next tick. Real-time.
    pub fn set_shadow(&mut self, shadow: bool) {
        self.shadow = shadow;
    }

    /// The nominal robot model.
    pub fn robot(&self) -> &Model {
        &self.robot
    }

    /// g(q) (unsaturated) into `g`; zeros if q is not a valid state. Real-time.
    pub fn gravity(&mut self, q: &[f64], g: &mut [f64]) {
        if self.law.gravity(&self.robot, q, g).is_err() || !g.iter().all(|x| x.is_finite()) {
            g.fill(0.0);
        }
    }

    /// The torque that holds the arm at `q`: g(q), saturated (zeros if q is not a valid
    /// state). Real-time.
    pub fn holding_torque(&mut self, q: &[f64], u: &mut [f64]) {
        if self.law.hold(&self.robot, q, u).is_err() || !u.iter().all(|x| x.is_finite()) {
            u.fill(0.0);
        }
    }

    /// Inverse dynamics τ(q, q̇, q̈) into `tau`; false if it is not finite. Real-time.
    pub fn inverse_dynamics(&mut self, qva: (&[f64], &[f64], &[f64]), tau: &mut [f64]) -> bool {
        self.law.inverse_dynamics(&self.robot, qva, tau).is_ok()
            && tau.iter().all(|x| x.is_finite())
    }

    /// Uses the learned residual in the law, or not (the nominal law). Real-time.
    pub fn set_use_model(&mut self, use_model: bool) {
        self.use_model = use_model;
    }

    /// Whether the learned residual is used.
    pub fn uses_model(&self) -> bool {
        self.use_model
    }

    /// New supervisor settings (the counters and any quarantine in progress stay).
    /// Real-time.
    pub fn set_supervisor(&mut self, params: &SupervisorParams) {
        self.supervisor.set_params(params);
    }

    /// The clock the supervisor's budget is judged on.
    pub fn budget_clock(&self) -> BudgetClock {
        self.budget_clock
    }

    /// Supervisor counters.
    pub fn supervisor_counts(&self) -> SupervisorCounts {
        self.supervisor.counts()
    }

    fn input_ok(&self, input: &TickInput<'_>) -> bool {
        let nv = self.nv();
        let slices = [
            input.q,
            input.v,
            input.tau,
            input.q_d,
            input.qd_d,
            input.qdd_d,
        ];
        input.t_secs.is_finite()
            && slices
                .iter()
                .all(|s| s.len() == nv && s.iter().all(|x| x.is_finite()))
    }

    /// One control tick. Real-time: no allocation, lock or I/O.
    pub fn step(
        &mut self,
        input: &TickInput<'_>,
        learner: &mut Learner,
        out: &mut TickOutput,
    ) -> TickStatus {
        let start = Instant::now();
        let period_secs = self.last_t.map_or(0.0, |t| input.t_secs - t);
        let mut status = TickStatus {
            result: TickResult::Learned,
            exec_micros: 0.0,
            model_micros: 0.0,
            period_secs,
            saturated: 0,
            adopted_model: false,
            implausible_joint: None,
        };
        if !self.input_ok(input) {
            self.hold(out);
            status.result = TickResult::BadInput;
            status.exec_micros = start.elapsed().as_secs_f64() * 1e6;
            return status;
        }
        self.last_t = Some(input.t_secs);
        self.last_good_q.copy_from_slice(input.q);
        self.has_good_q = true;
        let nv = self.nv();

        if learner.poll() {
            status.adopted_model = true;
            self.supervisor.model_changed();
            self.bound.reset_eta_bar();
            if let Some(hyper) = learner.hyper() {
                self.bound
                    .set_hyper(hyper, learner.output_scale(), learner.input_dim());
            }
        }
        self.law.commanded_accel(
            input.q,
            input.v,
            input.q_d,
            input.qd_d,
            input.qdd_d,
            &mut out.e,
            &mut out.ed,
            &mut out.qdd_cmd,
        );
        out.x_query[..nv].copy_from_slice(input.q);
        out.x_query[nv..2 * nv].copy_from_slice(input.v);
        out.x_query[2 * nv..].copy_from_slice(&out.qdd_cmd);

        let model_start = Instant::now();
        let verdict = if self.use_model && self.supervisor.model_allowed() {
            learner.observe(input.t_secs, input.q, input.v, input.tau);
            match learner.predict(&out.x_query, &mut out.mu, &mut out.var) {
                Ok(false) => {
                    self.supervisor.no_model();
                    Some(Fallback::NoModel)
                }
                Ok(true) => {
                    let mut non_finite = false;
                    for j in 0..nv {
                        if !(out.mu[j].is_finite() && out.var[j].is_finite()) {
                            non_finite = true;
                            out.mu[j] = 0.0;
                            out.var[j] = f64::NAN;
                        }
                    }
                    let work = self
                        .budget_clock
                        .work_micros(model_start.elapsed().as_secs_f64() * 1e6);
                    self.supervisor.judge(false, non_finite, work)
                }
                Err(_) => {
                    let work = self
                        .budget_clock
                        .work_micros(model_start.elapsed().as_secs_f64() * 1e6);
                    self.supervisor.judge(true, false, work)
                }
            }
        } else {
            if self.use_model {
                Some(Fallback::Quarantined)
            } else {
                self.supervisor.no_model();
                Some(Fallback::NoModel)
            }
        };
        status.model_micros = model_start.elapsed().as_secs_f64() * 1e6;
        for j in 0..nv {
            out.sigma[j] = out.var[j].max(0.0).sqrt();
            out.eta_cal[j] = if out.var[j].is_finite() {
                learner
                    .calibrated_bound(j, out.sigma[j])
                    .unwrap_or(f64::NAN)
            } else {
                f64::NAN
            };
        }
        // Implausible: even the bound's most favourable reading, |μ| − η (η_cal, or 3σ before
        // the calibration), exceeds what the actuator can produce (a fraction of the effort
        // limit).
        if matches!(verdict, None | Some(Fallback::NonFinite)) {
            status.implausible_joint = (0..nv).find(|&j| {
                let eta = if out.eta_cal[j].is_finite() {
                    out.eta_cal[j]
                } else {
                    3.0 * out.sigma[j]
                };
                out.var[j].is_finite() && out.mu[j].abs() - eta.max(0.0) > self.mu_limit[j]
            });
        }
        let verdict = match verdict {
            _ if status.implausible_joint.is_some() => Some(Fallback::Implausible),
            None | Some(Fallback::NonFinite) if self.shadow => Some(Fallback::Probation),
            other => other,
        };
        match verdict {
            None | Some(Fallback::NonFinite) | Some(Fallback::Probation) => {}
            Some(_) => {
                // The nominal law on every joint: no residual, no posterior.
                out.mu.fill(0.0);
                out.var.fill(f64::NAN);
                out.sigma.fill(0.0);
                out.eta_cal.fill(f64::NAN);
            }
        }
        if let Some(reason) = verdict {
            status.result = TickResult::Nominal(reason);
        }

        self.bound.eta(&out.sigma, &mut out.eta_thm);
        out.tracking_bound = self.bound.tracking_bound();

        match self.law.torque(
            &self.robot,
            input.q,
            input.v,
            &out.qdd_cmd,
            &out.e,
            &out.ed,
            if self.apply_residual && verdict != Some(Fallback::Probation) {
                &out.mu
            } else {
                &self.zeros
            },
            &mut out.tau_rbd,
            &mut out.u,
        ) {
            // Finite inputs can still overflow (a velocity of 1e300 squares to infinity in
            // the Coriolis terms); a non-finite command never leaves the tick.
            Ok(_) if !out.u.iter().all(|u| u.is_finite()) => {
                self.hold(out);
                status.result = TickResult::BadInput;
            }
            Ok(saturated) => status.saturated = saturated,
            Err(_) => {
                self.hold(out);
                status.result = TickResult::BadInput;
            }
        }
        status.exec_micros = start.elapsed().as_secs_f64() * 1e6;
        status
    }

    /// The safe output: gravity compensation at the last good position (zero torque before
    /// any), μ = 0, into `out.u`. What bad input gets, and the ROS node's watchdog action.
    /// Real-time: no allocation, lock or I/O.
    pub fn hold_gravity(&mut self, out: &mut TickOutput) {
        self.hold(out);
    }

    fn hold(&mut self, out: &mut TickOutput) {
        if !self.has_good_q
            || self
                .law
                .hold(&self.robot, &self.last_good_q, &mut out.u)
                .is_err()
        {
            out.u.fill(0.0);
        }
        out.mu.fill(0.0);
    }
}
