//! `Viz::log_tick`, the only viz call the control loop makes, allocates nothing: a counting
//! global allocator watches it while the logger thread writes a real `.rrd` file.
//!
//! Only allocations made by this test's own thread while the counter is armed are counted,
//! so the logger thread and rerun's own threads cannot disturb the count.
#![cfg(feature = "rerun")]

use gp_node::app::DEFAULT_URDF;
use gp_node::control::TickOutput;
use gp_node::robot::Model;
use gp_node::viz::{Viz, VizPayload, VizRun, VizSource, VizTarget, VizTick, VizUrdf};

mod alloc_support;

#[global_allocator]
static GLOBAL: alloc_support::Counting = alloc_support::Counting;

#[test]
fn log_tick_does_not_allocate_and_counts_every_tick() {
    let robot = Model::from_urdf_str(DEFAULT_URDF, "panda.urdf").expect("panda");
    let nv = robot.nv();
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("viz_alloc.rrd");
    let mut viz = Viz::start(
        &VizTarget::File(path.clone()),
        &robot,
        Some(&VizUrdf::text(DEFAULT_URDF)),
        VizSource::Simulation(Some(&VizPayload {
            link: "panda_link8".into(),
            com_m: [0.0, 0.0, 0.05],
            mass_kg: 1.5,
            step: Some((0.5, 3.0)),
        })),
        "viz_alloc",
    )
    .expect("start");
    let mut out = TickOutput::new(nv);
    let mut q = vec![0.0; nv];
    let truth = vec![0.5; nv];
    let ticks = 5000_u64;

    alloc_support::reset();
    alloc_support::arm(true);
    for k in 0..ticks {
        let t = k as f64 * 1e-3;
        for (j, (qj, uj)) in q.iter_mut().zip(out.u.iter_mut()).enumerate() {
            *qj = (t + j as f64).sin();
            *uj = (t * 2.0 + j as f64).cos();
        }
        viz.log_tick(&VizTick {
            // Both runs, as `gp-node sim` logs them: the nominal one first.
            run: if k < ticks / 2 {
                VizRun::Nominal
            } else {
                VizRun::Learned
            },
            tick: k,
            t_secs: t,
            q: &q,
            q_d: &q,
            out: &out,
            true_residual: &truth,
            // A learning sample on some ticks.
            measured_residual: (k % 3 == 0).then_some(&truth[..]),
            exec_micros: 10.0,
            experts: Some(1),
            coverage: Some(0.9),
            change: None,
            // Events on some ticks: their text is made on the logger thread.
            adopted_model: k % 100 == 0,
            law: if k % 200 < 100 {
                gp_node::control_loop::Mode::Learned
            } else {
                gp_node::control_loop::Mode::Nominal
            },
        });
    }
    alloc_support::arm(false);
    let allocations = alloc_support::allocations();

    let summary = viz.finish().expect("finish");
    assert_eq!(allocations, 0, "log_tick allocated {allocations} times");
    assert_eq!(summary.logged + summary.dropped, ticks);
    assert!(summary.logged > 0);
    assert!(path.metadata().expect("rrd written").len() > 0);
}
