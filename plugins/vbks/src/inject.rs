//! Uncertainty injection (`drift` key; time-varying GP spec §1.2, §2.3, §6.1; the shared
//! keys and models are `gpn_gp_core::drift`): every sample's noise variance grows with its
//! age, so the statistics of each component become heteroscedastic,
//!
//! ```text
//! Ã = Σ_j w_j ṽ_j ṽ_jᵀ,  r = Σ_j w_j ṽ_j y_j,  …   with  w_j = s² / v_j(t),  v_j(t) = ρ-inflated base_j
//! ```
//!
//! (B = I + Ã/s² = I + Σ ṽṽᵀ/v_j: the spec's A = K_ZZ + Σ k_Z k_Zᵀ/v_j in whitened form), and
//! a sample leaves once v_j/base_j exceeds `max_var_ratio`.
//!
//! **Base variance.** A component's noise is its learned s² (standardised units; it also
//! absorbs what the M inducing inputs cannot represent). The caller's `noise_var` (per
//! output, original units) enters as its standardised mean over the outputs, n_j =
//! mean_o noise_var_jo/y_scale_o²; the base is base_ij = max(s_i², n_j): a caller's noise
//! below the learned one cannot tighten the fit beyond what θ was learned at, one above it
//! (an injected jump variance, a worse sensor) loosens it. The drift's κ and q are in target
//! units; the outputs share one factorisation, so one inflation serves them all, converted
//! with mean_o 1/y_scale_o² (exact for one output or equal scales — the node standardises
//! its targets, so the scales it hands over are ≈ 1).
//!
//! **Where the work happens.**
//! * `exponential`: every weight shrinks by the same factor e^(−Δt/τ) when the clock moves
//!   by Δt, so the control thread discounts the statistics exactly in O(M²) per sample; the
//!   factor L_B (which is not a scaled copy: B = I + Ã/s²) is rebuilt in the background
//!   with the others below.
//! * `quadratic`, `linear`: weights shrink at different rates; the background thread keeps
//!   a mirror of the window (with every sample's whitened kernel vector cached per
//!   component), and at `refresh_hz` (sample clock) rebuilds the statistics exactly at the
//!   newest stamp with the expired samples removed, O(n M²) per component, then the factor.
//! * every model: new samples enter on the control thread at their age-0 weight
//!   s²/base (rank-one update as without drift); a rebuilt component is adopted at the next
//!   call and the samples that arrived since the copy are replayed into it from the
//!   window (exponential: with their discounts), so it is exact at adoption for the
//!   statistics and to the refresh period for the factor's discount.
//!
//! The window on the control thread holds every sample that has not expired (bounded by
//! `drift_window`; past it the oldest are dropped early and counted), in arrival order with
//! its stamp, caller noise and per-component log predictive density; it also serves
//! save/load. The online belief refits use, per component, the drift-weighted evidence
//! L_i*·(Σ_offline w_j)/N + Σ_online w_j log p(y_j | earlier) (the undrifted evidence is
//! the same with every w = 1). The bound reported by `describe` is the heteroscedastic
//! Titsias bound ln N(y | 0, Q + Σ) − ½ Σ_j (k_jj − Q_jj)/v_j.

use std::collections::VecDeque;

use gpn_gp_core::drift::{Drift, DriftModel};

use crate::component::Component;
use crate::ensemble::Ensemble;
use crate::scaler::Scaler;
use crate::stats::{Factor, Stats};

/// The drift model with the conversion between original and standardised units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Injection {
    /// The shared drift settings.
    pub drift: Drift,
    /// mean_o 1/y_scale_o² (standardised variance per original variance).
    pub inv_scale2: f64,
}

impl Injection {
    /// For targets scaled by `y_scale` (per output).
    pub fn new(drift: Drift, y_scale: &[f64]) -> Injection {
        let p = y_scale.len().max(1) as f64;
        Injection {
            drift,
            inv_scale2: y_scale.iter().map(|s| 1.0 / (s * s)).sum::<f64>() / p,
        }
    }

    /// n_j: the caller's noise variances (original units, per output) as one standardised
    /// variance.
    pub fn noise_std(noise_var: &[f64], y_scale: &[f64]) -> f64 {
        let p = noise_var.len().max(1) as f64;
        noise_var
            .iter()
            .zip(y_scale)
            .map(|(v, s)| v / (s * s))
            .sum::<f64>()
            / p
    }

