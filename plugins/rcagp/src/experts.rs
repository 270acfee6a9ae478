//! `layout: experts`: RCaGP's robust weights (spec §1.2, A1, A2) on SkyGP's local experts
//! instead of the computation-aware block window (ADR 0018).
//!
//! Why: on a robot stream a GP over one window of recent samples stays 7–18 % behind local
//! experts even without robustness (`docs/results/models-in-the-loop.md`, item 3): the
//! experts keep the whole workspace and follow a friction step where one stationary kernel
//! over the window smears it. The weights are what makes RCaGP robust, and they need only a
//! per-sample noise and an adjusted target, which any exact GP takes.
//!
//! Each sample (x, y) of `update`, per output o, before it is learned:
//!
//! * centre γ_o: the prior mean m_o (`weight_center: prior`, the paper and the default) or
//!   the experts' prediction μ_o(x) (`predictive`);
//! * t_o = y_o − γ_o; threshold c_o² = ĉ_o² + s_o²(x), with ĉ_o = max(Q_{1−ε}(|t_o|) over the
//!   last `threshold_window` samples, `c_floor_sigmas`·σ_o, `c_min`), refreshed every
//!   `threshold_refresh_samples`, and s_o²(x) the prediction's latent variance (predictive
//!   centre only; 0 for the prior centre);
//! * the weight quantities of [`crate::weights::point`] with β² = σ_o²/2: the experts
//!   learn the target y_o − σ_o² h_o with the noise variance d_o = σ_o²(1 + u_o²/c_o²).
//!
//! So an outlier's noise grows with (|t| − c)² (`flat_imq`, the default here: a sample
//! inside the threshold is learned exactly as SkyGP learns it) or t² (the paper's IMQ),
//! which bounds its influence. The experts are SkyGP-Dense unless `experts` says otherwise. SkyGP keeps a noise
//! variance per stored sample only with uncertainty injection on, so without a `drift` key
//! the layout gives its experts a drift that adds no variance (`NO_GROWTH`).
//!
//! Warm-up: the thresholds are a quantile of the samples seen, and the experts keep a sample
//! for as long as they have room, so a sample weighted against the few seen before it keeps
//! that weight long after (with 10 % outliers, a 500-sample stream ended 1.7× worse than
//! with the warm-up below; `docs/results/models-in-the-loop.md`). For the first W =
//! min(`threshold_refresh_samples`, `threshold_window`) samples the thresholds are
//! provisional, refreshed at every sample over those seen, and each sample is learned at
//! once (so nothing lags) and kept in a reserved ring. The update that brings the W-th
//! sample, when the first full thresholds exist, relearns those W samples in their order
//! with them in a new SkyGP model that replaces the provisional one.
//!
//! Real-time: `predict` and `update` allocate nothing, take no lock and do no I/O (the
//! threshold refresh is a selection in a reserved buffer, O(p · threshold_window)), except
//! the one `update` that ends the warm-up: it builds the new model (allocates) and costs W
//! of SkyGP's updates. In the node that update runs in the fit worker, which warms a new
//! model on the replay buffer (`learn.fit_samples`, 1000 by default) before the control
//! thread gets it.

use gpn_gp_core::model::{ModelError, ModelStats, OnlineModel, Readiness, check_sample};
use gpn_gp_core::state_codec::{StateReader, StateWriter};
use gpn_plugin_api::Plugin;
use gpn_skygp_model::SkyGp;

use crate::config::{Config, NoiseSource, WINDOW_ONLY, WeightCenter};
use crate::weights::{self, Beta, WeightProfile};

/// The drift SkyGP's experts get when the configuration has none: it adds no variance
/// (`q_per_s: 0`), so SkyGP keeps each sample's noise and updates a Dense replacement's
/// factor row in O(N̄²) as without drift, and starts no refresh thread (`refresh_hz` is
/// unused; kept so that the configuration, and so the saved state, stays as it is).
const NO_GROWTH: &str = r#"{"model": "linear", "q_per_s": 0, "refresh_hz": 1.1574074074074073e-5}"#;

/// Starts a `layout: experts` state.
pub(crate) const MAGIC: &[u8; 8] = b"GPNRCAEX";
/// 2 adds the warm-up's samples; 1 (before the warm-up) is read as none kept.
const FORMAT_VERSION: u32 = 2;

