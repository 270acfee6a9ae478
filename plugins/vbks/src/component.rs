//! One kept kernel of the online ensemble (spec §7.2–7.3): fixed θ, noise s² and inducing
//! inputs Z; whitened sufficient statistics updated per sample; the factor L_B and the
//! mean weights γ kept current by an O(M²) rank-one Cholesky update and a recursive
//! least-squares step; predictions from two triangular solves.
//!
//! Per sample (ṽ = L_K⁻¹ k_u(x), all outputs share ṽ, L_B and s²):
//!
//! ```text
//! stats ← λ·stats + (ṽ, k(x,x), y, w)                    (Stats::add)
//! u = B⁻¹ṽ (old factor);  γ_o ← γ_o + u (y_o − ṽᵀγ_o)/(s²/w + ṽᵀu)
//! L_B ← chol(L_B L_Bᵀ + w ṽṽᵀ/s²)                          (rank-one update)
//! ```
//!
//! (Sherman–Morrison on B' = B + wṽṽᵀ/s², r' = r + wṽy.) With λ = 1 this is exact: the
//! factor equals a batch recomputation from the statistics to rounding (tested). With
//! λ < 1 the statistics are exact but the factor adds new samples at full weight without
//! re-discounting the older ones; [`Component::refactor_from`] (run in the background
//! every `refactor_every` samples on a copy of the statistics, then the samples since
//! the copy are replayed) makes it exact again.
//!
//! Real-time: `predict_std`, `update_std` and `local_bound` allocate nothing.

use crate::fast::FastKernel;
use crate::kernel::KernelSpec;
use crate::linalg::{cholesky_rank1_update, solve_lower};
use crate::stats::{Factor, Stats};

/// Floor on a component's latent variance (standardised units): the two-solve form can
/// dip below zero by rounding (spec §7.5).
pub const VAR_FLOOR: f64 = 1e-12;

/// One kernel of the online mixture. All quantities are in standardised units.
#[derive(Debug, Clone)]
pub struct Component {
    /// The kernel.
    pub spec: KernelSpec,
    /// Log-parameters: the kernel's, then ln s².
    pub psi: Vec<f64>,
    /// Noise variance s².
    pub s2: f64,
    /// Inducing inputs, M×d row-major.
    pub z: Vec<f64>,
    /// L_K = chol(K_uu + jitter), M×M lower.
    pub lk: Vec<f64>,
    /// The statistics.
    pub stats: Stats,
    /// L_B and γ.
    pub factor: Factor,
    /// Local bound of the offline phase (L_i*).
    pub offline_bound: f64,
    /// Σ over online samples of log p(y_t | earlier samples) (discounted by λ).
    pub prequential: f64,
    pub(crate) fast: FastKernel,
    m: usize,
    p: usize,
    // Scratch (M each): kernel vector, whitened vector, solves.
    k: Vec<f64>,
    v: Vec<f64>,
    u: Vec<f64>,
    /// Cached ṽ and k(x,x) of the last `prepare` (reused by the next update at the same x).
    cached_kxx: f64,
}

/// Error building a component (its K_uu or B is not positive definite).
#[derive(Debug, Clone, PartialEq)]
pub struct BuildError(pub String);

impl Component {
    /// Build a component with empty statistics. `lk` is chol(K_uu + jitter) for `z`.
    /// **Allocates.**
    pub fn new(
        spec: KernelSpec,
        psi: Vec<f64>,
        z: Vec<f64>,
        lk: Vec<f64>,
        p: usize,
    ) -> Result<Component, BuildError> {
        let d = spec.dim();
        let m = z.len() / d;
        let np = spec.n_params();
        let s2 = psi[np].exp();
        let fast = FastKernel::new(&spec, &psi, &z);
        let stats = Stats::new(m, p);
        let mut factor = Factor::new(m, p);
        let mut col = vec![0.0; m];
        factor
            .refactor(&stats, s2, &mut col)
            .map_err(|e| BuildError(format!("{}: {e:?}", spec.expr())))?;
        Ok(Component {
            spec,
            psi,
            s2,
            z,
            lk,
            stats,
            factor,
            offline_bound: f64::NAN,
            prequential: 0.0,
            fast,
            m,
            p,
            k: vec![0.0; m],
            v: vec![0.0; m],
            u: vec![0.0; m],
            cached_kxx: 0.0,
        })
    }

    /// Inducing inputs M.
    pub fn m(&self) -> usize {
        self.m
    }

    /// Compute ṽ = L_K⁻¹ k_u(x) and k(x,x) for standardised `x` into the cache.
    pub fn prepare(&mut self, x: &[f64]) {
        self.fast.kvec(x, &mut self.k);
        self.cached_kxx = self.fast.diag(x);
        self.v.copy_from_slice(&self.k);
        solve_lower(&self.lk, self.m, &mut self.v);
    }

    /// Standardised latent mean of every output into `mean` (p) and the latent variance
    /// (shared by the outputs in standardised units), at the x of the last `prepare`.
    pub fn predict_prepared(&mut self, mean: &mut [f64]) -> f64 {
        let (m, p) = (self.m, self.p);
        for (o, mo) in mean.iter_mut().enumerate().take(p) {
            let mut acc = 0.0;
            for i in 0..m {
                acc += self.v[i] * self.factor.gamma[i * p + o];
            }
            *mo = acc;
        }
        let vv: f64 = self.v.iter().map(|a| a * a).sum();
        self.u.copy_from_slice(&self.v);
        solve_lower(&self.factor.lb, m, &mut self.u);
        let ww: f64 = self.u.iter().map(|a| a * a).sum();
        (self.cached_kxx - vv + ww).max(VAR_FLOOR)
    }

