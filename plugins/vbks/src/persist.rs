//! Save and load of a [`Vbks`] model's learned state, bit for bit.
//!
//! Format, little-endian: the magic `GPNVBKS1`, a `u32` format version (1), the resolved
//! configuration's `Debug` text (a state loads only into a model created with the same
//! config and dimensions), the phase, counters and fallback moments, then per phase:
//!
//! * collecting: the buffered samples;
//! * online: the scaler; per component its expression, log-parameters, Z, L_K, the
//!   statistics (Ã, r, c, t, n), the factor (L_B, γ) and L_i*; the weights; the belief's
//!   parameters and RNG state; the offline report; the queued and replay samples.
//!
//! Floats are written as IEEE bits, so a loaded model predicts exactly what the saved one
//! did and goes on learning identically (background refits aside, whose timing is not
//! deterministic). A model whose offline phase is running (or failed) cannot be saved:
//! save after it is online. Loading builds every part first and swaps them in only when the
//! whole state was read and checked, with a fresh background thread (so no reply of the
//! old one can reach the new state); on error the model is unchanged.

use gpn_gp_core::model::ModelError;

use crate::belief::Belief;
use crate::component::Component;
use crate::config::ValidConfig;
use crate::ensemble::Ensemble;
use crate::expr::Expr;
use crate::inject::{DriftCounters, DriftState, DriftTerms, Injection, Mirror, RefreshJob};
use crate::kernel::KernelSpec;
use crate::model::{Counters, Phase, SampleRing, Vbks};
use crate::offline::{Checkpoint, KernelReport, OfflineReport};
use crate::rng::Rng;
use crate::scaler::Scaler;
use crate::worker::{BeliefJob, Job, RefactorJob, Worker};

const MAGIC: &[u8; 8] = b"GPNVBKS1";
const FORMAT_VERSION: u32 = 1;

#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn usize(&mut self, v: usize) {
        self.u64(v as u64);
    }
    fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }
    fn f64s(&mut self, v: &[f64]) {
        self.usize(v.len());
        v.iter().for_each(|&x| self.f64(x));
    }
    fn u64s(&mut self, v: &[u64]) {
        self.usize(v.len());
        v.iter().for_each(|&x| self.u64(x));
    }
    fn str(&mut self, s: &str) {
        self.usize(s.len());
        self.0.extend_from_slice(s.as_bytes());
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

fn corrupt(what: &str) -> ModelError {
    ModelError::Other(format!("state is corrupt or truncated ({what})"))
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], ModelError> {
        let end = self.pos.checked_add(n).ok_or_else(|| corrupt(what))?;
        let s = self.bytes.get(self.pos..end).ok_or_else(|| corrupt(what))?;
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self, what: &str) -> Result<u8, ModelError> {
        Ok(self.take(1, what)?[0])
    }
    fn u32(&mut self, what: &str) -> Result<u32, ModelError> {
        let mut b = [0u8; 4];
        b.copy_from_slice(self.take(4, what)?);
        Ok(u32::from_le_bytes(b))
    }
    fn u64(&mut self, what: &str) -> Result<u64, ModelError> {
        let mut b = [0u8; 8];
        b.copy_from_slice(self.take(8, what)?);
        Ok(u64::from_le_bytes(b))
    }
    fn usize(&mut self, what: &str) -> Result<usize, ModelError> {
        usize::try_from(self.u64(what)?).map_err(|_| corrupt(what))
    }
    fn f64(&mut self, what: &str) -> Result<f64, ModelError> {
        Ok(f64::from_bits(self.u64(what)?))
    }
    fn len(&mut self, what: &str, elem: usize) -> Result<usize, ModelError> {
        let n = self.usize(what)?;
        // A length cannot exceed what is left (guards absurd allocations).
        if n.saturating_mul(elem) > self.bytes.len() - self.pos {
            return Err(corrupt(what));
        }
        Ok(n)
    }
    fn f64s(&mut self, what: &str) -> Result<Vec<f64>, ModelError> {
        let n = self.len(what, 8)?;
        (0..n).map(|_| self.f64(what)).collect()
    }
    fn f64s_exact(&mut self, what: &str, n: usize) -> Result<Vec<f64>, ModelError> {
        let v = self.f64s(what)?;
        if v.len() == n {
            Ok(v)
        } else {
            Err(corrupt(what))
        }
    }
    fn u64s(&mut self, what: &str) -> Result<Vec<u64>, ModelError> {
        let n = self.len(what, 8)?;
        (0..n).map(|_| self.u64(what)).collect()
    }
    fn str(&mut self, what: &str) -> Result<String, ModelError> {
        let n = self.len(what, 1)?;
        String::from_utf8(self.take(n, what)?.to_vec()).map_err(|_| corrupt(what))
    }
    /// Errors if anything follows the state.
    fn expect_end(&self) -> Result<(), ModelError> {
        if self.pos == self.bytes.len() {
            Ok(())
        } else {
            Err(corrupt("trailing bytes"))
        }
    }
}

