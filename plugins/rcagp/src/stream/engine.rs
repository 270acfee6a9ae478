//! The block path (spec §6.3), with the open block as live singleton actions.
//!
//! Per admitted sample (O(n d + p i²)): its kernel row against every committed block
//! (g_single: s_bᵀ C(X_b, x), k_b values per block) and against the open block's earlier
//! samples; its weights with the current thresholds; then every output's factor L of M
//! grows by one row and column (a new action with s = 1) and v̄ = M⁻¹z is re-solved. The
//! newest sample is thus in the posterior before the next prediction, not only once its
//! block fills (the spec's "live block", here with unit actions instead of one direction).
//!
//! When the open block fills (every k_b samples), it becomes one block: weight-aware action
//! entries (s ∝ relative precision, unit norm), row and column a* of G_C = SᵀCS from the
//! cached singles' rows (no new kernel values), the oldest block is replaced, and the
//! posterior is rebuilt from scratch: thresholds c_o from the window, every point's
//! weights, δ, z, the Cholesky factors of M with the jitter schedule (O(p(n + i³))).
//! With `threshold_refresh_blocks` > 1 that full rebuild happens only at every such
//! block; the commits between keep the thresholds, so no other block's weights change, and
//! each output's factor drops the singles and takes the block as one appended row, or
//! replaces the oldest block's row and column (O(p·i²); a failed update falls back to the
//! full rebuild). Every state equals a from-scratch batch RCaGP of the same window, actions
//! and thresholds in use ([`Engine::to_problem`]; tested to 1e−9).
//!
//! The engine is single-threaded: the worker owns it in background mode, the model in
//! inline mode. After construction only [`Engine::to_problem`] and clones allocate.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::actions::{Actions, BlockLayout, normalize_block};
use crate::config::{ActionInit, ValidConfig};
use crate::error::RcagpError;
use crate::kernel::sq_dist;
use crate::posterior::{OutputData, OutputParams, Problem};
use crate::weights::{PointWeight, point, quantile};

use super::snapshot::Snapshot;
use super::tri::Tri;
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
    /// Ids of the committed blocks the refit saw, in the order of `gc`.
    pub block_ids: Vec<u64>,
    /// G_C with the new lengthscales, row-major, for those blocks.
    pub gc: Vec<f64>,
    /// The params version the refit started from.
    pub based_on: u64,
}

/// C(x_j, x_j') of open samples from the lower-triangular cache.
#[inline]
fn css(c_ss: &[f64], kb: usize, j: usize, jj: usize) -> f64 {
    if jj <= j {
        c_ss[j * kb + jj]
    } else {
        c_ss[jj * kb + j]
    }
}

/// The block path's state. See the module doc.
#[derive(Debug, Clone)]
pub(crate) struct Engine {
    pub cfg: ValidConfig,
    pub params: Params,
    pub win: Window,
    /// Scaled inputs of every slot (slot-major, like the window).
    pub xs: Vec<f64>,
    /// Scaled inputs of the open block's samples.
    pub xs_open: Vec<f64>,
    /// G_C over slots, blocks × blocks, row-major; entries of inactive slots are unused.
    pub g: Vec<f64>,
    /// g_single[j·blocks + b] = s_bᵀ C(X_b, x_j) for open sample j and active slot b.
    pub g_single: Vec<f64>,
    /// c_ss[j·k_b + j'] = C(x_j, x_j') for open samples j' ≤ j.
    pub c_ss: Vec<f64>,
    /// c_o of the last full rebuild.
    pub c: Vec<f64>,
    /// Per output: the factor of M over (active blocks, singles).
    pub chol: Vec<Tri>,
    /// Per output: z = Sᵀ r over the same actions (stride `cap_actions`).
    pub z: Vec<f64>,
    /// The factors and z cover `live_singles` singles of the open block and are current.
    pub live: bool,
    pub live_singles: usize,
    /// Blocks committed so far.
    pub blocks_inserted: u64,
    /// Blocks committed since the last refit was started.
    pub blocks_since_refit: usize,
    /// Blocks committed by a one-row factor update (not saved: a diagnostic).
    pub row_commits: u64,
    /// Snapshots built so far.
    pub version: u64,
    /// Something changed since the last publication.
    pub dirty: bool,
    /// Newest time stamp admitted, s (−∞ before the first sample).
    pub t_newest: f64,
    /// t_now of the inflated noises in use (drift): ages are `t_ref − t_i`; −∞ before the
    /// first refresh (every age 0).
    pub t_ref: f64,
    /// Blocks that left the window by expiry (drift).
    pub blocks_expired: u64,
    /// Drift refreshes so far.
    pub drift_refreshes: u64,
    rng: ChaCha8Rng,
    scratch_resid: Vec<f64>,
    scratch_prec: Vec<f64>,
    scratch_s: Vec<f64>,
    scratch_row: Vec<f64>,
    /// The row replacement's workspace (2 × actions).
    scratch_replace: Vec<f64>,
}

