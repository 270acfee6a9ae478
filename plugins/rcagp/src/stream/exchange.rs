//! The two lock-free hand-overs between the control thread and the worker (spec §6.8):
//!
//! * [`SampleQueue`]: samples from `update` to the worker. A fixed slab of records whose
//!   cells are `AtomicU64` (f64 bits, relaxed), and two bounded index queues (`free`,
//!   `filled`; crossbeam's `ArrayQueue`, whose push/pop give the happens-before edge). The
//!   producer pops a free index, writes the record and pushes the index to `filled`; the
//!   consumer does the reverse. No allocation, no lock, no `unsafe`. When no record is free
//!   the producer takes back the *oldest* waiting record and overwrites it (the window wants
//!   the newest samples), and the caller counts the drop; the control thread never waits.
//! * [`SnapshotExchange`]: published snapshots to the control thread (`inbox`) and retired
//!   ones back (`outbox`), so that the control thread never frees a snapshot's memory; the
//!   worker reuses or drops them.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_queue::ArrayQueue;

use super::snapshot::Snapshot;

/// A sample read back from the queue (owned by the worker, allocated once).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SampleBuf {
    pub x: Vec<f64>,
    pub y: Vec<f64>,
    pub noise: Vec<f64>,
    pub t_secs: f64,
    /// The control thread's prediction at x came along (weight centre and widening).
    pub has_center: bool,
    pub center: Vec<f64>,
    pub cvar: Vec<f64>,
}

impl SampleBuf {
    pub fn new(d: usize, p: usize) -> Self {
        Self {
            x: vec![0.0; d],
            y: vec![0.0; p],
            noise: vec![0.0; p],
            t_secs: 0.0,
            has_center: false,
            center: vec![0.0; p],
            cvar: vec![0.0; p],
        }
    }
}

/// What [`SampleQueue::push`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PushOutcome {
    /// The sample is waiting for the worker.
    Enqueued,
    /// The queue was full: the oldest waiting sample was dropped for this one.
    ReplacedOldest,
    /// No record could be had at all (the worker held them all): this sample was dropped.
    Dropped,
}

/// The bounded sample hand-over. See the module doc.
#[derive(Debug)]
pub(crate) struct SampleQueue {
    d: usize,
    p: usize,
    stride: usize,
    cells: Box<[AtomicU64]>,
    free: ArrayQueue<u32>,
    filled: ArrayQueue<u32>,
}

impl SampleQueue {
    /// Room for `capacity` samples. **Allocates.**
    pub fn new(capacity: usize, d: usize, p: usize) -> Self {
        let stride = d + 4 * p + 2;
        let cap = capacity.max(1);
        let free = ArrayQueue::new(cap);
        for k in 0..cap {
            let _ = free.push(k as u32);
        }
        Self {
            d,
            p,
            stride,
            cells: (0..cap * stride).map(|_| AtomicU64::new(0)).collect(),
            free,
            filled: ArrayQueue::new(cap),
        }
    }

    /// Bytes held.
    pub fn memory_bytes(&self) -> usize {
        self.cells.len() * 8 + 2 * self.free.capacity() * 4
    }

    /// Enqueues a sample, dropping the oldest waiting one if the queue is full. Real-time:
    /// no allocation, lock or wait.
    pub fn push(
        &self,
        x: &[f64],
        y: &[f64],
        noise: &[f64],
        t_secs: f64,
        center: Option<(&[f64], &[f64])>,
    ) -> PushOutcome {
        let (idx, dropped) = match self.free.pop() {
            Some(i) => (i, false),
            None => match self.filled.pop() {
                Some(i) => (i, true),
                // The worker emptied the queue in between: a record is free again.
                None => match self.free.pop() {
                    Some(i) => (i, false),
                    None => return PushOutcome::Dropped,
                },
            },
        };
        let base = idx as usize * self.stride;
        let cells = &self.cells[base..base + self.stride];
        let mut k = 0;
        let mut put = |v: f64| {
            cells[k].store(v.to_bits(), Ordering::Relaxed);
            k += 1;
        };
        x.iter().for_each(|&v| put(v));
        y.iter().for_each(|&v| put(v));
        noise.iter().for_each(|&v| put(v));
        put(t_secs);
        match center {
            Some((c, v)) => {
                put(1.0);
                c.iter().for_each(|&x| put(x));
                v.iter().for_each(|&x| put(x));
            }
            None => put(0.0),
        }
        // Cannot fail: at most `capacity` indices exist.
        let _ = self.filled.push(idx);
        if dropped {
            PushOutcome::ReplacedOldest
        } else {
            PushOutcome::Enqueued
        }
    }

    /// Dequeues the oldest sample into `out`; false if none is waiting. No allocation.
    pub fn pop(&self, out: &mut SampleBuf) -> bool {
        let Some(idx) = self.filled.pop() else {
            return false;
        };
        let base = idx as usize * self.stride;
        let cells = &self.cells[base..base + self.stride];
        let mut k = 0;
        let mut get = || {
            let v = f64::from_bits(cells[k].load(Ordering::Relaxed));
            k += 1;
            v
        };
        let (d, p) = (self.d, self.p);
        for v in out.x[..d].iter_mut() {
            *v = get();
        }
        for v in out.y[..p].iter_mut() {
            *v = get();
        }
        for v in out.noise[..p].iter_mut() {
            *v = get();
        }
        out.t_secs = get();
        out.has_center = get() != 0.0;
        if out.has_center {
            for v in out.center[..p].iter_mut() {
                *v = get();
            }
            for v in out.cvar[..p].iter_mut() {
                *v = get();
            }
        }
        let _ = self.free.push(idx);
        true
    }
}

/// Snapshot hand-over: `inbox` (worker → control thread), `outbox` (retired, back).
#[derive(Debug)]
pub(crate) struct SnapshotExchange {
    pub inbox: ArrayQueue<Arc<Snapshot>>,
    pub outbox: ArrayQueue<Arc<Snapshot>>,
}

impl SnapshotExchange {
    pub fn new() -> Self {
        Self {
            inbox: ArrayQueue::new(2),
            outbox: ArrayQueue::new(8),
        }
    }

    /// Worker side: publishes `snap`; a stale unclaimed snapshot is taken back and
    /// returned for reuse.
    pub fn publish(&self, snap: Arc<Snapshot>) -> Option<Arc<Snapshot>> {
        match self.inbox.push(snap) {
            Ok(()) => None,
            Err(snap) => {
                let stale = self.inbox.pop();
                // The control thread only pops, so there is room now.
                let _ = self.inbox.push(snap);
                stale
            }
        }
    }
}
