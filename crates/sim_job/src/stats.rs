//! A run's summaries, streamed tick by tick: everything the report needs, accumulated in
//! memory sized before the run, so a run of any duration holds the same memory after its
//! first seconds (a per-tick log grew 0.31 MB/s on a 600 s real-time soak). What still
//! grows is one value per second of run (the 1 s windows) and one record per model
//! adoption, both reserved up front. Medians come from a decimated sample, tick latency
//! from a 1 µs histogram.

use gpn_control::latency::LatencyHistogram;

/// Values kept for a median: 2¹⁶ (512 KiB), touched at creation so that the resident
/// memory does not grow as they fill.
const SAMPLE_CAPACITY: usize = 1 << 16;

/// Length of the windows before and after a model adoption, s.
const ADOPTION_WINDOW_S: f64 = 0.25;

/// RMS over consecutive windows of a fixed number of ticks (the last one partial).
#[derive(Debug, Clone)]
pub(crate) struct WindowRms {
    per_window: usize,
    sum: f64,
    count: usize,
    ticks: usize,
    values: Vec<f64>,
}

impl WindowRms {
    /// Windows of `per_window` ticks over a span of `span_ticks`.
    fn new(per_window: usize, span_ticks: usize) -> Self {
        let per_window = per_window.max(1);
        Self {
            per_window,
            sum: 0.0,
            count: 0,
            ticks: 0,
            values: Vec::with_capacity(span_ticks.div_ceil(per_window) + 1),
        }
    }

    /// Adds one tick: the sum of its squares over `count` values.
    fn add(&mut self, squares: f64, count: usize) {
        self.sum += squares;
        self.count += count;
        self.ticks += 1;
        if self.ticks == self.per_window {
            self.close();
        }
    }

    fn close(&mut self) {
        // Within the reserved span no push allocates; past it a window is dropped rather
        // than allocating on the control thread.
        if self.values.len() < self.values.capacity() {
            self.values.push(rms_of(self.sum, self.count));
        }
        (self.sum, self.count, self.ticks) = (0.0, 0, 0);
    }

    /// The windows, the partial last one included.
    fn finished(&self) -> Vec<f64> {
        let mut values = self.values.clone();
        if self.ticks > 0 {
            values.push(rms_of(self.sum, self.count));
        }
        values
    }
}

fn rms_of(sum: f64, count: usize) -> f64 {
    if count == 0 {
        f64::NAN
    } else {
        (sum / count as f64).sqrt()
    }
}

/// A sample of a stream for its quantiles, in fixed memory: every `stride`-th finite value,
/// the stride doubling (and every other kept value dropped) whenever the buffer fills.
/// Exact until `SAMPLE_CAPACITY` values, evenly spaced after.
#[derive(Debug, Clone)]
pub struct DecimatedSample {
    values: Vec<f64>,
    len: usize,
    stride: u64,
    offered: u64,
}

impl DecimatedSample {
    /// A sample of at most `capacity` (≥ 2) values.
    pub fn new(capacity: usize) -> Self {
        Self {
            values: vec![f64::NAN; capacity.max(2)],
            len: 0,
            stride: 1,
            offered: 0,
        }
    }

    /// Offers one value (non-finite values are not part of the stream).
    pub fn push(&mut self, value: f64) {
        if !value.is_finite() {
            return;
        }
        let k = self.offered;
        self.offered += 1;
        if !k.is_multiple_of(self.stride) {
            return;
        }
        if self.len == self.values.len() {
            for i in 0..self.len / 2 {
                self.values[i] = self.values[2 * i];
            }
            self.len /= 2;
            self.stride *= 2;
            if !k.is_multiple_of(self.stride) {
                return;
            }
        }
        self.values[self.len] = value;
        self.len += 1;
    }

    /// The `level`-quantile of the kept values (NaN when there are none).
    pub fn quantile(&self, level: f64) -> f64 {
        super::report::quantile(&mut self.values[..self.len].to_vec(), level)
    }

    /// Values kept, and one kept per how many offered.
    pub fn kept(&self) -> (usize, u64) {
        (self.len, self.stride)
    }
}

/// Tracking error just before and after a model adoption (hot swaps report it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdoptionWindow {
    /// The adopting tick.
    pub tick: usize,
    /// RMS over joints in the window before the adopting tick, rad (None at tick 0).
    pub rms_before_rad: Option<f64>,
    after_squares: f64,
    after_ticks: usize,
}

