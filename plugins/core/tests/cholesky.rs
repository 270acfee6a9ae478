//! Packed Cholesky: L·Lᵀ = K on random SPD matrices, incremental extension against
//! recomputation, triangular solves against nalgebra.
#![allow(clippy::unwrap_used)] // Tests: a panic is the failure report.

use gpn_gp_core::cholesky::{CholeskyError, PackedCholesky};
use nalgebra::{DMatrix, DVector};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn random_spd(n: usize, rng: &mut ChaCha8Rng) -> DMatrix<f64> {
    let a = DMatrix::from_fn(n, n, |_, _| rng.random_range(-1.0..1.0));
    &a * a.transpose() + DMatrix::identity(n, n) * 0.1
}

fn max_abs(m: &DMatrix<f64>) -> f64 {
    m.iter().fold(0.0f64, |acc, x| acc.max(x.abs()))
}

#[test]
fn llt_reproduces_random_spd() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for n in [1, 2, 3, 7, 20, 50] {
        for _ in 0..5 {
            let k = random_spd(n, &mut rng);
            let f = PackedCholesky::from_matrix(&k, 0.0).unwrap();
            let l = f.to_matrix();
            let err = max_abs(&(&l * l.transpose() - &k));
            assert!(err < 1e-12 * max_abs(&k).max(1.0), "n={n}: {err}");
            // Matches nalgebra's factor.
            let nl = nalgebra::Cholesky::new(k.clone()).unwrap().l();
            assert!(max_abs(&(l - nl)) < 1e-10);
        }
    }
}

#[test]
fn jitter_is_added_to_the_diagonal() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let k = random_spd(6, &mut rng);
    let f = PackedCholesky::from_matrix(&k, 1e-3).unwrap();
    let l = f.to_matrix();
    let kj = &k + DMatrix::identity(6, 6) * 1e-3;
    assert!(max_abs(&(&l * l.transpose() - kj)) < 1e-12);
}

#[test]
fn incremental_extension_equals_recomputation() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let n = 30;
    let k = random_spd(n, &mut rng);
    let mut inc = PackedCholesky::with_capacity(n);
    let mut b = vec![0.0; n];
    for m in 0..n {
        for s in 0..m {
            b[s] = k[(s, m)];
        }
        inc.extend_mut(&mut b[..m], k[(m, m)], 1e-9).unwrap();
        let full =
            PackedCholesky::from_matrix(&k.view((0, 0), (m + 1, m + 1)).into_owned(), 0.0).unwrap();
        let err = max_abs(&(inc.to_matrix() - full.to_matrix()));
        assert!(err < 1e-10, "m={m}: {err}");
    }
    assert_eq!(inc.len(), n);
    assert!(matches!(
        inc.extend_mut(&mut b[..n], 1.0, 1e-9),
        Err(CholeskyError::Capacity {
            requested: 31,
            capacity: 30
        })
    ));
}

#[test]
fn extension_floors_the_pivot() {
    // Appending an exact duplicate of a point gives c − lᵀl = 0; the floor keeps d > 0.
    let mut f = PackedCholesky::with_capacity(2);
    f.extend_mut(&mut [], 2.0, 1e-9).unwrap();
    let d = f.extend_mut(&mut [2.0], 2.0, 1e-9).unwrap();
    assert!((d - 1e-9f64.sqrt()).abs() < 1e-18);
}

#[test]
fn solves_match_nalgebra() {
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    let n = 25;
    let k = random_spd(n, &mut rng);
    let f = PackedCholesky::from_matrix(&k, 0.0).unwrap();
    let l = f.to_matrix();
    let b = DVector::from_fn(n, |_, _| rng.random_range(-1.0..1.0));
    let mut x = b.as_slice().to_vec();
    f.solve_lower_mut(&mut x);
    let want = l.solve_lower_triangular(&b).unwrap();
    assert!(
        x.iter()
            .zip(want.iter())
            .all(|(a, b)| (a - b).abs() < 1e-10)
    );
    let mut y = b.as_slice().to_vec();
    f.solve_upper_mut(&mut y);
    let want = l.transpose().solve_upper_triangular(&b).unwrap();
    assert!(
        y.iter()
            .zip(want.iter())
            .all(|(a, b)| (a - b).abs() < 1e-10)
    );
    let mut z = b.as_slice().to_vec();
    f.solve_mut(&mut z);
    let back = &k * DVector::from_column_slice(&z);
    assert!(back.iter().zip(b.iter()).all(|(a, b)| (a - b).abs() < 1e-9));
    let want_ld = k.determinant().ln();
    assert!((f.ln_det() - want_ld).abs() < 1e-9 * want_ld.abs().max(1.0));
}

#[test]
fn rejects_indefinite_and_oversize() {
    let k = DMatrix::from_row_slice(2, 2, &[1.0, 2.0, 2.0, 1.0]);
    assert!(matches!(
        PackedCholesky::from_matrix(&k, 0.0),
        Err(CholeskyError::NotPositiveDefinite { row: 1, .. })
    ));
    let mut f = PackedCholesky::with_capacity(2);
    assert!(matches!(
        f.factor_mut(3, 0.0, |_, _| 1.0),
        Err(CholeskyError::Capacity { .. })
    ));
    let k = DMatrix::<f64>::zeros(2, 3);
    assert!(matches!(
        PackedCholesky::from_matrix(&k, 0.0),
        Err(CholeskyError::NotSquare { .. })
    ));
}