impl Engine {
    /// **Allocates** every buffer.
    pub fn new(cfg: &ValidConfig) -> Self {
        let (d, p, nb, kb) = (cfg.input_dim, cfg.output_dim, cfg.blocks, cfg.block_size);
        let n = nb * kb;
        let cap = nb + kb;
        Self {
            params: Params::from_config(cfg),
            win: Window::new(d, p, nb, kb),
            xs: vec![0.0; n * d],
            xs_open: vec![0.0; kb * d],
            g: vec![0.0; nb * nb],
            g_single: vec![0.0; kb * nb],
            c_ss: vec![0.0; kb * kb],
            c: vec![f64::INFINITY; p],
            chol: (0..p).map(|_| Tri::with_capacity(cap)).collect(),
            z: vec![0.0; p * cap],
            live: true,
            live_singles: 0,
            blocks_inserted: 0,
            blocks_since_refit: 0,
            row_commits: 0,
            version: 0,
            dirty: false,
            t_newest: f64::NEG_INFINITY,
            t_ref: f64::NEG_INFINITY,
            blocks_expired: 0,
            drift_refreshes: 0,
            rng: ChaCha8Rng::seed_from_u64(cfg.seed),
            scratch_resid: vec![0.0; n + kb],
            scratch_prec: vec![0.0; kb],
            scratch_s: vec![0.0; kb],
            scratch_row: vec![0.0; cap],
            scratch_replace: vec![0.0; 2 * cap],
            cfg: cfg.clone(),
        }
    }

    /// Capacity of the action dimension (blocks + block size).
    pub fn cap_actions(&self) -> usize {
        self.cfg.blocks + self.cfg.block_size
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

    /// Recomputes the scaled inputs and the open samples' kernel rows from the raw inputs
    /// (after new lengthscales or a load). No allocation.
    pub fn rescale_inputs(&mut self) {
        let d = self.cfg.input_dim;
        let n = self.win.n_points();
        for l in 0..n {
            for t in 0..d {
                self.xs[l * d + t] = self.win.rows.x[l * d + t] * self.params.inv_ell[t];
            }
        }
        for j in 0..self.win.open_len {
            self.open_kernel_rows(j);
        }
    }

    /// The base noise ν of a point stamped `t_secs` as the posterior uses it: ν itself, or
    /// with drift ν(t) = drift.var(ν, t_ref − t_secs) (ages below 0 count as 0). No
    /// allocation.
    #[inline]
    pub fn noise_at(&self, noise: f64, t_secs: f64) -> f64 {
        match &self.cfg.drift {
            None => noise,
            Some(dr) => dr.var(noise, self.t_ref - t_secs),
        }
    }

    /// The weights of a point of output `o` stamped `t` with threshold² `c2`. No allocation.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn weight(
        &self,
        o: usize,
        y: f64,
        noise: f64,
        t: f64,
        center: f64,
        cvar: f64,
        c2: f64,
    ) -> PointWeight {
        // With drift the aged noise replaces σ² everywhere in the point's pseudo-likelihood
        // (d, Λ, r and the normalized β²): the exact RCGP of a heteroscedastic model.
        let s2 = self.params.kappa[o] * self.noise_at(noise, t);
        point(
            y,
            center,
            self.cfg.prior_mean[o],
            c2 + cvar,
            s2,
            self.cfg.beta.beta2(s2),
            self.cfg.weight_profile,
        )
    }