fn write_ring(w: &mut Writer, ring: &SampleRing) {
    w.usize(ring.len());
    for k in 0..ring.len() {
        let (x, y, weight, seq) = ring.get(k);
        x.iter().for_each(|&v| w.f64(v));
        y.iter().for_each(|&v| w.f64(v));
        w.f64(weight);
        w.u64(seq);
        ring.extra(k).iter().for_each(|&v| w.f64(v));
    }
}

/// The configuration text a state is tied to. Without drift it is the text of the
/// pre-drift format (the drift fields, last in the struct, left out), so states saved
/// before the `drift` key existed still load.
fn config_text(cfg: &ValidConfig) -> String {
    // The warm-up is not part of the saved state (a loaded model builds its own), so its
    // key does not tie a state to a configuration, and states saved before it load.
    let mut text =
        format!("{cfg:?}").replace(&format!("warmup_samples: {}, ", cfg.warmup_samples), "");
    // States saved before `center_targets` existed centred their targets: they match the
    // default, and only the non-default ties a state to the key.
    if cfg.center_targets {
        text = text.replace("center_targets: true, ", "");
    }
    if cfg.drift.is_none() {
        let tail = format!(", drift: None, drift_window: {} }}", cfg.drift_window);
        if let Some(head) = text.strip_suffix(&tail) {
            return format!("{head} }}");
        }
    }
    text
}

/// The drift section (after the rings, only with a `drift` key): the window's rows, the
/// per-component drift terms and the clocks.
fn write_drift(w: &mut Writer, ds: &DriftState) {
    w.usize(ds.window.len());
    for i in 0..ds.window.len() {
        let (row, seq) = ds.window.raw(i);
        row.iter().for_each(|&v| w.f64(v));
        w.u64(seq);
    }
    w.usize(ds.terms.len());
    for t in &ds.terms {
        for v in [t.count, t.sum_ln_w, t.prequential, t.offline_weight] {
            w.f64(v);
        }
    }
    w.u64(ds.seq);
    w.f64(ds.t_newest);
    w.f64(ds.t_last_refresh);
    let c = &ds.counters;
    for v in [c.refreshes, c.refresh_failures, c.window_dropped] {
        w.u64(v);
    }
}

fn read_drift(r: &mut Reader<'_>, ds: &mut DriftState) -> Result<(), ModelError> {
    let stride = ds.window.stride();
    let n = r.len("drift window", 8 * (stride + 1))?;
    if n > ds.window.capacity() {
        return Err(corrupt("drift window"));
    }
    ds.window.clear();
    let mut row = vec![0.0; stride];
    let (d, p) = (ds.window.d(), ds.window.p());
    for _ in 0..n {
        for v in row.iter_mut() {
            *v = r.f64("drift row")?;
        }
        let seq = r.u64("drift seq")?;
        ds.window.push(
            &row[..d],
            &row[d..d + p],
            row[d + p],
            &row[d + p + 1..d + 2 * p + 1],
            &row[d + 2 * p + 1..],
            seq,
        );
    }
    let k = r.len("drift terms", 32)?;
    if k > ds.window.k() {
        return Err(corrupt("drift terms"));
    }
    ds.terms.clear();
    for _ in 0..k {
        ds.terms.push(DriftTerms {
            count: r.f64("drift terms")?,
            sum_ln_w: r.f64("drift terms")?,
            prequential: r.f64("drift terms")?,
            offline_weight: r.f64("drift terms")?,
        });
    }
    ds.seq = r.u64("drift seq")?;
    ds.t_newest = r.f64("drift clock")?;
    ds.t_last_refresh = r.f64("drift clock")?;
    ds.counters = DriftCounters {
        refreshes: r.u64("drift counters")?,
        refresh_failures: r.u64("drift counters")?,
        window_dropped: r.u64("drift counters")?,
    };
    Ok(())
}

