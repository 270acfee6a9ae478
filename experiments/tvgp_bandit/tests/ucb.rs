//! β_t and the UCB argmax (spec §2.5, §7 #9, #13).

use gpn_tvgp_bandit::ucb::{argmax_ucb, beta, grid, refine_1d};

#[test]
fn beta_is_the_kirschner_krause_bound_plus_b() {
    // β = sqrt(2 ln(2/δ) + ln det(I + Σ⁻¹K)) + B, times the scale.
    let want = (2.0 * 40f64.ln() + 10.0).sqrt() + 1.0;
    assert!((beta(0.05, 10.0, 1.0, 1.0) - want).abs() < 1e-14);
    assert!((beta(0.05, 10.0, 1.0, 0.5) - 0.5 * want).abs() < 1e-14);
    // The equivalent determinant form: 2 ln(2 |Σ+K|^{1/2} / (δ |Σ|^{1/2})) with
    // ln|Σ+K| − ln|Σ| = logdet.
    let (ln_det_sk, ln_det_s) = (3.7, -2.1);
    let det_form = (2.0 * (2f64.ln() + 0.5 * ln_det_sk - 0.05f64.ln() - 0.5 * ln_det_s)).sqrt();
    assert!((beta(0.05, ln_det_sk - ln_det_s, 0.0, 1.0) - det_form).abs() < 1e-12);
    // No data: logdet 0; β grows with the information gain and with smaller δ.
    assert!(beta(0.05, 0.0, 1.0, 1.0) < beta(0.05, 5.0, 1.0, 1.0));
    assert!(beta(0.01, 5.0, 1.0, 1.0) > beta(0.05, 5.0, 1.0, 1.0));
    assert_eq!(beta(0.05, -1e-13, 0.0, 1.0), beta(0.05, 0.0, 0.0, 1.0));
}

#[test]
fn grid_covers_the_box_with_endpoints() {
    let g = grid(&[(-50.0, 50.0)], 0.01);
    assert_eq!(g.len(), 10_001); // the spec's 1-D grid
    assert_eq!((g[0], g[10_000]), (-50.0, 50.0));
    assert!((g[5000]).abs() < 1e-12);
    let g2 = grid(&[(0.0, 1.0), (-1.0, 1.0)], 0.5);
    assert_eq!(g2.len(), 3 * 5 * 2);
    assert_eq!(&g2[..4], &[0.0, -1.0, 0.0, -0.5]);
    assert_eq!(&g2[28..], &[1.0, 1.0]);
}

#[test]
fn argmax_breaks_ties_low_and_skips_nan() {
    assert_eq!(argmax_ucb(&[0.0, 1.0, 1.0], &[0.0; 3], 2.0), Some(1));
    assert_eq!(argmax_ucb(&[0.0, 0.0], &[0.0, 0.25], 2.0), Some(1)); // 0 + 2·0.5
    assert_eq!(argmax_ucb(&[f64::NAN, 0.0], &[0.0, 0.0], 1.0), Some(1));
    assert_eq!(argmax_ucb(&[1.0, 0.0], &[0.0, 1.0], 0.5), Some(0));
    assert_eq!(argmax_ucb(&[], &[], 1.0), None);
    // Negative variances (rounding) count as 0.
    assert_eq!(argmax_ucb(&[0.0, 0.1], &[-1.0, 0.0], 1.0), Some(1));
}

#[test]
fn refinement_finds_the_peak_and_never_loses() {
    let f = |x: f64| -(x - 0.37).powi(2);
    let (x, v) = refine_1d(0.5, 0.5, -1.0, 1.0, 60, f);
    assert!((x - 0.37).abs() < 1e-8 && v <= 0.0);
    // Clipped to the box; a peak outside the bracket leaves the grid point.
    let (x2, _) = refine_1d(0.95, 0.5, -1.0, 1.0, 60, |x: f64| -(x - 3.0).powi(2));
    assert!((x2 - 1.0).abs() < 1e-8);
    let g = |x: f64| if (x - 0.2).abs() < 1e-9 { 1.0 } else { 0.0 };
    assert_eq!(refine_1d(0.2, 0.1, -1.0, 1.0, 30, g), (0.2, 1.0));
}