impl AdoptionWindow {
    /// RMS over joints from the adopting tick on, over the window or until the run ended,
    /// rad.
    pub fn rms_after_rad(&self, nv: usize) -> Option<f64> {
        (self.after_ticks > 0).then(|| rms_of(self.after_squares, self.after_ticks * nv))
    }
}

/// The numbers around a step change of the dynamics at a planned time.
#[derive(Debug, Clone)]
pub struct StepStats {
    /// Time of the step, s.
    pub step_s: f64,
    step: usize,
    pre_from: usize,
    from_2s: usize,
    pre: (f64, usize),
    windows: WindowRms,
    /// Inside η_cal and all (tick, joint), from the step and from 2 s after it.
    cover: [(u64, u64); 2],
}

impl StepStats {
    /// RMS over joints in the 5 s before the step, rad.
    pub fn pre_step_rms_rad(&self) -> f64 {
        rms_of(self.pre.0, self.pre.1)
    }

    /// RMS over joints in 1 s windows from the step on, rad.
    pub fn windows_rad(&self) -> Vec<f64> {
        self.windows.finished()
    }

    /// Fraction of (tick, joint) inside η_cal from the step on, and from 2 s after it.
    pub fn coverage(&self) -> [f64; 2] {
        self.cover.map(|(inside, all)| fraction(inside, all))
    }
}

fn fraction(inside: u64, all: u64) -> f64 {
    if all == 0 {
        f64::NAN
    } else {
        inside as f64 / all as f64
    }
}

/// One tick's values for [`RunStats::record`] (per joint).
pub struct TickValues<'a> {
    /// Tracking error q − q_d, rad.
    pub error_rad: &'a [f64],
    /// True residual at the query point, N·m.
    pub true_residual_nm: &'a [f64],
    /// Residual the law used, N·m.
    pub mu_nm: &'a [f64],
    /// η_cal and η_thm, N·m.
    pub eta_nm: [&'a [f64]; 2],
    /// The tick's execution time, µs.
    pub tick_micros: f64,
    /// Whether the tick adopted a model.
    pub adopted_model: bool,
}

/// The streamed summaries of one run of a planned number of ticks: over the last half,
/// per-joint tracking (RMS, max) and residual RMSE, coverage of η_cal and η_thm and their
/// medians; tracking over 1 s windows; tick latency; around a planned step change; around
/// each model adoption.
#[derive(Debug, Clone)]
pub struct RunStats {
    nv: usize,
    ticks: usize,
    half: usize,
    tracking_sq: Vec<f64>,
    tracking_max: Vec<f64>,
    residual_sq: Vec<f64>,
    half_ticks: u64,
    covered: [u64; 2],
    eta: [DecimatedSample; 2],
    windows: WindowRms,
    tick_micros: LatencyHistogram,
    step: Option<StepStats>,
    /// Pooled squared error of the last ticks (ring), for the window before an adoption.
    recent: Vec<f64>,
    adoptions: Vec<AdoptionWindow>,
}

impl RunStats {
    /// For `nv` joints over `ticks` ticks of `dt` s, with a step change at `step_s` (if
    /// any) and room for the windows of `swaps` planned swaps plus one adoption per second.
    pub fn new(nv: usize, dt: f64, ticks: usize, step_s: Option<f64>, swaps: usize) -> Self {
        Self::with_sample_capacity(nv, dt, ticks, step_s, swaps, SAMPLE_CAPACITY)
    }

    fn with_sample_capacity(
        nv: usize,
        dt: f64,
        ticks: usize,
        step_s: Option<f64>,
        swaps: usize,
        sample_capacity: usize,
    ) -> Self {
        let per_second = (1.0 / dt).round().max(1.0) as usize;
        let tick_at = |t: f64| ((t / dt).round().max(0.0) as usize).min(ticks);
        let step = step_s.map(|step_s| {
            let step = tick_at(step_s);
            StepStats {
                step_s,
                step,
                pre_from: tick_at(step_s - 5.0),
                from_2s: tick_at(step_s + 2.0),
                pre: (0.0, 0),
                windows: WindowRms::new(per_second, ticks - step),
                cover: [(0, 0); 2],
            }
        });
        let window = ((ADOPTION_WINDOW_S / dt).round() as usize).max(1);
        Self {
            nv,
            ticks: 0,
            half: ticks / 2,
            tracking_sq: vec![0.0; nv],
            tracking_max: vec![0.0; nv],
            residual_sq: vec![0.0; nv],
            half_ticks: 0,
            covered: [0; 2],
            eta: [
                DecimatedSample::new(sample_capacity),
                DecimatedSample::new(sample_capacity),
            ],
            windows: WindowRms::new(per_second, ticks),
            tick_micros: LatencyHistogram::new(),
            step,
            recent: vec![f64::NAN; window],
            adoptions: Vec::with_capacity(swaps + ticks / per_second + 1),
        }
    }