fn read_ring(
    r: &mut Reader<'_>,
    ring: &mut SampleRing,
    d: usize,
    p: usize,
) -> Result<(), ModelError> {
    let n = r.len("ring", 8 * (d + p + 2 + ring.n_extra()))?;
    let mut ext = vec![0.0; ring.n_extra()];
    let mut x = vec![0.0; d];
    let mut y = vec![0.0; p];
    for _ in 0..n {
        for v in x.iter_mut() {
            *v = r.f64("ring x")?;
        }
        for v in y.iter_mut() {
            *v = r.f64("ring y")?;
        }
        let weight = r.f64("ring w")?;
        let seq = r.u64("ring seq")?;
        for v in ext.iter_mut() {
            *v = r.f64("ring extra")?;
        }
        ring.push_ext(&x, &y, weight, seq, &ext);
    }
    Ok(())
}

/// Serialise the learned state. **Allocates.**
pub(crate) fn save(model: &Vbks) -> Result<Vec<u8>, ModelError> {
    let mut w = Writer::default();
    w.0.extend_from_slice(MAGIC);
    w.u32(FORMAT_VERSION);
    w.str(&config_text(&model.cfg));
    let phase = phase_code(&model.phase)?;
    w.u8(phase);
    write_common(&mut w, model);
    if phase == 0 {
        w.f64s(&model.buf_x);
        w.f64s(&model.buf_y);
        if let Some(ds) = model.drift.as_deref() {
            write_drift(&mut w, ds);
        }
        return Ok(w.0);
    }
    let (Some(e), Some(report)) = (model.ensemble.as_deref(), model.report.as_deref()) else {
        return Err(ModelError::Other("save: online without an ensemble".into()));
    };
    write_ensemble(&mut w, e);
    write_belief(&mut w, model);
    write_report(&mut w, report);
    w.u64s(&model.since_refactor);
    w.u64(model.since_belief);
    write_ring(&mut w, &model.pending);
    write_ring(&mut w, &model.replay);
    if let Some(ds) = model.drift.as_deref() {
        write_drift(&mut w, ds);
    }
    Ok(w.0)
}

/// The saved phase byte (0 collecting, 2 online); the phases without a learned state to
/// save are errors.
fn phase_code(phase: &Phase) -> Result<u8, ModelError> {
    match phase {
        Phase::Collecting => Ok(0u8),
        Phase::Online => Ok(2u8),
        Phase::Offline => Err(ModelError::Other(
            "save: the offline phase is running in the background; save once the model is online"
                .into(),
        )),
        Phase::Failed => Err(ModelError::Other(
            "save: the offline phase failed; there is no learned state".into(),
        )),
    }
}

/// The part of every phase: samples seen, clock, fallback moments, noise, counters.
fn write_common(w: &mut Writer, model: &Vbks) {
    w.u64(model.samples_seen);
    w.f64(model.last_t_secs);
    w.u64(model.fb_n);
    w.f64s(&model.fb_mean);
    w.f64s(&model.fb_m2);
    w.f64s(&model.last_noise_var);
    let c = &model.counters;
    for v in [
        c.pending_dropped,
        c.belief_refits,
        c.refactors,
        c.refactors_stale,
        c.online_samples,
    ] {
        w.u64(v);
    }
}

/// The scaler, every component and the weights.
fn write_ensemble(w: &mut Writer, e: &Ensemble) {
    let s = &e.scaler;
    for v in [&s.x_mean, &s.x_scale, &s.y_mean, &s.y_scale] {
        w.f64s(v);
    }
    w.usize(e.components.len());
    for comp in &e.components {
        w.str(&comp.spec.expr().to_string());
        w.f64s(&comp.psi);
        w.f64s(&comp.z);
        w.f64s(&comp.lk);
        w.f64s(&comp.stats.a);
        w.f64s(&comp.stats.r);
        w.f64s(&comp.stats.c);
        w.f64(comp.stats.t);
        w.f64(comp.stats.n);
        w.f64s(&comp.factor.lb);
        w.f64s(&comp.factor.gamma);
        w.f64(comp.offline_bound);
        w.f64(comp.prequential);
    }
    w.f64s(&e.weights);
}

