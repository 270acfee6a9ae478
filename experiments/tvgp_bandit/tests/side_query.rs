//! Side-query selection (spec §1.5, §2.4, §7 #5, §8 #5–#6).

use gpn_gp_core::drift::greedy_pivoted_cholesky;
use gpn_gp_core::kernel::{ArdKernel, Kernel};
use gpn_tvgp_bandit::rng::SplitMix64;
use gpn_tvgp_bandit::side_query::{
    Placement, QSchedule, dedup_points, prefix_residual_traces, select, swap_chain, swap_det_ratio,
};
use nalgebra::DMatrix;

fn se() -> ArdKernel {
    ArdKernel::se(0.8, &[1.5]).expect("valid SE kernel")
}

fn pool(n: usize, seed: u64) -> Vec<f64> {
    let mut r = SplitMix64::new(seed);
    (0..n).map(|_| r.uniform_in(-10.0, 10.0)).collect()
}

fn gram(k: &ArdKernel, a: &[f64], b: &[f64]) -> DMatrix<f64> {
    DMatrix::from_fn(a.len(), b.len(), |i, j| k.value(&[a[i]], &[b[j]]))
}

#[test]
fn query_counts_follow_decision_5() {
    let q = QSchedule::paper();
    // ⌈6 ln t⌉, at least 1, capped by the pool and by Q_max = 64.
    assert_eq!(q.budget(1, 1, 100), 1);
    assert_eq!(q.budget(2, 1, 100), 5); // 6 ln 2 = 4.16
    assert_eq!(q.budget(3, 1, 2), 2);
    assert_eq!(q.budget(100, 1, 1000), 28); // 27.63
    assert_eq!(q.budget(500, 1, 1000), 38); // 37.29: "about 37–38 at T = 500"
    assert_eq!(q.budget(1_000_000, 1, 1000), 64);
    // d > 1: ⌈c_Q (ln t)^d⌉.
    assert_eq!(q.budget(10, 2, 1000), 32); // 6·5.30 = 31.8
    assert_eq!(QSchedule::Fixed(37).budget(500, 1, 10), 10);
    assert_eq!(QSchedule::Fixed(37).budget(5, 1, 100), 37);
    assert_eq!(
        QSchedule::TraceRule {
            eta: 0.1,
            q_max: 20
        }
        .budget(9, 1, 100),
        20
    );
    // Every step of the T = 500 run asks for ⌈6 ln t⌉ (when the pool allows).
    for t in 2..=500usize {
        let want = (6.0 * (t as f64).ln()).ceil() as usize;
        assert_eq!(q.budget(t, 1, 1000), want, "t = {t}");
    }
}

#[test]
fn residual_traces_equal_the_nystrom_residual() {
    // §8 #5: tr(K − K_nZ K_ZZ⁻¹ K_Zn), for every greedy prefix.
    let k = se();
    let p = pool(40, 1);
    let picks = greedy_pivoted_cholesky(&p, 1, 8, 1e-12, |a, b| k.value(a, b));
    let z: Vec<f64> = picks.iter().map(|&i| p[i]).collect();
    let traces = prefix_residual_traces(&k, &p, &z);
    assert_eq!(traces.len(), 9);
    assert!((traces[0] - 40.0 * 0.64).abs() < 1e-12);
    for m in 1..=8 {
        let zm = &z[..m];
        let kzz = gram(&k, zm, zm).try_inverse().unwrap();
        let knz = gram(&k, &p, zm);
        let q = &knz * kzz * knz.transpose();
        let direct = (0..40).map(|i| 0.64 - q[(i, i)]).sum::<f64>();
        assert!(
            (traces[m] - direct).abs() < 1e-9,
            "m = {m}: {} vs {direct}",
            traces[m]
        );
        assert!(traces[m] <= traces[m - 1] + 1e-12);
    }
    // A point outside the pool works too, and a repeated point adds nothing.
    let outside = [0.123, 0.123, 4.0];
    let t = prefix_residual_traces(&k, &p, &outside);
    assert!((t[1] - t[2]).abs() < 1e-12);
}

#[test]
fn greedy_selection_spreads_and_the_trace_rule_truncates() {
    let k = se();
    let p = pool(200, 2);
    let mut rng = SplitMix64::new(0);
    let dom = [(-10.0, 10.0)];
    let s = select(&k, &p, 12, Placement::Greedy, None, &dom, 1e-12, &mut rng);
    assert_eq!(s.points.len(), 12);
    // Spread: no two chosen points within 0.5 ℓ of each other.
    for (i, a) in s.points.iter().enumerate() {
        for b in &s.points[i + 1..] {
            assert!((a - b).abs() > 0.75, "{a} {b}");
        }
    }
    let full = prefix_residual_traces(&k, &p, &s.points);
    assert!((s.residual_trace - full[12]).abs() < 1e-12);
    // Trace rule: the smallest prefix with tr/σ² ≤ η.
    let (eta, s2) = (0.5, 0.01);
    let r = select(
        &k,
        &p,
        40,
        Placement::Greedy,
        Some((eta, s2)),
        &dom,
        1e-12,
        &mut rng,
    );
    let m = r.points.len();
    let greedy40 = select(&k, &p, 40, Placement::Greedy, None, &dom, 1e-12, &mut rng);
    let traces = prefix_residual_traces(&k, &p, &greedy40.points);
    assert!(m > 0 && m < 40, "{m}");
    assert!(traces[m] / s2 <= eta && traces[m - 1] / s2 > eta);
    assert_eq!(r.points[..], greedy40.points[..m]);
}