    /// Adds one tick. Real-time: no allocation.
    pub fn record(&mut self, tick: &TickValues) {
        let (nv, k) = (self.nv, self.ticks);
        let squares: f64 = tick.error_rad.iter().map(|e| e * e).sum();
        if k >= self.half {
            self.half_ticks += 1;
            for j in 0..nv {
                let e = tick.error_rad[j];
                self.tracking_sq[j] += e * e;
                self.tracking_max[j] = self.tracking_max[j].max(e.abs());
                let r = tick.true_residual_nm[j] - tick.mu_nm[j];
                self.residual_sq[j] += r * r;
                for (which, eta) in tick.eta_nm.iter().enumerate() {
                    self.covered[which] += u64::from(eta[j].is_finite() && r.abs() <= eta[j]);
                    self.eta[which].push(eta[j]);
                }
            }
        }
        self.windows.add(squares, nv);
        self.tick_micros.record(tick.tick_micros);
        if let Some(step) = self.step.as_mut() {
            step.add(k, squares, tick);
        }
        self.record_adoption(k, squares, tick.adopted_model);
        self.ticks += 1;
    }

    fn record_adoption(&mut self, k: usize, squares: f64, adopted: bool) {
        let (nv, window) = (self.nv, self.recent.len());
        if adopted && self.adoptions.len() < self.adoptions.capacity() {
            let before = k.min(window);
            let sum: f64 = (1..=before).map(|i| self.recent[(k - i) % window]).sum();
            self.adoptions.push(AdoptionWindow {
                tick: k,
                rms_before_rad: (before > 0).then(|| rms_of(sum, before * nv)),
                after_squares: 0.0,
                after_ticks: 0,
            });
        }
        // Only the last adoptions can still be open (they come in tick order).
        for open in self.adoptions.iter_mut().rev() {
            if k >= open.tick + window {
                break;
            }
            open.after_squares += squares;
            open.after_ticks += 1;
        }
        self.recent[k % window] = squares;
    }

    /// Ticks recorded.
    pub fn ticks(&self) -> usize {
        self.ticks
    }

    /// Per joint over the last half: RMS and max |error|, rad.
    pub fn tracking(&self) -> (Vec<f64>, Vec<f64>) {
        let n = self.half_ticks as usize;
        let rms = self.tracking_sq.iter().map(|s| rms_of(*s, n)).collect();
        (rms, self.tracking_max.clone())
    }

    /// RMS over joints per 1 s window from the start (the last one partial), rad.
    pub fn windows_rad(&self) -> Vec<f64> {
        self.windows.finished()
    }

    /// Residual RMSE over the last half: per joint, and pooled, N·m.
    pub fn residual_rmse_nm(&self) -> (Vec<f64>, f64) {
        let n = self.half_ticks as usize;
        let per_joint = self.residual_sq.iter().map(|s| rms_of(*s, n)).collect();
        let pooled = rms_of(self.residual_sq.iter().sum(), n * self.nv);
        (per_joint, pooled)
    }

    /// Over the last half, for η_cal (0) or η_thm (1): the fraction of (tick, joint) with
    /// |true − μ| ≤ η, and the median η, N·m.
    pub fn bound(&self, which: usize) -> (f64, f64) {
        let all = self.half_ticks * self.nv as u64;
        (
            fraction(self.covered[which], all),
            self.eta[which].quantile(0.5),
        )
    }

    /// The tick latency histogram, µs.
    pub fn tick_micros(&self) -> &LatencyHistogram {
        &self.tick_micros
    }

    /// Around the planned step change, if there was one.
    pub fn step(&self) -> Option<&StepStats> {
        self.step.as_ref()
    }

    /// The window around the model adopted at tick `tick`, if one was.
    pub fn adoption_at(&self, tick: usize) -> Option<&AdoptionWindow> {
        self.adoptions.iter().find(|a| a.tick == tick)
    }
}

