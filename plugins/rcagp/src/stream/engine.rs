//! The block path (spec §6.3): admit samples into the open block; when it is full, give it
//! weight-aware action entries, put it in the window (replacing the oldest block), update row
//! and column a* of G_C = Sᵀ C S (k_b·n kernel values), and rebuild every output's
//! posterior from G_C and the weights in O(p(n + i³)) — an exact rebuild, never an
//! approximation: the result equals a from-scratch batch posterior of the window
//! ([`Engine::to_problem`]; tested to 1e−9).
//!
//! The engine is single-threaded: the worker thread owns it in background mode, the model
//! in inline mode. After construction only [`Engine::apply_refit`] and
//! [`Engine::to_problem`] allocate.

use gpn_gp_core::cholesky::PackedCholesky;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::actions::{Actions, BlockLayout, normalize_block};
use crate::config::{ActionInit, ValidConfig};
use crate::error::RcagpError;
use crate::kernel::sq_dist;
use crate::posterior::{OutputData, OutputParams, Problem};
use crate::weights::{point, quantile};

use super::snapshot::Snapshot;
use super::window::{SampleRef, Window};

/// Hyperparameters in use (natural units).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Params {
    pub ell: Vec<f64>,
    pub inv_ell: Vec<f64>,
    /// s_f,o².
    pub outputscale: Vec<f64>,
    /// κ_o, the noise multiplier: σ_l² = κ_o ν_l.
    pub kappa: Vec<f64>,
    /// Bumped by every accepted refit.
    pub version: u64,
}

impl Params {
    pub fn from_config(cfg: &ValidConfig) -> Self {
        Self {
            ell: cfg.lengthscales.clone(),
            inv_ell: cfg.lengthscales.iter().map(|l| 1.0 / l).collect(),
            outputscale: cfg.outputscale.clone(),
            kappa: vec![1.0; cfg.output_dim],
            version: 0,
        }
    }
}

/// New hyperparameters from the slow path, with G_C of the blocks it saw.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RefitResult {
    pub ell: Vec<f64>,
    pub outputscale: Vec<f64>,
    pub kappa: Vec<f64>,
    /// Ids of the blocks the refit saw, in the order of `gc`.
    pub block_ids: Vec<u64>,
    /// G_C with the new lengthscales, row-major, for those blocks.
    pub gc: Vec<f64>,
    /// The params version the refit started from.
    pub based_on: u64,
}

/// Diagonal jitter schedule of spec A3.5 on top of 0.
const JITTERS: [f64; 4] = [0.0, 1e-8, 1e-7, 1e-6];

/// The block path's state. See the module doc.
#[derive(Debug, Clone)]
pub(crate) struct Engine {
    pub cfg: ValidConfig,
    pub params: Params,
    pub win: Window,
    /// Scaled inputs of every slot (slot-major, like the window).
    pub xs: Vec<f64>,
    /// G_C, blocks × blocks, row-major; entries of inactive slots are meaningless.
    pub g: Vec<f64>,
    /// c_o of the last threshold update.
    pub c: Vec<f64>,
    /// Blocks committed so far.
    pub blocks_inserted: u64,
    /// Blocks committed since the last refit was started.
    pub blocks_since_refit: usize,
    /// Snapshots built so far.
    pub version: u64,
    /// A rebuild is due (a new block or new hyperparameters).
    pub dirty: bool,
    rng: ChaCha8Rng,
    scratch_resid: Vec<f64>,
    scratch_delta: Vec<f64>,
    scratch_z: Vec<f64>,
    scratch_prec: Vec<f64>,
    scratch_s: Vec<f64>,
}

impl Engine {
    /// **Allocates** every buffer.
    pub fn new(cfg: &ValidConfig) -> Self {
        let (d, p, nb, kb) = (cfg.input_dim, cfg.output_dim, cfg.blocks, cfg.block_size);
        let n = nb * kb;
        Self {
            params: Params::from_config(cfg),
            win: Window::new(d, p, nb, kb),
            xs: vec![0.0; n * d],
            g: vec![0.0; nb * nb],
            c: vec![f64::INFINITY; p],
            blocks_inserted: 0,
            blocks_since_refit: 0,
            version: 0,
            dirty: false,
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            scratch_resid: vec![0.0; n + kb],
            scratch_delta: vec![0.0; nb],
            scratch_z: vec![0.0; nb],
            scratch_prec: vec![0.0; kb],
            scratch_s: vec![0.0; kb],
            cfg: cfg.clone(),
        }
    }

