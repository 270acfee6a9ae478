//! Time-varying dynamics, node side (time-varying GP bandit spec §6.1, §6.3 (a), §6.4):
//! detecting a change of the residual (a payload picked up) with a CUSUM on the standardised
//! innovations per joint, reacting to it (old data get a jump variance, or are dropped, or are
//! corrected by a quick payload re-identification), and monitoring the coverage of the
//! calibrated bound on recent samples ("drift suspected" below the calibration level).
//!
//! Innovations: z_j = (y_j − μ_j) / sqrt(σ_j² + σ_n,j²) of every learned sample (standardised
//! units, the model's prediction before it learns the sample). CUSUM per joint, on z²
//! normalised by its running mean ν_j (see [`Cusum`]):
//! S_j ← max(0, S_j + min(z_j²/ν_j, cap) − 1 − k); an alarm when S_j > h, with the change's
//! onset estimated as the last time S_j was 0. Samples refused as isolated outliers never reach it
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
    /// Alarm threshold h of the CUSUM (the spec's ≈ 10 is for uncorrelated, calibrated z).
    pub threshold: f64,
    /// Allowance k subtracted per sample (z²/ν − 1 − k): only errors beyond
    /// sqrt(1 + k) times the usual one accumulate.
    pub allowance: f64,
    /// Largest z²/ν one sample adds (one wild sample cannot raise an alarm alone).
    pub max_increment: f64,
    /// Samples after a reset (a new model) that set the normaliser ν before any alarm. A
    /// model the worker warmed on at least 2 × `normalise_samples` samples (a refit, a swap,
    /// a rebuild that keeps the old samples) brings ν measured while warming and skips this
    /// ([`WarmNormaliser`]).
    pub warmup_samples: usize,
    /// Horizon of the normaliser's running mean afterwards, samples.
    pub normalise_samples: usize,
    /// No second alarm within this time after one, s.
    pub min_interval_s: f64,
    /// The reaction to a change (detected or announced).
    pub action: ChangeAction,
    /// J of the jump variance for `inject`, N·m (spec: ≈ the expected torque change).
    pub jump_std_nm: f64,
    /// URDF link whose inertia changes (the payload link) for `reidentify`; empty: the tool
    /// link (derived from the robot).
    pub payload_link: String,
    /// Post-onset samples the re-identification waits for, s.
    pub reidentify_window_s: f64,
    /// Samples in the coverage monitor's window.
    pub coverage_window: usize,
    /// Coverage of ±η_cal below this over the window: "drift suspected" (1 − δ).
    pub coverage_alarm: f64,
}

