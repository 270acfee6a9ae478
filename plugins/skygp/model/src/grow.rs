//! Pool growth off the caller's thread: the pool starts with one chunk of experts and,
//! when fewer than [`LOW_WATER`] unused ones are left, asks a background thread for the
//! next chunk, which it allocates and hands over through a `try_lock`ed list.
//!
//! Real-time: the caller only reads an atomic flag, `try_lock`s, moves experts (no
//! allocation: the pool's list has its full capacity reserved, the hand-over list its
//! chunk) and unparks the thread. If the thread is late and the pool has no slot left, the
//! pool makes the expert on the caller's thread instead ([`Pool`](crate::pool::Pool) counts
//! these): which slot a sample gets never depends on timing, so results stay deterministic.

use crate::expert::Expert;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Experts per chunk (also the pool's first allocation).
pub(crate) const CHUNK: usize = 32;
/// The next chunk is asked for when fewer unused experts than this are left: a whole
/// chunk ahead, so that the thread has the time of 32 new experts (each at most one
/// `update`) to wake and allocate (milliseconds on a busy machine).
pub(crate) const LOW_WATER: usize = CHUNK;

/// What one expert's buffers are sized by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ExpertShape {
    pub n_bar: usize,
    pub d: usize,
    pub p: usize,
    pub n_groups: usize,
    pub keep_k: bool,
    pub drift: bool,
    /// Every expert is made at creation: the refresh thread of a growing drift has buffers
    /// per slot (a drift that adds nothing has no such thread and grows like no drift).
    pub all_at_once: bool,
}

impl ExpertShape {
    /// A fresh expert. **Allocates.**
    pub fn make(&self) -> Expert {
        Expert::new(
            self.n_bar,
            self.d,
            self.p,
            self.n_groups,
            self.keep_k,
            self.drift,
        )
    }
}

struct Shared {
    /// Experts made by the thread, waiting to be taken (capacity [`CHUNK`]).
    ready: Mutex<Vec<Expert>>,
    has_ready: AtomicBool,
    /// Experts asked for and not yet made.
    wanted: AtomicUsize,
    stop: AtomicBool,
}

/// The background thread and the caller's side of the hand-over.
pub(crate) struct Grower {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    /// Experts asked for and not yet taken (0: none asked).
    asked: usize,
}

impl Grower {
    /// Spawns the thread. **Allocates.** `None` when it cannot start (the pool then makes
    /// its experts on the caller's thread).
    pub fn start(shape: ExpertShape) -> Option<Self> {
        let shared = Arc::new(Shared {
            ready: Mutex::new(Vec::with_capacity(CHUNK)),
            has_ready: AtomicBool::new(false),
            wanted: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
        });
        let theirs = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("skygp-grow".into())
            .spawn(move || run(&theirs, shape))
            .ok()?;
        Some(Self {
            shared,
            thread: Some(thread),
            asked: 0,
        })
    }

    /// Moves experts the thread has made into `experts` (up to `cap`, which its reserved
    /// capacity holds) and, when fewer than [`LOW_WATER`] of them are unused (`used` are
    /// handed out) and more fit, asks for up to a chunk. No allocation, no blocking.
    pub fn tend(&mut self, experts: &mut Vec<Expert>, used: usize, cap: usize) {
        if self.asked > 0
            && self.shared.has_ready.load(Ordering::Acquire)
            && let Ok(mut ready) = self.shared.ready.try_lock()
        {
            // Experts beyond `cap` (possible only after the pool made some itself) stay
            // in the list: dropping them here would free memory on this thread.
            while experts.len() < cap {
                match ready.pop() {
                    Some(e) => experts.push(e),
                    None => break,
                }
            }
            self.shared.has_ready.store(false, Ordering::Release);
            self.asked = 0;
        }
        let spare = experts.len().saturating_sub(used);
        let room = cap.saturating_sub(experts.len());
        if self.asked == 0 && spare < LOW_WATER && room > 0 {
            self.asked = room.min(CHUNK);
            self.shared.wanted.store(self.asked, Ordering::Release);
            if let Some(t) = &self.thread {
                t.thread().unpark();
            }
        }
    }
}

fn run(shared: &Shared, shape: ExpertShape) {
    loop {
        std::thread::park();
        if shared.stop.load(Ordering::Acquire) {
            return;
        }
        let k = shared.wanted.swap(0, Ordering::AcqRel);
        if k == 0 {
            continue;
        }
        // Allocate outside the lock; the caller only ever try_locks.
        let mut made: Vec<Expert> = (0..k).map(|_| shape.make()).collect();
        let mut ready = shared.ready.lock().unwrap_or_else(|p| p.into_inner());
        ready.append(&mut made);
        shared.has_ready.store(true, Ordering::Release);
    }
}

impl Grower {
    /// Experts asked for and not yet taken: being made, or made and waiting.
    pub fn pending(&self) -> usize {
        self.asked
    }
}

impl Drop for Grower {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

impl std::fmt::Debug for Grower {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grower")
            .field("asked", &self.asked)
            .finish()
    }
}