/// The resolved settings of the layout.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpertsSettings {
    /// Input dimension d.
    pub input_dim: usize,
    /// Output dimension p.
    pub output_dim: usize,
    /// ε of the soft threshold.
    pub epsilon: f64,
    /// Floor of ĉ in units of the sample's noise σ.
    pub c_floor_sigmas: f64,
    /// Absolute floor of ĉ.
    pub c_min: f64,
    /// Centre of the weights.
    pub weight_center: WeightCenter,
    /// Shape of w².
    pub weight_profile: WeightProfile,
    /// Prior mean per output.
    pub prior_mean: Vec<f64>,
    /// Which noise variance a sample has before weighting.
    pub noise: NoiseSource,
    /// Samples whose |t| the threshold is the quantile of.
    pub threshold_window: usize,
    /// Samples between threshold refreshes.
    pub threshold_refresh_samples: usize,
    /// The experts' configuration (SkyGP keys, with `hyper` and `drift` filled in).
    pub experts: gpn_skygp_model::Config,
}

/// Keys of the block window that mean nothing to this layout (refused if set).
/// The keys of `raw` that belong to layout window, in the schema's order.
fn window_only_keys(raw: &serde_json::Value) -> Vec<&'static str> {
    WINDOW_ONLY
        .iter()
        .copied()
        .filter(|k| raw.get(k).is_some())
        .collect()
}

fn bad(msg: String) -> ModelError {
    ModelError::Config(format!("rcagp: {msg}"))
}

impl ExpertsSettings {
    /// Resolves the `experts` layout's keys of `c` (parsed from `raw`) for d inputs and p
    /// outputs.
    pub fn resolve(
        raw: &serde_json::Value,
        c: &Config,
        d: usize,
        p: usize,
    ) -> Result<Self, ModelError> {
        let refused = window_only_keys(raw);
        if !refused.is_empty() {
            return Err(bad(format!(
                "{} belong to layout \"window\" and mean nothing to layout \"experts\" \
                 (the default); set layout: window to use them",
                refused.join(", ")
            )));
        }
        if c.kernel.as_deref().is_some_and(|k| k != "se" && k != "rbf") {
            return Err(bad(
                "layout \"experts\" has SE experts: kernel must be se (or rbf)".into(),
            ));
        }
        let mut experts = c.experts.clone().unwrap_or_default();
        // SkyGP-Dense, the node's default model: the comparison the layout is made for.
        experts
            .variant
            .get_or_insert(gpn_skygp_model::config::Variant::Dense);
        if experts.hyper.is_some() || experts.drift.is_some() {
            return Err(bad(
                "experts.hyper and experts.drift are set by the top-level hyper and drift keys"
                    .into(),
            ));
        }
        let hyper = raw
            .get("hyper")
            .ok_or_else(|| bad("hyper is required".into()))?;
        // The rcagp and skygp hyper keys are the same shared format; skygp checks it.
        experts.hyper =
            Some(serde_json::from_value(hyper.clone()).map_err(|e| bad(format!("hyper: {e}")))?);
        experts.drift = Some(match &c.drift {
            Some(v) if !v.is_null() => v.clone(),
            _ => serde_json::from_str(NO_GROWTH).expect("constant JSON"),
        });
        let prior_mean = match &c.prior_mean {
            None => vec![0.0; p],
            Some(crate::config::PriorMean::Shared(m)) => vec![*m; p],
            Some(crate::config::PriorMean::PerOutput(v)) if v.len() == p => v.clone(),
            Some(crate::config::PriorMean::PerOutput(v)) => {
                return Err(bad(format!(
                    "prior_mean has {} values, expected output_dim = {p}",
                    v.len()
                )));
            }
        };
        if prior_mean.iter().any(|m| !m.is_finite()) {
            return Err(bad("prior_mean must be finite".into()));
        }
        let s = Self {
            input_dim: d,
            output_dim: p,
            epsilon: c.epsilon.unwrap_or(0.15),
            c_floor_sigmas: c.c_floor_sigmas.unwrap_or(3.0),
            c_min: c.c_min.unwrap_or(1e-6),
            weight_center: c.weight_center.unwrap_or(WeightCenter::Prior),
            weight_profile: c.weight_profile.unwrap_or(WeightProfile::FlatImq),
            prior_mean,
            noise: c.noise.unwrap_or(NoiseSource::Sample),
            threshold_window: c.threshold_window.unwrap_or(1024),
            threshold_refresh_samples: c.threshold_refresh_samples.unwrap_or(64),
            experts,
        };
        if !(s.epsilon > 0.0 && s.epsilon < 1.0) {
            return Err(bad(format!(
                "epsilon must be in (0, 1), found {}",
                s.epsilon
            )));
        }
        for (key, v) in [("c_floor_sigmas", s.c_floor_sigmas), ("c_min", s.c_min)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(bad(format!("{key} must be finite and ≥ 0, found {v}")));
            }
        }
        if s.c_floor_sigmas == 0.0 && s.c_min == 0.0 {
            return Err(bad("c_min and c_floor_sigmas must not both be 0".into()));
        }
        if !(8..=1 << 16).contains(&s.threshold_window) {
            return Err(bad(format!(
                "threshold_window must be in 8..=65536, found {}",
                s.threshold_window
            )));
        }
        if s.threshold_refresh_samples == 0 {
            return Err(bad("threshold_refresh_samples must be ≥ 1".into()));
        }
        Ok(s)
    }
}

