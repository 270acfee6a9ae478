//! Side queries to an expert (spec §1.5, §2.4): the pool of past locations, how many to
//! query (Q_t, §7 #5), where (greedy pivoted Cholesky = the greedy M-DPP initialisation,
//! optionally refined by the lazy swap chain of Algorithm 2, or the random placements of
//! the budget-matched ablations), and the certificate Ĉ_KL = tr(K − Q_Z)/min(σ², σ̄²)
//! (§2.2).
//!
//! The selection reads only locations, never targets: that is what makes the expert's
//! fresh answers usable in place of stale observations.

use super::rng::SplitMix64;
use gpn_gp_core::cholesky::PackedCholesky;
use gpn_gp_core::drift::greedy_pivoted_cholesky;
use gpn_gp_core::kernel::Kernel;

/// Points with duplicates removed: a point within Euclidean distance `tol` of an earlier
/// kept point is dropped (§2.4: merge points closer than 1e-9·ℓ, duplicates make the
/// determinants zero). Row-major with `dim` columns; keeps first occurrences in input order.
pub fn dedup_points(points: &[f64], dim: usize, tol: f64) -> Vec<f64> {
    let n = points.len().checked_div(dim).unwrap_or(0);
    let row = |i: usize| &points[i * dim..(i + 1) * dim];
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| points[a * dim].total_cmp(&points[b * dim]).then(a.cmp(&b)));
    let mut kept_sorted: Vec<usize> = Vec::new();
    let mut keep = vec![false; n];
    for &i in &order {
        let xi = row(i);
        let mut duplicate = false;
        for &k in kept_sorted.iter().rev() {
            let xk = row(k);
            if xi[0] - xk[0] > tol {
                break;
            }
            let d2: f64 = xi.iter().zip(xk).map(|(a, b)| (a - b) * (a - b)).sum();
            if d2.sqrt() <= tol {
                duplicate = true;
                break;
            }
        }
        if !duplicate {
            kept_sorted.push(i);
            keep[i] = true;
        }
    }
    (0..n).filter(|&i| keep[i]).flat_map(row).copied().collect()
}

/// How many side queries per step (§7 #5).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum QSchedule {
    /// Q_t = min(|P_t|, q_max, max(1, ⌈c_q·(ln t)^d⌉)); the experiments' 6 ln t is c_q = 6.
    LogPerStep {
        /// c_Q.
        c_q: f64,
        /// Cap Q_max.
        q_max: usize,
    },
    /// Q_t = min(|P_t|, q) (the other reading of Q_T = 6 ln T: 37 at T = 500).
    Fixed(usize),
    /// Adaptive trace rule (§6.3): the smallest greedy prefix with
    /// tr(K − Q_Z)/min(σ², σ̄²) ≤ η, at most q_max.
    TraceRule {
        /// KL tolerance η.
        eta: f64,
        /// Cap Q_max.
        q_max: usize,
    },
}

impl QSchedule {
    /// The experiments' schedule: ⌈6 ln t⌉, cap 64.
    pub fn paper() -> Self {
        QSchedule::LogPerStep {
            c_q: 6.0,
            q_max: 64,
        }
    }

    /// The number of points to select at step t from a pool of `pool_len` in dimension
    /// `dim` (for [`QSchedule::TraceRule`], the cap; the rule then truncates).
    pub fn budget(&self, t: usize, dim: usize, pool_len: usize) -> usize {
        let q = match *self {
            QSchedule::LogPerStep { c_q, q_max } => {
                let lt = (t.max(1) as f64).ln();
                let raw = (c_q * lt.powi(dim as i32)).ceil();
                // A float → count conversion: raw is finite and ≥ 0 here.
                (raw.max(1.0) as usize).min(q_max)
            }
            QSchedule::Fixed(q) => q,
            QSchedule::TraceRule { q_max, .. } => q_max,
        };
        q.min(pool_len)
    }
}

