//! Kernel expressions compiled for d-dimensional inputs: parameter layout, values and
//! gradients with respect to the log-parameters.
//!
//! Base kernels on the coordinates `dims` ⊆ {0..d} they act on (all of them by default;
//! ARD throughout, spec §1.5 and gap #13), with Δ_j = a_j − b_j:
//!
//! * SE:  σ² · exp(−½ Σ_j Δ_j²/ℓ_j²)
//! * RQ:  σ² · (1 + Σ_j Δ_j²/(2α ℓ_j²))^(−α)
//! * PER: σ² · exp(−2 Σ_j sin²(π Δ_j/p_j)/ℓ_j²)   (Rasmussen–Williams form, explicit period)
//! * LIN: Σ_j a_j b_j/ℓ_j²                          (no offset; σ_v,j² = 1/ℓ_j²)
//!
//! Variances (gap #14, "one variance per product term"): a kernel carries exactly the
//! scale parameters that are not redundant. Walking the tree with a flag "an ancestor
//! already scales this": a leaf SE/RQ/PER gets its own σ² unless scaled; a sum passes the
//! flag on, except that in a scaled sum the operands after the first get their own σ²
//! (their weight relative to the first); an unscaled product hands the scale to its first
//! sum operand, else to its first LIN operand (LIN scales itself through its ℓ_j), else
//! carries one σ² of its own, and every other operand is scaled. A scaled LIN fixes
//! ℓ of its first coordinate to 1, so it keeps only relative weights. Example:
//! `(PER+RQ)*LIN` has σ²_PER, ℓ, p, σ²_RQ, ℓ, α and LIN's ℓ with its first fixed (in 1-D,
//! none): σ²_PER·PER·LIN + σ²_RQ·RQ·LIN with no redundant direction.
//!
//! Every parameter lives in log space (θ = exp ψ); priors and optimisers see ψ.
//! [`Prepared`] caches the exponentiated parameters of one θ so that values and
//! gradients cost a few flops per coordinate and no `exp` of parameters; it allocates
//! only when built.

use crate::expr::{Base, Expr};

/// Most operands one sum or product may have (bounded so gradients need no heap scratch).
pub const MAX_OPERANDS: usize = 16;

/// What a parameter is (drives initial values, priors and the names in `describe`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// A signal variance σ².
    Variance,
    /// An SE/RQ/PER lengthscale ℓ_j of input `dim`.
    Lengthscale {
        /// Input coordinate.
        dim: usize,
    },
    /// A PER period p_j of input `dim`.
    Period {
        /// Input coordinate.
        dim: usize,
    },
    /// The RQ shape α.
    Alpha,
    /// A LIN scale ℓ_j of input `dim` (weight 1/ℓ_j²).
    LinScale {
        /// Input coordinate.
        dim: usize,
    },
}

/// One parameter of a compiled kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamInfo {
    /// Kind (and input coordinate).
    pub kind: ParamKind,
    /// Which base occurrence (or product) it belongs to, e.g. `PER#1` or `prod#0`.
    pub owner: String,
}

impl ParamInfo {
    /// Name for diagnostics, e.g. `PER#1.period[0]`.
    pub fn name(&self) -> String {
        let what = match self.kind {
            ParamKind::Variance => "variance".to_string(),
            ParamKind::Lengthscale { dim } => format!("lengthscale[{dim}]"),
            ParamKind::Period { dim } => format!("period[{dim}]"),
            ParamKind::Alpha => "alpha".to_string(),
            ParamKind::LinScale { dim } => format!("lin_scale[{dim}]"),
        };
        format!("{}.{what}", self.owner)
    }
}

#[derive(Debug, Clone, PartialEq)]
enum NodeKind {
    Leaf {
        base: Base,
        /// Index of this leaf's entry in `KernelSpec::leaves`.
        leaf: usize,
    },
    Sum,
    /// A product, with the index of its own variance parameter if it carries one.
    Prod {
        var: Option<usize>,
    },
}

#[derive(Debug, Clone, PartialEq)]
struct Node {
    kind: NodeKind,
    /// One past the last node of this subtree (pre-order), so a child's next sibling
    /// starts at `nodes[child].end`.
    end: usize,
}