/// The last prediction, the weight centre of an `update` at the same input.
#[derive(Debug, Clone)]
struct LastPrediction {
    x: Vec<f64>,
    mean: Vec<f64>,
    var: Vec<f64>,
    valid: bool,
}

/// RCaGP's weights on SkyGP's local experts. See the module doc.
pub struct RobustExperts {
    cfg: ExpertsSettings,
    inner: SkyGp,
    /// σ_n,o² of the hyperparameters (the `noise: hyper` source).
    hyper_noise: Vec<f64>,
    /// |t_o| of the last `threshold_window` samples, `abs_t[o·W + s]`, a ring at `pos`.
    abs_t: Vec<f64>,
    filled: usize,
    pos: usize,
    since_refresh: usize,
    /// ĉ_o; +∞ before the first sample, provisional during the warm-up (module doc).
    c: Vec<f64>,
    /// The floor of ĉ_o from the last sample's σ_o.
    floor: Vec<f64>,
    scratch: Vec<f64>,
    last: LastPrediction,
    center: Vec<f64>,
    center_var: Vec<f64>,
    y_adj: Vec<f64>,
    noise: Vec<f64>,
    /// Samples with at least one output's weight below full.
    down_weighted: u64,
    /// The warm-up's samples (module doc): rows [x, y, noise_var, t_secs].
    held: HeldSamples,
}

/// A FIFO ring of whole samples in reserved storage.
#[derive(Debug, Clone, PartialEq)]
struct HeldSamples {
    rows: Vec<f64>,
    /// d + 2p + 1.
    width: usize,
    head: usize,
    len: usize,
}

impl HeldSamples {
    fn new(capacity: usize, width: usize) -> Self {
        Self {
            rows: vec![0.0; capacity * width],
            width,
            head: 0,
            len: 0,
        }
    }

    fn capacity(&self) -> usize {
        self.rows.len() / self.width
    }

    /// Appends [x, y, noise_var, t]; the caller keeps `len < capacity`.
    fn push(&mut self, x: &[f64], y: &[f64], noise_var: &[f64], t_secs: f64) {
        let at = (self.head + self.len) % self.capacity() * self.width;
        let row = &mut self.rows[at..at + self.width];
        let (rx, rest) = row.split_at_mut(x.len());
        let (ry, rest) = rest.split_at_mut(y.len());
        let (rn, rt) = rest.split_at_mut(noise_var.len());
        rx.copy_from_slice(x);
        ry.copy_from_slice(y);
        rn.copy_from_slice(noise_var);
        rt[0] = t_secs;
        self.len += 1;
    }

    /// Moves the oldest into `row`.
    fn pop_into(&mut self, row: &mut [f64]) {
        let at = self.head * self.width;
        row.copy_from_slice(&self.rows[at..at + self.width]);
        self.head = (self.head + 1) % self.capacity();
        self.len -= 1;
    }

    /// The held rows, oldest first, into `w`.
    fn save(&self, w: &mut StateWriter) {
        w.u64(self.len as u64);
        for k in 0..self.len {
            let at = (self.head + k) % self.capacity() * self.width;
            w.f64s(&self.rows[at..at + self.width]);
        }
    }

    /// What [`HeldSamples::save`] wrote, into a new ring like `self`.
    fn load(&self, r: &mut StateReader) -> Result<Self, ModelError> {
        let mut held = Self::new(self.capacity(), self.width);
        held.len = r.usize()?;
        if held.len > held.capacity() {
            return Err(r.error("the held samples are inconsistent"));
        }
        for k in 0..held.len {
            let at = k * held.width;
            r.f64s_into(&mut held.rows[at..at + held.width], "held samples")?;
        }
        if held.rows.iter().any(|v| !v.is_finite()) {
            return Err(r.error("a held sample is not finite"));
        }
        Ok(held)
    }
}