impl Default for ChangeParams {
    fn default() -> Self {
        Self {
            detect: true,
            threshold: 300.0,
            allowance: 24.0,
            max_increment: 100.0,
            warmup_samples: 5000,
            normalise_samples: 2000,
            min_interval_s: 2.0,
            action: ChangeAction::Drop,
            jump_std_nm: 5.0,
            payload_link: String::new(),
            reidentify_window_s: 0.3,
            coverage_window: 2000,
            coverage_alarm: 0.9,
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
        if !(self.coverage_alarm > 0.0 && self.coverage_alarm < 1.0) {
            return Err("learn.change.coverage_alarm must be in (0, 1)".into());
        }
        if self.warmup_samples == 0 || self.normalise_samples == 0 {
            return Err("learn.change.warmup_samples and normalise_samples must be ≥ 1".into());
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

/// One line for logs and diagnostics.
pub fn describe_change(c: &ChangeNotice) -> String {
    let source = match (c.source, c.joint) {
        (ChangeSource::Detected, Some(j)) => format!("detected (CUSUM of joint {j})"),
        (ChangeSource::Detected, None) => "detected".to_owned(),
        (ChangeSource::Announced, _) => "announced".to_owned(),
    };
    let action = match c.action {
        ChangeAction::Report => "reported only",
        ChangeAction::Inject => "older samples get a jump variance",
        ChangeAction::Drop => "older samples dropped",
        ChangeAction::Reidentify => "older samples corrected by a payload re-identification",
    };
    format!(
        "dynamics changed at t = {:.3} s (onset {:.3} s), {source}: {action}",
        c.t_secs, c.onset_secs
    )
}

/// The standardised innovation z = e / sqrt(σ² + σ_n²) of an error `e` against a prediction
/// of latent variance `var` and noise variance `noise_var` (0 when both vanish): what the
/// CUSUM sees, live and while a model is warmed. Real-time.
pub(super) fn standardised_innovation(e: f64, var: f64, noise_var: f64) -> f64 {
    let sd = (var.max(0.0) + noise_var).sqrt();
    if sd > 0.0 { e / sd } else { 0.0 }
}

/// How a model warmed off the control thread measures the CUSUM's normaliser ν on its
/// warm-up samples, so that the detector is armed from the model's first tick instead of
/// after `warmup_samples` live samples: the plain mean of z² over the last `window` samples,
/// each predicted before it is learned (the innovations the learner sees), the samples the
/// innovation gate refuses left out, and so are samples predicted while the model is not
/// ready (`OnlineModel::readiness`: an output from the prior, or its background behind).
/// Measured only when at least `window` samples were learned before those, and at least
/// half of the window was measured: a model built from fewer (the first fit, a rebuild
/// after `drop`) or one whose background has not caught up (VBKS's offline phase) is still
/// learning, and its detector warms up on the live samples.
#[derive(Debug, Clone)]
pub(super) struct WarmNormaliser {
    /// Samples measured (`learn.change.normalise_samples`).
    pub window: usize,
    /// The learner's gate (its innovation check).
    pub gate: super::gate::GateParams,
}

impl WarmNormaliser {
    /// The first of `n` warm-up samples to measure, if the warm-up is long enough.
    pub fn first_measured(&self, n: usize) -> Option<usize> {
        (self.window > 0 && n >= self.window.saturating_mul(2)).then(|| n - self.window)
    }
}

/// Per-joint CUSUM on the self-normalised innovations r_j = z_j² / ν_j − 1 − k.
///
/// ν_j is a slow running mean of z_j² (learned during a warm-up after every reset, then
/// updated only while the statistic rests at zero): a GP's σ is rarely calibrated, and
/// innovations at 1 kHz are strongly correlated, so a CUSUM on the raw z² − 1 (the spec's
/// form) fires every few seconds on a stationary stream. Normalised, the detector reacts
/// to a change *relative to the model's usual error*, which is what a payload step is.
#[derive(Debug, Clone)]
pub struct Cusum {
    s: Vec<f64>,
    zero_t: Vec<f64>,
    nu: Vec<f64>,
    seen: usize,
    /// ν came with the model (see [`WarmNormaliser`]): no warm-up.
    armed: bool,
    last_alarm_t: f64,
}

impl Cusum {
    /// A detector for `p` outputs.
    pub fn new(p: usize) -> Self {
        Self {
            s: vec![0.0; p],
            zero_t: vec![f64::NEG_INFINITY; p],
            nu: vec![1.0; p],
            seen: 0,
            armed: false,
            last_alarm_t: f64::NEG_INFINITY,
        }
    }

    /// Current statistics.
    pub fn statistics(&self) -> &[f64] {
        &self.s
    }

    /// The running mean square of z per joint (the normaliser).
    pub fn normaliser(&self) -> &[f64] {
        &self.nu
    }

    /// Starts afresh (a new model): the statistics and the normaliser, which warms up again.
    pub fn reset(&mut self) {
        self.s.fill(0.0);
        self.zero_t.fill(f64::NEG_INFINITY);
        self.nu.fill(1.0);
        self.seen = 0;
        self.armed = false;
    }

    /// Starts afresh with the new model's normaliser measured while it was warmed
    /// ([`WarmNormaliser`]): armed at once, without the warm-up. A value that is not finite
    /// and positive falls back to [`Cusum::reset`]. Real-time.
    pub fn reset_to(&mut self, nu: &[f64]) {
        self.reset();
        if nu.len() != self.nu.len() || !nu.iter().all(|v| v.is_finite() && *v > 0.0) {
            return;
        }
        self.nu.copy_from_slice(nu);
        self.armed = true;
    }

    /// Whether alarms can be raised (the warm-up is over, or ν came with the model).
    pub fn armed(&self, params: &ChangeParams) -> bool {
        self.armed || self.seen > params.warmup_samples
    }

    /// Adds the innovations `z` of a sample at `t`; returns (joint, onset) on an alarm.
    /// Real-time.
    pub fn push(&mut self, params: &ChangeParams, t: f64, z: &[f64]) -> Option<(usize, f64)> {
        self.seen += 1;
        let warming = !self.armed && self.seen <= params.warmup_samples;
        let horizon = params.normalise_samples.max(1) as f64;
        let mut fired: Option<(usize, f64, f64)> = None;
        for (j, ((s, zero_t), nu)) in self
            .s
            .iter_mut()
            .zip(&mut self.zero_t)
            .zip(&mut self.nu)
            .enumerate()
        {
            let z2 = z[j] * z[j];
            if !z2.is_finite() {
                continue;
            }
            if warming {
                // A plain mean over the warm-up, then an exponential one.
                *nu += (z2 - *nu) / self.seen as f64;
                *zero_t = t;
                continue;
            }
            let scale = nu.max(f64::MIN_POSITIVE);
            let r = (z2 / scale).min(params.max_increment);
            *s = (*s + r - 1.0 - params.allowance).max(0.0);
            if *s == 0.0 {
                *zero_t = t;
                *nu += (z2.min(scale * params.max_increment) - *nu) / horizon;
            } else if *s > params.threshold && fired.is_none_or(|(_, _, best)| *s > best) {
                fired = Some((j, *zero_t, *s));
            }
        }
        let (j, onset, _) = fired?;
        if t - self.last_alarm_t < params.min_interval_s {
            return None;
        }
        self.last_alarm_t = t;
        self.s.fill(0.0);
        self.zero_t.fill(t);
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

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use rand_distr::{Distribution, StandardNormal};

    /// Correlated innovations (AR(1), ρ = 0.99, as at 1 kHz) whose scale is off by `scale`
    /// (a GP's σ that is not calibrated), plus `shift` from sample `step_at` on.
    fn stream(n: usize, scale: f64, step_at: usize, shift: f64, seed: u64) -> Vec<[f64; 2]> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let rho: f64 = 0.99;
        let mut e = [0.0; 2];
        (0..n)
            .map(|i| {
                for e in &mut e {
                    let w: f64 = StandardNormal.sample(&mut rng);
                    *e = rho * *e + (1.0 - rho * rho).sqrt() * w;
                }
                let add = if i >= step_at { shift } else { 0.0 };
                [scale * e[0] + add, scale * e[1]]
            })
            .collect()
    }

    fn alarms(params: &ChangeParams, z: &[[f64; 2]]) -> Vec<(usize, f64, f64)> {
        let mut cusum = Cusum::new(2);
        z.iter()
            .enumerate()
            .filter_map(|(i, z)| {
                let t = i as f64 * 1e-3;
                cusum.push(params, t, z).map(|(j, onset)| (j, t, onset))
            })
            .collect()
    }

    #[test]
    fn a_stationary_miscalibrated_correlated_stream_raises_no_alarm() {
        let params = ChangeParams::default();
        for (scale, seed) in [(0.3, 1), (1.0, 2), (4.0, 3)] {
            let z = stream(300_000, scale, usize::MAX, 0.0, seed);
            assert_eq!(alarms(&params, &z), vec![], "scale {scale}");
        }
    }

    #[test]
    fn the_raw_spec_form_would_fire_on_the_same_stream() {
        // What the normaliser is for: h = 10, k = 0 on z² (no normalisation possible when
        // the warm-up is one sample and the horizon is huge) fires on a stationary stream.
        let params = ChangeParams {
            threshold: 10.0,
            allowance: 0.0,
            warmup_samples: 1,
            normalise_samples: usize::MAX,
            ..ChangeParams::default()
        };
        let z = stream(60_000, 2.0, usize::MAX, 0.0, 4);
        assert!(alarms(&params, &z).len() > 5);
    }

    #[test]
    fn a_step_is_detected_within_milliseconds_with_its_onset() {
        let params = ChangeParams::default();
        let step_at = 20_000;
        // A change the model cannot absorb at once: the innovation stays many times its
        // usual size.
        let z = stream(30_000, 0.5, step_at, 10.0, 5);
        // The shift persists (no model rebuild here): alarms repeat every `min_interval_s`.
        let found = alarms(&params, &z);
        assert!(!found.is_empty());
        let (joint, t, onset) = found[0];
        assert_eq!(joint, 0);
        let step_t = step_at as f64 * 1e-3;
        assert!(t >= step_t && t - step_t < 0.02, "detected at {t}");
        assert!((onset - step_t).abs() < 0.005, "onset {onset}");
    }

    #[test]
    fn one_wild_sample_is_not_a_change_and_nan_is_ignored() {
        let params = ChangeParams::default();
        let mut z = stream(10_000, 1.0, usize::MAX, 0.0, 6);
        z[5000] = [1e6, 1e6];
        z[6000] = [f64::NAN, f64::INFINITY];
        assert_eq!(alarms(&params, &z), vec![]);
    }

    #[test]
    fn alarms_are_spaced_by_the_minimum_interval_and_reset_rewarms() {
        let params = ChangeParams {
            min_interval_s: 2.0,
            ..ChangeParams::default()
        };
        // Two steps 1 s apart: one alarm; the shift persists, the detector restarts from
        // zero and the normaliser keeps its value, so the persisting shift alarms again
        // only after the interval.
        let mut z = stream(10_000, 1.0, 4_000, 15.0, 7);
        for s in &mut z[5_000..] {
            s[1] += 15.0;
        }
        let found = alarms(&params, &z);
        assert!(!found.is_empty());
        for pair in found.windows(2) {
            assert!(pair[1].1 - pair[0].1 >= 2.0, "{found:?}");
        }
        let mut cusum = Cusum::new(1);
        for i in 0..4000 {
            cusum.push(&params, i as f64, &[3.0]);
        }
        assert!((cusum.normaliser()[0] - 9.0).abs() < 0.5);
        cusum.reset();
        assert_eq!(cusum.normaliser(), &[1.0]);
        assert_eq!(cusum.statistics(), &[0.0]);
    }

    #[test]
    fn a_normaliser_that_comes_with_the_model_arms_the_detector_at_once() {
        let params = ChangeParams::default();
        // The same step 100 samples after a new model: missed during the warm-up, found
        // with the normaliser the model was warmed with.
        let z = stream(3_000, 1.0, 100, 15.0, 8);
        let run = |cusum: &mut Cusum| {
            z.iter()
                .enumerate()
                .find_map(|(i, z)| cusum.push(&params, i as f64 * 1e-3, z).map(|_| i))
        };
        let mut warming = Cusum::new(2);
        warming.reset();
        assert!(!warming.armed(&params));
        assert_eq!(run(&mut warming), None);
        let mut armed = Cusum::new(2);
        armed.reset_to(&[1.0, 1.0]);
        assert!(armed.armed(&params));
        let at = run(&mut armed).expect("detected");
        assert!((100..120).contains(&at), "detected at sample {at}");
        // A normaliser the detector cannot use leaves it warming up.
        for bad in [&[1.0, f64::NAN][..], &[1.0, 0.0], &[1.0]] {
            let mut c = Cusum::new(2);
            c.reset_to(bad);
            assert!(!c.armed(&params), "{bad:?}");
            assert_eq!(c.normaliser(), &[1.0, 1.0]);
        }
        // A stationary stream with the measured normaliser raises nothing.
        let quiet = stream(300_000, 2.0, usize::MAX, 0.0, 9);
        let mut c = Cusum::new(2);
        c.reset_to(&[4.0, 4.0]);
        let alarms = quiet
            .iter()
            .enumerate()
            .filter(|(i, z)| c.push(&params, *i as f64 * 1e-3, *z).is_some())
            .count();
        assert_eq!(alarms, 0);
    }

    #[test]
    fn coverage_is_reported_over_a_full_window_only() {
        let mut m = CoverageMonitor::new(4);
        for inside in [true, true, false] {
            m.push(inside);
        }
        assert_eq!(m.coverage(), None);
        m.push(true);
        assert_eq!(m.coverage(), Some(0.75));
        m.push(false); // the first `true` leaves the window
        assert_eq!(m.coverage(), Some(0.5));
        m.clear();
        assert_eq!(m.coverage(), None);
    }

    #[test]
    fn bad_settings_are_refused() {
        let ok = ChangeParams::default();
        assert!(ok.check().is_ok());
        for bad in [
            ChangeParams {
                threshold: 0.0,
                ..ok.clone()
            },
            ChangeParams {
                allowance: -1.0,
                ..ok.clone()
            },
            ChangeParams {
                warmup_samples: 0,
                ..ok.clone()
            },
            ChangeParams {
                coverage_alarm: 1.0,
                ..ok.clone()
            },
            ChangeParams {
                jump_std_nm: f64::NAN,
                ..ok.clone()
            },
        ] {
            assert!(bad.check().is_err(), "{bad:?}");
        }
    }
}
