//! [`VizListener`]: the control loop's outputs to [`Viz`], for `gp-node sim` and the ROS node.

use gpn_control::control::TickOutput;
use gpn_control::control_loop::{LoopOutput, OutputListener};

use super::{Viz, VizRun, VizTick};

/// Hands every tick of one run to rerun. Real-time: copies into preallocated buffers and
/// [`Viz::log_tick`], which never blocks. Where the plant knows the truth (a simulator) the
/// true positions and residual are logged, else the measured positions and no true residual;
/// the learner's measured residual is logged at every tick that formed a learning sample.
pub struct VizListener<'a> {
    viz: &'a mut Viz,
    run: VizRun,
    out: TickOutput,
    /// NaN: the true residual of a plant without truth.
    unknown: Vec<f64>,
}

impl<'a> VizListener<'a> {
    /// A listener of run `run` of a robot with `nv` joints (allocates its buffers now).
    pub fn new(viz: &'a mut Viz, run: VizRun, nv: usize) -> Self {
        Self {
            viz,
            run,
            out: TickOutput::new(nv),
            unknown: vec![f64::NAN; nv],
        }
    }
}

impl OutputListener for VizListener<'_> {
    fn on_output(&mut self, out: &LoopOutput) {
        let Some(status) = out.status else { return };
        if out.u.len() != self.out.u.len() {
            return;
        }
        self.out.u.copy_from_slice(&out.u);
        self.out.tau_rbd.copy_from_slice(&out.tau_rbd);
        self.out.mu.copy_from_slice(&out.mu);
        self.out.sigma.copy_from_slice(&out.sigma);
        self.out.eta_cal.copy_from_slice(&out.eta);
        let (q, true_residual) = if out.has_truth {
            (&out.truth.q, &out.truth.residual)
        } else {
            (&out.q, &self.unknown)
        };
        self.viz.log_tick(&VizTick {
            run: self.run,
            tick: out.tick,
            t_secs: out.t_secs,
            q,
            q_d: &out.q_d,
            out: &self.out,
            true_residual,
            measured_residual: out.has_sample.then_some(&out.sample_y[..]),
            exec_micros: status.exec_micros,
            experts: out.stats.map(|s| s.experts),
            coverage: out.counters.coverage,
            change: out.change,
            adopted_model: status.adopted_model,
            law: out.counters.law,
        });
    }
}