    /// The weight s²/v of a sample of standardised caller noise `noise_std` and age
    /// `age_s` in a component of noise `s2`; `None` once it has expired.
    pub fn weight(&self, s2: f64, noise_std: f64, age_s: f64) -> Option<f64> {
        let base = s2.max(noise_std) / self.inv_scale2;
        if self.drift.expired(base, age_s) {
            return None;
        }
        Some(s2 / (self.drift.var(base, age_s) * self.inv_scale2))
    }

    /// The common factor every weight shrinks by when the clock moves by `dt_s` (exact
    /// only for `exponential`; 1 for the others, whose weights are rebuilt instead).
    pub fn step_discount(&self, dt_s: f64) -> f64 {
        match self.drift.model {
            DriftModel::Exponential { tau_s } if dt_s > 0.0 => (-dt_s / tau_s).exp(),
            _ => 1.0,
        }
    }
}

/// What one component's statistics carry beyond [`Stats`] under drift.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DriftTerms {
    /// Samples in the statistics.
    pub count: f64,
    /// Σ_j ln w_j.
    pub sum_ln_w: f64,
    /// Σ over online samples of w_j · log p(y_j | earlier samples) (summed over outputs).
    pub prequential: f64,
    /// Σ over offline samples of w_j.
    pub offline_weight: f64,
}

impl DriftTerms {
    /// The terms of N offline samples at weight 1 (the components as the offline phase
    /// builds them).
    pub fn offline(n: usize) -> DriftTerms {
        DriftTerms {
            count: n as f64,
            sum_ln_w: 0.0,
            prequential: 0.0,
            offline_weight: n as f64,
        }
    }

    /// Every weight × λ.
    pub fn discount(&mut self, lambda: f64) {
        if lambda != 1.0 {
            self.sum_ln_w += self.count * lambda.ln();
            self.prequential *= lambda;
            self.offline_weight *= lambda;
        }
    }

    /// One more sample of weight `w`; `log_pred` is NaN for an offline sample.
    pub fn add(&mut self, w: f64, log_pred: f64) {
        self.count += 1.0;
        self.sum_ln_w += w.ln();
        if log_pred.is_nan() {
            self.offline_weight += w;
        } else {
            self.prequential += w * log_pred;
        }
    }

    /// The evidence the online belief refits use: L_i* scaled by the offline samples'
    /// remaining weight share, plus the weighted prequential log density.
    pub fn evidence(&self, offline_bound: f64, n_offline: usize) -> f64 {
        offline_bound * self.offline_weight / n_offline.max(1) as f64 + self.prequential
    }

    /// The heteroscedastic collapsed bound of component `c` (whose statistics carry these
    /// terms): `Factor::bound` with Σ_j ln v_j = count·ln s² − Σ ln w in place of
    /// n·ln s².
    pub fn bound(&self, c: &Component) -> f64 {
        let p = c.p() as f64;
        c.local_bound()
            + p * 0.5 * (c.stats.n - self.count) * (2.0 * std::f64::consts::PI * c.s2).ln()
            + p * 0.5 * self.sum_ln_w
    }
}

/// One sample of the window as stored: x (d), y (p), stamp, caller noise (p), and the
/// log predictive density per component (K̃; NaN for an offline sample).
pub(crate) struct Row<'a> {
    pub x: &'a [f64],
    pub y: &'a [f64],
    pub t: f64,
    pub noise: &'a [f64],
    pub log_pred: &'a [f64],
}

/// The control thread's window: a fixed-capacity FIFO of raw samples in arrival order,
/// allocated once.
#[derive(Debug, Clone)]
pub(crate) struct Window {
    d: usize,
    p: usize,
    k: usize,
    data: Vec<f64>,
    seq: Vec<u64>,
    head: usize,
    len: usize,
}

impl Window {
    /// Room for `capacity` samples of d inputs, p outputs, `k` components.
    pub(crate) fn new(capacity: usize, d: usize, p: usize, k: usize) -> Window {
        Window {
            d,
            p,
            k,
            data: vec![0.0; capacity * Window::stride_of(d, p, k)],
            seq: vec![0; capacity],
            head: 0,
            len: 0,
        }
    }

    pub(crate) fn stride_of(d: usize, p: usize, k: usize) -> usize {
        d + 2 * p + 1 + k
    }

    pub(crate) fn stride(&self) -> usize {
        Window::stride_of(self.d, self.p, self.k)
    }

