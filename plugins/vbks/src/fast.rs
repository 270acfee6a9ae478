//! Kernel vectors k_u(x) = (k(x, z_m))_m against fixed inducing inputs, for the hot path.
//!
//! Everything that depends only on θ and Z is computed once at construction: per base
//! kernel occurrence the inducing inputs scaled by 1/ℓ_j (SE, RQ), weighted by 1/ℓ_j²
//! (LIN), or, for PER, sin(π z_j/p_j)/ℓ_j and cos(π z_j/p_j)/ℓ_j, so that
//! sin(π(x_j − z_j)/p_j)/ℓ_j = sin(πx_j/p_j)·cos(πz_j/p_j)/ℓ_j − cos(πx_j/p_j)·sin(πz_j/p_j)/ℓ_j
//! costs two multiplications instead of a `sin` per pair. A call transforms x once per
//! occurrence (O(d)), fills each occurrence's M values in tight loops, then combines them
//! bottom-up through the expression (sums and products of M-vectors).
//!
//! Real-time: [`FastKernel::kvec`] and [`FastKernel::diag`] allocate nothing.

use crate::expr::Base;
use crate::kernel::KernelSpec;

#[derive(Debug, Clone, PartialEq)]
enum Op {
    Leaf(usize),
    Sum,
    Prod(f64),
}

#[derive(Debug, Clone, PartialEq)]
struct Node {
    op: Op,
    end: usize,
}

#[derive(Debug, Clone, PartialEq)]
struct FastLeaf {
    base: Base,
    dims: Vec<usize>,
    var: f64,
    alpha: f64,
    /// SE/RQ/PER: 1/ℓ_j; LIN: 1/ℓ_j².
    inv: Vec<f64>,
    /// PER: π/p_j.
    omega: Vec<f64>,
    /// M×|dims|: SE/RQ z·inv, LIN z·inv, PER sin(ω z)·inv.
    zf: Vec<f64>,
    /// PER only: M×|dims| cos(ω z)·inv.
    zc: Vec<f64>,
    /// Transformed x (|dims|; PER: sin then cos, 2|dims|).
    xf: Vec<f64>,
}

/// A kernel at fixed parameters against fixed inducing inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct FastKernel {
    m: usize,
    d: usize,
    nodes: Vec<Node>,
    leaves: Vec<FastLeaf>,
    /// One M-vector per node.
    vals: Vec<f64>,
}

impl FastKernel {
    /// Precompute for `spec` at log-parameters `psi` (kernel part) and inducing inputs
    /// `z` (M×d row-major). **Allocates.**
    pub fn new(spec: &KernelSpec, psi: &[f64], z: &[f64]) -> FastKernel {
        let d = spec.dim();
        let m = z.len() / d;
        let prep = spec.prepare(&psi[..spec.n_params()]);
        let mut leaves = Vec::with_capacity(spec.leaves.len());
        for (leaf, c) in spec.leaves.iter().zip(&prep.leaf_consts) {
            let dl = leaf.dims.len();
            let mut zf = vec![0.0; m * dl];
            let mut zc = Vec::new();
            if leaf.base == Base::Per {
                zc = vec![0.0; m * dl];
            }
            for i in 0..m {
                for (k, &j) in leaf.dims.iter().enumerate() {
                    let zj = z[i * d + j];
                    match leaf.base {
                        Base::Per => {
                            let (s, co) = (c.omega[k] * zj).sin_cos();
                            zf[i * dl + k] = s * c.inv[k];
                            zc[i * dl + k] = co * c.inv[k];
                        }
                        _ => zf[i * dl + k] = zj * c.inv[k],
                    }
                }
            }
            let xf_len = if leaf.base == Base::Per { 2 * dl } else { dl };
            leaves.push(FastLeaf {
                base: leaf.base,
                dims: leaf.dims.clone(),
                var: c.var,
                alpha: c.alpha,
                inv: c.inv.clone(),
                omega: c.omega.clone(),
                zf,
                zc,
                xf: vec![0.0; xf_len],
            });
        }
        let nodes = spec
            .node_layout()
            .into_iter()
            .map(|(kind, end, var)| Node {
                op: match kind {
                    crate::kernel::LayoutKind::Leaf(l) => Op::Leaf(l),
                    crate::kernel::LayoutKind::Sum => Op::Sum,
                    crate::kernel::LayoutKind::Prod => Op::Prod(var.map_or(1.0, |i| psi[i].exp())),
                },
                end,
            })
            .collect::<Vec<_>>();
        let vals = vec![0.0; nodes.len() * m];
        FastKernel {
            m,
            d,
            nodes,
            leaves,
            vals,
        }
    }

    /// Number of inducing inputs M.
    pub fn m(&self) -> usize {
        self.m
    }

