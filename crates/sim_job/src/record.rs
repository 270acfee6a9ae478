//! `--record FILE.csv`: one row per tick, fixed column names, the stream other models are
//! evaluated on (`gp-node eval --inputs x_0..x_20 --targets y_0..y_6 --truth y_true_0..y_true_6`
//! for the 7-DoF Panda).
//!
//! Columns (j = joint index, k = input index): `t`; `q_j` (true), `q_d_j`, `qd_j` (true),
//! `qdd_est_j` (q̈ of the learning sample), `tau_j` (the command applied from this tick on),
//! `tau_rbd_j` (τ_RBD(q, q̇, q̈_cmd)), `true_residual_j` (at x*), `x_k` and `y_j` (the learning
//! sample formed at this tick: [q, q̇, q̈] of the interval that just ended and its target),
//! `y_true_j` (the true residual at that x), `mu_j`, `sigma_j`, `eta_cal_j` (at x*), then
//! `x_clean_k` (the sample the node would have formed from the true state: perfect encoders,
//! the same acceleration filter) and `y_true_clean_j` (the true residual there). Ticks
//! without a learning sample (the first one, gated or decimated samples) have `nan` in the
//! `x`, `y`, `y_true`, `qdd_est`, `x_clean` and `y_true_clean` columns; `gp-node eval` leaves
//! such rows out.
//!
//! `x` is what a model learns from and `x_clean` where the robot was: `gp-node eval
//! --predict-inputs x_clean_0.. --truth y_true_clean_0..` scores a model at the true state
//! (a glitched encoder reading moves `x` off the trajectory, not `x_clean`).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use gpn_control::control_loop::{LoopOutput, OutKind};
use gpn_control::learn::{AccelEstimator, AccelParams, AccelUpdate};
use gpn_embedded_sim::{SimState, Simulator};

use super::SimulateError;

/// The CSV writer of a recorded run.
pub struct Recorder {
    out: BufWriter<File>,
    path: PathBuf,
    nv: usize,
    state: SimState,
    truth: Vec<f64>,
    line: String,
    clean: CleanSample,
}

/// The learning sample formed from the true state, as the learner forms it from the
/// measured one: [q, q̇] at the start of the interval and the filtered acceleration over it.
struct CleanSample {
    accel: AccelEstimator,
    previous_q: Vec<f64>,
    previous_v: Vec<f64>,
    has_previous: bool,
    x: Vec<f64>,
    ready: bool,
}

impl CleanSample {
    fn new(nv: usize, accel: AccelParams) -> Self {
        Self {
            accel: AccelEstimator::new(nv, accel),
            previous_q: vec![0.0; nv],
            previous_v: vec![0.0; nv],
            has_previous: false,
            x: vec![0.0; 3 * nv],
            ready: false,
        }
    }

    /// Feeds the true state of one tick; `ready` tells whether `x` holds a sample.
    fn push(&mut self, t: f64, q: &[f64], v: &[f64]) {
        let nv = q.len();
        let update = self.accel.push(t, v);
        self.ready = update == AccelUpdate::Estimate && self.has_previous;
        if self.ready {
            self.x[..nv].copy_from_slice(&self.previous_q);
            self.x[nv..2 * nv].copy_from_slice(&self.previous_v);
            self.x[2 * nv..].copy_from_slice(self.accel.accel());
        }
        if update != AccelUpdate::StaleStamp {
            self.previous_q.copy_from_slice(q);
            self.previous_v.copy_from_slice(v);
            self.has_previous = true;
        }
    }
}

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> SimulateError + '_ {
    move |error| SimulateError::Record {
        error,
        path: path.to_owned(),
    }
}