/// Parameter layout of one leaf.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Leaf {
    pub(crate) base: Base,
    /// Input coordinates it acts on.
    pub(crate) dims: Vec<usize>,
    /// Its own variance parameter, if any.
    pub(crate) var: Option<usize>,
    /// First of its per-coordinate parameters (ℓ_j; for LIN the scales).
    pub(crate) ell0: usize,
    /// For a scaled LIN: ℓ of `dims[0]` is fixed to 1 and `ell0` covers `dims[1..]`.
    pub(crate) lin_fixed_first: bool,
    /// PER: first period parameter; RQ: the α parameter. Unused otherwise.
    pub(crate) extra0: usize,
}

/// A kernel expression compiled for inputs of dimension d.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelSpec {
    expr: Expr,
    d: usize,
    nodes: Vec<Node>,
    pub(crate) leaves: Vec<Leaf>,
    params: Vec<ParamInfo>,
}

/// Error from compiling an expression.
pub type CompileError = String;

impl KernelSpec {
    /// Compile `expr` for inputs of dimension `d`. `dims_of(base)` gives the coordinates a
    /// base kernel acts on (`None`: all d); each list must be non-empty, sorted, < d.
    pub fn compile(
        expr: &Expr,
        d: usize,
        dims_of: &dyn Fn(Base) -> Option<Vec<usize>>,
    ) -> Result<KernelSpec, CompileError> {
        if d == 0 {
            return Err("input dimension must be at least 1".into());
        }
        let mut spec = KernelSpec {
            expr: expr.clone(),
            d,
            nodes: Vec::new(),
            leaves: Vec::new(),
            params: Vec::new(),
        };
        let mut counts = [0usize; 4];
        spec.build(expr, false, dims_of, &mut counts)?;
        Ok(spec)
    }

    fn push_param(&mut self, kind: ParamKind, owner: &str) -> usize {
        self.params.push(ParamInfo {
            kind,
            owner: owner.to_string(),
        });
        self.params.len() - 1
    }

    fn build(
        &mut self,
        e: &Expr,
        scaled: bool,
        dims_of: &dyn Fn(Base) -> Option<Vec<usize>>,
        counts: &mut [usize; 4],
    ) -> Result<(), CompileError> {
        match e {
            Expr::Base(b) => self.build_leaf(*b, scaled, dims_of, counts),
            Expr::Sum(children) => self.build_sum(children, scaled, dims_of, counts),
            Expr::Prod(children) => self.build_prod(children, scaled, dims_of, counts),
        }
    }

    /// The coordinates base kernel `b` acts on, checked against the input dimension.
    fn leaf_dims(
        &self,
        b: Base,
        dims_of: &dyn Fn(Base) -> Option<Vec<usize>>,
    ) -> Result<Vec<usize>, CompileError> {
        Ok(match dims_of(b) {
            None => (0..self.d).collect::<Vec<_>>(),
            Some(list) => {
                if list.is_empty() || list.iter().any(|&j| j >= self.d) {
                    return Err(format!(
                        "{}: active dimensions {list:?} must be non-empty and < {}",
                        b.name(),
                        self.d
                    ));
                }
                list
            }
        })
    }

    /// A base kernel: its parameters (variance unless scaled, lengthscales, period or α), its
    /// leaf and its node.
    fn build_leaf(
        &mut self,
        b: Base,
        scaled: bool,
        dims_of: &dyn Fn(Base) -> Option<Vec<usize>>,
        counts: &mut [usize; 4],
    ) -> Result<(), CompileError> {
        let me = self.nodes.len();
        let dims = self.leaf_dims(b, dims_of)?;
        let k = b as usize;
        let owner = format!("{}#{}", b.name(), counts[k]);
        counts[k] += 1;
        let var = (!scaled && b != Base::Lin).then(|| self.push_param(ParamKind::Variance, &owner));
        let lin_fixed_first = b == Base::Lin && scaled;
        let ell0 = self.params.len();
        let ell_dims = if lin_fixed_first {
            &dims[1..]
        } else {
            &dims[..]
        };
        for &dim in ell_dims {
            let kind = if b == Base::Lin {
                ParamKind::LinScale { dim }
            } else {
                ParamKind::Lengthscale { dim }
            };
            self.push_param(kind, &owner);
        }
        let extra0 = self.params.len();
        match b {
            Base::Per => {
                for &dim in &dims {
                    self.push_param(ParamKind::Period { dim }, &owner);
                }
            }
            Base::Rq => {
                self.push_param(ParamKind::Alpha, &owner);
            }
            Base::Se | Base::Lin => {}
        }
        self.leaves.push(Leaf {
            base: b,
            dims,
            var,
            ell0,
            lin_fixed_first,
            extra0,
        });
        self.nodes.push(Node {
            kind: NodeKind::Leaf {
                base: b,
                leaf: self.leaves.len() - 1,
            },
            end: me + 1,
        });
        Ok(())
    }