/// The residual trace tr(K_PP − K_PZ K_ZZ⁻¹ K_ZP) of the pool `pool` given the first m
/// points of `z`, for every m = 0..=|z| (entry 0 is tr K_PP). `z` may lie outside the pool;
/// a point of `z` already explained by the earlier ones (residual ≤ 1e-12·k(z,z)) adds
/// nothing. O(|P|·|z|²).
pub fn prefix_residual_traces<K: Kernel>(kernel: &K, pool: &[f64], z: &[f64]) -> Vec<f64> {
    let d = kernel.dim();
    let n_pool = pool.len() / d;
    let m = z.len() / d;
    let zr = |r: usize| &z[r * d..(r + 1) * d];
    // Pivoted Cholesky of K_ZZ in the given order, skipping dependent points.
    let mut l = PackedCholesky::with_capacity(m);
    let mut active = Vec::with_capacity(m); // which z rows made it into L
    let mut col = Vec::with_capacity(m);
    for r in 0..m {
        col.clear();
        col.extend(active.iter().map(|&a: &usize| kernel.value(zr(a), zr(r))));
        let c = kernel.value(zr(r), zr(r));
        let mut l_try = col.clone();
        l.solve_lower_mut(&mut l_try);
        let resid = c - l_try.iter().map(|v| v * v).sum::<f64>();
        if resid > 1e-12 * c && l.extend_with_solved_mut(&l_try, c, 0.0).is_ok() {
            active.push(r);
        }
    }
    // Residual of each pool point: k_jj − Σ_r e_r², accumulated per prefix.
    let mut drop_by_prefix = vec![0.0; m + 1];
    let mut total = 0.0;
    let mut e = Vec::with_capacity(active.len());
    for j in 0..n_pool {
        let pj = &pool[j * d..(j + 1) * d];
        total += kernel.value(pj, pj);
        e.clear();
        e.extend(active.iter().map(|&a| kernel.value(zr(a), pj)));
        l.solve_lower_mut(&mut e);
        for (ai, &r) in active.iter().enumerate() {
            drop_by_prefix[r + 1] += e[ai] * e[ai];
        }
    }
    let mut out = Vec::with_capacity(m + 1);
    let mut acc = total;
    out.push(total);
    for dr in &drop_by_prefix[1..] {
        acc -= dr;
        out.push(acc.max(0.0));
    }
    out
}

/// det K_Z'Z' / det K_ZZ for the swap Z' = Z \ {z_i} ∪ {p} (§2.4): with P = K_ZZ⁻¹,
/// b = k(Z, p), c = P b and s = k(p,p) − bᵀc, the ratio is s·P_ii + c_i². `p_inv` is P
/// (M×M, row-major), `b` is k(Z, p). O(M²).
pub fn swap_det_ratio(p_inv: &[f64], m: usize, i: usize, b: &[f64], k_pp: f64) -> f64 {
    let c = |r: usize| (0..m).map(|q| p_inv[r * m + q] * b[q]).sum::<f64>();
    let cs: Vec<f64> = (0..m).map(c).collect();
    let s = k_pp - b.iter().zip(&cs).map(|(x, y)| x * y).sum::<f64>();
    s * p_inv[i * m + i] + cs[i] * cs[i]
}

/// Where the side queries go.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Placement {
    /// Greedy pivoted Cholesky over the pool (deterministic; the spec's `greedy_only`).
    Greedy,
    /// Greedy, then the lazy swap chain for Ñ = min(`per_point`·|P|, `max_iters`) steps.
    GreedyMcmc {
        /// Proposals per pool point (the spec's 10).
        per_point: usize,
        /// Cap on the proposals (the spec's 10 000).
        max_iters: usize,
    },
    /// Ablation: Q_t past locations uniformly at random without replacement.
    RandomPast,
    /// Ablation: Q_t uniform random points of the domain box.
    RandomDomain,
}

/// One step's chosen query points.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Selection {
    /// The points, row-major.
    pub points: Vec<f64>,
    /// tr(K − Q_Z) over the pool.
    pub residual_trace: f64,
    /// Accepted swaps of the chain (0 without one).
    pub swaps_accepted: usize,
}