    /// k_u(x) into `out` (len M). No allocation.
    pub fn kvec(&mut self, x: &[f64], out: &mut [f64]) {
        debug_assert_eq!(x.len(), self.d);
        let m = self.m;
        for leaf in &mut self.leaves {
            let dl = leaf.dims.len();
            for (k, &j) in leaf.dims.iter().enumerate() {
                match leaf.base {
                    Base::Per => {
                        let (s, c) = (leaf.omega[k] * x[j]).sin_cos();
                        leaf.xf[k] = s;
                        leaf.xf[dl + k] = c;
                    }
                    Base::Lin => leaf.xf[k] = x[j],
                    Base::Se | Base::Rq => leaf.xf[k] = x[j] * leaf.inv[k],
                }
            }
        }
        // Children come after their parent in pre-order: fill bottom-up.
        for idx in (0..self.nodes.len()).rev() {
            let (_, rest) = self.vals.split_at_mut(idx * m);
            let (mine, after) = rest.split_at_mut(m);
            match self.nodes[idx].op {
                Op::Leaf(l) => leaf_values(&self.leaves[l], m, mine),
                Op::Sum | Op::Prod(_) => {
                    let is_sum = matches!(self.nodes[idx].op, Op::Sum);
                    let init = match self.nodes[idx].op {
                        Op::Prod(v) => v,
                        _ => 0.0,
                    };
                    mine.fill(init);
                    let mut c = idx + 1;
                    while c < self.nodes[idx].end {
                        let off = (c - idx - 1) * m;
                        let child = &after[off..off + m];
                        if is_sum {
                            for (a, &b) in mine.iter_mut().zip(child) {
                                *a += b;
                            }
                        } else {
                            for (a, &b) in mine.iter_mut().zip(child) {
                                *a *= b;
                            }
                        }
                        c = self.nodes[c].end;
                    }
                }
            }
        }
        out[..m].copy_from_slice(&self.vals[..m]);
    }

    /// k(x, x). No allocation.
    pub fn diag(&self, x: &[f64]) -> f64 {
        self.diag_node(0, x)
    }

    fn diag_node(&self, idx: usize, x: &[f64]) -> f64 {
        let node = &self.nodes[idx];
        match node.op {
            Op::Leaf(l) => {
                let leaf = &self.leaves[l];
                match leaf.base {
                    Base::Lin => leaf
                        .dims
                        .iter()
                        .zip(&leaf.inv)
                        .map(|(&j, &w)| x[j] * x[j] * w)
                        .sum(),
                    _ => leaf.var,
                }
            }
            Op::Sum | Op::Prod(_) => {
                let mut acc = match node.op {
                    Op::Prod(v) => v,
                    _ => 0.0,
                };
                let mut c = idx + 1;
                while c < node.end {
                    let v = self.diag_node(c, x);
                    if matches!(node.op, Op::Sum) {
                        acc += v;
                    } else {
                        acc *= v;
                    }
                    c = self.nodes[c].end;
                }
                acc
            }
        }
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        8 * (self.vals.len()
            + self
                .leaves
                .iter()
                .map(|l| l.zf.len() + l.zc.len() + l.xf.len() + 2 * l.inv.len())
                .sum::<usize>())
    }
}

fn leaf_values(leaf: &FastLeaf, m: usize, out: &mut [f64]) {
    let dl = leaf.dims.len();
    match leaf.base {
        Base::Se => {
            for (i, o) in out.iter_mut().enumerate().take(m) {
                let zr = &leaf.zf[i * dl..(i + 1) * dl];
                let mut r2 = 0.0;
                for (&a, &b) in leaf.xf.iter().zip(zr) {
                    let t = a - b;
                    r2 += t * t;
                }
                *o = leaf.var * (-0.5 * r2).exp();
            }
        }
        Base::Rq => {
            let inv_2a = 1.0 / (2.0 * leaf.alpha);
            for (i, o) in out.iter_mut().enumerate().take(m) {
                let zr = &leaf.zf[i * dl..(i + 1) * dl];
                let mut r2 = 0.0;
                for (&a, &b) in leaf.xf.iter().zip(zr) {
                    let t = a - b;
                    r2 += t * t;
                }
                *o = leaf.var * (-leaf.alpha * (r2 * inv_2a).ln_1p()).exp();
            }
        }
        Base::Per => {
            let (sx, cx) = leaf.xf.split_at(dl);
            for (i, o) in out.iter_mut().enumerate().take(m) {
                let zs = &leaf.zf[i * dl..(i + 1) * dl];
                let zc = &leaf.zc[i * dl..(i + 1) * dl];
                let mut e = 0.0;
                for k in 0..dl {
                    let s = sx[k] * zc[k] - cx[k] * zs[k];
                    e += s * s;
                }
                *o = leaf.var * (-2.0 * e).exp();
            }
        }
        Base::Lin => {
            for (i, o) in out.iter_mut().enumerate().take(m) {
                let zr = &leaf.zf[i * dl..(i + 1) * dl];
                let mut s = 0.0;
                for (&xj, &zw) in leaf.xf.iter().zip(zr) {
                    s += xj * zw;
                }
                *o = s;
            }
        }
    }
}
