//! The held-out tail: the last part of the recording is not learned; its samples (formed by
//! the same learner, so the same q̈ estimate and targets) are kept, and after the run the
//! final model predicts them. Scores per joint: SMSE (MSE over the tail's target variance),
//! MSLL (mean negative log predictive density, predictive variance = latent + noise, minus
//! that of a Gaussian with the learned samples' mean and variance), and the coverage of the
//! node's bound ±η_cal and of ±2 predictive σ.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use gpn_control::control_loop::{
    ControlCommand, ControlReply, LoopOutput, LoopView, Operations, OutputListener,
};
use gpn_control::learn::{Learner, SwapEvent};

/// Held-out samples kept at most (evenly decimated beyond): the evaluation's memory and time
/// stay bounded for any recording.
pub const HELD_OUT_MAX: usize = 20_000;

/// Asks the learner to hold samples out once the plant reaches the tail.
pub struct HoldOutOps {
    /// Raised by the plant at the tail's first state.
    pub reached: Arc<AtomicBool>,
    /// Raised once the learner holds out (from the next state on).
    pub holding: Arc<AtomicBool>,
}

impl Operations for HoldOutOps {
    fn next_command(&mut self, _: &LoopView) -> Option<ControlCommand> {
        (self.reached.load(Ordering::Relaxed) && !self.holding.swap(true, Ordering::Relaxed))
            .then_some(ControlCommand::HoldOut)
    }

    fn on_applied(&mut self, _: Option<ControlReply>) {}

    fn on_event(&mut self, _: u64, _: SwapEvent) {}
}

/// Running mean and variance (Welford), per output.
#[derive(Debug, Clone)]
struct Moments {
    n: u64,
    mean: Vec<f64>,
    m2: Vec<f64>,
}

impl Moments {
    fn new(p: usize) -> Self {
        Self {
            n: 0,
            mean: vec![0.0; p],
            m2: vec![0.0; p],
        }
    }

    fn push(&mut self, y: &[f64]) {
        self.n += 1;
        let n = self.n as f64;
        for ((m, m2), &v) in self.mean.iter_mut().zip(&mut self.m2).zip(y) {
            let d = v - *m;
            *m += d / n;
            *m2 += d * (v - *m);
        }
    }

    fn var(&self, j: usize) -> f64 {
        if self.n < 2 {
            f64::NAN
        } else {
            self.m2[j] / (self.n - 1) as f64
        }
    }
}

/// Collects the learned samples' moments and the held-out samples from the loop's outputs.
pub struct HoldOutRecorder {
    holding: Arc<AtomicBool>,
    d: usize,
    p: usize,
    x: Vec<f64>,
    y: Vec<f64>,
    every: u64,
    held_seen: u64,
    learned: Moments,
}

impl HoldOutRecorder {
    /// A recorder for samples of `d` inputs and `p` outputs; samples count as held out once
    /// `holding` is raised.
    pub fn new(holding: Arc<AtomicBool>, d: usize, p: usize) -> Self {
        Self {
            holding,
            d,
            p,
            x: Vec::new(),
            y: Vec::new(),
            every: 1,
            held_seen: 0,
            learned: Moments::new(p),
        }
    }

    fn kept(&self) -> usize {
        self.y.len() / self.p.max(1)
    }

    fn keep(&mut self, x: &[f64], y: &[f64]) {
        if self.held_seen.is_multiple_of(self.every) {
            if self.kept() == HELD_OUT_MAX {
                let (d, p) = (self.d, self.p);
                for k in 0..HELD_OUT_MAX / 2 {
                    self.x.copy_within(2 * k * d..(2 * k + 1) * d, k * d);
                    self.y.copy_within(2 * k * p..(2 * k + 1) * p, k * p);
                }
                self.x.truncate(HELD_OUT_MAX / 2 * d);
                self.y.truncate(HELD_OUT_MAX / 2 * p);
                self.every *= 2;
            }
            if self.held_seen.is_multiple_of(self.every) {
                self.x.extend_from_slice(x);
                self.y.extend_from_slice(y);
            }
        }
        self.held_seen += 1;
    }