/// Selects side-query points from a deduplicated `pool` (row-major). `q` is the budget
/// from [`QSchedule::budget`]; with `trace_eta = Some((η, σ_min²))` the greedy prefix is
/// cut at the first m with tr(K − Q_Z)/σ_min² ≤ η. `domain` is the box [lo, hi] per input
/// (for [`Placement::RandomDomain`]). `tol` is the greedy stopping tolerance
/// (1e-12·M_k² in the spec).
#[allow(clippy::too_many_arguments)]
pub fn select<K: Kernel>(
    kernel: &K,
    pool: &[f64],
    q: usize,
    placement: Placement,
    trace_eta: Option<(f64, f64)>,
    domain: &[(f64, f64)],
    tol: f64,
    rng: &mut SplitMix64,
) -> Selection {
    let d = kernel.dim();
    let n = pool.len() / d;
    let q = q.min(n);
    let row = |i: usize| &pool[i * d..(i + 1) * d];
    let gather = |idx: &[usize]| {
        idx.iter()
            .flat_map(|&i| row(i))
            .copied()
            .collect::<Vec<_>>()
    };
    let mut swaps_accepted = 0;
    let points = match placement {
        Placement::Greedy | Placement::GreedyMcmc { .. } => {
            let mut idx = greedy_pivoted_cholesky(pool, d, q, tol, |a, b| kernel.value(a, b));
            if let Some((eta, s2)) = trace_eta {
                let traces = prefix_residual_traces(kernel, pool, &gather(&idx));
                let m = traces
                    .iter()
                    .position(|tr| tr / s2 <= eta)
                    .unwrap_or(idx.len());
                idx.truncate(m);
            }
            if let Placement::GreedyMcmc {
                per_point,
                max_iters,
            } = placement
            {
                let iters = (per_point * n).min(max_iters);
                swaps_accepted = swap_chain(kernel, pool, &mut idx, iters, rng);
            }
            gather(&idx)
        }
        Placement::RandomPast => {
            // Partial Fisher–Yates: the first q of a random permutation.
            let mut all: Vec<usize> = (0..n).collect();
            for k in 0..q {
                let j = k + rng.below(n - k);
                all.swap(k, j);
            }
            gather(&all[..q])
        }
        Placement::RandomDomain => {
            let mut pts = Vec::with_capacity(q * d);
            for _ in 0..q {
                for &(lo, hi) in domain {
                    pts.push(rng.uniform_in(lo, hi));
                }
            }
            pts
        }
    };
    let residual_trace = prefix_residual_traces(kernel, pool, &points)
        .last()
        .copied()
        .unwrap_or(0.0);
    Selection {
        points,
        residual_trace,
        swaps_accepted,
    }
}

/// The lazy swap chain of Algorithm 2 on pool indices `z` (modified in place) for `iters`
/// proposals: swap a uniform member of Z for a uniform non-member, accept with probability
/// ½·min(1, det ratio). Keeps K_ZZ⁻¹ by O(M²) downdate/bordering per accepted swap and
/// refactors every 64 accepts against drift. Returns the number of accepted swaps.
pub fn swap_chain<K: Kernel>(
    kernel: &K,
    pool: &[f64],
    z: &mut [usize],
    iters: usize,
    rng: &mut SplitMix64,
) -> usize {
    let d = kernel.dim();
    let n = pool.len() / d;
    let m = z.len();
    if m == 0 || m >= n {
        return 0;
    }
    let row = |i: usize| &pool[i * d..(i + 1) * d];
    let Some(mut p_inv) = inverse_gram(kernel, pool, z) else {
        return 0;
    };
    let mut member = vec![false; n];
    for &i in z.iter() {
        member[i] = true;
    }
    let mut b = vec![0.0; m];
    let mut accepted = 0;
    for _ in 0..iters {
        let i = rng.below(m);
        let j = loop {
            let j = rng.below(n);
            if !member[j] {
                break j;
            }
        };
        for (br, &zr) in b.iter_mut().zip(z.iter()) {
            *br = kernel.value(row(zr), row(j));
        }
        let k_jj = kernel.value(row(j), row(j));
        let ratio = swap_det_ratio(&p_inv, m, i, &b, k_jj);
        if rng.uniform() >= 0.5 * ratio.clamp(0.0, 1.0) {
            continue;
        }
        member[z[i]] = false;
        member[j] = true;
        z[i] = j;
        accepted += 1;
        if accepted % 64 == 0 || !replace_in_inverse(&mut p_inv, m, i, &b, k_jj) {
            match inverse_gram(kernel, pool, z) {
                Some(p) => p_inv = p,
                None => return accepted,
            }
        }
    }
    accepted
}

