//! `Viz::log_tick`, the only viz call the control loop makes, allocates nothing: a counting
//! global allocator watches it while the logger thread writes a real `.rrd` file.
//!
//! Only allocations made by this test's own thread while the counter is armed are counted,
//! so the logger thread and rerun's own threads cannot disturb the count.
#![cfg(feature = "rerun")]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use gp_node::control::TickOutput;
use gp_node::robot::Model;
use gp_node::simulate::DEFAULT_URDF;
use gp_node::viz::{Viz, VizTarget, VizTick};

struct CountingAllocator;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static ARMED: Cell<bool> = const { Cell::new(false) };
}

fn note_allocation() {
    // `try_with`: the thread-local may already be gone while a thread shuts down.
    if ARMED.try_with(Cell::get).unwrap_or(false) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards to the system allocator with the caller's arguments
// unchanged, so `System`'s guarantees carry over; counting touches only an atomic and a
// const-initialised thread-local `Cell`, neither of which allocates.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        // SAFETY: forwarded unchanged; the caller upholds `GlobalAlloc::alloc_zeroed`'s contract.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation();
        // SAFETY: forwarded unchanged; `ptr` was allocated by `System` through this allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged; `ptr` was allocated by `System` through this allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: CountingAllocator = CountingAllocator;

#[test]
fn log_tick_does_not_allocate_and_counts_every_tick() {
    let robot = Model::from_urdf_str(DEFAULT_URDF, "panda.urdf").expect("panda");
    let nv = robot.nv();
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("viz_alloc.rrd");
    let mut viz = Viz::start(
        &VizTarget::File(path.clone()),
        &robot,
        Some(DEFAULT_URDF),
        "viz_alloc",
    )
    .expect("start");
    let mut out = TickOutput::new(nv);
    let mut q = vec![0.0; nv];
    let truth = vec![0.5; nv];
    let ticks = 5000_u64;

    ARMED.with(|a| a.set(true));
    for k in 0..ticks {
        let t = k as f64 * 1e-3;
        for (j, (qj, uj)) in q.iter_mut().zip(out.u.iter_mut()).enumerate() {
            *qj = (t + j as f64).sin();
            *uj = (t * 2.0 + j as f64).cos();
        }
        viz.log_tick(&VizTick {
            tick: k,
            t_secs: t,
            q: &q,
            q_d: &q,
            out: &out,
            true_residual: &truth,
            exec_micros: 10.0,
            experts: Some(1),
            coverage: Some(0.9),
            change: None,
        });
    }
    ARMED.with(|a| a.set(false));
    let allocations = ALLOCATIONS.load(Ordering::Relaxed);

    let summary = viz.finish().expect("finish");
    assert_eq!(allocations, 0, "log_tick allocated {allocations} times");
    assert_eq!(summary.logged + summary.dropped, ticks);
    assert!(summary.logged > 0);
    assert!(path.metadata().expect("rrd written").len() > 0);
}