/// The belief's parameters and the RNG state (of the belief job in flight, else the one a
/// new job would start from).
fn write_belief(w: &mut Writer, model: &Vbks) {
    w.f64s(&model.belief_theta);
    let rng = match &model.belief_job {
        Some(job) => job.rng.clone(),
        None => Rng::new(model.cfg.seed ^ model.samples_seen),
    };
    let (state, spare) = rng.state();
    w.u64s(&state);
    w.u8(u8::from(spare.is_some()));
    w.f64(spare.unwrap_or(0.0));
}

/// The offline report.
fn write_report(w: &mut Writer, report: &OfflineReport) {
    w.usize(report.kernels.len());
    for k in &report.kernels {
        w.str(&k.expr);
        w.f64(k.bound);
        w.f64(k.weight);
        w.f64s(&k.psi);
        w.usize(k.failed_steps);
    }
    w.usize(report.trajectory.len());
    for t in &report.trajectory {
        w.usize(t.samples);
        w.f64s(&t.weights);
    }
    w.u64s(&report.kept.iter().map(|&i| i as u64).collect::<Vec<_>>());
    w.f64s(&report.kept_weights);
    w.f64(report.seconds);
    w.usize(report.samples);
}

/// Replace the state of `model` with `bytes` from [`save`].
pub(crate) fn load(model: &mut Vbks, bytes: &[u8]) -> Result<(), ModelError> {
    let cfg = model.cfg.clone();
    let mut r = Reader { bytes, pos: 0 };
    read_header(&mut r, &cfg)?;
    let phase = r.u8("phase")?;
    let common = read_common(&mut r, cfg.output_dim)?;
    let mut fresh = FreshParts::new(&cfg)?;
    match phase {
        0 => {
            let (buf_x, buf_y) = read_collecting(&mut r, &cfg, fresh.drift.as_deref_mut())?;
            install_collecting(model, &cfg, &buf_x, &buf_y);
        }
        2 => {
            let saved = read_online(&mut r, &cfg, &mut fresh, model.since_refactor.len())?;
            let online = start_online(&cfg, saved, &common.last_noise_var, &mut fresh)?;
            install_online(model, online);
        }
        _ => return Err(corrupt("phase")),
    }
    common.install(model);
    fresh.install(model);
    Ok(())
}

/// Magic, format version and the saving model's configuration, which must be this one's.
fn read_header(r: &mut Reader<'_>, cfg: &ValidConfig) -> Result<(), ModelError> {
    if r.take(8, "magic").ok() != Some(MAGIC.as_slice()) {
        return Err(ModelError::Other("not a vbks state (bad magic)".into()));
    }
    let version = r.u32("version")?;
    if version != FORMAT_VERSION {
        return Err(ModelError::Other(format!(
            "state format version {version}, this plugin reads {FORMAT_VERSION}"
        )));
    }
    if r.str("config")? != config_text(cfg) {
        return Err(ModelError::Other(
            "the state was saved by a model with another configuration or dimensions".into(),
        ));
    }
    Ok(())
}

/// The fields saved in every phase, before the phase's own.
struct Common {
    samples_seen: u64,
    last_t_secs: f64,
    fb_n: u64,
    fb_mean: Vec<f64>,
    fb_m2: Vec<f64>,
    last_noise_var: Vec<f64>,
    counters: Counters,
}

fn read_common(r: &mut Reader<'_>, p: usize) -> Result<Common, ModelError> {
    Ok(Common {
        samples_seen: r.u64("samples_seen")?,
        last_t_secs: r.f64("t")?,
        fb_n: r.u64("fallback n")?,
        fb_mean: r.f64s_exact("fallback mean", p)?,
        fb_m2: r.f64s_exact("fallback m2", p)?,
        last_noise_var: r.f64s_exact("noise_var", p)?,
        counters: Counters {
            pending_dropped: r.u64("counters")?,
            belief_refits: r.u64("counters")?,
            refactors: r.u64("counters")?,
            refactors_stale: r.u64("counters")?,
            online_samples: r.u64("counters")?,
        },
    })
}