    /// A sum node followed by its operands.
    fn build_sum(
        &mut self,
        children: &[Expr],
        scaled: bool,
        dims_of: &dyn Fn(Base) -> Option<Vec<usize>>,
        counts: &mut [usize; 4],
    ) -> Result<(), CompileError> {
        let me = self.nodes.len();
        check_operands(children.len())?;
        self.nodes.push(Node {
            kind: NodeKind::Sum,
            end: 0,
        });
        for (i, c) in children.iter().enumerate() {
            // In a scaled sum the first operand takes the ancestor's scale and the
            // others a variance relative to it.
            self.build(c, scaled && i == 0, dims_of, counts)?;
        }
        self.nodes[me].end = self.nodes.len();
        Ok(())
    }

    /// A product node (with its variance unless scaled or carried by an operand) followed
    /// by its operands.
    fn build_prod(
        &mut self,
        children: &[Expr],
        scaled: bool,
        dims_of: &dyn Fn(Base) -> Option<Vec<usize>>,
        counts: &mut [usize; 4],
    ) -> Result<(), CompileError> {
        let me = self.nodes.len();
        check_operands(children.len())?;
        let carrier = if scaled {
            None
        } else {
            children
                .iter()
                .position(|c| matches!(c, Expr::Sum(_)))
                .or_else(|| {
                    children
                        .iter()
                        .position(|c| matches!(c, Expr::Base(Base::Lin)))
                })
        };
        let var = (!scaled && carrier.is_none()).then(|| {
            let owner = format!("prod#{}", self.nodes.len());
            self.push_param(ParamKind::Variance, &owner)
        });
        self.nodes.push(Node {
            kind: NodeKind::Prod { var },
            end: 0,
        });
        for (i, c) in children.iter().enumerate() {
            self.build(c, carrier != Some(i), dims_of, counts)?;
        }
        self.nodes[me].end = self.nodes.len();
        Ok(())
    }

    /// The expression.
    pub fn expr(&self) -> &Expr {
        &self.expr
    }

    /// Input dimension d.
    pub fn dim(&self) -> usize {
        self.d
    }

    /// Number of (log-space) parameters.
    pub fn n_params(&self) -> usize {
        self.params.len()
    }

    /// What each parameter is.
    pub fn params(&self) -> &[ParamInfo] {
        &self.params
    }

    /// Exponentiate `log_theta` (len [`Self::n_params`]) into a [`Prepared`] kernel.
    /// **Allocates.**
    pub fn prepare(&self, log_theta: &[f64]) -> Prepared<'_> {
        let mut p = Prepared {
            spec: self,
            leaf_consts: Vec::new(),
            prod_var: vec![1.0; self.nodes.len()],
        };
        p.set(log_theta);
        p
    }
}

/// Node kinds as [`KernelSpec::node_layout`] reports them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LayoutKind {
    /// A base kernel occurrence (index into `leaves`).
    Leaf(usize),
    /// A sum.
    Sum,
    /// A product.
    Prod,
}

impl KernelSpec {
    /// The expression's nodes in pre-order: kind, one past the subtree's last node, and
    /// the product's own variance parameter if any.
    pub(crate) fn node_layout(&self) -> Vec<(LayoutKind, usize, Option<usize>)> {
        self.nodes
            .iter()
            .map(|n| match n.kind {
                NodeKind::Leaf { leaf, .. } => (LayoutKind::Leaf(leaf), n.end, None),
                NodeKind::Sum => (LayoutKind::Sum, n.end, None),
                NodeKind::Prod { var } => (LayoutKind::Prod, n.end, var),
            })
            .collect()
    }
}

fn check_operands(n: usize) -> Result<(), CompileError> {
    if n > MAX_OPERANDS {
        Err(format!(
            "a sum or product has {n} operands, at most {MAX_OPERANDS} are supported"
        ))
    } else {
        Ok(())
    }
}

