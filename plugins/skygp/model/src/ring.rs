//! A bounded single-producer single-consumer ring of slot indices, on atomics only: the
//! refresh thread pushes the slot of each result it publishes, the control thread pops
//! them. No allocation after [`ReadyRing::new`], no lock, no `unsafe`.
//!
//! Each slot is in the ring at most once (its `ready` flag guards the push), so a ring with
//! one entry per slot never fills.

use std::sync::atomic::{AtomicUsize, Ordering};

/// SPSC ring of `usize`. `head` and `tail` count pops and pushes (wrapping).
#[derive(Debug)]
pub(crate) struct ReadyRing {
    entries: Box<[AtomicUsize]>,
    head: AtomicUsize,
    tail: AtomicUsize,
}

impl ReadyRing {
    /// A ring of `capacity` (≥ 1) entries. **Allocates.**
    pub fn new(capacity: usize) -> Self {
        Self {
            entries: (0..capacity.max(1)).map(|_| AtomicUsize::new(0)).collect(),
            head: AtomicUsize::new(0),
            tail: AtomicUsize::new(0),
        }
    }

    /// Producer side: appends `value`; false if full.
    pub fn push(&self, value: usize) -> bool {
        let cap = self.entries.len();
        let tail = self.tail.load(Ordering::Relaxed);
        let head = self.head.load(Ordering::Acquire);
        if tail.wrapping_sub(head) >= cap {
            return false;
        }
        self.entries[tail % cap].store(value, Ordering::Relaxed);
        self.tail.store(tail.wrapping_add(1), Ordering::Release);
        true
    }

    /// Consumer side: the oldest value, if any.
    pub fn pop(&self) -> Option<usize> {
        let cap = self.entries.len();
        let head = self.head.load(Ordering::Relaxed);
        let tail = self.tail.load(Ordering::Acquire);
        if head == tail {
            return None;
        }
        let value = self.entries[head % cap].load(Ordering::Relaxed);
        self.head.store(head.wrapping_add(1), Ordering::Release);
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_order_capacity_and_wrap() {
        let r = ReadyRing::new(3);
        assert_eq!(r.pop(), None);
        for round in 0..5 {
            assert!(r.push(round * 10));
            assert!(r.push(round * 10 + 1));
            assert!(r.push(round * 10 + 2));
            assert!(!r.push(99), "full at capacity");
            assert_eq!(r.pop(), Some(round * 10));
            assert_eq!(r.pop(), Some(round * 10 + 1));
            assert_eq!(r.pop(), Some(round * 10 + 2));
            assert_eq!(r.pop(), None);
        }
    }

    #[test]
    fn two_threads_pass_every_value_once_in_order() {
        let r = std::sync::Arc::new(ReadyRing::new(8));
        let producer = {
            let r = r.clone();
            std::thread::spawn(move || {
                for v in 0..20_000 {
                    while !r.push(v) {
                        std::thread::yield_now();
                    }
                }
            })
        };
        let mut next = 0;
        while next < 20_000 {
            if let Some(v) = r.pop() {
                assert_eq!(v, next);
                next += 1;
            } else {
                std::thread::yield_now();
            }
        }
        producer.join().expect("producer");
        assert_eq!(r.pop(), None);
    }
}