    pub(crate) fn capacity(&self) -> usize {
        self.seq.len()
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn d(&self) -> usize {
        self.d
    }

    pub(crate) fn p(&self) -> usize {
        self.p
    }

    /// Components' log densities per row.
    pub(crate) fn k(&self) -> usize {
        self.k
    }

    /// Append (when full the oldest is overwritten: returns true). `log_pred` has K̃
    /// values or is empty (offline sample: NaN).
    pub(crate) fn push(
        &mut self,
        x: &[f64],
        y: &[f64],
        t: f64,
        noise: &[f64],
        log_pred: &[f64],
        seq: u64,
    ) -> bool {
        let cap = self.capacity();
        if cap == 0 {
            return true;
        }
        let stride = self.stride();
        let (d, p) = (self.d, self.p);
        let dropped = self.len == cap;
        let slot = (self.head + self.len) % cap;
        let row = &mut self.data[slot * stride..(slot + 1) * stride];
        row[..d].copy_from_slice(x);
        row[d..d + p].copy_from_slice(y);
        row[d + p] = t;
        row[d + p + 1..d + 2 * p + 1].copy_from_slice(noise);
        // Components beyond those given (fewer kept than `keep`, or an offline sample: none).
        let lp = &mut row[d + 2 * p + 1..];
        lp.fill(f64::NAN);
        lp[..log_pred.len()].copy_from_slice(log_pred);
        self.seq[slot] = seq;
        if dropped {
            self.head = (self.head + 1) % cap;
        } else {
            self.len += 1;
        }
        dropped
    }

    /// The raw stored values of the i-th oldest row (stride values) and its sequence number.
    pub(crate) fn raw(&self, i: usize) -> (&[f64], u64) {
        let slot = (self.head + i) % self.capacity();
        let stride = self.stride();
        (
            &self.data[slot * stride..(slot + 1) * stride],
            self.seq[slot],
        )
    }

    /// The i-th oldest row.
    pub(crate) fn get(&self, i: usize) -> Row<'_> {
        let (row, _) = self.raw(i);
        split_row(row, self.d, self.p)
    }

    pub(crate) fn pop_front(&mut self) {
        if self.len > 0 {
            self.head = (self.head + 1) % self.capacity();
            self.len -= 1;
        }
    }

    pub(crate) fn clear(&mut self) {
        self.head = 0;
        self.len = 0;
    }

    /// Index of the first row with sequence number > `seq` (rows are in increasing order).
    pub(crate) fn first_after(&self, seq: u64) -> usize {
        let (mut lo, mut hi) = (0, self.len);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.raw(mid).1 <= seq {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        8 * (self.data.len() + self.seq.len())
    }
}

fn split_row(row: &[f64], d: usize, p: usize) -> Row<'_> {
    Row {
        x: &row[..d],
        y: &row[d..d + p],
        t: row[d + p],
        noise: &row[d + p + 1..d + 2 * p + 1],
        log_pred: &row[d + 2 * p + 1..],
    }
}

/// One component's rebuilt state.
#[derive(Debug, Clone)]
pub(crate) struct Rebuilt {
    pub stats: Stats,
    pub factor: Factor,
    pub terms: DriftTerms,
}

/// A refresh: the new rows for the background mirror, and the rebuilt components back.
/// Allocated once (room for a whole window) and passed back and forth.
pub(crate) struct RefreshJob {
    /// Rows (stride of the window) to append to the mirror; `n_rows` of them are valid.
    pub rows: Vec<f64>,
    pub seqs: Vec<u64>,
    pub n_rows: usize,
    /// Clear the mirror first (after load, or when rows were lost).
    pub reset: bool,
    /// The mirror drops rows with a smaller sequence number (dropped from the window).
    pub oldest_seq: u64,
    /// The newest stamp: the rebuild's "now".
    pub t_ref: f64,
    /// Sequence number of the newest row the rebuild includes.
    pub seq_ref: u64,
    pub comps: Vec<Rebuilt>,
    pub ok: bool,
    /// Log densities per window row (the window's K̃ capacity).
    row_k: usize,
    col: Vec<f64>,
}