/// Exponentiated parameters of one leaf.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LeafConsts {
    /// σ² (1 if scaled).
    pub(crate) var: f64,
    /// SE/RQ/PER: 1/ℓ_j; LIN: 1/ℓ_j² (the weights), per entry of `dims`.
    pub(crate) inv: Vec<f64>,
    /// PER: π/p_j per entry of `dims`.
    pub(crate) omega: Vec<f64>,
    /// RQ: α.
    pub(crate) alpha: f64,
}

/// A [`KernelSpec`] at fixed parameters: values, diagonal and gradients w.r.t. the
/// log-parameters without further allocation.
#[derive(Debug, Clone)]
pub struct Prepared<'a> {
    spec: &'a KernelSpec,
    pub(crate) leaf_consts: Vec<LeafConsts>,
    /// Variance of each product node (1 for other nodes or products without one).
    prod_var: Vec<f64>,
}

impl<'a> Prepared<'a> {
    /// Replace the parameters (no allocation after the first call).
    pub fn set(&mut self, log_theta: &[f64]) {
        let spec = self.spec;
        debug_assert_eq!(log_theta.len(), spec.n_params());
        self.leaf_consts.resize(
            spec.leaves.len(),
            LeafConsts {
                var: 1.0,
                inv: Vec::new(),
                omega: Vec::new(),
                alpha: 1.0,
            },
        );
        for (leaf, c) in spec.leaves.iter().zip(self.leaf_consts.iter_mut()) {
            c.var = leaf.var.map_or(1.0, |i| log_theta[i].exp());
            c.inv.clear();
            c.omega.clear();
            if leaf.lin_fixed_first {
                c.inv.push(1.0);
            }
            let n_ell = if leaf.lin_fixed_first {
                leaf.dims.len() - 1
            } else {
                leaf.dims.len()
            };
            for k in 0..n_ell {
                let psi = log_theta[leaf.ell0 + k];
                c.inv.push(if leaf.base == Base::Lin {
                    (-2.0 * psi).exp()
                } else {
                    (-psi).exp()
                });
            }
            match leaf.base {
                Base::Per => {
                    for k in 0..leaf.dims.len() {
                        c.omega
                            .push(std::f64::consts::PI * (-log_theta[leaf.extra0 + k]).exp());
                    }
                }
                Base::Rq => c.alpha = log_theta[leaf.extra0].exp(),
                Base::Se | Base::Lin => {}
            }
        }
        for (i, node) in spec.nodes.iter().enumerate() {
            self.prod_var[i] = match node.kind {
                NodeKind::Prod { var: Some(p) } => log_theta[p].exp(),
                _ => 1.0,
            };
        }
    }

