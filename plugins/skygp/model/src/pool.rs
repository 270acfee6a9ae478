//! The expert pool: up to `max_experts` experts (slots) and the center-indexed list 𝒯
//! (`order`: list position → slot).
//!
//! Memory grows with what the model holds: the pool starts with one chunk of experts and
//! the grower thread (`grow.rs`) prepares the next before it is needed, up to
//! `max_experts`. With a drift that grows every expert is made at creation (the refresh
//! thread's buffers are per slot). Memory is bounded: when all `max_experts` slots are in use and a new
//! expert is needed, one is recycled by the eviction rule (never one of the experts
//! selected for the current step). With drift an expert whose samples have all expired is
//! retired: it leaves 𝒯 and its slot goes to a free list that new experts use first.
//!
//! Real-time: `order`, `free` and the expert list have their full capacity reserved, so
//! inserting only moves memory. A slot allocates on the caller's thread only if the grower
//! is late (counted in `grown_late`).

use crate::config::Eviction;
use crate::expert::Expert;
use crate::grow::{CHUNK, ExpertShape, Grower};

/// Arena of experts plus the ordered list 𝒯.
#[derive(Debug)]
pub(crate) struct Pool {
    /// The experts made so far (capacity `cap` reserved).
    pub experts: Vec<Expert>,
    /// `max_experts`.
    cap: usize,
    shape: ExpertShape,
    /// `None` when every expert was made at creation (or its thread did not start).
    grower: Option<Grower>,
    /// Experts made on the caller's thread because the grower was late.
    pub grown_late: u64,
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
    /// A pool of up to `cap` experts: the first chunk made now (all of them with a drift
    /// that grows), the grower thread started for the rest. **Allocates**, spawns.
    pub fn new(cap: usize, shape: ExpertShape) -> Self {
        let first = if shape.all_at_once {
            cap
        } else {
            cap.min(CHUNK)
        };
        let mut experts = Vec::with_capacity(cap);
        experts.extend((0..first).map(|_| shape.make()));
        let grower = start_grower(&mut experts, cap, shape);
        Self {
            experts,
            cap,
            shape,
            grower,
            grown_late: 0,
            order: Vec::with_capacity(cap),
            used: 0,
            free: Vec::with_capacity(if shape.drift { cap } else { 0 }),
            created: 0,
            evictions: 0,
        }
    }

    /// `max_experts`.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// Makes experts on this thread until `n` exist (restoring a saved state). **Allocates.**
    pub fn ensure(&mut self, n: usize) {
        while self.experts.len() < n.min(self.cap) {
            self.experts.push(self.shape.make());
        }
    }

    /// Bytes of one expert's buffers.
    pub fn bytes_per_expert(&self) -> usize {
        self.experts
            .first()
            .map_or_else(|| self.shape.make().memory_bytes(), Expert::memory_bytes)
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

    /// Bytes of the experts made so far (and of the chunk the grower is preparing) and of
    /// the lists.
    pub fn memory_bytes(&self) -> usize {
        let pending = self.grower.as_ref().map_or(0, Grower::pending);
        self.experts.iter().map(Expert::memory_bytes).sum::<usize>()
            + pending * self.bytes_per_expert()
            + self.experts.capacity() * std::mem::size_of::<Expert>()
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
        if self.used == self.experts.len() && self.used < self.cap {
            if let Some(g) = self.grower.as_mut() {
                g.tend(&mut self.experts, self.used, self.cap);
            }
            if self.used == self.experts.len() {
                // The grower is late (or absent): make it here rather than let timing
                // decide between a new expert and an eviction.
                self.experts.push(self.shape.make());
                self.grown_late += 1;
            }
        }
        if self.used < self.experts.len() {
            self.used += 1;
            if let Some(g) = self.grower.as_mut() {
                g.tend(&mut self.experts, self.used, self.cap);
            }
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

impl Clone for Pool {
    /// A copy with the same reserved capacity and its own grower. **Allocates**, spawns.
    fn clone(&self) -> Self {
        let mut experts = Vec::with_capacity(self.cap);
        experts.extend(self.experts.iter().cloned());
        let grower = match self.grower {
            Some(_) => start_grower(&mut experts, self.cap, self.shape),
            None => None,
        };
        Self {
            experts,
            cap: self.cap,
            shape: self.shape,
            grower,
            grown_late: self.grown_late,
            order: self.order.clone_with_capacity(),
            used: self.used,
            free: self.free.clone_with_capacity(),
            created: self.created,
            evictions: self.evictions,
        }
    }
}

/// A grower for a pool of `cap` holding `experts`, already asked for the next chunk;
/// `None` when the pool is complete or the thread cannot start.
fn start_grower(experts: &mut Vec<Expert>, cap: usize, shape: ExpertShape) -> Option<Grower> {
    if experts.len() >= cap {
        return None;
    }
    let mut g = Grower::start(shape)?;
    // Asked for the next chunk at once, whatever is spare.
    g.tend(experts, experts.len(), cap);
    Some(g)
}

/// `clone` keeps only the length; the lists must keep their reserved capacity.
trait CloneWithCapacity {
    fn clone_with_capacity(&self) -> Self;
}

impl CloneWithCapacity for Vec<usize> {
    fn clone_with_capacity(&self) -> Self {
        let mut v = Vec::with_capacity(self.capacity());
        v.extend_from_slice(self);
        v
    }
}