impl std::fmt::Debug for RobustExperts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RobustExperts")
            .field("thresholds", &self.c)
            .field("down_weighted", &self.down_weighted)
            .field("held", &self.held.len)
            .finish()
    }
}

impl RobustExperts {
    /// Builds the layout from resolved settings. **Allocates** every buffer (and SkyGP's
    /// pool and refresh thread).
    pub fn new(cfg: ExpertsSettings) -> Result<Self, ModelError> {
        let (d, p, w) = (cfg.input_dim, cfg.output_dim, cfg.threshold_window);
        let checked = cfg.experts.check(d, p)?;
        let hyper_noise = checked.hyper.iter().map(|h| h.noise_var).collect();
        let inner = SkyGp::from_config(&cfg.experts, d, p)?;
        Ok(Self {
            inner,
            hyper_noise,
            abs_t: vec![0.0; p * w],
            filled: 0,
            pos: 0,
            since_refresh: 0,
            c: vec![f64::INFINITY; p],
            floor: vec![0.0; p],
            scratch: vec![0.0; w],
            last: LastPrediction {
                x: vec![0.0; d],
                mean: vec![0.0; p],
                var: vec![0.0; p],
                valid: false,
            },
            center: vec![0.0; p],
            center_var: vec![0.0; p],
            y_adj: vec![0.0; p],
            noise: vec![0.0; p],
            down_weighted: 0,
            held: HeldSamples::new(cfg.threshold_refresh_samples.min(w), d + 2 * p + 1),
            cfg,
        })
    }

    /// The current thresholds ĉ_o (+∞ before the first refresh).
    pub fn thresholds(&self) -> &[f64] {
        &self.c
    }

    /// Samples learned with at least one output below full weight.
    pub fn down_weighted(&self) -> u64 {
        self.down_weighted
    }

    /// Samples of the warm-up kept for relearning (module doc); 0 after it.
    pub fn held(&self) -> usize {
        self.held.len
    }

    /// ĉ_o = max(Q_{1−ε}(|t_o|), floor_o, c_min) over the filled ring. No allocation.
    fn refresh_thresholds(&mut self) {
        let (w, n) = (self.cfg.threshold_window, self.filled);
        for o in 0..self.cfg.output_dim {
            let values = &mut self.scratch[..n];
            values.copy_from_slice(&self.abs_t[o * w..o * w + n]);
            let q = weights::soft_threshold(values, self.cfg.epsilon, self.cfg.c_min);
            self.c[o] = q.max(self.floor[o]);
        }
        self.since_refresh = 0;
    }

    /// The weight centre and its latent variance at `x` into `center`, `center_var`.
    fn weight_center(&mut self, x: &[f64]) -> Result<(), ModelError> {
        match self.cfg.weight_center {
            WeightCenter::Prior => {
                self.center.copy_from_slice(&self.cfg.prior_mean);
                self.center_var.fill(0.0);
            }
            WeightCenter::Predictive => {
                if !(self.last.valid && self.last.x[..] == x[..]) {
                    self.inner
                        .predict(x, &mut self.last.mean, &mut self.last.var)?;
                    self.last.x.copy_from_slice(x);
                    self.last.valid = true;
                }
                // SkyGP's prior mean is 0: its prediction is relative to m.
                for o in 0..self.cfg.output_dim {
                    self.center[o] = self.last.mean[o] + self.cfg.prior_mean[o];
                }
                self.center_var.copy_from_slice(&self.last.var);
            }
        }
        Ok(())
    }

    /// The base noise variance σ_o² of output o of a sample with `noise_var`.
    fn base_noise(&self, o: usize, noise_var: &[f64]) -> f64 {
        match self.cfg.noise {
            NoiseSource::Sample => noise_var[o].max(self.hyper_noise[o]),
            NoiseSource::Hyper => self.hyper_noise[o],
        }
    }

