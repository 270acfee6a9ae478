//! `--record FILE.csv`: one row per tick, fixed column names, the stream other models are
//! evaluated on (`gp-node eval --inputs x_0..x_20 --targets y_0..y_6 --truth y_true_0..y_true_6`
//! for the 7-DoF Panda).
//!
//! Columns (j = joint index, k = input index): `t`; `q_j` (true), `q_d_j`, `qd_j` (true),
//! `qdd_est_j` (q̈ of the learning sample), `tau_j` (the command applied from this tick on),
//! `tau_rbd_j` (τ_RBD(q, q̇, q̈_cmd)), `true_residual_j` (at x*), `x_k` and `y_j` (the learning
//! sample formed at this tick: [q, q̇, q̈] of the interval that just ended and its target),
//! `y_true_j` (the true residual at that x), `mu_j`, `sigma_j`, `eta_cal_j` (at x*). Ticks
//! without a learning sample (the first one, gated or decimated samples) have `nan` in the
//! `x`, `y`, `y_true` and `qdd_est` columns; `gp-node eval` leaves such rows out.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::control::TickOutput;
use crate::learn::Learner;
use crate::sim::{SimState, Simulator};

use super::SimulateError;

/// The CSV writer of a recorded run.
pub struct Recorder {
    out: BufWriter<File>,
    path: PathBuf,
    nv: usize,
    state: SimState,
    truth: Vec<f64>,
    line: String,
}

fn io_error(path: &Path) -> impl Fn(std::io::Error) -> SimulateError + '_ {
    move |error| SimulateError::Record {
        error,
        path: path.to_owned(),
    }
}

impl Recorder {
    /// Creates `path` and writes the header for `nv` joints.
    pub fn create(path: &Path, nv: usize) -> Result<Self, SimulateError> {
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
        writeln!(out, "{}", header.join(",")).map_err(io_error(path))?;
        Ok(Self {
            out,
            path: path.to_owned(),
            nv,
            state: SimState::at_rest(&vec![0.0; nv]),
            truth: vec![0.0; nv],
            line: String::new(),
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

    /// Writes one tick.
    #[allow(clippy::too_many_arguments)]
    pub fn write_tick(
        &mut self,
        t: f64,
        state: &SimState,
        q_d: &[f64],
        out: &TickOutput,
        truth: &[f64],
        learner: &Learner,
        sim: &mut Simulator,
    ) -> Result<(), SimulateError> {
        let nv = self.nv;
        self.line.clear();
        self.line.push_str(&t.to_string());
        self.push(&state.q);
        self.push(q_d);
        self.push(&state.v);
        let sample = learner.last_sample().map(|(x, y)| (x.to_vec(), y.to_vec()));
        match &sample {
            Some((x, _)) => self.push(&x[2 * nv..]),
            None => self.push_nan(nv),
        }
        self.push(&out.u);
        self.push(&out.tau_rbd);
        self.push(truth);
        match &sample {
            Some((x, y)) => {
                self.push(x);
                self.push(y);
                // The true residual at the learning sample's own state and acceleration.
                self.state.t_secs = t;
                self.state.q.copy_from_slice(&x[..nv]);
                self.state.v.copy_from_slice(&x[nv..2 * nv]);
                sim.true_residual(&self.state, &x[2 * nv..], &mut self.truth)?;
                let truth = std::mem::take(&mut self.truth);
                self.push(&truth);
                self.truth = truth;
            }
            None => self.push_nan(5 * nv),
        }
        self.push(&out.mu);
        self.push(&out.sigma);
        self.push(&out.eta_cal);
        writeln!(self.out, "{}", self.line).map_err(io_error(&self.path))
    }

    /// Flushes the file.
    pub fn flush(&mut self) -> Result<(), SimulateError> {
        self.out.flush().map_err(io_error(&self.path))
    }
}