impl Default for RunStats {
    /// No joints, no ticks (small: a log built by hand).
    fn default() -> Self {
        Self::with_sample_capacity(0, 1.0, 0, None, 0, 2)
    }
}

impl StepStats {
    fn add(&mut self, k: usize, squares: f64, tick: &TickValues) {
        let nv = tick.error_rad.len();
        if (self.pre_from..self.step).contains(&k) {
            self.pre.0 += squares;
            self.pre.1 += nv;
        }
        if k < self.step {
            return;
        }
        self.windows.add(squares, nv);
        for j in 0..nv {
            let r = (tick.true_residual_nm[j] - tick.mu_nm[j]).abs();
            let eta = tick.eta_nm[0][j];
            let inside = u64::from(eta.is_finite() && r <= eta);
            self.cover[0].0 += inside;
            self.cover[0].1 += 1;
            if k >= self.from_2s {
                self.cover[1].0 += inside;
                self.cover[1].1 += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tick<'a>(e: &'a [f64], zero: &'a [f64], eta: &'a [f64]) -> TickValues<'a> {
        TickValues {
            error_rad: e,
            true_residual_nm: e,
            mu_nm: zero,
            eta_nm: [eta, eta],
            tick_micros: 10.0,
            adopted_model: false,
        }
    }

    #[test]
    fn the_decimated_median_is_exact_below_capacity_and_evenly_spaced_above() {
        let mut s = DecimatedSample::new(8);
        for v in [5.0, 1.0, f64::NAN, 3.0] {
            s.push(v);
        }
        assert_eq!(s.quantile(0.5), 3.0);
        let mut s = DecimatedSample::new(8);
        for v in 0..100 {
            s.push(v as f64);
        }
        // Every 16th value: 0, 16, …, 96.
        assert_eq!(s.kept(), (7, 16));
        assert_eq!(s.quantile(0.5), 48.0);
    }

    #[test]
    fn the_last_half_and_the_windows_match_a_direct_computation() {
        let (nv, dt, ticks) = (2, 0.25, 10);
        let mut stats = RunStats::new(nv, dt, ticks, None, 0);
        let zero = [0.0; 2];
        let mut all = Vec::new();
        for k in 0..ticks {
            let e = [k as f64, -2.0 * k as f64];
            let eta = [1.5 * k as f64, 0.5 * k as f64];
            stats.record(&tick(&e, &zero, &eta));
            all.push(e);
        }
        let (rms, max) = stats.tracking();
        let direct = |j: usize| (all[5..].iter().map(|e| e[j] * e[j]).sum::<f64>() / 5.0).sqrt();
        assert_eq!(rms, vec![direct(0), direct(1)]);
        assert_eq!(max, vec![9.0, 18.0]);
        // |r| = |e|: joint 0 inside (1.5 k ≥ k), joint 1 outside (0.5 k < 2 k).
        assert_eq!(stats.bound(0).0, 0.5);
        // Windows of 4 ticks: 0–3, 4–7, 8–9.
        let windows = stats.windows_rad();
        assert_eq!(windows.len(), 3);
        let pooled = |a: usize, b: usize| {
            let s: f64 = all[a..b].iter().map(|e| e[0] * e[0] + e[1] * e[1]).sum();
            (s / ((b - a) * nv) as f64).sqrt()
        };
        assert_eq!(windows, vec![pooled(0, 4), pooled(4, 8), pooled(8, 10)]);
    }

    #[test]
    fn an_adoption_window_covers_the_ticks_before_and_after_it() {
        // 0.25 s windows at 0.05 s: 5 ticks.
        let (nv, dt, ticks) = (1, 0.05, 30);
        let mut stats = RunStats::new(nv, dt, ticks, None, 2);
        let zero = [0.0];
        for k in 0..ticks {
            let e = [if k < 10 { 1.0 } else { 3.0 }];
            let mut values = tick(&e, &zero, &zero);
            values.adopted_model = k == 10 || k == 28 || k == 0;
            stats.record(&values);
        }
        let first = stats.adoption_at(0).expect("at tick 0");
        assert_eq!(first.rms_before_rad, None);
        let at = stats.adoption_at(10).expect("at tick 10");
        assert_eq!(at.rms_before_rad, Some(1.0));
        assert_eq!(at.rms_after_rad(nv), Some(3.0));
        // Near the end: the after window is cut by the run's end (ticks 28, 29).
        let late = stats.adoption_at(28).expect("at tick 28");
        assert_eq!(late.after_ticks, 2);
    }
}