    /// Scores the kept held-out samples with the learner's final model (None: no sample was
    /// held out, or no model is active).
    pub fn score(&self, learner: &mut Learner) -> Option<HeldOutScores> {
        let (d, p, n) = (self.d, self.p, self.kept());
        if n == 0 {
            return None;
        }
        let noise = learner.noise_var();
        let (mut mu, mut var) = (vec![0.0; p], vec![0.0; p]);
        let mut tail = Moments::new(p);
        let (mut se, mut nll, mut nll_trivial) = (vec![0.0; p], vec![0.0; p], vec![0.0; p]);
        let (mut in_eta, mut eta_known, mut in_2sigma) =
            (vec![0u64; p], vec![0u64; p], vec![0u64; p]);
        let half_log_2pi = 0.5 * (2.0 * std::f64::consts::PI).ln();
        for k in 0..n {
            let (x, y) = (&self.x[k * d..(k + 1) * d], &self.y[k * p..(k + 1) * p]);
            if !matches!(learner.predict(x, &mut mu, &mut var), Ok(true)) {
                return None;
            }
            tail.push(y);
            for j in 0..p {
                let e = y[j] - mu[j];
                let s2 = (var[j].max(0.0) + noise[j]).max(1e-300);
                se[j] += e * e;
                nll[j] += half_log_2pi + 0.5 * s2.ln() + e * e / (2.0 * s2);
                let (m0, v0) = (self.learned.mean[j], self.learned.var(j).max(1e-300));
                let e0 = y[j] - m0;
                nll_trivial[j] += half_log_2pi + 0.5 * v0.ln() + e0 * e0 / (2.0 * v0);
                in_2sigma[j] += u64::from(e.abs() <= 2.0 * s2.sqrt());
                if let Some(eta) = learner.calibrated_bound(j, var[j].max(0.0).sqrt()) {
                    eta_known[j] += 1;
                    in_eta[j] += u64::from(e.abs() <= eta);
                }
            }
        }
        let nf = n as f64;
        Some(HeldOutScores {
            samples: n as u64,
            samples_in_tail: self.held_seen,
            smse: (0..p).map(|j| se[j] / nf / tail.var(j)).collect(),
            msll: (0..p).map(|j| (nll[j] - nll_trivial[j]) / nf).collect(),
            coverage_eta_cal: (0..p)
                .map(|j| (eta_known[j] > 0).then(|| in_eta[j] as f64 / eta_known[j] as f64))
                .collect(),
            coverage_2sigma: (0..p).map(|j| in_2sigma[j] as f64 / nf).collect(),
            rmse_nm: (0..p).map(|j| (se[j] / nf).sqrt()).collect(),
        })
    }
}

impl OutputListener for HoldOutRecorder {
    fn on_output(&mut self, out: &LoopOutput) {
        if !out.has_sample || out.sample_x.len() != self.d || out.sample_y.len() != self.p {
            return;
        }
        if self.holding.load(Ordering::Relaxed) {
            self.keep(&out.sample_x, &out.sample_y);
        } else {
            self.learned.push(&out.sample_y);
        }
    }
}

/// Scores of the final model on the held-out tail, per joint.
#[derive(Debug, Clone, serde::Serialize)]
pub struct HeldOutScores {
    /// Samples scored.
    pub samples: u64,
    /// Samples the tail formed (scored: every `samples_in_tail / samples`-th).
    pub samples_in_tail: u64,
    /// Standardised mean squared error.
    pub smse: Vec<f64>,
    /// Mean standardised log loss (negative: better than the learned samples' Gaussian).
    pub msll: Vec<f64>,
    /// Fraction of |error| ≤ η_cal (None while the bound is not calibrated).
    pub coverage_eta_cal: Vec<Option<f64>>,
    /// Fraction of |error| ≤ 2 predictive σ.
    pub coverage_2sigma: Vec<f64>,
    /// Root mean squared error, N·m.
    pub rmse_nm: Vec<f64>,
}
