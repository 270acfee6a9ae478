//! A counting global allocator for the allocation tests (pinocchio's `test_crba_malloc`
//! idea): it counts allocations and frees made by threads that armed it, so the test
//! harness's and background threads' work is not counted. Each test crate installs it:
//!
//! ```ignore
//! #[global_allocator]
//! static GLOBAL: alloc_support::Counting = alloc_support::Counting;
//! ```

#![allow(dead_code)] // each test uses part of it

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The counting allocator.
pub struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
static FREES: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static ARMED: Cell<bool> = const { Cell::new(false) };
}

fn armed() -> bool {
    // `try_with`: the thread-local may already be gone while a thread shuts down.
    ARMED.try_with(Cell::get).unwrap_or(false)
}

// SAFETY: every method forwards to the system allocator with the caller's arguments
// unchanged, so `System`'s guarantees carry over; counting touches only atomics and a
// const-initialised thread-local `Cell`, neither of which allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if armed() {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if armed() {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::alloc_zeroed`'s contract.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if armed() {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded unchanged; `ptr` was allocated by `System` through this allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if armed() {
            FREES.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: forwarded unchanged; `ptr` was allocated by `System` through this allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Zeroes both counters.
pub fn reset() {
    ALLOCATIONS.store(0, Ordering::SeqCst);
    FREES.store(0, Ordering::SeqCst);
}

/// Starts or stops counting on the calling thread.
pub fn arm(on: bool) {
    ARMED.with(|a| a.set(on));
}

/// Allocations (and reallocations) counted since the last reset.
pub fn allocations() -> usize {
    ALLOCATIONS.load(Ordering::SeqCst)
}

/// Frees counted since the last reset.
pub fn frees() -> usize {
    FREES.load(Ordering::SeqCst)
}

/// Runs `f` with counting armed on this thread; returns the allocations it made.
pub fn count_allocations(f: impl FnOnce()) -> usize {
    reset();
    arm(true);
    f();
    arm(false);
    allocations()
}
