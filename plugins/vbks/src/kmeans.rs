//! Inducing inputs by k-means (k-means++ seeding, then Lloyd iterations), shared by all
//! kernels and fixed afterwards (spec gap #6). Offline only; allocates.

use crate::rng::Rng;

fn sq_dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(u, v)| (u - v) * (u - v)).sum()
}

/// `m` centres of the n points in `x` (row-major n×d), row-major m×d. Needs n ≥ 1; if
/// n < m some centres repeat points (the caller adds jitter).
pub fn kmeans(x: &[f64], d: usize, m: usize, iterations: usize, rng: &mut Rng) -> Vec<f64> {
    let n = x.len() / d;
    let row = |i: usize| &x[i * d..(i + 1) * d];
    let mut z = Vec::with_capacity(m * d);
    if n == 0 || m == 0 {
        return vec![0.0; m * d];
    }
    // k-means++: each next centre drawn with probability ∝ squared distance to the nearest.
    let first = rng.below(n);
    z.extend_from_slice(row(first));
    let mut nearest: Vec<f64> = (0..n).map(|i| sq_dist(row(i), row(first))).collect();
    for _ in 1..m {
        let total: f64 = nearest.iter().sum();
        let pick = if total > 0.0 {
            let mut u = rng.uniform() * total;
            let mut pick = n - 1;
            for (i, &w) in nearest.iter().enumerate() {
                if u < w {
                    pick = i;
                    break;
                }
                u -= w;
            }
            pick
        } else {
            rng.below(n)
        };
        let c = row(pick).to_vec();
        for (i, w) in nearest.iter_mut().enumerate() {
            *w = w.min(sq_dist(row(i), &c));
        }
        z.extend_from_slice(&c);
    }
    // Lloyd iterations.
    let mut assign = vec![0usize; n];
    let mut sums = vec![0.0; m * d];
    let mut counts = vec![0usize; m];
    for _ in 0..iterations {
        let mut changed = false;
        for i in 0..n {
            let xi = row(i);
            let (mut best, mut best_d) = (0, f64::INFINITY);
            for c in 0..m {
                let dist = sq_dist(xi, &z[c * d..(c + 1) * d]);
                if dist < best_d {
                    best = c;
                    best_d = dist;
                }
            }
            if assign[i] != best {
                changed = true;
                assign[i] = best;
            }
        }
        sums.fill(0.0);
        counts.fill(0);
        for i in 0..n {
            let c = assign[i];
            counts[c] += 1;
            for (s, v) in sums[c * d..(c + 1) * d].iter_mut().zip(row(i)) {
                *s += v;
            }
        }
        for c in 0..m {
            if counts[c] > 0 {
                for j in 0..d {
                    z[c * d + j] = sums[c * d + j] / counts[c] as f64;
                }
            }
        }
        if !changed {
            break;
        }
    }
    z
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_separated_clusters() {
        let mut x = Vec::new();
        for k in 0..3 {
            for i in 0..20 {
                x.push(k as f64 * 10.0 + (i as f64 * 0.01));
            }
        }
        let mut rng = Rng::new(1);
        let mut z = kmeans(&x, 1, 3, 50, &mut rng);
        z.sort_by(f64::total_cmp);
        for (k, c) in z.iter().enumerate() {
            assert!((c - (k as f64 * 10.0 + 0.095)).abs() < 1e-9, "{z:?}");
        }
    }
}
