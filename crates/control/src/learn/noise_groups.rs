//! `hyper_sharing: grouped`: the outputs' noise-to-signal ratios λ = σ_n²/σ_f², fitted per
//! output, pooled into a few groups.
//!
//! Why: a model that factorises its kernel once per distinct λ (SkyGP) costs one
//! factorisation per group, so one λ for all outputs (`tied`) is cheapest — but then a joint
//! whose standardised target is mostly sensor noise (a light wrist whose unmodelled torque
//! is below the sensor's noise) gets the others' small λ and fits the noise, and on a joint
//! of 10⁻⁴ kg·m² a few hundredths of N·m of fitted noise are hundreds of rad/s². Ratios within
//! a factor [`GROUP_SPAN`] of each other change the posterior mean little, so they share one.

/// Largest spread of λ within a group (a factor 4 in λ is a factor 2 in σ_n/σ_f).
pub const GROUP_SPAN: f64 = 4.0;

/// Partitions the outputs by their ratios (`ratios[o]` > 0, finite): the fewest groups whose
/// ratios span at most [`GROUP_SPAN`]; when that needs more than `max_groups`, the
/// `max_groups` groups of least within-group variance of ln λ. Groups are contiguous in
/// sorted λ; each lists output indices.
pub fn partition(ratios: &[f64], max_groups: usize) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..ratios.len()).collect();
    order.sort_by(|&a, &b| ratios[a].total_cmp(&ratios[b]));
    let logs: Vec<f64> = order.iter().map(|&o| ratios[o].ln()).collect();
    let bounds = greedy_by_span(&logs, GROUP_SPAN.ln());
    let bounds = if bounds.len() <= max_groups.max(1) {
        bounds
    } else {
        least_variance(&logs, max_groups.max(1))
    };
    bounds
        .iter()
        .map(|&(start, end)| order[start..end].to_vec())
        .collect()
}

/// Pools each group's ratios to their geometric mean: returns the λ of every output.
pub fn pooled_ratios(ratios: &[f64], groups: &[Vec<usize>]) -> Vec<f64> {
    let mut pooled = ratios.to_vec();
    for group in groups {
        let mean_log =
            group.iter().map(|&o| ratios[o].ln()).sum::<f64>() / group.len().max(1) as f64;
        for &o in group {
            pooled[o] = mean_log.exp();
        }
    }
    pooled
}

/// Fewest runs of sorted `logs` each spanning at most `span` (greedy is optimal for this).
fn greedy_by_span(logs: &[f64], span: f64) -> Vec<(usize, usize)> {
    let mut bounds = Vec::new();
    let mut start = 0;
    for i in 1..=logs.len() {
        if i == logs.len() || logs[i] - logs[start] > span {
            bounds.push((start, i));
            start = i;
        }
    }
    bounds
}

/// The partition of sorted `logs` into `k` runs of least total within-run squared
/// deviation (dynamic programming; p is a robot's joint count, so O(k·p²) is nothing).
fn least_variance(logs: &[f64], k: usize) -> Vec<(usize, usize)> {
    let p = logs.len();
    let k = k.min(p).max(1);
    let mut prefix = vec![(0.0, 0.0); p + 1];
    for (i, &v) in logs.iter().enumerate() {
        prefix[i + 1] = (prefix[i].0 + v, prefix[i].1 + v * v);
    }
    let cost = |a: usize, b: usize| {
        let n = (b - a) as f64;
        let (s, s2) = (prefix[b].0 - prefix[a].0, prefix[b].1 - prefix[a].1);
        (s2 - s * s / n).max(0.0)
    };
    // best[g][j]: least cost of the first j values in g runs; from[g][j]: where the last starts.
    let mut best = vec![vec![f64::INFINITY; p + 1]; k + 1];
    let mut from = vec![vec![0; p + 1]; k + 1];
    best[0][0] = 0.0;
    for g in 1..=k {
        for j in g..=p {
            for i in (g - 1)..j {
                let c = best[g - 1][i] + cost(i, j);
                if c < best[g][j] {
                    best[g][j] = c;
                    from[g][j] = i;
                }
            }
        }
    }
    let mut bounds = Vec::with_capacity(k);
    let mut end = p;
    for g in (1..=k).rev() {
        let start = from[g][end];
        bounds.push((start, end));
        end = start;
    }
    bounds.reverse();
    bounds
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(mut groups: Vec<Vec<usize>>) -> Vec<Vec<usize>> {
        for g in &mut groups {
            g.sort_unstable();
        }
        groups.sort();
        groups
    }

    #[test]
    fn close_ratios_share_one_group() {
        let groups = partition(&[1e-4, 2e-4, 3.9e-4], 4);
        assert_eq!(sorted(groups), vec![vec![0, 1, 2]]);
    }

    #[test]
    fn a_noise_dominated_output_keeps_its_own_ratio() {
        // The ratios fitted on a 7-DoF arm whose wrist target is mostly sensor noise.
        let ratios = [7.4e-5, 1.45e-4, 2.2e-4, 1.5e-4, 4.0e-3, 6.1e-4, 129.0];
        let groups = partition(&ratios, 4);
        assert!(groups.len() <= 4);
        assert!(groups.contains(&vec![6]), "{groups:?}");
        let pooled = pooled_ratios(&ratios, &groups);
        assert!((pooled[6] / 129.0 - 1.0).abs() < 1e-12, "{pooled:?}");
        for group in &groups {
            let (lo, hi) = group.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), &o| {
                (lo.min(ratios[o]), hi.max(ratios[o]))
            });
            assert!(hi / lo <= GROUP_SPAN, "{group:?} spans {}", hi / lo);
            for &o in group {
                assert!(pooled[o] >= lo * (1.0 - 1e-12) && pooled[o] <= hi * (1.0 + 1e-12));
            }
        }
    }

    #[test]
    fn more_spread_than_groups_allowed_minimises_the_spread_within_groups() {
        // Ten decades, two groups: the split falls in the widest gap.
        let ratios = [1e-6, 1e-5, 1e-4, 1e2, 1e3, 1e4];
        let groups = sorted(partition(&ratios, 2));
        assert_eq!(groups, vec![vec![0, 1, 2], vec![3, 4, 5]]);
        // One group allowed: everything pooled to the geometric mean.
        let one = partition(&ratios, 1);
        let pooled = pooled_ratios(&ratios, &one);
        assert!(
            pooled.iter().all(|&r| (r / 1e-1 - 1.0).abs() < 1e-9),
            "{pooled:?}"
        );
    }

    #[test]
    fn zero_max_groups_means_one() {
        assert_eq!(partition(&[1.0, 100.0], 0).len(), 1);
    }
}