    fn open_weight(&self, o: usize, j: usize) -> PointWeight {
        let (p, open) = (self.cfg.output_dim, &self.win.open);
        let k = j * p + o;
        self.weight(
            o,
            open.y[k],
            open.noise[k],
            open.t[j],
            open.center[k],
            open.cvar[k],
            self.c[o] * self.c[o],
        )
    }

    /// Scaled input and kernel rows (against the active blocks and the earlier open
    /// samples) of open sample j. No allocation.
    fn open_kernel_rows(&mut self, j: usize) {
        let (d, kb, nbmax) = (self.cfg.input_dim, self.cfg.block_size, self.cfg.blocks);
        let kind = self.cfg.kind;
        for t in 0..d {
            self.xs_open[j * d + t] = self.win.open.x[j * d + t] * self.params.inv_ell[t];
        }
        let xj = &self.xs_open[j * d..(j + 1) * d];
        for b in 0..self.win.filled {
            let mut acc = 0.0;
            for m in b * kb..(b + 1) * kb {
                acc += self.win.s[m] * kind.profile(sq_dist(xj, &self.xs[m * d..(m + 1) * d]));
            }
            self.g_single[j * nbmax + b] = acc;
        }
        for jj in 0..=j {
            self.c_ss[j * kb + jj] = kind.profile(sq_dist(xj, &self.xs_open[jj * d..(jj + 1) * d]));
        }
    }

    #[inline]
    fn css(&self, j: usize, jj: usize) -> f64 {
        css(&self.c_ss, self.cfg.block_size, j, jj)
    }

    /// Admits one sample: into the open block and, as a singleton action, into every
    /// output's factor; commits the block when it fills. No allocation.
    pub fn admit(&mut self, sample: &SampleRef<'_>) {
        self.t_newest = self.t_newest.max(sample.t_secs);
        self.admit_inner(sample);
        self.maybe_refresh_drift();
    }

    fn admit_inner(&mut self, sample: &SampleRef<'_>) {
        let full = self.win.push_open(sample);
        let j = self.win.open_len - 1;
        self.open_kernel_rows(j);
        self.dirty = true;
        if full {
            self.commit_open_block();
            return;
        }
        if self.win.filled == 0 && j == 0 {
            // The very first sample: nothing to extend yet; thresholds from it alone.
            self.update_thresholds(true);
        }
        if self.live && self.live_singles == j && self.extend_single(j).is_ok() {
            self.live_singles = j + 1;
        } else {
            self.live = false;
        }
    }

    /// Drift: refreshes once the newest stamp is a refresh period past `t_ref` (the first
    /// admitted sample refreshes at once). Ages only advance with new samples, so refreshing
    /// in the samples' clock loses nothing and keeps inline and background runs identical.
    fn maybe_refresh_drift(&mut self) {
        let Some(dr) = self.cfg.drift else {
            return;
        };
        if self.t_ref.is_finite() && self.t_newest - self.t_ref < dr.refresh_period_s() {
            return;
        }
        self.refresh_drift();
    }

    /// Drift: ages every sample to `t_newest`, drops the blocks that expired and marks the
    /// posterior for a full rebuild (at the next publication, on the worker in background
    /// mode). No allocation.
    pub fn refresh_drift(&mut self) {
        if self.cfg.drift.is_none() {
            return;
        }
        self.t_ref = self.t_newest;
        self.expire_blocks();
        self.drift_refreshes += 1;
        self.live = false;
        self.dirty = true;
    }