impl Recorder {
    /// Creates `path` and writes the header for `nv` joints; `accel` is the learner's
    /// acceleration filter (for the clean samples).
    pub fn create(path: &Path, nv: usize, accel: AccelParams) -> Result<Self, SimulateError> {
        let file = File::create(path).map_err(io_error(path))?;
        let mut out = BufWriter::new(file);
        let mut header = vec!["t".to_owned()];
        for prefix in [
            "q",
            "q_d",
            "qd",
            "qdd_est",
            "tau",
            "tau_rbd",
            "true_residual",
        ] {
            header.extend((0..nv).map(|j| format!("{prefix}_{j}")));
        }
        header.extend((0..3 * nv).map(|k| format!("x_{k}")));
        for prefix in ["y", "y_true", "mu", "sigma", "eta_cal"] {
            header.extend((0..nv).map(|j| format!("{prefix}_{j}")));
        }
        header.extend((0..3 * nv).map(|k| format!("x_clean_{k}")));
        header.extend((0..nv).map(|j| format!("y_true_clean_{j}")));
        writeln!(out, "{}", header.join(",")).map_err(io_error(path))?;
        Ok(Self {
            out,
            path: path.to_owned(),
            nv,
            state: SimState::at_rest(&vec![0.0; nv]),
            truth: vec![0.0; nv],
            line: String::new(),
            clean: CleanSample::new(nv, accel),
        })
    }

    fn push(&mut self, values: &[f64]) {
        use std::fmt::Write as _;
        for v in values {
            let _ = write!(self.line, ",{v}");
        }
    }

    fn push_nan(&mut self, n: usize) {
        for _ in 0..n {
            self.line.push_str(",nan");
        }
    }

    /// Writes one tick's output; `sim` is the true robot (for the true residual at the
    /// learning samples). Outputs without the plant's truth or a tick are skipped.
    pub fn write_tick(
        &mut self,
        out: &LoopOutput,
        sim: &mut Simulator,
    ) -> Result<(), SimulateError> {
        if out.kind != OutKind::Tick || !out.has_truth {
            return Ok(());
        }
        let nv = self.nv;
        let t = out.t_secs;
        self.line.clear();
        self.line.push_str(&t.to_string());
        self.push(&out.truth.q);
        self.push(&out.q_d);
        self.push(&out.truth.v);
        let sample = out
            .has_sample
            .then_some((out.sample_x.as_slice(), out.sample_y.as_slice()));
        match sample {
            Some((x, _)) => self.push(&x[2 * nv..]),
            None => self.push_nan(nv),
        }
        self.push(&out.u);
        self.push(&out.tau_rbd);
        self.push(&out.truth.residual);
        match sample {
            Some((x, y)) => {
                self.push(x);
                self.push(y);
                // The true residual at the learning sample's own state and acceleration.
                self.residual_at(t, x, sim)?;
            }
            None => self.push_nan(5 * nv),
        }
        self.push(&out.mu);
        self.push(&out.sigma);
        self.push(&out.eta);
        self.clean.push(t, &out.truth.q, &out.truth.v);
        if sample.is_some() && self.clean.ready {
            let x = std::mem::take(&mut self.clean.x);
            self.push(&x);
            self.residual_at(t, &x, sim)?;
            self.clean.x = x;
        } else {
            self.push_nan(4 * nv);
        }
        writeln!(self.out, "{}", self.line).map_err(io_error(&self.path))
    }

    /// Appends the true residual at sample input `x` = [q, q̇, q̈] and time `t`.
    fn residual_at(&mut self, t: f64, x: &[f64], sim: &mut Simulator) -> Result<(), SimulateError> {
        let nv = self.nv;
        self.state.t_secs = t;
        self.state.q.copy_from_slice(&x[..nv]);
        self.state.v.copy_from_slice(&x[nv..2 * nv]);
        sim.true_residual(&self.state, &x[2 * nv..], &mut self.truth)?;
        let truth = std::mem::take(&mut self.truth);
        self.push(&truth);
        self.truth = truth;
        Ok(())
    }

    /// Flushes the file.
    pub fn flush(&mut self) -> Result<(), SimulateError> {
        self.out.flush().map_err(io_error(&self.path))
    }
}