impl RefreshJob {
    /// Room for the rows of a window of `capacity` samples (d inputs, p outputs, `row_k`
    /// log densities per row) and `k` components of M inducing inputs. **Allocates.**
    pub(crate) fn new(
        capacity: usize,
        d: usize,
        p: usize,
        row_k: usize,
        k: usize,
        m: usize,
    ) -> Self {
        let stride = Window::stride_of(d, p, row_k);
        RefreshJob {
            row_k,
            rows: vec![0.0; capacity * stride],
            seqs: vec![0; capacity],
            n_rows: 0,
            reset: true,
            oldest_seq: 0,
            t_ref: f64::NEG_INFINITY,
            seq_ref: 0,
            comps: (0..k)
                .map(|_| Rebuilt {
                    stats: Stats::new(m, p),
                    factor: Factor::new(m, p),
                    terms: DriftTerms::default(),
                })
                .collect(),
            ok: false,
            col: vec![0.0; m],
        }
    }

    /// Copy the window's rows after `sent_seq` (all of them with `reset`). No allocation.
    pub(crate) fn fill(&mut self, window: &Window, sent_seq: u64, reset: bool, t_ref: f64) {
        let stride = window.stride();
        let first = if reset {
            0
        } else {
            window.first_after(sent_seq)
        };
        let mut n = 0;
        for i in first..window.len() {
            let (row, seq) = window.raw(i);
            self.rows[n * stride..(n + 1) * stride].copy_from_slice(row);
            self.seqs[n] = seq;
            n += 1;
        }
        self.n_rows = n;
        self.reset = reset;
        self.oldest_seq = if window.len() > 0 { window.raw(0).1 } else { 0 };
        self.seq_ref = if window.len() > 0 {
            window.raw(window.len() - 1).1
        } else {
            sent_seq
        };
        self.t_ref = t_ref;
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        8 * (self.rows.len() + self.seqs.len() + self.col.len())
            + self
                .comps
                .iter()
                .map(|c| c.stats.memory_bytes() + c.factor.memory_bytes())
                .sum::<usize>()
    }
}

/// One sample as the background mirror keeps it: standardised, with the whitened kernel
/// vector of every component cached (θ and Z are frozen, so it never changes).
struct Entry {
    seq: u64,
    t: f64,
    offline: bool,
    y: Vec<f64>,
    noise_std: f64,
    log_pred: Vec<f64>,
    /// ṽ per component, K̃×M.
    v: Vec<f64>,
    /// k(x, x) per component.
    kxx: Vec<f64>,
}

/// The background thread's copy of the window and the rebuild. Allocates freely.
pub(crate) struct Mirror {
    injection: Injection,
    scaler: Scaler,
    /// The components (θ, Z, L_K) for the kernel vectors; their statistics are not used.
    comps: Vec<Component>,
    entries: VecDeque<Entry>,
    d: usize,
    p: usize,
    xs: Vec<f64>,
}

impl Mirror {
    /// A mirror for the ensemble's components (cloned) and scaler.
    pub(crate) fn new(injection: Injection, ensemble: &Ensemble) -> Mirror {
        let d = ensemble.scaler.x_mean.len();
        Mirror {
            injection,
            scaler: ensemble.scaler.clone(),
            comps: ensemble.components.clone(),
            entries: VecDeque::new(),
            d,
            p: ensemble.scaler.y_mean.len(),
            xs: vec![0.0; d],
        }
    }

