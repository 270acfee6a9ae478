//! Time-varying dynamics, node side (time-varying GP bandit spec §6.1, §6.3 (a), §6.4):
//! detecting a change of the residual (a payload picked up) with a CUSUM on the standardised
//! innovations per joint, reacting to it (old data get a jump variance, or are dropped, or are
//! corrected by a quick payload re-identification), and monitoring the coverage of the
//! calibrated bound on recent samples ("drift suspected" below the calibration level).
//!
//! Innovations: z_j = (y_j − μ_j) / sqrt(σ_j² + σ_n,j²) of every learned sample (standardised
//! units, the model's prediction before it learns the sample). CUSUM per joint:
//! S_j ← max(0, S_j + min(z_j², cap) − 1 − k); an alarm when S_j > h, with the change's onset
//! estimated as the last time S_j was 0. Samples refused as isolated outliers never reach it
//! (the gate runs first), so glitches do not raise alarms; a real change passes the gate after
//! a few samples. Real-time: no allocation after construction.

/// What the learner does when a change is detected or announced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeAction {
    /// Report only.
    Report,
    /// Rebuild the model with a jump variance added to every sample older than the onset
    /// (`v_i += J²`; effective where the plugin uses per-sample noise).
    Inject,
    /// Rebuild the model without the samples older than the onset (a restart).
    Drop,
    /// Re-identify the payload change (least squares of the link regressor on the innovations
    /// after the onset) and rebuild with the older samples corrected by it, their variance
    /// raised by the identification's residual variance (spec §6.3 (a): the expert's answers
    /// replace the stale data).
    Reidentify,
}

/// Settings (`learn.change` in the parameter file).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ChangeParams {
    /// Run the CUSUM detector.
    pub detect: bool,
    /// Alarm threshold h of the CUSUM (spec: ≈ 10).
    pub threshold: f64,
    /// Allowance k subtracted per sample (z² − 1 − k), so calibrated noise does not drift up.
    pub allowance: f64,
    /// Largest z² one sample adds (one wild sample cannot raise an alarm alone).
    pub max_increment: f64,
    /// No second alarm within this time after one, s.
    pub min_interval_s: f64,
    /// The reaction to a change (detected or announced).
    pub action: ChangeAction,
    /// J of the jump variance for `inject`, N·m (spec: ≈ the expected torque change).
    pub jump_std_nm: f64,
    /// URDF link whose inertia changes (the payload link) for `reidentify`.
    pub payload_link: String,
    /// Post-onset samples the re-identification waits for, s.
    pub reidentify_window_s: f64,
    /// Samples in the coverage monitor's window.
    pub coverage_window: usize,
}

impl Default for ChangeParams {
    fn default() -> Self {
        Self {
            detect: true,
            threshold: 10.0,
            allowance: 1.0,
            max_increment: 25.0,
            min_interval_s: 2.0,
            action: ChangeAction::Drop,
            jump_std_nm: 5.0,
            payload_link: "panda_link8".into(),
            reidentify_window_s: 0.3,
            coverage_window: 2000,
        }
    }
}

impl ChangeParams {
    /// Checks the values.
    pub fn check(&self) -> Result<(), String> {
        let positive = |x: f64| x.is_finite() && x > 0.0;
        if !positive(self.threshold) || !positive(self.max_increment) {
            return Err("learn.change.threshold and max_increment must be > 0".into());
        }
        if !(self.allowance.is_finite() && self.allowance >= 0.0) {
            return Err("learn.change.allowance must be ≥ 0".into());
        }
        if !(self.min_interval_s.is_finite() && self.min_interval_s >= 0.0) {
            return Err("learn.change.min_interval_s must be ≥ 0".into());
        }
        if !positive(self.jump_std_nm) || !positive(self.reidentify_window_s) {
            return Err("learn.change.jump_std_nm and reidentify_window_s must be > 0".into());
        }
        if self.coverage_window == 0 {
            return Err("learn.change.coverage_window must be ≥ 1".into());
        }
        Ok(())
    }
}

/// Where a change notice came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeSource {
    /// The CUSUM detector.
    Detected,
    /// An explicit event (a topic or a service: "payload changed").
    Announced,
}

/// A change, as reported to the loop (diagnostics, the events topic, rerun).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ChangeNotice {
    /// Detected or announced.
    pub source: ChangeSource,
    /// When it was detected or announced, s (sample clock).
    pub t_secs: f64,
    /// Estimated onset, s.
    pub onset_secs: f64,
    /// The joint whose CUSUM fired (None when announced).
    pub joint: Option<usize>,
    /// The reaction.
    pub action: ChangeAction,
}

/// Per-joint CUSUM on z² − 1 − k.
#[derive(Debug, Clone)]
pub struct Cusum {
    s: Vec<f64>,
    zero_t: Vec<f64>,
    last_alarm_t: f64,
}

impl Cusum {
    /// A detector for `p` outputs.
    pub fn new(p: usize) -> Self {
        Self {
            s: vec![0.0; p],
            zero_t: vec![f64::NEG_INFINITY; p],
            last_alarm_t: f64::NEG_INFINITY,
        }
    }

    /// Current statistics.
    pub fn statistics(&self) -> &[f64] {
        &self.s
    }

    /// Starts afresh (a new model).
    pub fn reset(&mut self) {
        self.s.fill(0.0);
        self.zero_t.fill(f64::NEG_INFINITY);
    }

    /// Adds the innovations `z` of a sample at `t`; returns (joint, onset) on an alarm.
    /// Real-time.
    pub fn push(&mut self, params: &ChangeParams, t: f64, z: &[f64]) -> Option<(usize, f64)> {
        let mut fired = None;
        for (j, (s, zero_t)) in self.s.iter_mut().zip(&mut self.zero_t).enumerate() {
            let z2 = z[j] * z[j];
            if !z2.is_finite() {
                continue;
            }
            *s = (*s + z2.min(params.max_increment) - 1.0 - params.allowance).max(0.0);
            if *s == 0.0 {
                *zero_t = t;
            } else if *s > params.threshold && fired.is_none() {
                fired = Some((j, *zero_t));
            }
        }
        let (j, onset) = fired?;
        if t - self.last_alarm_t < params.min_interval_s {
            return None;
        }
        self.last_alarm_t = t;
        self.reset();
        Some((j, if onset.is_finite() { onset } else { t }))
    }
}

/// The fraction of recent samples inside ±η_cal, over a sliding window.
#[derive(Debug, Clone)]
pub struct CoverageMonitor {
    ring: Vec<bool>,
    next: usize,
    filled: usize,
    inside: usize,
}

impl CoverageMonitor {
    /// A window of `n` samples.
    pub fn new(n: usize) -> Self {
        Self {
            ring: vec![false; n.max(1)],
            next: 0,
            filled: 0,
            inside: 0,
        }
    }

    /// Records one sample. Real-time.
    pub fn push(&mut self, inside: bool) {
        if self.filled == self.ring.len() {
            if self.ring[self.next] {
                self.inside -= 1;
            }
        } else {
            self.filled += 1;
        }
        self.ring[self.next] = inside;
        if inside {
            self.inside += 1;
        }
        self.next = (self.next + 1) % self.ring.len();
    }

    /// Forgets the window.
    pub fn clear(&mut self) {
        self.next = 0;
        self.filled = 0;
        self.inside = 0;
    }

    /// Coverage over the window, once it is full (None before).
    pub fn coverage(&self) -> Option<f64> {
        (self.filled == self.ring.len()).then(|| self.inside as f64 / self.filled as f64)
    }
}
