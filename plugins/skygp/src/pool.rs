//! The expert pool: every expert's buffers reserved at creation (capacity `max_experts`)
//! and the center-indexed list 𝒯 (`order`: list position → slot).
//!
//! Memory is bounded by construction. When all slots are in use and a new expert is
//! needed, one is recycled by the eviction rule (never one of the experts selected for
//! the current step). With drift an expert whose samples have all expired is retired: it
//! leaves 𝒯 and its slot goes to a free list that new experts use first. Real-time: only
//! [`Pool::new`] allocates; `order` and `free` have reserved capacity, so inserting into
//! them only moves memory.

use crate::config::Eviction;
use crate::expert::Expert;

/// Arena of experts plus the ordered list 𝒯.
#[derive(Debug, Clone)]
pub(crate) struct Pool {
    pub experts: Vec<Expert>,
    /// 𝒯: slot of the expert at each list position.
    pub order: Vec<usize>,
    /// Slots handed out so far (slots `used..` are untouched).
    used: usize,
    /// Retired slots (drift), reused before untouched ones.
    pub free: Vec<usize>,
    /// Creation counter.
    pub created: u64,
    /// Experts recycled because the pool was full.
    pub evictions: u64,
}

impl Pool {
    /// Reserves `cap` experts. **Allocates** (all buffers of the model's lifetime).
    pub fn new(
        cap: usize,
        n_bar: usize,
        d: usize,
        p: usize,
        n_groups: usize,
        keep_k: bool,
        drift: bool,
    ) -> Self {
        Self {
            experts: (0..cap)
                .map(|_| Expert::new(n_bar, d, p, n_groups, keep_k, drift))
                .collect(),
            order: Vec::with_capacity(cap),
            used: 0,
            free: Vec::with_capacity(if drift { cap } else { 0 }),
            created: 0,
            evictions: 0,
        }
    }

    /// |𝒯|.
    #[inline]
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Expert at list position `pos`.
    #[inline]
    pub fn at(&self, pos: usize) -> &Expert {
        &self.experts[self.order[pos]]
    }

    /// Bytes reserved for all experts and the list.
    pub fn memory_bytes(&self) -> usize {
        self.experts.iter().map(Expert::memory_bytes).sum::<usize>()
            + 8 * (self.order.capacity() + self.free.capacity())
    }

    /// Slots handed out so far (in 𝒯 or free).
    pub fn used(&self) -> usize {
        self.used
    }

    /// Marks the first `used` slots as handed out (restoring a saved state into an empty
    /// pool). No allocation.
    pub fn set_used(&mut self, used: usize) {
        self.used = used.min(self.experts.len());
    }

    /// Points stored over all experts in 𝒯.
    pub fn points_stored(&self) -> u64 {
        self.order.iter().map(|&s| self.experts[s].n as u64).sum()
    }

    /// A slot for a new expert. If the pool is full, the victim chosen by `rule` (never a
    /// slot in `protected`) is removed from 𝒯 and its former list position is returned too.
    pub fn take_slot(&mut self, rule: Eviction, protected: &[usize]) -> (usize, Option<usize>) {
        if let Some(slot) = self.free.pop() {
            return (slot, None);
        }
        if self.used < self.experts.len() {
            self.used += 1;
            return (self.used - 1, None);
        }
        let mut best: Option<usize> = None;
        for (pos, &slot) in self.order.iter().enumerate() {
            if protected.contains(&slot) {
                continue;
            }
            let e = &self.experts[slot];
            let better = match best {
                None => true,
                Some(bp) => {
                    let b = &self.experts[self.order[bp]];
                    match rule {
                        Eviction::Lru => (e.stamp, e.created) < (b.stamp, b.created),
                        Eviction::Fifo => e.created < b.created,
                    }
                }
            };
            if better {
                best = Some(pos);
            }
        }
        // `max_experts > n_cal` (checked in the config) guarantees an unprotected expert.
        let pos = best.unwrap_or(0);
        let slot = self.order.remove(pos);
        self.evictions += 1;
        (slot, Some(pos))
    }
}
