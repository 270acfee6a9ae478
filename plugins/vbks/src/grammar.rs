//! The kernel space: every distinct expression up to a level (spec Alg. 1), and the
//! paper's K_12 list (Appendix E.1, Table 1).
//!
//! Level 1 is the four base kernels; level ℓ adds `S + b` and `S × b` for every expression
//! S of level ℓ − 1 and base b, in canonical form, dropping duplicates. The sizes are
//! 4, 24 and 144 for levels 1, 2 and 3 (4 + 20 + 120, spec §1.5).

use std::collections::BTreeSet;

use crate::expr::{Base, Expr};

/// Every distinct expression of level ≤ `max_level` (≥ 1), in order of level, then of
/// first appearance. Level 4 has 1,020 more; the caller bounds the level.
pub fn kernel_space(max_level: usize) -> Vec<Expr> {
    let mut all: Vec<Expr> = Base::ALL.iter().map(|&b| Expr::Base(b)).collect();
    let mut seen: BTreeSet<String> = all.iter().map(Expr::to_string).collect();
    let mut previous = all.clone();
    for _ in 2..=max_level {
        let mut next = Vec::new();
        for s in &previous {
            for &b in &Base::ALL {
                for is_sum in [true, false] {
                    let operands = vec![s.clone(), Expr::Base(b)];
                    let e = if is_sum {
                        Expr::sum(operands)
                    } else {
                        Expr::prod(operands)
                    };
                    if seen.insert(e.to_string()) {
                        next.push(e);
                    }
                }
            }
        }
        all.extend(next.iter().cloned());
        previous = next;
    }
    all
}

/// The paper's K_12 (Table 1), k1 … k12 in order; k11 = PER×LIN×RQ is the true kernel of
/// synthetic dataset B and k12 = (PER+RQ)×LIN that of dataset A.
pub const K12: [&str; 12] = [
    "LIN+RQ",
    "LIN*RQ+LIN",
    "LIN*RQ+PER",
    "PER+RQ+SE",
    "PER+LIN+RQ",
    "PER+PER+SE",
    "PER*SE+SE",
    "PER*RQ+SE",
    "PER*LIN+SE",
    "PER*LIN*SE",
    "PER*LIN*RQ",
    "(PER+RQ)*LIN",
];

/// K_12 as parsed expressions.
pub fn k12() -> Vec<Expr> {
    K12.iter()
        .filter_map(|s| Expr::parse(s).ok())
        .collect::<Vec<_>>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_match_the_paper() {
        assert_eq!(kernel_space(1).len(), 4);
        assert_eq!(kernel_space(2).len(), 24);
        let k3 = kernel_space(3);
        assert_eq!(k3.len(), 144);
        let distinct: BTreeSet<String> = k3.iter().map(Expr::to_string).collect();
        assert_eq!(distinct.len(), 144);
    }

    #[test]
    fn k12_is_inside_k144() {
        let k3: BTreeSet<String> = kernel_space(3).iter().map(Expr::to_string).collect();
        let k12 = k12();
        assert_eq!(k12.len(), 12);
        for e in &k12 {
            assert!(k3.contains(&e.to_string()), "{e} not in K_144");
        }
    }
}