    /// Whether every sample of slot `slot` has expired for every output.
    fn block_expired(&self, slot: usize) -> bool {
        let Some(dr) = &self.cfg.drift else {
            return false;
        };
        let (p, kb) = (self.cfg.output_dim, self.cfg.block_size);
        let rows = &self.win.rows;
        (slot * kb..(slot + 1) * kb).all(|l| {
            let age = self.t_ref - rows.t[l];
            rows.noise[l * p..(l + 1) * p]
                .iter()
                .all(|&nu| dr.expired(nu, age))
        })
    }

    /// Removes the oldest committed blocks whose samples have all expired (blocks leave in
    /// FIFO order; the newest sample never expires: at age 0 its ratio is 1). The remaining
    /// slots are rotated so that the oldest is slot 0 and the window is no longer full, which
    /// keeps `Window`'s invariants (slots 0..filled active, in age order). No allocation.
    fn expire_blocks(&mut self) {
        let (nbmax, kb) = (self.cfg.blocks, self.cfg.block_size);
        let nb = self.win.filled;
        let start = if nb == nbmax { self.win.next_slot } else { 0 };
        let mut e = 0;
        while e < nb && self.block_expired((start + e) % nbmax) {
            e += 1;
        }
        if e == 0 {
            return;
        }
        let r = (start + e) % nbmax;
        let (d, p) = (self.cfg.input_dim, self.cfg.output_dim);
        let rows = &mut self.win.rows;
        rows.x.rotate_left(r * kb * d);
        rows.y.rotate_left(r * kb * p);
        rows.noise.rotate_left(r * kb * p);
        rows.t.rotate_left(r * kb);
        rows.center.rotate_left(r * kb * p);
        rows.cvar.rotate_left(r * kb * p);
        self.win.s.rotate_left(r * kb);
        self.win.ids.rotate_left(r);
        self.xs.rotate_left(r * kb * d);
        self.g.rotate_left(r * nbmax);
        for row in self.g.chunks_exact_mut(nbmax) {
            row.rotate_left(r);
        }
        for row in self.g_single.chunks_exact_mut(nbmax) {
            row.rotate_left(r);
        }
        self.win.filled = nb - e;
        self.win.next_slot = 0;
        self.blocks_expired += e as u64;
        self.live = false;
        self.dirty = true;
    }

    /// Adds open sample j as a singleton action to every output's factor. No allocation.
    fn extend_single(&mut self, j: usize) -> Result<(), RcagpError> {
        let (p, nbmax) = (self.cfg.output_dim, self.cfg.blocks);
        let nb = self.win.filled;
        let cap = self.cap_actions();
        let at = nb + j;
        for o in 0..p {
            let sf2 = self.params.outputscale[o];
            let w = self.open_weight(o, j);
            let mut row = std::mem::take(&mut self.scratch_row);
            for (r, g) in row[..nb]
                .iter_mut()
                .zip(&self.g_single[j * nbmax..j * nbmax + nb])
            {
                *r = sf2 * g;
            }
            for jj in 0..j {
                row[nb + jj] = sf2 * self.css(j, jj);
            }
            let diag = sf2 * self.css(j, j) + w.d;
            let r = self.chol[o].extend(&mut row[..at], diag);
            self.scratch_row = row;
            r?;
            self.z[o * cap + at] = w.r;
        }
        Ok(())
    }