    /// Take the job's rows in, drop what left the window or expired, rebuild every
    /// component at `t_ref`.
    pub(crate) fn refresh(&mut self, job: &mut RefreshJob) {
        let (d, p, k) = (self.d, self.p, self.comps.len());
        if job.reset {
            self.entries.clear();
        }
        while self.entries.front().is_some_and(|e| e.seq < job.oldest_seq) {
            self.entries.pop_front();
        }
        let stride = d + 2 * p + 1 + job.row_k;
        let mut ys = vec![0.0; p];
        for r in 0..job.n_rows {
            let seq = job.seqs[r];
            if self.entries.back().is_some_and(|e| e.seq >= seq) {
                continue;
            }
            let row = split_row(&job.rows[r * stride..(r + 1) * stride], d, p);
            self.scaler.x_into(row.x, &mut self.xs);
            self.scaler.y_into(row.y, &mut ys);
            let mut v = Vec::with_capacity(k * self.comps.first().map_or(0, Component::m));
            let mut kxx = Vec::with_capacity(k);
            for c in &mut self.comps {
                c.prepare(&self.xs);
                v.extend_from_slice(c.prepared_v());
                kxx.push(c.prepared_kxx());
            }
            self.entries.push_back(Entry {
                seq,
                t: row.t,
                offline: row.log_pred.first().is_none_or(|v| v.is_nan()),
                y: ys.clone(),
                noise_std: Injection::noise_std(row.noise, &self.scaler.y_scale),
                log_pred: row.log_pred.to_vec(),
                v,
                kxx,
            });
        }
        // Drop what expired for every component.
        let inj = self.injection;
        let s2: Vec<f64> = self.comps.iter().map(|c| c.s2).collect();
        let t_ref = job.t_ref;
        self.entries.retain(|e| {
            s2.iter()
                .any(|&s| inj.weight(s, e.noise_std, t_ref - e.t).is_some())
        });
        job.ok = true;
        for (i, (c, out)) in self.comps.iter().zip(job.comps.iter_mut()).enumerate() {
            let m = c.m();
            out.stats.clear();
            out.terms = DriftTerms::default();
            for e in &self.entries {
                let Some(w) = inj.weight(c.s2, e.noise_std, t_ref - e.t) else {
                    continue;
                };
                out.stats.add(&e.v[i * m..(i + 1) * m], e.kxx[i], &e.y, w);
                out.terms
                    .add(w, if e.offline { f64::NAN } else { e.log_pred[i] });
            }
            if out.factor.refactor(&out.stats, c.s2, &mut job.col).is_err() {
                job.ok = false;
            }
        }
    }
}

/// Adopt a rebuilt job into the ensemble and replay the window's rows after `job.seq_ref`
/// (exponential: discounted by the clock steps since `job.t_ref`). Rows that left the
/// window meanwhile (`drift_window` overflow) count as expired.
pub(crate) fn adopt(
    job: &mut RefreshJob,
    ensemble: &mut Ensemble,
    terms: &mut [DriftTerms],
    window: &Window,
    injection: &Injection,
) {
    for (i, out) in job.comps.iter_mut().enumerate() {
        let c = &mut ensemble.components[i];
        std::mem::swap(&mut c.stats, &mut out.stats);
        std::mem::swap(&mut c.factor, &mut out.factor);
        terms[i] = out.terms;
    }
    let mut t_prev = job.t_ref;
    for r in window.first_after(job.seq_ref)..window.len() {
        let row = window.get(r);
        let lambda = injection.step_discount(row.t - t_prev);
        t_prev = t_prev.max(row.t);
        ensemble.replay_drift(&row, lambda, injection, terms);
    }
}

/// Counters of the drift machinery (for `describe`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DriftCounters {
    /// Background rebuilds adopted.
    pub refreshes: u64,
    /// Rebuilds that failed (a factorisation; the old state was kept).
    pub refresh_failures: u64,
    /// Samples dropped from a full window before they expired.
    pub window_dropped: u64,
}

/// The control thread's drift state. Allocated at create; nothing here allocates after.
pub(crate) struct DriftState {
    pub drift: Drift,
    /// Known once the scaler is (online).
    pub injection: Option<Injection>,
    pub window: Window,
    pub terms: Vec<DriftTerms>,
    /// The refresh job when it is home (None while the background thread has it, or
    /// before the ensemble is ready).
    pub job: Option<Box<RefreshJob>>,
    pub sent_seq: u64,
    pub reset: bool,
    /// Sequence number of the newest sample in the window.
    pub seq: u64,
    pub t_newest: f64,
    pub t_last_refresh: f64,
    pub counters: DriftCounters,
    weights: Vec<f64>,
    log_pred: Vec<f64>,
}

impl DriftState {
    /// For `capacity` samples, d inputs, p outputs, up to `k` components. **Allocates.**
    pub(crate) fn new(drift: Drift, capacity: usize, d: usize, p: usize, k: usize) -> Self {
        DriftState {
            drift,
            injection: None,
            window: Window::new(capacity, d, p, k),
            terms: vec![DriftTerms::default(); k],
            job: None,
            sent_seq: 0,
            reset: true,
            seq: 0,
            t_newest: f64::NEG_INFINITY,
            t_last_refresh: f64::NEG_INFINITY,
            counters: DriftCounters::default(),
            weights: vec![0.0; k],
            log_pred: vec![0.0; k],
        }
    }

