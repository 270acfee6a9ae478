//! Joint-acceleration estimation from the joint-state stream.
//!
//! q̈ is the difference of consecutive velocity samples over their *real* time stamps,
//! optionally low-pass filtered (first order, time constant `filter_secs`). The estimate at
//! sample k is the mean acceleration over [t_{k−1}, t_k], the interval over which the
//! previous command acted, which is how the learner pairs it with that command.
//!
//! Stream faults: a sample whose stamp does not advance (duplicate, or out of order) is
//! skipped and leaves the estimator as it was; a gap longer than `max_gap_secs` (dropped
//! messages) restarts the estimator, because a difference over a long gap is no
//! acceleration. Real-time: no allocation after `new`.

/// Settings of the acceleration estimator.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AccelParams {
    /// Low-pass time constant, s (0: the raw difference).
    pub filter_secs: f64,
    /// Longest stamp gap still differenced, s; a longer gap restarts the estimator.
    pub max_gap_secs: f64,
    /// Standard deviation of the velocity measurements, rad/s; sets the reported variance
    /// of the estimate (2σ²/Δt² for a raw difference, reduced by the filter).
    pub velocity_noise_std_rad_s: f64,
}

impl Default for AccelParams {
    fn default() -> Self {
        Self {
            filter_secs: 0.0,
            max_gap_secs: 0.02,
            velocity_noise_std_rad_s: 0.0,
        }
    }
}

/// What one sample did to the estimator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccelUpdate {
    /// A new estimate is available.
    Estimate,
    /// First sample (or first after a restart): nothing to difference yet.
    Started,
    /// The stamp did not advance; the sample was ignored.
    StaleStamp,
    /// The gap since the last sample exceeded `max_gap_secs`; restarted from this sample.
    Gap,
}

/// Filtered finite-difference acceleration estimator (one channel per joint).
#[derive(Debug, Clone)]
pub struct AccelEstimator {
    params: AccelParams,
    last_t: Option<f64>,
    last_v: Vec<f64>,
    accel: Vec<f64>,
    variance: Vec<f64>,
    has_estimate: bool,
    dt_secs: f64,
}

impl AccelEstimator {
    /// An estimator for `nv` joints.
    pub fn new(nv: usize, params: AccelParams) -> Self {
        Self {
            params,
            last_t: None,
            last_v: vec![0.0; nv],
            accel: vec![0.0; nv],
            variance: vec![0.0; nv],
            has_estimate: false,
            dt_secs: 0.0,
        }
    }

    /// Feeds one velocity sample stamped `t_secs`. Real-time: no allocation.
    pub fn push(&mut self, t_secs: f64, v: &[f64]) -> AccelUpdate {
        debug_assert_eq!(v.len(), self.last_v.len());
        let Some(last_t) = self.last_t else {
            self.restart(t_secs, v);
            return AccelUpdate::Started;
        };
        let dt = t_secs - last_t;
        if dt <= 0.0 || !dt.is_finite() {
            return AccelUpdate::StaleStamp;
        }
        if dt > self.params.max_gap_secs {
            self.restart(t_secs, v);
            return AccelUpdate::Gap;
        }
        // First-order low-pass, discretised exactly for a step of dt.
        let alpha = if self.params.filter_secs > 0.0 {
            dt / (self.params.filter_secs + dt)
        } else {
            1.0
        };
        let alpha = if self.has_estimate { alpha } else { 1.0 };
        let raw_var = 2.0 * (self.params.velocity_noise_std_rad_s / dt).powi(2);
        // Stationary variance of the filter's output for white input: α/(2−α)·σ².
        let var = raw_var * alpha / (2.0 - alpha);
        for (j, (accel, variance)) in self.accel.iter_mut().zip(&mut self.variance).enumerate() {
            let raw = (v[j] - self.last_v[j]) / dt;
            *accel += alpha * (raw - *accel);
            *variance = var;
        }
        self.last_v.copy_from_slice(v);
        self.last_t = Some(t_secs);
        self.dt_secs = dt;
        self.has_estimate = true;
        AccelUpdate::Estimate
    }

    fn restart(&mut self, t_secs: f64, v: &[f64]) {
        self.last_t = Some(t_secs);
        self.last_v.copy_from_slice(v);
        self.has_estimate = false;
    }

    /// The latest estimate, rad/s² (valid after [`AccelUpdate::Estimate`]).
    pub fn accel(&self) -> &[f64] {
        &self.accel
    }

    /// Variance of the latest estimate per joint, (rad/s²)².
    pub fn variance(&self) -> &[f64] {
        &self.variance
    }

    /// Length of the last differenced interval, s.
    pub fn dt_secs(&self) -> f64 {
        self.dt_secs
    }

    /// Forgets the stream (e.g. after a reset of the robot driver).
    pub fn reset(&mut self) {
        self.last_t = None;
        self.has_estimate = false;
    }
}