    /// Soft thresholds c_o = max(Q_{1−ε}|y − γ|, c_floor_sigmas·median σ, c_min) over the
    /// committed window, plus the open block if `with_open`. No allocation.
    fn update_thresholds(&mut self, with_open: bool) {
        let p = self.cfg.output_dim;
        let n = self.win.n_points();
        let n_open = if with_open { self.win.open_len } else { 0 };
        if n + n_open == 0 {
            return;
        }
        for o in 0..p {
            let rows = &self.win.rows;
            let open = &self.win.open;
            let at = |k: usize, v: &dyn Fn(&super::window::Rows, usize) -> f64| {
                if k < n {
                    v(rows, k * p + o)
                } else {
                    v(open, (k - n) * p + o)
                }
            };
            let buf = &mut self.scratch_resid[..n + n_open];
            for (k, v) in buf.iter_mut().enumerate() {
                *v = at(k, &|r, i| r.noise[i]);
            }
            let median_noise = quantile(buf, 0.5) * self.params.kappa[o];
            let floor =
                (self.cfg.c_floor_sigmas * median_noise.max(0.0).sqrt()).max(self.cfg.c_min);
            for (k, v) in buf.iter_mut().enumerate() {
                *v = at(k, &|r, i| (r.y[i] - r.center[i]).abs());
            }
            let q = quantile(buf, 1.0 - self.cfg.epsilon);
            self.c[o] = if q.is_finite() { q.max(floor) } else { floor };
        }
    }