#[test]
fn swap_determinant_ratio_matches_a_direct_computation() {
    // §8 #6 on random SE pools.
    let k = ArdKernel::se(1.1, &[0.9]).unwrap();
    let mut rng = SplitMix64::new(3);
    for trial in 0..20 {
        let p = pool(15, 10 + trial);
        let z: Vec<f64> = p[..6].to_vec();
        let kzz = gram(&k, &z, &z);
        let inv = kzz.clone().try_inverse().unwrap();
        let inv_rm: Vec<f64> = (0..36).map(|e| inv[(e / 6, e % 6)]).collect();
        let i = rng.below(6);
        let cand = p[6 + rng.below(9)];
        let b: Vec<f64> = z.iter().map(|&zz| k.value(&[zz], &[cand])).collect();
        let ratio = swap_det_ratio(&inv_rm, 6, i, &b, k.value(&[cand], &[cand]));
        let mut z2 = z.clone();
        z2[i] = cand;
        let direct = gram(&k, &z2, &z2).determinant() / kzz.determinant();
        assert!(
            (ratio - direct).abs() < 1e-7 * direct.abs().max(1e-3),
            "trial {trial}: {ratio} vs {direct}"
        );
    }
}

#[test]
fn the_swap_chain_stays_in_the_pool_and_keeps_its_size() {
    let k = se();
    let p = pool(60, 5);
    let mut z = greedy_pivoted_cholesky(&p, 1, 10, 1e-12, |a, b| k.value(a, b));
    let mut rng = SplitMix64::new(9);
    let accepted = swap_chain(&k, &p, &mut z, 600, &mut rng);
    assert!(accepted > 0);
    assert_eq!(z.len(), 10);
    assert!(z.iter().all(|&i| i < 60));
    let mut sorted = z.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), 10, "members stay distinct");
    // Same seed, same chain.
    let mut z2 = greedy_pivoted_cholesky(&p, 1, 10, 1e-12, |a, b| k.value(a, b));
    swap_chain(&k, &p, &mut z2, 600, &mut SplitMix64::new(9));
    assert_eq!(z, z2);
    // Through `select`: Ñ = min(10 N, cap) proposals, |Z| = Q.
    let s = select(
        &k,
        &p,
        10,
        Placement::GreedyMcmc {
            per_point: 10,
            max_iters: 10_000,
        },
        None,
        &[(-10.0, 10.0)],
        1e-12,
        &mut rng,
    );
    assert_eq!(s.points.len(), 10);
    assert!(s.points.iter().all(|x| p.contains(x)));
    assert!(s.swaps_accepted > 0);
    // The chain favours spread sets: mean det over the chain's end states beats random sets.
    let logdet = |pts: &[f64]| gram(&k, pts, pts).determinant().ln();
    let mut r = SplitMix64::new(1);
    let random: f64 = (0..50)
        .map(|_| {
            let mut idx: Vec<usize> = (0..60).collect();
            for a in 0..10 {
                let b = a + r.below(60 - a);
                idx.swap(a, b);
            }
            logdet(&idx[..10].iter().map(|&i| p[i]).collect::<Vec<_>>())
        })
        .sum::<f64>()
        / 50.0;
    assert!(
        logdet(&s.points) > random,
        "{} vs {random}",
        logdet(&s.points)
    );
}

#[test]
fn random_placements_and_dedup() {
    let k = se();
    let p = pool(30, 7);
    let mut rng = SplitMix64::new(4);
    let s = select(
        &k,
        &p,
        8,
        Placement::RandomPast,
        None,
        &[(-10.0, 10.0)],
        0.0,
        &mut rng,
    );
    assert_eq!(s.points.len(), 8);
    let mut idx: Vec<usize> = s
        .points
        .iter()
        .map(|x| p.iter().position(|y| y == x).unwrap())
        .collect();
    idx.sort_unstable();
    idx.dedup();
    assert_eq!(idx.len(), 8, "without replacement");
    let d = select(
        &k,
        &p,
        8,
        Placement::RandomDomain,
        None,
        &[(2.0, 3.0)],
        0.0,
        &mut rng,
    );
    assert!(d.points.len() == 8 && d.points.iter().all(|x| (2.0..3.0).contains(x)));
    // Budget larger than the pool: capped.
    let all = select(
        &k,
        &p[..4],
        8,
        Placement::Greedy,
        None,
        &[(-10.0, 10.0)],
        0.0,
        &mut rng,
    );
    assert_eq!(all.points.len(), 4);
    // Dedup keeps first occurrences in order, merges within tol, works in 2-D.
    assert_eq!(
        dedup_points(&[1.0, 2.0, 1.0 + 1e-12, 3.0, 2.0], 1, 1e-9),
        vec![1.0, 2.0, 3.0]
    );
    assert_eq!(
        dedup_points(&[0.0, 1.0, 0.0, 2.0, 0.0, 1.0], 2, 1e-9),
        vec![0.0, 1.0, 0.0, 2.0]
    );
}