    /// Puts |y − γ| (γ in `center`) into the thresholds' ring and σ's floor into `floor`;
    /// refreshes the thresholds when due (the warm-up refreshes them itself).
    fn record(&mut self, y: &[f64], noise_var: &[f64]) {
        let w = self.cfg.threshold_window;
        for (o, &yo) in y.iter().enumerate() {
            self.floor[o] = self.cfg.c_floor_sigmas * self.base_noise(o, noise_var).sqrt();
            self.abs_t[o * w + self.pos] = (yo - self.center[o]).abs();
        }
        self.pos = (self.pos + 1) % w;
        self.filled = (self.filled + 1).min(w);
        self.since_refresh += 1;
        if self.c[0].is_finite() && self.since_refresh >= self.cfg.threshold_refresh_samples {
            self.refresh_thresholds();
        }
    }

    /// Weighs one sample against the current thresholds and learns it; `record`: its |t|
    /// is not in the ring yet. Real-time.
    fn learn(
        &mut self,
        x: &[f64],
        y: &[f64],
        t_secs: f64,
        noise_var: &[f64],
        record: bool,
    ) -> Result<(), ModelError> {
        self.weight_center(x)?;
        let mut lowered = false;
        for (o, &yo) in y.iter().enumerate() {
            let base = self.base_noise(o, noise_var);
            let m = self.cfg.prior_mean[o];
            if base > 0.0 {
                let c2 = self.c[o] * self.c[o] + self.center_var[o];
                let pw = weights::point(
                    yo,
                    self.center[o],
                    m,
                    c2,
                    base,
                    Beta::Normalized.beta2(base),
                    self.cfg.weight_profile,
                );
                // SkyGP learns relative to its zero prior mean.
                self.y_adj[o] = pw.r;
                self.noise[o] = pw.d;
                lowered |= pw.d > base;
            } else {
                self.y_adj[o] = yo - m;
                self.noise[o] = base;
            }
        }
        if record {
            self.record(y, noise_var);
        }
        self.down_weighted += u64::from(lowered);
        self.last.valid = false;
        self.inner.update(x, &self.y_adj, t_secs, &self.noise)
    }

    /// Ends the warm-up: a new SkyGP model learns the kept samples, in order, weighted with
    /// the first full thresholds, and replaces the provisional one. **Allocates** (the new
    /// model); on error the provisional model stays.
    fn relearn_warm_up(&mut self) -> Result<(), ModelError> {
        let (d, p) = (self.cfg.input_dim, self.cfg.output_dim);
        let fresh = SkyGp::from_config(&self.cfg.experts, d, p)?;
        let provisional = std::mem::replace(&mut self.inner, fresh);
        let down_weighted = std::mem::take(&mut self.down_weighted);
        let mut row = vec![0.0; self.held.width];
        let mut result = Ok(());
        while self.held.len > 0 && result.is_ok() {
            self.held.pop_into(&mut row);
            let (x, rest) = row.split_at(d);
            let (y, rest) = rest.split_at(p);
            let (noise_var, t) = rest.split_at(p);
            result = self.learn(x, y, t[0], noise_var, false);
        }
        if result.is_err() {
            self.inner = provisional;
            self.down_weighted = down_weighted;
            self.held.len = 0;
        }
        result
    }

    /// The state: SkyGP's own, then the thresholds' ring and counters. Not real-time.
    pub fn save(&self) -> Result<Vec<u8>, ModelError> {
        let inner = self.inner.save_state()?;
        let mut w = StateWriter::default();
        w.bytes(MAGIC);
        w.u32(FORMAT_VERSION);
        w.str(&format!("{:?}", self.cfg));
        w.u64(inner.len() as u64);
        w.bytes(&inner);
        w.f64s(&self.abs_t);
        w.u64(self.filled as u64);
        w.u64(self.pos as u64);
        w.u64(self.since_refresh as u64);
        w.f64s(&self.c);
        w.f64s(&self.floor);
        w.u64(self.down_weighted);
        self.held.save(&mut w);
        Ok(w.into_bytes())
    }