    /// Gives the full open block its action entries and moves it into the window, with G_C's
    /// row and column from the singles' cached kernel rows. No allocation.
    fn commit_open_block(&mut self) {
        let (d, p, kb, nbmax) = (
            self.cfg.input_dim,
            self.cfg.output_dim,
            self.cfg.block_size,
            self.cfg.blocks,
        );
        // Between threshold refreshes (keyed on the saved block count, so a loaded model
        // refreshes where the saved one would have) the factors take the block as one row.
        let refresh =
            (self.blocks_inserted + 1).is_multiple_of(self.cfg.threshold_refresh_blocks as u64);
        let incremental = !refresh && self.live && self.live_singles + 1 == kb;
        let replaced = self.win.filled == nbmax;
        match self.cfg.actions {
            ActionInit::WeightAware => {
                if !incremental {
                    self.update_thresholds(true);
                }
                self.scratch_s.fill(f64::INFINITY);
                for o in 0..p {
                    let mut max_prec = 0.0f64;
                    for r in 0..kb {
                        let lam = self.open_weight(o, r).lam;
                        self.scratch_prec[r] = lam;
                        max_prec = max_prec.max(lam);
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
        self.xs[slot * kb * d..(slot + 1) * kb * d].copy_from_slice(&self.xs_open[..kb * d]);
        let s_new = &self.win.s[slot * kb..(slot + 1) * kb];
        for b in 0..self.win.filled {
            if b == slot {
                continue;
            }
            let v: f64 = (0..kb)
                .map(|j| s_new[j] * self.g_single[j * nbmax + b])
                .sum();
            self.g[slot * nbmax + b] = v;
            self.g[b * nbmax + slot] = v;
        }
        let mut self_term = 0.0;
        for j in 0..kb {
            let row: f64 = s_new
                .iter()
                .enumerate()
                .map(|(jj, s)| s * self.css(j, jj))
                .sum();
            self_term += s_new[j] * row;
        }
        self.g[slot * nbmax + slot] = self_term;
        self.blocks_inserted += 1;
        self.blocks_since_refit += 1;
        self.live_singles = 0;
        self.dirty = true;
        // A failed row update leaves the factor invalid: the next publication rebuilds it.
        self.live = incremental && self.commit_factors(slot, replaced).is_ok();
        self.row_commits += u64::from(self.live);
    }

    /// The committed block at `slot` into every output's factor and z with the thresholds in
    /// use: the open singles dropped, then the block's row appended, or, when it replaced
    /// the oldest block, that block's row and column replaced (O(i²) per output). No
    /// allocation.
    fn commit_factors(&mut self, slot: usize, replaced: bool) -> Result<(), RcagpError> {
        let (p, nbmax) = (self.cfg.output_dim, self.cfg.blocks);
        let nb = self.win.filled;
        let cap = self.cap_actions();
        for o in 0..p {
            let c2 = self.c[o] * self.c[o];
            let sf2 = self.params.outputscale[o];
            let (delta, z) = self.block_sums(o, slot, c2);
            let mut col = std::mem::take(&mut self.scratch_row);
            let g_row = &self.g[slot * nbmax..slot * nbmax + nb];
            let r = if replaced {
                self.chol[o].truncate(nb);
                for (v, g) in col[..nb].iter_mut().zip(g_row) {
                    *v = sf2 * g;
                }
                col[slot] += delta;
                self.chol[o].replace(slot, &mut col[..nb], &mut self.scratch_replace)
            } else {
                self.chol[o].truncate(slot);
                for (v, g) in col[..slot].iter_mut().zip(g_row) {
                    *v = sf2 * g;
                }
                self.chol[o].extend(&mut col[..slot], sf2 * g_row[slot] + delta)
            };
            self.scratch_row = col;
            r?;
            self.z[o * cap + slot] = z;
        }
        Ok(())
    }

    /// δ_a = max(Σ s_l² d_l, 1e−12) and z_a = Σ s_l r_l of output `o` over the block at
    /// `slot`, with threshold² `c2`. No allocation.
    fn block_sums(&self, o: usize, slot: usize, c2: f64) -> (f64, f64) {
        let (p, kb) = (self.cfg.output_dim, self.cfg.block_size);
        let rows = &self.win.rows;
        let (mut delta, mut z) = (0.0, 0.0);
        for l in slot * kb..(slot + 1) * kb {
            let k = l * p + o;
            let w = self.weight(
                o,
                rows.y[k],
                rows.noise[k],
                rows.t[l],
                rows.center[k],
                rows.cvar[k],
                c2,
            );
            let sl = self.win.s[l];
            delta += sl * sl * w.d;
            z += sl * w.r;
        }
        (delta.max(1e-12), z)
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

    /// Rebuilds every output's factor and z from scratch over the committed blocks and the
    /// open singles, with thresholds recomputed from the window. No allocation.
    fn rebuild_factors(&mut self) -> Result<(), RcagpError> {
        let (p, kb, nbmax) = (self.cfg.output_dim, self.cfg.block_size, self.cfg.blocks);
        let nb = self.win.filled;
        let m = self.win.open_len;
        let cap = self.cap_actions();
        self.update_thresholds(nb == 0);
        for o in 0..p {
            let c2 = self.c[o] * self.c[o];
            let sf2 = self.params.outputscale[o];
            // δ (blocks, then singles' d) into scratch_row; z into self.z.
            let mut delta = std::mem::take(&mut self.scratch_row);
            delta[..nb + m].fill(0.0);
            let zo = o * cap;
            self.z[zo..zo + nb + m].fill(0.0);
            for (a, v) in delta[..nb].iter_mut().enumerate() {
                (*v, self.z[zo + a]) = self.block_sums(o, a, c2);
            }
            for j in 0..m {
                let w = self.open_weight(o, j);
                delta[nb + j] = w.d;
                self.z[zo + nb + j] = w.r;
            }
            let (g, gs, cs) = (&self.g, &self.g_single, &self.c_ss);
            let r = self.chol[o].factor(nb + m, |a, b| {
                // a ≥ b (lower triangle).
                let base = if a < nb {
                    sf2 * g[a * nbmax + b]
                } else if b < nb {
                    sf2 * gs[(a - nb) * nbmax + b]
                } else {
                    sf2 * css(cs, kb, a - nb, b - nb)
                };
                if a == b { base + delta[a] } else { base }
            });
            self.scratch_row = delta;
            r?;
        }
        self.live = true;
        self.live_singles = m;
        Ok(())
    }

    /// Brings the posterior up to date and writes it into `snap` (whose buffers must have the
    /// full window's capacity, as [`Engine::empty_snapshot`] gives). No allocation.
    pub fn publish_into(&mut self, snap: &mut Snapshot) -> Result<(), RcagpError> {
        let (d, p, kb) = (self.cfg.input_dim, self.cfg.output_dim, self.cfg.block_size);
        let nb = self.win.filled;
        let m = self.win.open_len;
        if !(self.live && self.live_singles == m) {
            self.rebuild_factors()?;
        }
        let n = nb * kb;
        let na = nb + m;
        let cap = self.cap_actions();
        snap.xs.clear();
        snap.xs.extend_from_slice(&self.xs[..n * d]);
        snap.xs.extend_from_slice(&self.xs_open[..m * d]);
        snap.s.clear();
        snap.s.extend_from_slice(&self.win.s[..n]);
        snap.inv_ell.copy_from_slice(&self.params.inv_ell);
        snap.outputscale.copy_from_slice(&self.params.outputscale);
        snap.kappa.copy_from_slice(&self.params.kappa);
        snap.prior_mean.copy_from_slice(&self.cfg.prior_mean);
        snap.c.copy_from_slice(&self.c);
        for o in 0..p {
            let vb = &mut snap.vbar[o * cap..o * cap + na];
            vb.copy_from_slice(&self.z[o * cap..o * cap + na]);
            self.chol[o].solve_mut(vb);
            snap.chol[o].copy_from(&self.chol[o]);
        }
        snap.n_blocks = nb;
        snap.n_singles = m;
        self.version += 1;
        snap.version = self.version;
        snap.params_version = self.params.version;
        self.dirty = false;
        Ok(())
    }

    /// The window as a batch [`Problem`] (the committed blocks in slot order with their
    /// action entries, then the open block's samples as singleton actions; the current
    /// thresholds and hyperparameters): what a from-scratch build, the tests and the slow
    /// path use. None while there are no data. **Allocates.**
    pub fn to_problem(&self) -> Option<Problem> {
        let slots: Vec<usize> = (0..self.win.filled).collect();
        self.problem_of(&slots)
    }

    /// The slots of the newest `k` committed blocks, oldest first (every block if `k` is 0
    /// or more than there are). **Allocates.**
    pub fn newest_slots(&self, k: usize) -> Vec<usize> {
        let (nb, nbmax) = (self.win.filled, self.cfg.blocks);
        let k = if k == 0 { nb } else { k.min(nb) };
        // Slots are in age order from `next_slot` once the ring is full, from 0 before.
        let oldest = if nb == nbmax { self.win.next_slot } else { 0 };
        (nb - k..nb).map(|i| (oldest + i) % nbmax).collect()
    }

    /// [`Engine::to_problem`] over the committed blocks at `slots` (in that order) and the
    /// open block's samples. None while there are no data. **Allocates.**
    pub fn problem_of(&self, slots: &[usize]) -> Option<Problem> {
        let (d, p, kb) = (self.cfg.input_dim, self.cfg.output_dim, self.cfg.block_size);
        let nb = slots.len();
        let m = self.win.open_len;
        let n = nb * kb;
        let offsets: Vec<usize> = (0..=nb)
            .map(|a| a * kb)
            .chain((1..=m).map(|j| n + j))
            .collect();
        let layout = BlockLayout::from_offsets(offsets)?;
        let rows = &self.win.rows;
        let open = &self.win.open;
        let points: Vec<usize> = slots.iter().flat_map(|&a| a * kb..(a + 1) * kb).collect();
        let col = |o: usize, f: &dyn Fn(&super::window::Rows, usize) -> f64| -> Vec<f64> {
            points
                .iter()
                .map(|&l| f(rows, l * p + o))
                .chain((0..m).map(|j| f(open, j * p + o)))
                .collect()
        };
        let outputs = (0..p)
            .map(|o| {
                let c2 = self.c[o] * self.c[o];
                (
                    OutputData {
                        y: col(o, &|r, i| r.y[i]),
                        noise: col(o, &|r, i| self.noise_at(r.noise[i], r.t[i / p])),
                        prior_mean: vec![self.cfg.prior_mean[o]; n + m],
                        center: col(o, &|r, i| r.center[i]),
                        c2: col(o, &|r, i| c2 + r.cvar[i]),
                    },
                    OutputParams {
                        outputscale: self.params.outputscale[o],
                        sigma2: self.params.kappa[o],
                        beta: self.cfg.beta,
                        profile: self.cfg.weight_profile,
                    },
                )
            })
            .collect();
        let mut x: Vec<f64> = points
            .iter()
            .flat_map(|&l| rows.x[l * d..(l + 1) * d].iter().copied())
            .collect();
        x.extend_from_slice(&open.x[..m * d]);
        let mut s: Vec<f64> = points.iter().map(|&l| self.win.s[l]).collect();
        s.extend(std::iter::repeat_n(1.0, m));
        Some(Problem {
            kind: self.cfg.kind,
            d,
            x,
            lengthscales: self.params.ell.clone(),
            actions: Actions::Block { layout, s },
            outputs,
        })
    }

    /// Installs hyperparameters from the slow path: rescales the inputs and rebuilds G_C,
    /// taking the refit's entries for blocks it saw and computing the rest. Ignored (false)
    /// if the hyperparameters changed since the refit started. No allocation.
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
        // Scaled inputs first (the open rows need the committed ones).
        let d = self.cfg.input_dim;
        for l in 0..self.win.n_points() {
            for t in 0..d {
                self.xs[l * d + t] = self.win.rows.x[l * d + t] * self.params.inv_ell[t];
            }
        }
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
        for j in 0..self.win.open_len {
            self.open_kernel_rows(j);
        }
        self.live = false;
        self.dirty = true;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn engine(blocks: usize) -> Engine {
        let cfg = Config::from_json(&serde_json::json!({
            "hyper": {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [0.5]},
            "blocks": blocks, "block_size": 2,
        }))
        .and_then(|c| c.check(1, 1))
        .unwrap();
        Engine::new(&cfg)
    }

    fn admit(e: &mut Engine, k: usize) {
        let x = [k as f64 * 0.1];
        e.admit(&SampleRef {
            x: &x,
            y: &[x[0].sin()],
            noise: &[0.01],
            t_secs: k as f64,
            center: &[0.0],
            cvar: &[0.0],
        });
    }

    #[test]
    fn newest_slots_are_the_newest_blocks_oldest_first_through_the_ring() {
        let mut e = engine(4);
        for k in 0..6 {
            admit(&mut e, k);
        }
        // Three blocks in slots 0, 1, 2.
        assert_eq!(e.newest_slots(2), [1, 2]);
        assert_eq!(e.newest_slots(0), [0, 1, 2]);
        assert_eq!(e.newest_slots(9), [0, 1, 2]);
        for k in 6..14 {
            admit(&mut e, k);
        }
        // Seven blocks: slots 0, 1, 2 hold blocks 4, 5, 6; slot 3 holds block 3.
        assert_eq!(e.win.next_slot, 3);
        assert_eq!(e.newest_slots(3), [0, 1, 2]);
        assert_eq!(e.newest_slots(0), [3, 0, 1, 2]);
        let ids: Vec<u64> = e.newest_slots(4).iter().map(|&a| e.win.ids[a]).collect();
        assert_eq!(ids, [3, 4, 5, 6]);
        // A problem over them holds their points in that order.
        let problem = e.problem_of(&e.newest_slots(2)).unwrap();
        let xs: Vec<f64> = problem.x.iter().map(|v| (v * 10.0).round()).collect();
        assert_eq!(xs, [10.0, 11.0, 12.0, 13.0]);
    }
}