    /// An empty snapshot with this engine's dimensions and current hyperparameters.
    /// **Allocates.**
    pub fn empty_snapshot(&self) -> Snapshot {
        let c = &self.cfg;
        Snapshot::empty(
            c.kind,
            c.input_dim,
            c.output_dim,
            c.blocks,
            c.block_size,
            &self.params.inv_ell,
            &self.params.outputscale,
            &c.prior_mean,
        )
    }

    /// Position of the random-action stream (for persistence).
    pub fn rng_word_pos(&self) -> u128 {
        self.rng.get_word_pos()
    }

    /// Restores the random-action stream's position.
    pub fn set_rng_word_pos(&mut self, pos: u128) {
        self.rng.set_word_pos(pos);
    }

    /// Recomputes the scaled inputs of the active slots from the raw ones. No allocation.
    pub fn rescale_inputs(&mut self) {
        let d = self.cfg.input_dim;
        let n = self.win.n_points();
        for l in 0..n {
            for t in 0..d {
                self.xs[l * d + t] = self.win.rows.x[l * d + t] * self.params.inv_ell[t];
            }
        }
    }

    /// σ² of output `o` for a base noise ν.
    #[inline]
    fn sigma2(&self, o: usize, noise: f64) -> f64 {
        self.params.kappa[o] * noise
    }

    /// Admits one sample; commits the open block when it fills. Returns true if a block was
    /// committed (a rebuild is then due). No allocation.
    pub fn admit(&mut self, sample: &SampleRef<'_>) -> bool {
        if self.win.push_open(sample) {
            self.commit_open_block();
            true
        } else {
            false
        }
    }

    /// Soft thresholds c_o = max(Q_{1−ε}|y − γ|, c_floor_sigmas·median σ, c_min) over the
    /// active window, plus the open block if `with_open`. No allocation.
    fn update_thresholds(&mut self, with_open: bool) {
        let p = self.cfg.output_dim;
        let n = self.win.n_points();
        let n_open = if with_open { self.win.open_len } else { 0 };
        if n + n_open == 0 {
            return;
        }
        for o in 0..p {
            let buf = &mut self.scratch_resid[..n + n_open];
            let rows = &self.win.rows;
            let open = &self.win.open;
            for (k, v) in buf.iter_mut().enumerate() {
                *v = if k < n {
                    rows.noise[k * p + o]
                } else {
                    open.noise[(k - n) * p + o]
                };
            }
            let median_noise = quantile(buf, 0.5) * self.params.kappa[o];
            let floor = (self.cfg.c_floor_sigmas * median_noise.max(0.0).sqrt()).max(self.cfg.c_min);
            let buf = &mut self.scratch_resid[..n + n_open];
            for (k, v) in buf.iter_mut().enumerate() {
                *v = if k < n {
                    (rows.y[k * p + o] - rows.center[k * p + o]).abs()
                } else {
                    let r = k - n;
                    (open.y[r * p + o] - open.center[r * p + o]).abs()
                };
            }
            let q = quantile(buf, 1.0 - self.cfg.epsilon);
            self.c[o] = if q.is_finite() { q.max(floor) } else { floor };
        }
    }