    /// Keep a sample of the collecting phase (an offline sample) in the window.
    pub(crate) fn collect(&mut self, x: &[f64], y: &[f64], t: f64, noise: &[f64]) {
        self.seq += 1;
        self.t_newest = self.t_newest.max(t);
        if self.window.push(x, y, t, noise, &[], self.seq) {
            self.counters.window_dropped += 1;
        }
    }

    /// The ensemble is ready: its components hold the N offline samples at weight 1.
    pub(crate) fn start_online(
        &mut self,
        ensemble: &Ensemble,
        n_offline: usize,
        job: Box<RefreshJob>,
    ) {
        self.injection = Some(Injection::new(self.drift, &ensemble.scaler.y_scale));
        let k = ensemble.len();
        self.terms.truncate(k);
        self.terms.fill(DriftTerms::offline(n_offline));
        self.job = Some(job);
        self.reset = true;
    }

    /// Learn one sample on the control thread: discount (exponential), add at its age-0
    /// weight, keep it in the window, drop what expired from the window's front.
    pub(crate) fn fold(&mut self, e: &mut Ensemble, x: &[f64], y: &[f64], t: f64, noise: &[f64]) {
        let Some(inj) = self.injection else {
            return;
        };
        let lambda = inj.step_discount(t - self.t_newest);
        self.t_newest = self.t_newest.max(t);
        let ns = Injection::noise_std(noise, &e.scaler.y_scale);
        let k = e.len();
        for (w, c) in self.weights.iter_mut().zip(&e.components) {
            *w = inj.weight(c.s2, ns, 0.0).unwrap_or(1.0);
        }
        e.update_drift(x, y, &self.weights[..k], lambda, &mut self.log_pred[..k]);
        for i in 0..k {
            self.terms[i].discount(lambda);
            self.terms[i].add(self.weights[i], self.log_pred[i]);
        }
        self.seq += 1;
        if self
            .window
            .push(x, y, t, noise, &self.log_pred[..k], self.seq)
        {
            self.counters.window_dropped += 1;
        }
        self.prune(e);
    }

    /// Drop rows at the window's front that have expired for every component.
    fn prune(&mut self, e: &Ensemble) {
        let Some(inj) = self.injection else {
            return;
        };
        while self.window.len() > 1 {
            let row = self.window.get(0);
            let ns = Injection::noise_std(row.noise, &e.scaler.y_scale);
            let age = self.t_newest - row.t;
            if e.components
                .iter()
                .any(|c| inj.weight(c.s2, ns, age).is_some())
            {
                break;
            }
            self.window.pop_front();
        }
    }

    /// Whether a refresh is due (and the job is home).
    pub(crate) fn due(&self) -> bool {
        self.job.is_some()
            && (self.reset || self.t_newest - self.t_last_refresh >= self.drift.refresh_period_s())
    }

    /// Fill the job for sending; returns it (the caller sends it or gives it back with
    /// [`Self::unsent`]).
    pub(crate) fn take_job(&mut self) -> Option<Box<RefreshJob>> {
        let mut job = self.job.take()?;
        job.fill(&self.window, self.sent_seq, self.reset, self.t_newest);
        Some(job)
    }

    /// The job was handed over.
    pub(crate) fn sent(&mut self, seq_ref: u64) {
        self.sent_seq = seq_ref;
        self.reset = false;
        self.t_last_refresh = self.t_newest;
    }

    /// A rebuilt job came back: adopt it (if it succeeded) and keep the box.
    pub(crate) fn returned(&mut self, mut job: Box<RefreshJob>, e: Option<&mut Ensemble>) {
        match (e, self.injection) {
            (Some(e), Some(inj)) if job.ok && job.comps.len() == e.len() => {
                adopt(&mut job, e, &mut self.terms, &self.window, &inj);
                self.counters.refreshes += 1;
            }
            _ => {
                self.counters.refresh_failures += 1;
                // The mirror may now lag the window: rebuild it from scratch next time.
                self.reset = true;
            }
        }
        self.job = Some(job);
    }

    /// The evidence of every component for the online belief refit.
    pub(crate) fn evidence(&self, e: &Ensemble, n_offline: usize, out: &mut [f64]) {
        for ((o, t), c) in out.iter_mut().zip(&self.terms).zip(&e.components) {
            *o = t.evidence(c.offline_bound, n_offline);
        }
    }

    pub(crate) fn memory_bytes(&self) -> usize {
        self.window.memory_bytes() + self.job.as_ref().map_or(0, |j| j.memory_bytes())
    }
}
