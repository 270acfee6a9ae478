//! The control tick is real-time code: once warm, a tick — learning (predict + update of a
//! SkyGP-Dense model), predicting, the law, the bounds — and the simulator step allocate
//! nothing. Counted with a global allocator, as pinocchio's `test_crba_malloc` does, on this
//! (the control) thread only: the learner's background worker allocates by design.

use std::sync::Mutex;

use gp_node::control::TickResult;
use std::sync::mpsc::Receiver;

use gp_node::learn::{ChangeAction, Learner, ModelChange, ProbeOffer, ProbeRefusal};

mod alloc_support;
mod loop_support;

#[global_allocator]
static GLOBAL: alloc_support::Counting = alloc_support::Counting;

// One test at a time: the counter is shared, the flag is per thread.
static SERIAL: Mutex<()> = Mutex::new(());

/// What a counted run leaves behind.
struct Counted {
    allocations: usize,
    learned: usize,
    learner: Learner,
    probe_offers: Option<Receiver<ProbeOffer>>,
}

/// Runs warm + counted ticks of the default scenario with SkyGP-Dense learning (probe
/// offers planned by the worker when `probe`); calls `during(k, learner)` before each
/// counted tick. Returns the allocations on this thread in the counted ticks, the ticks
/// that learned there, the learner and the probe offers.
fn run_counted(
    action: ChangeAction,
    probe: bool,
    warm: usize,
    counted: usize,
    mut during: impl FnMut(usize, &mut Learner),
) -> Counted {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let (params, robot, mut learner) = alloc_support::fixed_hyper_setup(|params| {
        params.learn.change.action = action;
        params.learn.probe.enabled = probe;
    });
    let probe_offers = learner.offer_probes();
    assert_eq!(probe_offers.is_some(), probe);
    let mut closed_loop = loop_support::SimulatedLoop::new(&robot, &params);
    let mut learned = 0;
    alloc_support::reset();
    for k in 0..warm + counted {
        if k == warm {
            alloc_support::arm(true);
        }
        if k >= warm {
            during(k - warm, &mut learner);
        }
        let status = closed_loop.step(k, &mut learner);
        if k >= warm && status.result == TickResult::Learned {
            learned += 1;
        }
    }
    alloc_support::arm(false);
    Counted {
        allocations: alloc_support::allocations(),
        learned,
        learner,
        probe_offers,
    }
}

#[test]
fn a_warm_tick_allocates_nothing() {
    let counted = 2000;
    let Counted {
        allocations,
        learned,
        learner,
        ..
    } = run_counted(ChangeAction::Drop, false, 3000, counted, |_, _| {});
    assert!(
        learned > counted * 9 / 10,
        "the model ran in the counted ticks ({learned})"
    );
    assert_eq!(learner.changes(), 0, "a stationary stream is not a change");
    assert_eq!(allocations, 0, "allocations in {counted} warm ticks");
}

/// Announces a change at counted tick 100; from tick 500 simulated time waits for the
/// worker's rebuild (a debug build re-identifies slowly).
fn announce_at_100(k: usize, learner: &mut Learner) {
    if k == 100 {
        learner.announce_change();
    }
    let rebuilt = |l: &Learner| {
        l.last_adoption()
            .is_some_and(|a| a.change == ModelChange::Rebuild)
    };
    if k > 500 && !rebuilt(learner) {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[test]
fn reacting_to_a_change_allocates_nothing_on_the_control_thread() {
    // Announced changes start rebuilds through the worker; the control thread copies the
    // replay buffer, hands it over and adopts the rebuilt model without allocating.
    for action in [
        ChangeAction::Drop,
        ChangeAction::Inject,
        ChangeAction::Reidentify,
    ] {
        let Counted {
            allocations,
            learner,
            ..
        } = run_counted(action, false, 3000, 3000, announce_at_100);
        assert_eq!(learner.changes(), 1, "{action:?}");
        let adoption = learner.last_adoption().expect("a model was adopted");
        assert_eq!(adoption.change, ModelChange::Rebuild, "{action:?}");
        if action == ChangeAction::Reidentify {
            assert!(adoption.reidentified_mass_kg.is_finite());
        }
        assert_eq!(
            allocations, 0,
            "{action:?}: allocations on the control thread"
        );
    }
}

#[test]
fn a_probe_is_planned_and_offered_off_the_control_thread_after_a_rebuild() {
    let Counted {
        allocations,
        learner,
        probe_offers,
        ..
    } = run_counted(ChangeAction::Drop, true, 3000, 1000, announce_at_100);
    assert_eq!(allocations, 0, "allocations on the control thread");
    let adoption = learner.last_adoption().expect("a model was adopted");
    assert_eq!(adoption.change, ModelChange::Rebuild);
    let offers = probe_offers.expect("probing is on");
    // The offer is sent before the rebuilt model it was checked with is handed over.
    let offer = offers.try_recv().expect("one offer after the rebuild");
    assert!(offers.try_recv().is_err(), "one change, one offer");
    // Announced at counted tick 100 = t 3.099 s (3000 warm ticks of 1 ms before).
    assert!(
        (offer.onset_secs - 3.099).abs() < 1.5e-3,
        "{}",
        offer.onset_secs
    );
    assert!(offer.t_secs >= offer.onset_secs);
    let replay = learner.replay();
    let at_change = (0..replay.len())
        .filter_map(|i| replay.get(i))
        .find(|s| s.t_secs == offer.t_secs)
        .expect("the sample the probe starts from");
    match offer.plan {
        Ok(plan) => {
            assert_eq!(plan.waypoints.len(), 4 + 2, "start, 4 stale poses, back");
            assert_eq!(plan.waypoints.first(), plan.waypoints.last());
            assert!(
                plan.boundary_v.iter().all(|&v| v == 0.0),
                "offered from rest"
            );
            assert!(plan.worst_effort_ratio > 0.0 && plan.worst_effort_ratio <= 0.8);
            assert!(plan.checked > 100);
            // The start is the pose of the newest sample when the change was handled.
            assert_eq!(plan.waypoints[0], at_change.x[..7]);
        }
        // A refusal is an answer too, but only for a reason of the plan itself.
        Err(refusal) => assert!(
            matches!(
                refusal,
                ProbeRefusal::Effort { .. } | ProbeRefusal::JointLimit { .. }
            ),
            "{refusal}"
        ),
    }
}