impl Common {
    fn install(self, model: &mut Vbks) {
        model.samples_seen = self.samples_seen;
        model.last_t_secs = self.last_t_secs;
        model.fb_n = self.fb_n;
        model.fb_mean = self.fb_mean;
        model.fb_m2 = self.fb_m2;
        model.last_noise_var = self.last_noise_var;
        model.counters = self.counters;
    }
}

/// What a load replaces in every phase besides the saved fields: a new background thread
/// (so no reply of the old one reaches the new state), and the rings and drift state,
/// created empty and filled from the state.
struct FreshParts {
    worker: Worker,
    warmup: crate::model::Warmup,
    pending: SampleRing,
    replay: SampleRing,
    drift: Option<Box<DriftState>>,
}

impl FreshParts {
    fn new(cfg: &ValidConfig) -> Result<Self, ModelError> {
        let (d, p) = (cfg.input_dim, cfg.output_dim);
        let worker = Worker::spawn(cfg.clone(), cfg.keep + 4)
            .map_err(|e| ModelError::Other(format!("cannot start the background thread: {e}")))?;
        let pending = SampleRing::with_extra(
            cfg.pending_capacity,
            d,
            p,
            if cfg.drift.is_some() { 1 + p } else { 0 },
        );
        let drift = cfg
            .drift
            .map(|dr| Box::new(DriftState::new(dr, cfg.drift_window, d, p, cfg.keep)));
        let replay = SampleRing::new(
            if cfg.forgetting < 1.0 {
                cfg.replay_capacity
            } else {
                0
            },
            d,
            p,
        );
        Ok(Self {
            worker,
            warmup: crate::model::Warmup::new(cfg),
            pending,
            replay,
            drift,
        })
    }

    /// A loaded model starts without a warm-up model (the old thread's is gone); one in
    /// the collecting phase builds it again once it has the samples.
    fn install(self, model: &mut Vbks) {
        model.warmup = self.warmup;
        if model.phase != crate::model::Phase::Collecting {
            model.warmup.job = None;
        }
        model.pending = self.pending;
        model.replay = self.replay;
        model.drift = self.drift;
        model.failure = None;
        model.failure_reported = false;
        model.worker = self.worker;
    }
}

/// The collecting phase: the buffered samples and the drift section; nothing may follow.
fn read_collecting(
    r: &mut Reader<'_>,
    cfg: &ValidConfig,
    drift: Option<&mut DriftState>,
) -> Result<(Vec<f64>, Vec<f64>), ModelError> {
    let (d, p) = (cfg.input_dim, cfg.output_dim);
    let buf_x = r.f64s("buffered x")?;
    let buf_y = r.f64s("buffered y")?;
    if buf_x.len() % d != 0 || buf_y.len() != buf_x.len() / d * p {
        return Err(corrupt("buffered samples"));
    }
    if let Some(ds) = drift {
        read_drift(r, ds)?;
    }
    r.expect_end()?;
    Ok((buf_x, buf_y))
}

/// Puts `model` in the collecting phase with these buffered samples, in buffers sized for
/// the whole offline phase.
fn install_collecting(model: &mut Vbks, cfg: &ValidConfig, buf_x: &[f64], buf_y: &[f64]) {
    let mut bx = Vec::with_capacity(cfg.offline_samples * cfg.input_dim);
    bx.extend_from_slice(buf_x);
    let mut by = Vec::with_capacity(cfg.offline_samples * cfg.output_dim);
    by.extend_from_slice(buf_y);
    model.buf_x = bx;
    model.buf_y = by;
    model.phase = Phase::Collecting;
    model.ensemble = None;
    model.report = None;
    model.belief_job = None;
    model.belief_theta.clear();
    model.refactor_jobs.clear();
}

/// The online phase as saved, read and checked, before the model is rebuilt from it.
struct SavedOnline {
    scaler: Scaler,
    components: Vec<Component>,
    weights: Vec<f64>,
    theta: Vec<f64>,
    rng: Rng,
    report: OfflineReport,
    since_refactor: Vec<u64>,
    since_belief: u64,
}