    /// The compiled kernel.
    pub fn spec(&self) -> &'a KernelSpec {
        self.spec
    }

    /// k(a, b).
    pub fn value(&self, a: &[f64], b: &[f64]) -> f64 {
        self.eval(0, a, b)
    }

    /// k(a, a).
    pub fn diag(&self, a: &[f64]) -> f64 {
        self.eval(0, a, a)
    }

    fn eval(&self, i: usize, a: &[f64], b: &[f64]) -> f64 {
        let node = &self.spec.nodes[i];
        match node.kind {
            NodeKind::Leaf { leaf, .. } => self.leaf_value(leaf, a, b),
            NodeKind::Sum => {
                let mut s = 0.0;
                let mut c = i + 1;
                while c < node.end {
                    s += self.eval(c, a, b);
                    c = self.spec.nodes[c].end;
                }
                s
            }
            NodeKind::Prod { .. } => {
                let mut s = self.prod_var[i];
                let mut c = i + 1;
                while c < node.end {
                    s *= self.eval(c, a, b);
                    c = self.spec.nodes[c].end;
                }
                s
            }
        }
    }

    fn leaf_value(&self, leaf: usize, a: &[f64], b: &[f64]) -> f64 {
        let l = &self.spec.leaves[leaf];
        let c = &self.leaf_consts[leaf];
        match l.base {
            Base::Se => {
                let r2 = scaled_sq_dist(&l.dims, &c.inv, a, b);
                c.var * (-0.5 * r2).exp()
            }
            Base::Rq => {
                let r2 = scaled_sq_dist(&l.dims, &c.inv, a, b);
                c.var * (1.0 + r2 / (2.0 * c.alpha)).powf(-c.alpha)
            }
            Base::Per => {
                let mut e = 0.0;
                for ((&j, &w), &om) in l.dims.iter().zip(&c.inv).zip(&c.omega) {
                    let s = (om * (a[j] - b[j])).sin() * w;
                    e += s * s;
                }
                c.var * (-2.0 * e).exp()
            }
            Base::Lin => {
                let mut s = 0.0;
                for (&j, &w) in l.dims.iter().zip(&c.inv) {
                    s += a[j] * b[j] * w;
                }
                s
            }
        }
    }

    /// k(a, b) and ∂k/∂ψ for every log-parameter ψ into `grad` (len n_params; fully
    /// overwritten).
    pub fn value_grad(&self, a: &[f64], b: &[f64], grad: &mut [f64]) -> f64 {
        debug_assert_eq!(grad.len(), self.spec.n_params());
        grad.fill(0.0);
        self.eval_grad(0, a, b, grad).0
    }

    /// Returns (value, first parameter index, one past the last) of the subtree at `i`;
    /// the subtree's parameters are contiguous (pre-order assignment).
    fn eval_grad(&self, i: usize, a: &[f64], b: &[f64], grad: &mut [f64]) -> (f64, usize, usize) {
        let node = &self.spec.nodes[i];
        match node.kind {
            NodeKind::Leaf { leaf, .. } => {
                let v = self.leaf_grad(leaf, a, b, grad);
                let (lo, hi) = self.leaf_range(leaf);
                (v, lo, hi)
            }
            NodeKind::Sum => {
                let (mut s, mut lo, mut hi) = (0.0, usize::MAX, 0);
                let mut c = i + 1;
                while c < node.end {
                    let (v, l, h) = self.eval_grad(c, a, b, grad);
                    s += v;
                    if l < h {
                        lo = lo.min(l);
                        hi = hi.max(h);
                    }
                    c = self.spec.nodes[c].end;
                }
                (s, lo.min(hi), hi)
            }
            NodeKind::Prod { var } => {
                let mut vals = [0.0f64; MAX_OPERANDS];
                let mut ranges = [(0usize, 0usize); MAX_OPERANDS];
                let mut n = 0;
                let mut c = i + 1;
                let (mut lo, mut hi) = (usize::MAX, 0);
                while c < node.end {
                    let (v, l, h) = self.eval_grad(c, a, b, grad);
                    vals[n] = v;
                    ranges[n] = (l, h);
                    if l < h {
                        lo = lo.min(l);
                        hi = hi.max(h);
                    }
                    n += 1;
                    c = self.spec.nodes[c].end;
                }
                let scale = self.prod_var[i];
                // Product of all operands except k, by prefix and suffix products (no
                // division: an operand may be exactly zero).
                let mut prefix = [1.0f64; MAX_OPERANDS + 1];
                for k in 0..n {
                    prefix[k + 1] = prefix[k] * vals[k];
                }
                let mut suffix = 1.0;
                for k in (0..n).rev() {
                    let others = scale * prefix[k] * suffix;
                    let (l, h) = ranges[k];
                    for g in &mut grad[l..h] {
                        *g *= others;
                    }
                    suffix *= vals[k];
                }
                let value = scale * prefix[n];
                if let Some(p) = var {
                    grad[p] = value;
                    lo = lo.min(p);
                    hi = hi.max(p + 1);
                }
                (value, lo.min(hi), hi)
            }
        }
    }

    /// Parameter index range of a leaf (contiguous: variance, scales, extras).
    fn leaf_range(&self, leaf: usize) -> (usize, usize) {
        let l = &self.spec.leaves[leaf];
        let lo = l.var.unwrap_or(l.ell0);
        let hi = match l.base {
            Base::Per => l.extra0 + l.dims.len(),
            Base::Rq => l.extra0 + 1,
            Base::Se | Base::Lin => l.extra0,
        };
        (lo, hi)
    }

    fn leaf_grad(&self, leaf: usize, a: &[f64], b: &[f64], grad: &mut [f64]) -> f64 {
        let l = &self.spec.leaves[leaf];
        let c = &self.leaf_consts[leaf];
        match l.base {
            Base::Se => {
                let r2 = scaled_sq_dist(&l.dims, &c.inv, a, b);
                let k = c.var * (-0.5 * r2).exp();
                for (n, (&j, &w)) in l.dims.iter().zip(&c.inv).enumerate() {
                    let t = (a[j] - b[j]) * w;
                    grad[l.ell0 + n] = k * t * t;
                }
                if let Some(v) = l.var {
                    grad[v] = k;
                }
                k
            }
            Base::Rq => {
                let r2 = scaled_sq_dist(&l.dims, &c.inv, a, b);
                let u = 1.0 + r2 / (2.0 * c.alpha);
                let k = c.var * u.powf(-c.alpha);
                let f = k / u; // σ² u^(−α−1)
                for (n, (&j, &w)) in l.dims.iter().zip(&c.inv).enumerate() {
                    let t = (a[j] - b[j]) * w;
                    grad[l.ell0 + n] = f * t * t;
                }
                grad[l.extra0] = k * (-c.alpha * u.ln() + r2 / (2.0 * u));
                if let Some(v) = l.var {
                    grad[v] = k;
                }
                k
            }
            Base::Per => {
                let mut e = 0.0;
                for ((&j, &w), &om) in l.dims.iter().zip(&c.inv).zip(&c.omega) {
                    let s = (om * (a[j] - b[j])).sin() * w;
                    e += s * s;
                }
                let k = c.var * (-2.0 * e).exp();
                for (n, ((&j, &w), &om)) in l.dims.iter().zip(&c.inv).zip(&c.omega).enumerate() {
                    let phi = om * (a[j] - b[j]);
                    let s = phi.sin();
                    let w2 = w * w;
                    grad[l.ell0 + n] = k * 4.0 * s * s * w2;
                    grad[l.extra0 + n] = k * 2.0 * phi * (2.0 * phi).sin() * w2;
                }
                if let Some(v) = l.var {
                    grad[v] = k;
                }
                k
            }
            Base::Lin => {
                let mut s = 0.0;
                let skip = usize::from(l.lin_fixed_first);
                for (n, (&j, &w)) in l.dims.iter().zip(&c.inv).enumerate() {
                    let t = a[j] * b[j] * w;
                    s += t;
                    if n >= skip {
                        grad[l.ell0 + n - skip] = -2.0 * t;
                    }
                }
                s
            }
        }
    }
}

