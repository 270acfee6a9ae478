//! Save and load of the learned state, bit for bit: the counters, the routing draw counter,
//! the tree, and every leaf in use with its points, factors and α (saved rather than
//! recomputed: a factor that went through row replacements is not the one a fresh
//! factorisation gives).
//!
//! Format (`gpn_gp_core::state_codec`, little-endian): the magic `GPNLOGGP`, a `u32` format
//! version (1), the checked config's `Debug` text (a state loads only into a model created
//! with the same config and dimensions), then the fields in the order of [`save`]. Loading
//! checks every length, index and value and builds the new state aside: on error the model
//! is unchanged.

use gpn_gp_core::cholesky::row_start;
use gpn_gp_core::model::ModelError;
use gpn_gp_core::state_codec::{StateReader, StateWriter};

use crate::model::{Counters, LogGp};
use crate::tree::{Node, Split};

const MAGIC: &[u8; 8] = b"GPNLOGGP";
const FORMAT_VERSION: u32 = 1;

fn config_text(m: &LogGp) -> String {
    format!("{:?}", m.cfg)
}

/// Serialises the state. Allocates.
pub(crate) fn save(m: &LogGp) -> Vec<u8> {
    let mut w = StateWriter::default();
    w.bytes(MAGIC);
    w.u32(FORMAT_VERSION);
    w.str(&config_text(m));
    let c = &m.counters;
    w.u64s(&[
        c.samples_seen,
        c.admitted,
        c.stored,
        c.splits,
        c.replaced,
        c.dropped,
        c.unsplittable,
        m.draws.count,
        m.next_stamp,
    ]);
    w.f64(m.last_admitted_t);
    w.u64(m.tree.nodes.len() as u64);
    for node in &m.tree.nodes {
        match *node {
            Node::Leaf { slot } => {
                w.bool(true);
                w.u64(slot as u64);
            }
            Node::Inner(s) => {
                w.bool(false);
                w.u64s(&[s.dim as u64, s.left as u64, s.right as u64]);
                w.f64(s.value);
                w.f64(s.overlap);
            }
        }
    }
    w.u64(m.leaves_used as u64);
    let (d, cap) = (m.cfg.d, m.cfg.leaf_capacity);
    for leaf in &m.leaves[..m.leaves_used] {
        let n = leaf.n;
        w.u64(n as u64);
        w.f64s(&leaf.x[..n * d]);
        w.u64s(&leaf.stamp[..n]);
        for (o, chol) in leaf.chol.iter().enumerate() {
            let at = o * cap..o * cap + n;
            w.f64s(&leaf.y[at.clone()]);
            w.f64s(&leaf.noise[at.clone()]);
            w.f64s(&leaf.alpha[at]);
            w.f64s(chol.packed());
        }
    }
    w.into_bytes()
}