    /// `prepare` then `predict_prepared`.
    pub fn predict_std(&mut self, x: &[f64], mean: &mut [f64]) -> f64 {
        self.prepare(x);
        self.predict_prepared(mean)
    }

    /// Learn one sample at the x of the last `prepare`: standardised targets `y` (p),
    /// weight `w` (its noise is s²/w), forgetting factor λ. Returns the sample's log
    /// predictive density (see [`Self::absorb_prepared`]).
    pub fn update_prepared(&mut self, y: &[f64], w: f64, lambda: f64) -> f64 {
        self.stats.discount(lambda);
        self.stats.add(&self.v, self.cached_kxx, y, w);
        let log_pred = self.absorb_prepared(y, w);
        self.prequential = lambda * self.prequential + w * log_pred;
        log_pred
    }

    /// ṽ = L_K⁻¹ k_u(x) of the last `prepare`.
    pub(crate) fn prepared_v(&self) -> &[f64] {
        &self.v
    }

    /// Add the sample at the x of the last `prepare` to the statistics only.
    pub(crate) fn add_prepared(&mut self, y: &[f64], w: f64) {
        self.stats.add(&self.v, self.cached_kxx, y, w);
    }

    /// k(x, x) of the last `prepare`.
    pub(crate) fn prepared_kxx(&self) -> f64 {
        self.cached_kxx
    }

    /// Add the sample at the x of the last `prepare` to the factor and γ only (the
    /// statistics already hold it): the replay after a background refactorisation.
    /// Returns log p(y | the samples before it) under this component, summed over the
    /// outputs (standardised units), computed from the old factor on the way.
    pub fn absorb_prepared(&mut self, y: &[f64], w: f64) -> f64 {
        let (m, p) = (self.m, self.p);
        // u = B⁻¹ ṽ with the old factor.
        self.u.copy_from_slice(&self.v);
        crate::linalg::solve_spd(&self.factor.lb, m, &mut self.u);
        let vu: f64 = self.v.iter().zip(&self.u).map(|(a, b)| a * b).sum();
        let denom = self.s2 / w + vu;
        let vv: f64 = self.v.iter().map(|a| a * a).sum();
        // The sample's own noise is s²/w (w = 1 without drift).
        let var_y = (self.cached_kxx - vv + vu).max(VAR_FLOOR) + self.s2 / w;
        let mut log_pred = 0.0;
        for o in 0..p {
            let mut pred = 0.0;
            for i in 0..m {
                pred += self.v[i] * self.factor.gamma[i * p + o];
            }
            let r = y[o] - pred;
            log_pred -= 0.5 * ((2.0 * std::f64::consts::PI * var_y).ln() + r * r / var_y);
            let gain = (y[o] - pred) / denom;
            for i in 0..m {
                self.factor.gamma[i * p + o] += self.u[i] * gain;
            }
        }
        // L_B ← chol(B + w ṽṽᵀ/s²); `k` is free scratch now.
        let scale = (w / self.s2).sqrt();
        for (k, &v) in self.k.iter_mut().zip(&self.v) {
            *k = v * scale;
        }
        cholesky_rank1_update(&mut self.factor.lb, m, &mut self.k);
        log_pred
    }

    /// The evidence the online belief refits use: L_i* (the offline bound) plus the
    /// prequential log predictive density of every online sample (discounted by λ like the
    /// statistics) — the chain rule log p(D_off, D_on) = log p(D_off) + Σ_t log p(y_t |
    /// y_<t) with θ frozen. (The collapsed bound of the growing data would instead charge
    /// every new point its Nyström error over the *frozen* noise s², which under drift
    /// swamps everything else.)
    pub fn online_evidence(&self) -> f64 {
        self.offline_bound + self.prequential
    }

    /// `prepare` then `update_prepared`.
    pub fn update_std(&mut self, x: &[f64], y: &[f64], w: f64, lambda: f64) {
        self.prepare(x);
        self.update_prepared(y, w, lambda);
    }

    /// The local (collapsed) bound of the samples so far, summed over outputs, from the
    /// current factor. O(M p).
    pub fn local_bound(&self) -> f64 {
        self.factor.bound(&self.stats, self.s2)
    }

    /// Replace the factor by an exact one from the statistics (O(M³); off the hot path).
    pub fn refactor(&mut self) -> Result<(), BuildError> {
        let mut col = vec![0.0; self.m];
        let stats = self.stats.clone();
        self.factor
            .refactor(&stats, self.s2, &mut col)
            .map_err(|e| BuildError(format!("{}: {e:?}", self.spec.expr())))
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        8 * (self.z.len() + self.lk.len() + 4 * self.m + self.psi.len())
            + self.stats.memory_bytes()
            + self.factor.memory_bytes()
            + self.fast.memory_bytes()
    }

    /// Outputs p.
    pub fn p(&self) -> usize {
        self.p
    }
}
