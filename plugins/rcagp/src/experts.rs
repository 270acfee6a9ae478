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
//! for as long as they have room, so the first samples keep the weights they were learned
//! with long after. For the first W = min(`threshold_refresh_samples`, `threshold_window`)
//! samples the thresholds are refreshed at every sample, over those seen so far (before,
//! the first W were learned at full weight: with 10 % outliers the robot stream's RMSE was
//! 3 % higher, `docs/results/models-in-the-loop.md`).
//!
//! Real-time: `predict` and `update` allocate nothing, take no lock and do no I/O (the
//! threshold refresh is a selection in a reserved buffer, O(p · threshold_window)).

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
const FORMAT_VERSION: u32 = 1;

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
    /// ĉ_o; +∞ before the first sample, over the samples so far during the warm-up.
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
}

impl std::fmt::Debug for RobustExperts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RobustExperts")
            .field("thresholds", &self.c)
            .field("down_weighted", &self.down_weighted)
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
            cfg,
        })
    }

    /// The current thresholds ĉ_o (+∞ before the first sample).
    pub fn thresholds(&self) -> &[f64] {
        &self.c
    }

    /// Samples learned with at least one output below full weight.
    pub fn down_weighted(&self) -> u64 {
        self.down_weighted
    }

    /// ĉ_o = max(Q_{1−ε}(|t_o|), floor_o, c_min) over the first `n` entries of the ring (the
    /// filled ring, or the warm-up's samples). No allocation.
    fn refresh_thresholds_over(&mut self, n: usize) {
        let w = self.cfg.threshold_window;
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
        if version != FORMAT_VERSION {
            return Err(r.error(format!(
                "state format {version}, this plugin reads {FORMAT_VERSION}"
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
        r.finish()?;
        if filled > w || pos >= w || since_refresh > self.cfg.threshold_refresh_samples {
            return Err(r.error("the thresholds' ring is inconsistent"));
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
        self.weight_center(x)?;
        let w = self.cfg.threshold_window;
        let mut lowered = false;
        for o in 0..p {
            let base = match self.cfg.noise {
                NoiseSource::Sample => noise_var[o].max(self.hyper_noise[o]),
                NoiseSource::Hyper => self.hyper_noise[o],
            };
            self.noise[o] = base;
            self.floor[o] = self.cfg.c_floor_sigmas * base.sqrt();
            self.abs_t[o * w + self.pos] = (y[o] - self.center[o]).abs();
        }
        // The warm-up (module doc): thresholds over the samples so far, this one included
        // (so the first sample keeps its full weight). The ring has not wrapped yet.
        if self.filled < self.cfg.threshold_refresh_samples.min(w) {
            self.refresh_thresholds_over(self.filled + 1);
        }
        for (o, &yo) in y.iter().enumerate() {
            let base = self.noise[o];
            let m = self.cfg.prior_mean[o];
            if self.c[o].is_finite() && base > 0.0 {
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
        self.pos = (self.pos + 1) % w;
        self.filled = (self.filled + 1).min(w);
        self.since_refresh += 1;
        if self.since_refresh >= self.cfg.threshold_refresh_samples {
            self.refresh_thresholds_over(self.filled);
        }
        self.down_weighted += u64::from(lowered);
        self.last.valid = false;
        self.inner.update(x, &self.y_adj, t_secs, &self.noise)
    }

    fn stats(&self) -> ModelStats {
        let mut s = self.inner.stats();
        s.memory_bytes += 8 * (self.abs_t.len() + self.scratch.len()) as u64;
        s
    }

    fn readiness(&self, from_prior: &mut [bool]) -> Option<Readiness> {
        self.inner.readiness(from_prior)
    }

    fn wait_ready(&mut self, timeout: std::time::Duration) -> Result<(), ModelError> {
        self.inner.wait_ready(timeout)
    }
}