    /// Gives the full open block its action entries and moves it into the window, updating
    /// G_C's row and column. No allocation.
    fn commit_open_block(&mut self) {
        let (d, p, kb) = (self.cfg.input_dim, self.cfg.output_dim, self.cfg.block_size);
        match self.cfg.actions {
            ActionInit::WeightAware => {
                self.update_thresholds(true);
                self.scratch_s.fill(f64::INFINITY);
                for o in 0..p {
                    let c2 = self.c[o] * self.c[o];
                    let mut max_prec = 0.0f64;
                    for r in 0..kb {
                        let open = &self.win.open;
                        let s2 = self.sigma2(o, open.noise[r * p + o]);
                        let w = point(
                            open.y[r * p + o],
                            open.center[r * p + o],
                            self.cfg.prior_mean[o],
                            c2 + open.cvar[r * p + o],
                            s2,
                            self.cfg.beta.beta2(s2),
                        );
                        self.scratch_prec[r] = w.lam;
                        max_prec = max_prec.max(w.lam);
                    }
                    for r in 0..kb {
                        let rel = if max_prec > 0.0 {
                            self.scratch_prec[r] / max_prec
                        } else {
                            1.0
                        };
                        self.scratch_s[r] = self.scratch_s[r].min(rel);
                    }
                }
                self.scratch_prec.copy_from_slice(&self.scratch_s);
                normalize_block(&self.scratch_prec, &mut self.scratch_s);
            }
            ActionInit::Random => {
                let sd = 1.0 / (kb as f64).sqrt();
                for v in self.scratch_s.iter_mut() {
                    let u1: f64 = 1.0 - self.rng.random::<f64>();
                    let u2: f64 = self.rng.random::<f64>();
                    *v = sd * (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                }
            }
            ActionInit::Uniform => self.scratch_s.fill(1.0 / (kb as f64).sqrt()),
        }
        let slot = self.win.commit_open(&self.scratch_s);
        // Scaled inputs of the slot.
        for r in slot * kb..(slot + 1) * kb {
            for t in 0..d {
                self.xs[r * d + t] = self.win.rows.x[r * d + t] * self.params.inv_ell[t];
            }
        }
        for b in 0..self.win.filled {
            let v = self.block_pair(slot, b);
            let nb = self.cfg.blocks;
            self.g[slot * nb + b] = v;
            self.g[b * nb + slot] = v;
        }
        self.blocks_inserted += 1;
        self.blocks_since_refit += 1;
        self.dirty = true;
    }

    /// G_C[a, b] = s_aᵀ C(X_a, X_b) s_b from the scaled inputs. No allocation.
    fn block_pair(&self, a: usize, b: usize) -> f64 {
        let (d, kb) = (self.cfg.input_dim, self.cfg.block_size);
        let kind = self.cfg.kind;
        let mut total = 0.0;
        for l in a * kb..(a + 1) * kb {
            let xl = &self.xs[l * d..(l + 1) * d];
            let mut row = 0.0;
            for m in b * kb..(b + 1) * kb {
                row += self.win.s[m] * kind.profile(sq_dist(xl, &self.xs[m * d..(m + 1) * d]));
            }
            total += self.win.s[l] * row;
        }
        total
    }

    /// Rebuilds every output's posterior into `snap` (whose buffers must have the full
    /// window's capacity, as [`Engine::empty_snapshot`] gives). No allocation.
    pub fn rebuild(&mut self, snap: &mut Snapshot) -> Result<(), RcagpError> {
        let (d, p, kb, nbmax) = (
            self.cfg.input_dim,
            self.cfg.output_dim,
            self.cfg.block_size,
            self.cfg.blocks,
        );
        let nb = self.win.filled;
        let n = nb * kb;
        self.update_thresholds(false);
        snap.xs.clear();
        snap.xs.extend_from_slice(&self.xs[..n * d]);
        snap.s.clear();
        snap.s.extend_from_slice(&self.win.s[..n]);
        snap.alpha.clear();
        snap.alpha.resize(n * p, 0.0);
        snap.inv_ell.copy_from_slice(&self.params.inv_ell);
        snap.outputscale.copy_from_slice(&self.params.outputscale);
        snap.kappa.copy_from_slice(&self.params.kappa);
        snap.prior_mean.copy_from_slice(&self.cfg.prior_mean);
        snap.c.copy_from_slice(&self.c);
        for o in 0..p {
            let c2 = self.c[o] * self.c[o];
            let m_o = self.cfg.prior_mean[o];
            let sf2 = self.params.outputscale[o];
            let delta = &mut self.scratch_delta[..nb];
            let z = &mut self.scratch_z[..nb];
            delta.fill(0.0);
            z.fill(0.0);
            let rows = &self.win.rows;
            for l in 0..n {
                let a = l / kb;
                let s2 = self.params.kappa[o] * rows.noise[l * p + o];
                let w = point(
                    rows.y[l * p + o],
                    rows.center[l * p + o],
                    m_o,
                    c2 + rows.cvar[l * p + o],
                    s2,
                    self.cfg.beta.beta2(s2),
                );
                let sl = self.win.s[l];
                delta[a] += sl * sl * w.d;
                z[a] += sl * w.r;
            }
            for v in delta.iter_mut() {
                *v = v.max(1e-12);
            }
            let g = &self.g;
            factor_with_jitter(&mut snap.chol[o], nb, |a, b| {
                sf2 * g[a * nbmax + b] + if a == b { delta[a] } else { 0.0 }
            })?;
            snap.chol[o].solve_mut(z);
            for l in 0..n {
                snap.alpha[l * p + o] = self.win.s[l] * z[l / kb];
            }
        }
        snap.n_blocks = nb;
        self.version += 1;
        snap.version = self.version;
        snap.params_version = self.params.version;
        self.dirty = false;
        Ok(())
    }

    /// The window as a batch [`Problem`] (block actions over the active slots in slot
    /// order, the current thresholds and hyperparameters): what a from-scratch build, the
    /// tests and the slow path use. None while the window is empty. **Allocates.**
    pub fn to_problem(&self) -> Option<Problem> {
        let (d, p, kb) = (self.cfg.input_dim, self.cfg.output_dim, self.cfg.block_size);
        let nb = self.win.filled;
        let n = self.win.n_points();
        let layout = BlockLayout::from_offsets((0..=nb).map(|a| a * kb).collect())?;
        let rows = &self.win.rows;
        let col = |v: &[f64], o: usize| -> Vec<f64> { (0..n).map(|l| v[l * p + o]).collect() };
        let outputs = (0..p)
            .map(|o| {
                let c2 = self.c[o] * self.c[o];
                (
                    OutputData {
                        y: col(&rows.y, o),
                        noise: col(&rows.noise, o),
                        prior_mean: vec![self.cfg.prior_mean[o]; n],
                        center: col(&rows.center, o),
                        c2: (0..n).map(|l| c2 + rows.cvar[l * p + o]).collect(),
                    },
                    OutputParams {
                        outputscale: self.params.outputscale[o],
                        sigma2: self.params.kappa[o],
                        beta: self.cfg.beta,
                    },
                )
            })
            .collect();
        Some(Problem {
            kind: self.cfg.kind,
            d,
            x: rows.x[..n * d].to_vec(),
            lengthscales: self.params.ell.clone(),
            actions: Actions::Block {
                layout,
                s: self.win.s[..n].to_vec(),
            },
            outputs,
        })
    }

    /// Installs hyperparameters from the slow path: rescales the inputs and rebuilds G_C,
    /// taking the refit's entries for blocks it saw and computing the rest. Ignored (false)
    /// if the hyperparameters changed since the refit started. **Allocates** nothing beyond
    /// what it was given.
    pub fn apply_refit(&mut self, r: &RefitResult) -> bool {
        if r.based_on != self.params.version {
            return false;
        }
        let nbmax = self.cfg.blocks;
        self.params.ell.copy_from_slice(&r.ell);
        for (w, l) in self.params.inv_ell.iter_mut().zip(&r.ell) {
            *w = 1.0 / l;
        }
        self.params.outputscale.copy_from_slice(&r.outputscale);
        self.params.kappa.copy_from_slice(&r.kappa);
        self.params.version += 1;
        self.rescale_inputs();
        let nr = r.block_ids.len();
        let index_of = |id: u64| r.block_ids.iter().position(|&b| b == id);
        let nb = self.win.filled;
        for a in 0..nb {
            let ia = index_of(self.win.ids[a]);
            for b in 0..=a {
                let v = match (ia, index_of(self.win.ids[b])) {
                    (Some(i), Some(j)) => r.gc[i * nr + j],
                    _ => self.block_pair(a, b),
                };
                self.g[a * nbmax + b] = v;
                self.g[b * nbmax + a] = v;
            }
        }
        self.dirty = true;
        true
    }
}

/// Factorises an SPD matrix given entrywise (lower triangle), trying the jitter schedule of
/// spec A3.5: 0, 1e−8, 1e−7, 1e−6, then ×10 up to 1e−4·mean(diag). No allocation.
pub(crate) fn factor_with_jitter(
    chol: &mut PackedCholesky,
    n: usize,
    entry: impl Fn(usize, usize) -> f64,
) -> Result<(), RcagpError> {
    if n == 0 {
        chol.clear();
        return Ok(());
    }
    let mean_diag = (0..n).map(|a| entry(a, a)).sum::<f64>() / n as f64;
    let cap = 1e-4 * mean_diag.abs();
    let mut jitter = 0.0;
    let mut k = 0;
    loop {
        if chol.factor_mut(n, jitter, &entry).is_ok() {
            return Ok(());
        }
        k += 1;
        jitter = if k < JITTERS.len() {
            JITTERS[k]
        } else {
            let next = jitter * 10.0;
            if jitter >= cap {
                return Err(RcagpError::NotPositiveDefinite { size: n });
            }
            next.min(cap)
        };
    }
}
