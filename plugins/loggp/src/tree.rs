//! The binary tree: inner nodes hold a split (dimension, value, overlap width), leaves name
//! the storage slot of their GP. Routing of a sample (one leaf, drawn inside overlaps) and
//! the active leaves of a prediction with their weights (spec §1–§3). Node storage for
//! 2·L_max − 1 nodes is reserved at construction; nothing here allocates afterwards.

use gpn_gp_core::rng::SplitMix64;

/// A tree node.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Node {
    /// A leaf and its storage slot.
    Leaf {
        /// Index of the leaf's storage.
        slot: usize,
    },
    /// An inner node.
    Inner(Split),
}

/// A split of an inner node, and its children's node indices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Split {
    /// Input dimension j.
    pub dim: usize,
    /// Split value s.
    pub value: f64,
    /// Overlap width o (> 0).
    pub overlap: f64,
    /// Left child (x_j below the overlap).
    pub left: usize,
    /// Right child.
    pub right: usize,
}

impl Split {
    /// p_L(x) = clamp(½ − (x_j − s)/o, 0, 1): 1 left of the overlap, 0 right of it, linear
    /// inside (the reference's ramp has a sign error, spec §4 item 1).
    #[inline]
    pub fn p_left(&self, x: &[f64]) -> f64 {
        (0.5 - (x[self.dim] - self.value) / self.overlap).clamp(0.0, 1.0)
    }
}

/// Reproducible uniform draws for routing: draw k is a function of (seed, k) alone, so the
/// state saved with a model is one counter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Draws {
    /// Seed.
    pub seed: u64,
    /// Draws made so far.
    pub count: u64,
}

impl Draws {
    /// go left with probability `p_left`; draws only when 0 < p_left < 1.
    pub fn go_left(&mut self, p_left: f64) -> bool {
        if p_left >= 1.0 {
            return true;
        }
        if p_left <= 0.0 {
            return false;
        }
        self.count += 1;
        SplitMix64::stream(self.seed, self.count).uniform() < p_left
    }
}

/// The tree and the work stack of [`Tree::active`].
#[derive(Debug, Clone)]
pub struct Tree {
    /// Nodes; the root is 0. Children always come after their parent.
    pub nodes: Vec<Node>,
    stack: Vec<(usize, f64)>,
}

impl Tree {
    /// A tree of one leaf (slot 0) with room for `max_leaves` leaves. Allocates.
    pub fn new(max_leaves: usize) -> Self {
        let mut nodes = Vec::with_capacity(2 * max_leaves - 1);
        nodes.push(Node::Leaf { slot: 0 });
        Self {
            nodes,
            stack: Vec::with_capacity(2 * max_leaves),
        }
    }

    /// Replaces the nodes (a loaded state); the stack keeps its capacity.
    pub fn set_nodes(&mut self, nodes: &[Node]) {
        self.nodes.clear();
        self.nodes.extend_from_slice(nodes);
    }

    /// The leaf node a sample at x goes to (one draw per overlap region on the way).
    pub fn route(&self, x: &[f64], draws: &mut Draws) -> usize {
        let mut at = 0;
        while let Node::Inner(s) = self.nodes[at] {
            at = if draws.go_left(s.p_left(x)) {
                s.left
            } else {
                s.right
            };
        }
        at
    }

    /// Every leaf reached from the root with non-zero probability, as (slot, weight) in
    /// `out` (cleared first; its capacity must hold every leaf): the weight is the product
    /// of the branch probabilities on the way, and the weights sum to 1.
    pub fn active(&mut self, x: &[f64], out: &mut Vec<(usize, f64)>) {
        out.clear();
        self.stack.clear();
        self.stack.push((0, 1.0));
        while let Some((at, w)) = self.stack.pop() {
            match self.nodes[at] {
                Node::Leaf { slot } => out.push((slot, w)),
                Node::Inner(s) => {
                    let pl = s.p_left(x);
                    if pl > 0.0 {
                        self.stack.push((s.left, w * pl));
                    }
                    if pl < 1.0 {
                        self.stack.push((s.right, w * (1.0 - pl)));
                    }
                }
            }
        }
    }

    /// Turns leaf node `at` into an inner node with two new leaves (slots `left_slot` and
    /// `right_slot`). Within the reserved capacity.
    pub fn split(
        &mut self,
        at: usize,
        (dim, value, overlap): (usize, f64, f64),
        (left_slot, right_slot): (usize, usize),
    ) {
        let left = self.nodes.len();
        self.nodes.push(Node::Leaf { slot: left_slot });
        self.nodes.push(Node::Leaf { slot: right_slot });
        self.nodes[at] = Node::Inner(Split {
            dim,
            value,
            overlap,
            left,
            right: left + 1,
        });
    }

    /// Depth of the deepest leaf (the root alone: 0). Allocates (diagnostics only).
    pub fn depth(&self) -> usize {
        let mut depth = vec![0usize; self.nodes.len()];
        let mut deepest = 0;
        for (i, node) in self.nodes.iter().enumerate() {
            if let Node::Inner(s) = node {
                depth[s.left] = depth[i] + 1;
                depth[s.right] = depth[i] + 1;
                deepest = deepest.max(depth[i] + 1);
            }
        }
        deepest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ramp_is_continuous_and_weights_sum_to_one() {
        let s = Split {
            dim: 0,
            value: 1.0,
            overlap: 0.2,
            left: 1,
            right: 2,
        };
        assert_eq!(s.p_left(&[0.89]), 1.0);
        assert_eq!(s.p_left(&[1.11]), 0.0);
        assert!((s.p_left(&[1.0]) - 0.5).abs() < 1e-15);
        assert!((s.p_left(&[0.95]) - 0.75).abs() < 1e-12);

        let mut t = Tree::new(3);
        t.split(0, (0, 1.0, 0.2), (0, 1));
        t.split(2, (1, 0.0, 1.0), (1, 2));
        let mut out = Vec::with_capacity(3);
        t.active(&[1.02, 0.1], &mut out);
        out.sort_by_key(|&(slot, _)| slot);
        let w: Vec<f64> = out.iter().map(|&(_, w)| w).collect();
        assert_eq!(out.len(), 3);
        assert!((w[0] - 0.4).abs() < 1e-12 && (w[1] - 0.6 * 0.4).abs() < 1e-12);
        assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert_eq!(t.depth(), 2);
        let mut draws = Draws { seed: 3, count: 0 };
        assert_eq!(t.route(&[0.5, 0.0], &mut draws), 1);
        assert_eq!(draws.count, 0, "no draw outside the overlaps");
        let lefts = (0..4000)
            .filter(|_| t.route(&[0.95, 5.0], &mut draws) == 1)
            .count();
        assert!(
            (2800..3200).contains(&lefts),
            "p_L = 0.75: {lefts}/4000 left"
        );
    }
}