/// The online phase: scaler, components, weights, belief and its RNG, the offline report,
/// the refit clocks, then the rings and drift section into `fresh`; nothing may follow.
fn read_online(
    r: &mut Reader<'_>,
    cfg: &ValidConfig,
    fresh: &mut FreshParts,
    n_since_refactor: usize,
) -> Result<SavedOnline, ModelError> {
    let (d, p) = (cfg.input_dim, cfg.output_dim);
    let scaler = Scaler {
        x_mean: r.f64s_exact("scaler", d)?,
        x_scale: r.f64s_exact("scaler", d)?,
        y_mean: r.f64s_exact("scaler", p)?,
        y_scale: r.f64s_exact("scaler", p)?,
    };
    let k = r.len("components", 8)?;
    let mut components = Vec::with_capacity(k);
    for _ in 0..k {
        components.push(read_component(r, cfg)?);
    }
    let weights = r.f64s_exact("weights", k)?;
    let theta = r.f64s("belief")?;
    let rng = read_rng(r)?;
    let report = read_report(r, cfg, k)?;
    let since_refactor = r.u64s("since_refactor")?;
    if since_refactor.len() != n_since_refactor {
        return Err(corrupt("since_refactor"));
    }
    let since_belief = r.u64("since_belief")?;
    read_ring(r, &mut fresh.pending, d, p)?;
    read_ring(r, &mut fresh.replay, d, p)?;
    if let Some(ds) = fresh.drift.as_deref_mut() {
        read_drift(r, ds)?;
        if ds.terms.len() != k {
            return Err(corrupt("drift terms"));
        }
    }
    r.expect_end()?;
    Ok(SavedOnline {
        scaler,
        components,
        weights,
        theta,
        rng,
        report,
        since_refactor,
        since_belief,
    })
}

/// One component: its kernel expression (compiled against this config), log-parameters,
/// inducing inputs Z, L_K, statistics, factor and scores.
fn read_component(r: &mut Reader<'_>, cfg: &ValidConfig) -> Result<Component, ModelError> {
    let (d, p) = (cfg.input_dim, cfg.output_dim);
    let expr = Expr::parse(&r.str("kernel")?).map_err(|e| corrupt(&e))?;
    let spec = KernelSpec::compile(&expr, d, &|b| cfg.base_dims.of(b)).map_err(|e| corrupt(&e))?;
    let psi = r.f64s_exact("psi", spec.n_params() + 1)?;
    let z = r.f64s("z")?;
    let m = z.len() / d;
    if m == 0 || z.len() != m * d {
        return Err(corrupt("z"));
    }
    let lk = r.f64s_exact("lk", m * m)?;
    let mut comp = Component::new(spec, psi, z, lk, p).map_err(|e| corrupt(&e.0))?;
    comp.stats.a = r.f64s_exact("stats a", m * m)?;
    comp.stats.r = r.f64s_exact("stats r", m * p)?;
    comp.stats.c = r.f64s_exact("stats c", p)?;
    comp.stats.t = r.f64("stats t")?;
    comp.stats.n = r.f64("stats n")?;
    comp.factor.lb = r.f64s_exact("factor", m * m)?;
    comp.factor.gamma = r.f64s_exact("gamma", m * p)?;
    comp.offline_bound = r.f64("bound")?;
    comp.prequential = r.f64("prequential")?;
    Ok(comp)
}

/// The belief's generator: four state words and the cached normal, if any.
fn read_rng(r: &mut Reader<'_>) -> Result<Rng, ModelError> {
    let state_words = r.u64s("rng")?;
    let has_spare = r.u8("rng")? != 0;
    let spare = r.f64("rng")?;
    let state: [u64; 4] = state_words.try_into().map_err(|_| corrupt("rng state"))?;
    Ok(Rng::from_state(state, has_spare.then_some(spare)))
}

/// The offline report of a model with `k` kept kernels.
fn read_report(
    r: &mut Reader<'_>,
    cfg: &ValidConfig,
    k: usize,
) -> Result<OfflineReport, ModelError> {
    let nk = r.len("report", 8)?;
    let mut kernels = Vec::with_capacity(nk);
    for _ in 0..nk {
        kernels.push(KernelReport {
            expr: r.str("report kernel")?,
            bound: r.f64("report bound")?,
            weight: r.f64("report weight")?,
            psi: r.f64s("report psi")?,
            failed_steps: r.usize("report failed")?,
        });
    }
    let nt = r.len("trajectory", 8)?;
    let mut trajectory = Vec::with_capacity(nt);
    for _ in 0..nt {
        trajectory.push(Checkpoint {
            samples: r.usize("trajectory")?,
            weights: r.f64s("trajectory")?,
        });
    }
    let kept: Vec<usize> = r
        .u64s("kept")?
        .into_iter()
        .map(|i| usize::try_from(i).map_err(|_| corrupt("kept")))
        .collect::<Result<_, _>>()?;
    if kept.len() != k || kept.iter().any(|&i| i >= cfg.kernels.len()) {
        return Err(corrupt("kept"));
    }
    Ok(OfflineReport {
        kernels,
        trajectory,
        kept,
        kept_weights: r.f64s_exact("kept weights", k)?,
        seconds: r.f64("seconds")?,
        samples: r.usize("samples")?,
    })
}