    /// Replaces the state with one from [`RobustExperts::save`] of a model with the same
    /// settings; on error the model is unchanged. Not real-time.
    pub fn load(&mut self, bytes: &[u8]) -> Result<(), ModelError> {
        let mut r = StateReader::new(bytes, "rcagp load");
        if r.take(MAGIC.len())? != MAGIC {
            return Err(r.error("not an RCaGP experts state"));
        }
        let version = r.u32()?;
        if !(1..=FORMAT_VERSION).contains(&version) {
            return Err(r.error(format!(
                "state format {version}, this plugin reads 1..={FORMAT_VERSION}"
            )));
        }
        if r.str()? != format!("{:?}", self.cfg) {
            return Err(r.error("the state was saved by a model with a different configuration"));
        }
        let n = r.usize()?;
        let inner = r.take(n)?;
        let (p, w) = (self.cfg.output_dim, self.cfg.threshold_window);
        let mut abs_t = vec![0.0; p * w];
        r.f64s_into(&mut abs_t, "thresholds' ring")?;
        let filled = r.usize()?;
        let pos = r.usize()?;
        let since_refresh = r.usize()?;
        let mut c = vec![0.0; p];
        r.f64s_into(&mut c, "thresholds")?;
        let mut floor = vec![0.0; p];
        r.f64s_into(&mut floor, "threshold floors")?;
        let down_weighted = r.u64()?;
        let held = if version >= 2 {
            self.held.load(&mut r)?
        } else {
            HeldSamples::new(self.held.capacity(), self.held.width)
        };
        r.finish()?;
        if filled > w || pos >= w || since_refresh > self.cfg.threshold_refresh_samples {
            return Err(r.error("the thresholds' ring is inconsistent"));
        }
        // The warm-up keeps every sample it has seen, and nothing once it is over.
        let warming = filled < held.capacity();
        if held.len != if warming { filled } else { 0 } {
            return Err(r.error(if version == 1 {
                "a format-1 state saved during the warm-up cannot be continued (its samples were not kept)"
            } else {
                "the warm-up's samples are inconsistent"
            }));
        }
        if abs_t
            .iter()
            .chain(&floor)
            .any(|v| !(v.is_finite() && *v >= 0.0))
            || c.iter().any(|v| v.is_nan() || *v < 0.0)
        {
            return Err(r.error("a threshold is negative or not a number"));
        }
        let mut fresh = SkyGp::from_config(&self.cfg.experts, self.cfg.input_dim, p)?;
        fresh.load_state(inner)?;
        self.inner = fresh;
        self.abs_t = abs_t;
        self.filled = filled;
        self.pos = pos;
        self.since_refresh = since_refresh;
        self.c = c;
        self.floor = floor;
        self.down_weighted = down_weighted;
        self.held = held;
        self.last.valid = false;
        Ok(())
    }
}

impl OnlineModel for RobustExperts {
    fn input_dim(&self) -> usize {
        self.cfg.input_dim
    }

    fn output_dim(&self) -> usize {
        self.cfg.output_dim
    }

    /// SkyGP's prediction plus the prior mean. Real-time.
    fn predict(&mut self, x: &[f64], mean: &mut [f64], var: &mut [f64]) -> Result<(), ModelError> {
        self.last.valid = false;
        self.inner.predict(x, mean, var)?;
        self.last.x.copy_from_slice(x);
        self.last.mean.copy_from_slice(mean);
        self.last.var.copy_from_slice(var);
        self.last.valid = true;
        for (m, prior) in mean.iter_mut().zip(&self.cfg.prior_mean) {
            *m += prior;
        }
        Ok(())
    }

    /// Weighs the sample against the experts' prediction and learns it. Real-time.
    fn update(
        &mut self,
        x: &[f64],
        y: &[f64],
        t_secs: f64,
        noise_var: &[f64],
    ) -> Result<(), ModelError> {
        let (d, p) = (self.cfg.input_dim, self.cfg.output_dim);
        check_sample(x, y, noise_var, d, p)?;
        // The experts always carry per-sample noise through SkyGP's drift, which needs
        // the time stamp; checked here so that a refused sample changes nothing.
        if !t_secs.is_finite() {
            return Err(ModelError::NonFinite {
                what: "t_secs",
                index: 0,
            });
        }
        if self.filled >= self.held.capacity() {
            return self.learn(x, y, t_secs, noise_var, true);
        }
        // The warm-up (module doc): provisional thresholds over the samples so far.
        self.weight_center(x)?;
        self.record(y, noise_var);
        self.refresh_thresholds();
        self.learn(x, y, t_secs, noise_var, false)?;
        self.held.push(x, y, noise_var, t_secs);
        if self.filled < self.held.capacity() {
            return Ok(());
        }
        self.relearn_warm_up()
    }

    fn stats(&self) -> ModelStats {
        let mut s = self.inner.stats();
        s.memory_bytes += 8 * (self.abs_t.len() + self.scratch.len() + self.held.rows.len()) as u64;
        s
    }

    fn readiness(&self, from_prior: &mut [bool]) -> Option<Readiness> {
        self.inner.readiness(from_prior)
    }

    fn wait_ready(&mut self, timeout: std::time::Duration) -> Result<(), ModelError> {
        self.inner.wait_ready(timeout)
    }
}