/// K_ZZ⁻¹ (row-major) by Cholesky with jitter 1e-10·k(z,z); `None` if not PD.
fn inverse_gram<K: Kernel>(kernel: &K, pool: &[f64], z: &[usize]) -> Option<Vec<f64>> {
    let d = kernel.dim();
    let m = z.len();
    let row = |i: usize| &pool[i * d..(i + 1) * d];
    let mut l = PackedCholesky::with_capacity(m);
    let jitter = 1e-10 * kernel.value(row(z[0]), row(z[0]));
    l.factor_mut(m, jitter, |a, b| kernel.value(row(z[a]), row(z[b])))
        .ok()?;
    let mut inv = vec![0.0; m * m];
    let mut e = vec![0.0; m];
    for c in 0..m {
        e.fill(0.0);
        e[c] = 1.0;
        l.solve_mut(&mut e);
        for r in 0..m {
            inv[r * m + c] = e[r];
        }
    }
    Some(inv)
}

/// Replaces member i of Z in P = K_ZZ⁻¹ by a point with k(Z_old, p) = `b` (entry i is
/// ignored) and k(p,p) = `k_pp`: downdate (remove i) then border (add p in slot i). O(M²).
/// Returns false if the new Schur complement is not positive (caller refactors).
fn replace_in_inverse(p: &mut [f64], m: usize, i: usize, b: &[f64], k_pp: f64) -> bool {
    let pii = p[i * m + i];
    if pii <= 0.0 || pii.is_nan() {
        return false;
    }
    // Downdate: P₋ᵢ[r][c] = P[r][c] − P[r][i]·P[i][c]/P[i][i] for r, c ≠ i.
    let col_i: Vec<f64> = (0..m).map(|r| p[r * m + i]).collect();
    for r in 0..m {
        for c in 0..m {
            if r != i && c != i {
                p[r * m + c] -= col_i[r] * col_i[c] / pii;
            }
        }
    }
    // Border: c' = P₋ᵢ b', s' = k_pp − b'ᵀc' over r ≠ i.
    let mut cp = vec![0.0; m];
    for r in (0..m).filter(|&r| r != i) {
        cp[r] = (0..m)
            .filter(|&c| c != i)
            .map(|c| p[r * m + c] * b[c])
            .sum();
    }
    let s = k_pp
        - (0..m)
            .filter(|&r| r != i)
            .map(|r| b[r] * cp[r])
            .sum::<f64>();
    if s <= 0.0 || s.is_nan() {
        return false;
    }
    for r in 0..m {
        for c in 0..m {
            if r != i && c != i {
                p[r * m + c] += cp[r] * cp[c] / s;
            }
        }
    }
    for r in (0..m).filter(|&r| r != i) {
        p[r * m + i] = -cp[r] / s;
        p[i * m + r] = -cp[r] / s;
    }
    p[i * m + i] = 1.0 / s;
    true
}

/// An expert answering fresh values of the current function (§1.5, §6.3).
pub trait Expert {
    /// The answer at `z` for step `t`: (value, noise variance).
    fn answer(&mut self, z: &[f64], t: usize) -> (f64, f64);
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpn_gp_core::kernel::ArdKernel;

    #[test]
    fn inverse_replacement_matches_a_fresh_inverse() {
        let k = ArdKernel::se(0.9, &[1.2]).unwrap_or_else(|_| unreachable!());
        let pool: Vec<f64> = (0..12).map(|i| (i as f64 * 1.7).sin() * 6.0).collect();
        let mut z = vec![0usize, 3, 5, 8, 10];
        let mut p = inverse_gram(&k, &pool, &z).unwrap_or_default();
        for (slot, new) in [(2usize, 1usize), (0, 7), (4, 11), (2, 6)] {
            let b: Vec<f64> = z
                .iter()
                .map(|&r| k.value(&[pool[r]], &[pool[new]]))
                .collect();
            assert!(replace_in_inverse(&mut p, 5, slot, &b, k.diag()));
            z[slot] = new;
            let fresh = inverse_gram(&k, &pool, &z).unwrap_or_default();
            for (a, f) in p.iter().zip(&fresh) {
                assert!((a - f).abs() < 1e-6 * f.abs().max(1.0), "{a} vs {f}");
            }
        }
    }
}