/// The online phase rebuilt from its saved parts, ready to be installed.
struct OnlineState {
    ensemble: Ensemble,
    saved_report: OfflineReport,
    belief_theta: Vec<f64>,
    belief_job: BeliefJob,
    refactor_jobs: Vec<Option<Box<RefactorJob>>>,
    since_refactor: Vec<u64>,
    since_belief: u64,
}

/// Rebuilds the belief, the background jobs and the ensemble, and (with drift) hands the
/// new worker its mirror. The model is not touched, so an error here leaves it unchanged.
fn start_online(
    cfg: &ValidConfig,
    saved: SavedOnline,
    last_noise_var: &[f64],
    fresh: &mut FreshParts,
) -> Result<OnlineState, ModelError> {
    let p = cfg.output_dim;
    let k = saved.components.len();
    let mu0: Vec<f64> = saved
        .report
        .kept
        .iter()
        .map(|&i| cfg.prior_mean[i])
        .collect();
    let mut belief = Belief::prior(mu0, &cfg.belief);
    if !belief.set_theta(&saved.theta) {
        return Err(corrupt("belief parameters"));
    }
    let m = saved.components[0].m();
    let refactor_jobs = (0..k)
        .map(|i| Some(Box::new(RefactorJob::new(i, m, p))))
        .collect();
    let belief_job = BeliefJob {
        belief,
        ell: vec![0.0; k],
        weights: saved.weights.clone(),
        rng: saved.rng,
    };
    let mut ensemble = Ensemble::new(saved.scaler, saved.components, saved.weights);
    ensemble.add_excess_noise = cfg.add_excess_noise;
    ensemble.host_noise.copy_from_slice(last_noise_var);
    if let Some(ds) = fresh.drift.as_deref_mut() {
        start_drift_refresh(cfg, ds, &ensemble, &fresh.worker, m)?;
    }
    Ok(OnlineState {
        ensemble,
        saved_report: saved.report,
        belief_theta: saved.theta,
        belief_job,
        refactor_jobs,
        since_refactor: saved.since_refactor,
        since_belief: saved.since_belief,
    })
}

/// Sets up the drift refresh for `ensemble` (m inducing points per component); the new
/// worker rebuilds its mirror from the whole window (reset).
fn start_drift_refresh(
    cfg: &ValidConfig,
    ds: &mut DriftState,
    ensemble: &Ensemble,
    worker: &Worker,
    m: usize,
) -> Result<(), ModelError> {
    let (d, p, k) = (cfg.input_dim, cfg.output_dim, ensemble.components.len());
    let inj = Injection::new(ds.drift, &ensemble.scaler.y_scale);
    ds.injection = Some(inj);
    ds.job = Some(Box::new(RefreshJob::new(
        cfg.drift_window,
        d,
        p,
        cfg.keep,
        k,
        m,
    )));
    ds.reset = true;
    if worker
        .try_send(Job::Mirror(Box::new(Mirror::new(inj, ensemble))))
        .is_err()
    {
        return Err(ModelError::Other(
            "load: cannot hand the drift mirror to the background thread".into(),
        ));
    }
    Ok(())
}

fn install_online(model: &mut Vbks, online: OnlineState) {
    model.refactor_jobs = online.refactor_jobs;
    model.belief_theta = online.belief_theta;
    model.belief_job = Some(Box::new(online.belief_job));
    model.ensemble = Some(Box::new(online.ensemble));
    model.report = Some(Box::new(online.saved_report));
    model.since_refactor = online.since_refactor;
    model.since_belief = online.since_belief;
    model.buf_x = Vec::new();
    model.buf_y = Vec::new();
    model.phase = Phase::Online;
}
