//! A counting global allocator for the allocation tests (pinocchio's `test_crba_malloc`
//! idea). It counts allocations (with reallocations) and frees made while counting is on:
//! on the threads that armed it ([`arm`]: the real-time caller, so that a background
//! worker's allocations by design do not count), or on every thread ([`arm_all`]: to show a
//! background thread allocates nothing either). A test crate installs it with
//!
//! ```ignore
//! #[global_allocator]
//! static GLOBAL: gpn_alloc_count::Counting = gpn_alloc_count::Counting;
//! ```
//!
//! and, since the counters are process-wide, runs its counted sections one at a time. With
//! `GPN_ALLOC_TRACE` set in the environment, each counted allocation prints its backtrace
//! (to find one that only shows on a loaded machine).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The counting allocator.
pub struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
static FREES: AtomicUsize = AtomicUsize::new(0);
static ALL_THREADS: AtomicBool = AtomicBool::new(false);
/// `GPN_ALLOC_TRACE` set when counting was armed: print where each counted allocation was made.
static TRACE: AtomicBool = AtomicBool::new(false);

thread_local! {
    static ARMED: Cell<bool> = const { Cell::new(false) };
    /// Inside a trace, whose own allocations are neither counted nor traced.
    static TRACING: Cell<bool> = const { Cell::new(false) };
}

fn counting() -> bool {
    // `try_with`: the thread-local may already be gone while a thread shuts down.
    ALL_THREADS.load(Ordering::Relaxed) || ARMED.try_with(Cell::get).unwrap_or(false)
}

fn count(counter: &AtomicUsize) {
    if !counting() {
        return;
    }
    // Err: the thread-locals are gone (thread exit), so no trace is running or can be.
    let tracing = TRACING.try_with(Cell::get);
    if matches!(tracing, Ok(true)) {
        return;
    }
    counter.fetch_add(1, Ordering::Relaxed);
    if tracing.is_ok() && TRACE.load(Ordering::Relaxed) && std::ptr::eq(counter, &ALLOCATIONS) {
        let _ = TRACING.try_with(|t| t.set(true));
        eprintln!(
            "counted allocation at\n{}",
            std::backtrace::Backtrace::force_capture()
        );
        let _ = TRACING.try_with(|t| t.set(false));
    }
}

/// Reads `GPN_ALLOC_TRACE` (it allocates, so before counting starts).
fn read_trace_switch() {
    TRACE.store(
        std::env::var_os("GPN_ALLOC_TRACE").is_some(),
        Ordering::Relaxed,
    );
}

// SAFETY: every method forwards to the system allocator with the caller's arguments
// unchanged, so `System`'s guarantees carry over; counting touches only atomics and a
// const-initialised thread-local `Cell`, neither of which allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(&ALLOCATIONS);
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(&ALLOCATIONS);
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::alloc_zeroed`'s contract.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(&ALLOCATIONS);
        // SAFETY: forwarded unchanged; `ptr` was allocated by `System` through this allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(&FREES);
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
    if on {
        read_trace_switch();
    }
    ARMED.with(|a| a.set(on));
}

/// Starts or stops counting on every thread of the process.
pub fn arm_all(on: bool) {
    if on {
        read_trace_switch();
    }
    ALL_THREADS.store(on, Ordering::SeqCst);
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

/// Runs `f` with counting armed on every thread; returns the allocations made meanwhile.
pub fn count_all_allocations(f: impl FnOnce()) -> usize {
    reset();
    arm_all(true);
    f();
    arm_all(false);
    allocations()
}

/// Runs `f` with counting armed on this thread; returns the allocations and frees it made.
pub fn count_allocations_and_frees(f: impl FnOnce()) -> usize {
    reset();
    arm(true);
    f();
    arm(false);
    allocations() + frees()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[global_allocator]
    static GLOBAL: Counting = Counting;

    static SERIAL: Mutex<()> = Mutex::new(());

    fn on_another_thread() {
        let _ = std::thread::spawn(|| std::hint::black_box(vec![1u8; 64]).len()).join();
    }

    #[test]
    fn counts_this_threads_allocations_and_frees_only_when_armed() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let n = count_allocations(|| drop(std::hint::black_box(vec![1u8; 64])));
        assert_eq!((n, frees()), (1, 1));
        reset();
        drop(std::hint::black_box(vec![1u8; 64]));
        assert_eq!((allocations(), frees()), (0, 0), "not armed");
        // Armed on this thread only: another thread's allocations do not count.
        let n = count_allocations(|| {
            let mut v = std::hint::black_box(vec![0u64]);
            v.push(1); // a reallocation counts as an allocation
            std::hint::black_box(&v);
        });
        assert_eq!(n, 2);
    }

    #[test]
    fn arm_all_counts_every_thread() {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        reset();
        arm(true);
        arm(false);
        let n = count_all_allocations(on_another_thread);
        assert!(n >= 1, "the other thread's vector was counted");
        reset();
        on_another_thread();
        assert_eq!(allocations(), 0);
    }
}