/// Replaces `m`'s state by `bytes` from [`save`] of a model with the same config.
pub(crate) fn load(m: &mut LogGp, bytes: &[u8]) -> Result<(), ModelError> {
    let mut r = StateReader::new(bytes, "loggp load");
    if r.take(MAGIC.len())? != MAGIC {
        return Err(r.error("not a LoG-GP state (bad magic)"));
    }
    let version = r.u32()?;
    if version != FORMAT_VERSION {
        return Err(r.error(format!(
            "format version {version}, this plugin reads {FORMAT_VERSION}"
        )));
    }
    if r.str()? != config_text(m) {
        return Err(
            r.error("the state was saved by a model with a different configuration or dimensions")
        );
    }
    let mut fresh = LogGp::new(m.cfg.clone())?;
    let mut u = [0u64; 9];
    r.u64s_into(&mut u, "counters")?;
    let [
        samples_seen,
        admitted,
        stored,
        splits,
        replaced,
        dropped,
        unsplittable,
        draws,
        stamp,
    ] = u;
    fresh.counters = Counters {
        samples_seen,
        admitted,
        stored,
        splits,
        replaced,
        dropped,
        unsplittable,
    };
    fresh.draws.count = draws;
    fresh.next_stamp = stamp;
    fresh.last_admitted_t = r.f64()?;
    let nodes = read_tree(&mut r, m.cfg.max_leaves, m.cfg.d)?;
    let used = r.usize()?;
    check_tree(&nodes, used).map_err(|e| r.error(e))?;
    fresh.tree.set_nodes(&nodes);
    fresh.leaves_used = used;
    let (d, cap) = (m.cfg.d, m.cfg.leaf_capacity);
    let mut total = 0u64;
    for leaf in &mut fresh.leaves[..used] {
        let n = r.usize()?;
        if n > cap {
            return Err(r.error(format!("a leaf of {n} points, capacity {cap}")));
        }
        leaf.n = n;
        total += n as u64;
        r.f64s_into(&mut leaf.x[..n * d], "inputs")?;
        r.u64s_into(&mut leaf.stamp[..n], "stamps")?;
        for (o, chol) in leaf.chol.iter_mut().enumerate() {
            let at = o * cap..o * cap + n;
            r.f64s_into(&mut leaf.y[at.clone()], "targets")?;
            r.f64s_into(&mut leaf.noise[at.clone()], "noise")?;
            r.f64s_into(&mut leaf.alpha[at], "alpha")?;
            let mut packed = vec![0.0; row_start(n)];
            r.f64s_into(&mut packed, "factor")?;
            let diagonal_ok = (0..n).all(|i| {
                let v = packed[row_start(i) + i];
                v.is_finite() && v > 0.0
            });
            if !diagonal_ok || !packed.iter().all(|v| v.is_finite()) {
                return Err(r.error("a factor is not a valid Cholesky factor"));
            }
            chol.set_packed(n, &packed).map_err(|e| r.error(e))?;
        }
        let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
        if !finite(&leaf.x[..n * d]) || !finite(&leaf.y) || !finite(&leaf.alpha) {
            return Err(r.error("non-finite values"));
        }
    }
    if total != fresh.counters.stored {
        return Err(r.error(format!(
            "{total} points in the leaves, {} counted",
            fresh.counters.stored
        )));
    }
    r.finish()?;
    *m = fresh;
    Ok(())
}

fn read_tree(
    r: &mut StateReader<'_>,
    max_leaves: usize,
    d: usize,
) -> Result<Vec<Node>, ModelError> {
    let count = r.usize()?;
    if count == 0 || count > 2 * max_leaves - 1 {
        return Err(r.error(format!(
            "{count} tree nodes for at most {max_leaves} leaves"
        )));
    }
    let mut nodes = Vec::with_capacity(count);
    for _ in 0..count {
        if r.bool()? {
            nodes.push(Node::Leaf { slot: r.usize()? });
        } else {
            let mut u = [0u64; 3];
            r.u64s_into(&mut u, "split")?;
            let [dim, left, right] = u.map(|v| usize::try_from(v).unwrap_or(usize::MAX));
            let (value, overlap) = (r.f64()?, r.f64()?);
            if dim >= d || !value.is_finite() || !(overlap.is_finite() && overlap > 0.0) {
                return Err(r.error("a split with a bad dimension, value or overlap"));
            }
            nodes.push(Node::Inner(Split {
                dim,
                value,
                overlap,
                left,
                right,
            }));
        }
    }
    Ok(nodes)
}

/// A tree is valid when every node but the root is the child of exactly one node that
/// comes before it, and the leaves use slots 0..used once each.
fn check_tree(nodes: &[Node], used: usize) -> Result<(), String> {
    let mut parents = vec![0u8; nodes.len()];
    let mut slots = vec![false; used];
    for (i, node) in nodes.iter().enumerate() {
        match *node {
            Node::Inner(s) => {
                for c in [s.left, s.right] {
                    if c <= i || c >= nodes.len() {
                        return Err(format!("node {i} has child {c}"));
                    }
                    parents[c] += 1;
                }
            }
            Node::Leaf { slot } => {
                if slot >= used || std::mem::replace(&mut slots[slot], true) {
                    return Err(format!("leaf slot {slot} is out of range or used twice"));
                }
            }
        }
    }
    if parents[1..].iter().any(|&k| k != 1) || !slots.iter().all(|&s| s) {
        return Err("the nodes do not form one tree over the leaves in use".into());
    }
    Ok(())
}