#[inline]
fn scaled_sq_dist(dims: &[usize], inv: &[f64], a: &[f64], b: &[f64]) -> f64 {
    let mut s = 0.0;
    for (&j, &w) in dims.iter().zip(inv) {
        let t = (a[j] - b[j]) * w;
        s += t * t;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_dims(_: Base) -> Option<Vec<usize>> {
        None
    }

    #[test]
    fn layouts_have_no_redundant_scale() {
        let spec =
            KernelSpec::compile(&Expr::parse("(PER+RQ)*LIN").unwrap(), 1, &all_dims).unwrap();
        let kinds: Vec<ParamKind> = spec.params().iter().map(|p| p.kind).collect();
        assert_eq!(
            kinds,
            vec![
                ParamKind::Variance,
                ParamKind::Lengthscale { dim: 0 },
                ParamKind::Period { dim: 0 },
                ParamKind::Variance,
                ParamKind::Lengthscale { dim: 0 },
                ParamKind::Alpha,
            ]
        );
        // SE*PER: one product variance, unit-variance factors.
        let spec = KernelSpec::compile(&Expr::parse("PER*SE").unwrap(), 2, &all_dims).unwrap();
        assert_eq!(spec.n_params(), 1 + 2 + 2 + 2);
        // LIN*SE: LIN carries the scale.
        let spec = KernelSpec::compile(&Expr::parse("LIN*SE").unwrap(), 3, &all_dims).unwrap();
        assert_eq!(spec.n_params(), 3 + 3);
    }

    #[test]
    fn values_follow_the_formulas() {
        let x = [0.3, -1.2];
        let y = [1.1, 0.4];
        let spec = KernelSpec::compile(&Expr::parse("PER").unwrap(), 2, &all_dims).unwrap();
        // [ln σ², ln ℓ0, ln ℓ1, ln p0, ln p1]
        let th = [
            0.5f64.ln(),
            0.7f64.ln(),
            1.3f64.ln(),
            2.0f64.ln(),
            3.0f64.ln(),
        ];
        let p = spec.prepare(&th);
        let pi = std::f64::consts::PI;
        let e = (pi * (x[0] - y[0]) / 2.0).sin().powi(2) / 0.49
            + (pi * (x[1] - y[1]) / 3.0).sin().powi(2) / 1.69;
        let want = 0.5 * (-2.0 * e).exp();
        assert!((p.value(&x, &y) - want).abs() < 1e-15);
    }
}
