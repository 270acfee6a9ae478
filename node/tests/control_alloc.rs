//! The control tick is real-time code: once warm, a tick — learning (predict + update of a
//! SkyGP-Dense model), predicting, the law, the bounds — and the simulator step allocate
//! nothing. Counted with a global allocator, as pinocchio's `test_crba_malloc` does.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use gp_node::control::{Tick, TickInput, TickOutput, TickResult};
use gp_node::learn::Learner;
use gp_node::sim::{SimState, Simulator};
use gp_node::simulate::{self, DEFAULT_PARAMS_YAML, NodeParams};

struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn a_warm_tick_allocates_nothing() {
    let mut params = NodeParams::from_yaml(DEFAULT_PARAMS_YAML).expect("parameters");
    params.control.supervisor.budget_micros = 1e9;
    let lengthscales = [vec![0.5; 7], vec![2.0; 7], vec![20.0; 7]].concat();
    params.model.config["hyper"] =
        serde_json::json!({"sigma_f": 2.0, "sigma_n": 0.1, "lengthscales": lengthscales});
    let robot = simulate::load_robot(&params).expect("robot");
    let nv = robot.nv();
    let factory = simulate::model_factory(&params.model.plugin, &params.model.config, 3 * nv, nv);
    let hyper = params.model.config.get("hyper").cloned();
    let mut learner = Learner::new(&robot, params.learn.clone(), hyper, factory).expect("learner");
    let mut tick = Tick::new(&robot, &params.control).expect("tick");
    let mut sim = Simulator::new(&robot, &params.sim).expect("sim");
    let reference = &params.run.reference;
    let (mut q_d, mut qd_d, mut qdd_d) = (vec![0.0; nv], vec![0.0; nv], vec![0.0; nv]);
    reference.sample(0.0, &mut q_d, &mut qd_d, &mut qdd_d);
    let mut state = SimState {
        t_secs: 0.0,
        q: q_d.clone(),
        v: qd_d.clone(),
    };
    let mut out = TickOutput::new(nv);
    let mut tau = vec![0.0; nv];
    let (warm, counted) = (3000, 2000);
    let mut learned = 0;
    for k in 0..warm + counted {
        if k == warm {
            COUNTING.store(true, Ordering::SeqCst);
        }
        let t = k as f64 * 1e-3;
        state.t_secs = t;
        reference.sample(t, &mut q_d, &mut qd_d, &mut qdd_d);
        let m = sim.measure(&state, &tau).expect("measure");
        let input = TickInput {
            t_secs: t,
            q: &m.q,
            v: &m.v,
            tau: &m.tau,
            q_d: &q_d,
            qd_d: &qd_d,
            qdd_d: &qdd_d,
        };
        let status = tick.step(&input, &mut learner, &mut out);
        if k >= warm && status.result == TickResult::Learned {
            learned += 1;
        }
        sim.step(&mut state, &out.u).expect("step");
        tau.copy_from_slice(&out.u);
    }
    COUNTING.store(false, Ordering::SeqCst);
    assert!(
        learned > counted * 9 / 10,
        "the model ran in the counted ticks ({learned})"
    );
    assert_eq!(
        ALLOCATIONS.load(Ordering::SeqCst),
        0,
        "allocations in {counted} warm ticks"
    );
}
