//! Operations issue, hot swap tested structurally (no wall-clock asserts): the control thread
//! never allocates, frees or drops a model while swaps are requested, built, adopted and
//! retired (a counting allocator that counts only the control thread, and each model's
//! drop-thread id); each model is adopted by the first tick after it is ready; a swap to a
//! missing or broken plugin leaves the old model running and reports the error; reset and a
//! model file round trip through the real SkyGP plugin.

use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::Instant;

use gp_node::app;
use gp_node::app::NodeParams;
use gp_node::learn::{
    CancelOutcome, Finished, InputLayout, Learner, ModelChange, ModelFactory, SwapEvent,
    SwapOutcome, SwapRefusal, SwapRequest, SwapSource,
};
use gp_node::plugin_host::{ModelFile, SearchPath};
use gpn_gp_core::model::ModelError;

mod alloc_support;
mod loop_support;
mod model_support;

use loop_support::{Constant, Script, SimulatedLoop, scripted_factory};

#[global_allocator]
static GLOBAL: alloc_support::Counting = alloc_support::Counting;

/// A model that predicts its own id and records the thread that drops it.
struct Probe {
    id: f64,
    drops: Arc<Mutex<Vec<(u64, ThreadId)>>>,
}

impl Script for Probe {
    fn predict(&mut self, x: &[f64], mean: &mut [f64], var: &mut [f64]) -> Result<(), ModelError> {
        Constant(self.id).predict(x, mean, var)
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        if let Ok(mut drops) = self.drops.lock() {
            drops.push((self.id as u64, std::thread::current().id()));
        }
    }
}

fn probe_factory(id: u64, drops: &Arc<Mutex<Vec<(u64, ThreadId)>>>) -> ModelFactory {
    let drops = drops.clone();
    scripted_factory(move || Probe {
        id: id as f64,
        drops: drops.clone(),
    })
}

/// A loop over the embedded simulator: tick k at simulated time k ms.
struct Rig {
    learner: Learner,
    closed_loop: SimulatedLoop,
    k: usize,
}

impl Rig {
    fn new(factory: ModelFactory, hyper: serde_json::Value) -> Self {
        Self::new_with(factory, hyper, |_| {})
    }

    /// As [`Rig::new`], with `edit` applied to the parameters first.
    fn new_with(
        factory: ModelFactory,
        hyper: serde_json::Value,
        edit: impl FnOnce(&mut NodeParams),
    ) -> Self {
        let mut params = gp_node::app::resolved_default_params().expect("parameters");
        params.control.supervisor.budget_micros = 1e9;
        params.learn.replay_capacity = 2000;
        // The given hyperparameters are over [q, q̇, q̈] (21 inputs).
        params.learn.friction_feature_velocity_rad_s = 0.0;
        edit(&mut params);
        let robot = app::load_robot(&params).expect("robot");
        let learner =
            Learner::new(&robot, params.learn.clone(), Some(hyper), factory).expect("learner");
        Self {
            learner,
            closed_loop: SimulatedLoop::new(&robot, &params),
            k: 0,
        }
    }

    /// One tick; returns whether a model was adopted in it.
    fn step(&mut self) -> bool {
        let status = self.closed_loop.step(self.k, &mut self.learner);
        self.k += 1;
        status.adopted_model
    }

    fn warm(&mut self, ticks: usize) {
        for _ in 0..ticks {
            self.step();
        }
    }

    /// Requests a swap to a model that `factory` builds and warms; panics if it is refused.
    fn request_warm_swap(&mut self, id: u64, factory: ModelFactory) {
        self.learner
            .request_swap(SwapRequest {
                id,
                source: SwapSource::Warm(factory),
            })
            .unwrap_or_else(|(_, why)| panic!("swap {id} refused: {why:?}"));
    }

    /// Ticks until the learner reports an event (at most `max` ticks).
    fn until_event(&mut self, max: usize) -> Option<SwapEvent> {
        for _ in 0..max {
            self.step();
            if let Some(e) = self.learner.take_events().next() {
                return Some(e);
            }
        }
        None
    }
}

fn hyper() -> serde_json::Value {
    let lengthscales = [vec![0.5; 7], vec![2.0; 7], vec![20.0; 7]].concat();
    serde_json::json!({"sigma_f": 2.0, "sigma_n": 0.1, "lengthscales": lengthscales})
}

#[test]
fn swaps_adopt_on_the_next_tick_and_the_control_thread_never_allocates_frees_or_drops_a_model() {
    let drops = Arc::new(Mutex::new(Vec::with_capacity(64)));
    let mut rig = Rig::new(probe_factory(1, &drops), hyper());
    rig.warm(2500); // fills the 2000-sample replay buffer
    let swaps = 12;
    let mut requests: Vec<SwapRequest> = (0..swaps)
        .map(|i| SwapRequest {
            id: i + 1,
            source: SwapSource::Warm(probe_factory(i + 2, &drops)),
        })
        .rev()
        .collect();
    let mut tick_started: Vec<Instant> = Vec::with_capacity(200_000);
    let mut adoptions: Vec<(u64, usize, Instant)> = Vec::with_capacity(swaps as usize);
    let mut refused_busy = 0u64;
    let control = std::thread::current().id();

    alloc_support::arm(true);
    let mut in_flight = false;
    // Ticks paced at 1 kHz, as the control loop runs. Unpaced ticks last microseconds,
    // and a worker preempted between stamping `ready_at` and handing the model over (on a
    // busy 2-core machine) then looks like an adoption two ticks late.
    let period = std::time::Duration::from_millis(1);
    let start = Instant::now();
    for tick in 0..200_000 {
        let due = start + period * tick as u32;
        if let Some(wait) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        if !in_flight && let Some(request) = requests.pop() {
            match rig.learner.request_swap(request) {
                Ok(()) => in_flight = true,
                Err((back, why)) => {
                    assert_eq!(why, SwapRefusal::Busy);
                    refused_busy += 1;
                    requests.push(back.expect("a refused request comes back"));
                }
            }
        }
        tick_started.push(Instant::now());
        rig.step();
        for event in rig.learner.take_events() {
            match event.outcome {
                SwapOutcome::Adopted { ready_at, .. } => {
                    adoptions.push((event.id, tick, ready_at));
                    in_flight = false;
                }
                other => panic!("swap {}: {other:?}", event.id),
            }
        }
        if adoptions.len() == swaps as usize {
            break;
        }
    }
    alloc_support::arm(false);
    // Let the worker finish dropping the retired models.
    rig.warm(1);
    std::thread::sleep(std::time::Duration::from_millis(200));

    assert_eq!(adoptions.len(), swaps as usize, "every swap was adopted");
    assert_eq!(
        alloc_support::allocations(),
        0,
        "allocations on the control thread"
    );
    assert_eq!(alloc_support::frees(), 0, "frees on the control thread");
    for (id, adopted_tick, ready_at) in &adoptions {
        let ready_tick = tick_started[..=*adopted_tick]
            .iter()
            .rposition(|t| t <= ready_at)
            .expect("a tick started before the model was ready");
        assert!(
            adopted_tick - ready_tick <= 1,
            "swap {id}: ready during tick {ready_tick}, adopted at tick {adopted_tick}"
        );
    }
    // The model predicts the last swap's id.
    let mut mean = [0.0; 7];
    let mut var = [0.0; 7];
    rig.learner
        .predict(&[0.0; 21], &mut mean, &mut var)
        .expect("predict");
    assert_eq!(mean[0], (swaps + 1) as f64);
    let drops = drops.lock().expect("drops");
    let retired: Vec<_> = drops.iter().filter(|(id, _)| *id <= swaps).collect();
    assert_eq!(
        retired.len(),
        swaps as usize,
        "every replaced model was dropped: {drops:?}"
    );
    assert!(
        drops.iter().all(|(_, thread)| *thread != control),
        "a model was dropped on the control thread"
    );
    eprintln!("{swaps} swaps; {refused_busy} requests found the learner busy");
}

/// A probe factory that takes 50 ms to build (a cancel then surely finds it on the worker).
fn slow_probe_factory(id: u64, drops: &Arc<Mutex<Vec<(u64, ThreadId)>>>) -> ModelFactory {
    let mut inner = probe_factory(id, drops);
    Box::new(move |hyper, d, p| {
        std::thread::sleep(std::time::Duration::from_millis(50));
        inner(hyper, d, p)
    })
}

fn predicted(rig: &mut Rig) -> f64 {
    let (mut mean, mut var) = ([0.0; 7], [0.0; 7]);
    rig.learner
        .predict(&[0.0; 21], &mut mean, &mut var)
        .expect("predict");
    mean[0]
}

/// Issue 16: a swap is adopted or cancelled, never both. A cancel while the replay buffer
/// is copied, or while the worker builds, means the model never changes; the worker goes
/// back to the plugin in use (a later rebuild uses it); a finished change says how it ended.
#[test]
fn a_cancelled_swap_is_never_adopted_and_the_worker_keeps_the_plugin_in_use() {
    let drops = Arc::new(Mutex::new(Vec::new()));
    let mut rig = Rig::new(probe_factory(1, &drops), hyper());
    rig.warm(2500);
    rig.request_warm_swap(1, probe_factory(2, &drops));
    assert_eq!(rig.learner.cancel_swap(1), CancelOutcome::Cancelled);

    rig.request_warm_swap(2, slow_probe_factory(3, &drops));
    while !rig.learner.background_busy() {
        assert!(!rig.step());
    }
    assert_eq!(rig.learner.cancel_swap(2), CancelOutcome::Cancelled);
    for _ in 0..3000 {
        assert!(!rig.step(), "a cancelled swap was adopted");
    }
    std::thread::sleep(std::time::Duration::from_millis(200));
    for _ in 0..100 {
        assert!(!rig.step(), "a cancelled swap was adopted");
    }
    assert!(rig.learner.take_events().next().is_none());
    assert_eq!(predicted(&mut rig), 1.0);

    rig.learner.reset(true, 3).expect("reset");
    let event = rig.until_event(100_000).expect("a fresh model");
    assert!(matches!(event.outcome, SwapOutcome::Adopted { .. }));
    assert_eq!(
        predicted(&mut rig),
        1.0,
        "the rebuild used the cancelled swap's plugin"
    );

    rig.request_warm_swap(4, probe_factory(4, &drops));
    let event = rig.until_event(100_000).expect("adopted");
    assert!(matches!(event.outcome, SwapOutcome::Adopted { .. }));
    assert_eq!(predicted(&mut rig), 4.0);
    assert_eq!(
        rig.learner.cancel_swap(4),
        CancelOutcome::Finished(Finished::Adopted)
    );
    assert_eq!(rig.learner.cancel_swap(99), CancelOutcome::Unknown);
}

fn failing_factory(message: &'static str) -> ModelFactory {
    Box::new(move |_, _, _| Err(message.to_owned()))
}

#[test]
fn a_swap_to_a_missing_or_broken_plugin_leaves_the_old_model_running() {
    let drops = Arc::new(Mutex::new(Vec::new()));
    let mut rig = Rig::new(probe_factory(7, &drops), hyper());
    rig.warm(1500);
    // Each double is a private copy found by name in its own directory (names, never
    // paths: a path is refused before anything loads).
    let in_dir = |crate_name: &str, test: &str| {
        let path = model_support::double(crate_name, test);
        let dir = path.parent().expect("the copy's folder").to_owned();
        (SearchPath::from_dirs([dir]), crate_name.to_owned())
    };
    let plugins = [
        (
            (
                SearchPath::standard(Vec::<&str>::new()),
                "no_such_plugin_anywhere".to_owned(),
            ),
            "not found",
        ),
        (
            in_dir("gpn_double_fails_create", "swap_fails_create"),
            "create",
        ),
        (
            in_dir("gpn_double_panics_update", "swap_panics_update"),
            "panic",
        ),
    ];
    let mut id = 0;
    let mut attempts: Vec<(ModelFactory, &str)> = plugins
        .iter()
        .map(|((search, name), why)| {
            (
                app::model_factory(search, name, &serde_json::json!({})),
                *why,
            )
        })
        .collect();
    attempts.push((failing_factory("the factory failed"), "factory failed"));
    for (factory, expected) in attempts {
        id += 1;
        rig.request_warm_swap(id, factory);
        let event = rig.until_event(100_000).expect("an answer");
        assert_eq!(event.id, id);
        match event.outcome {
            SwapOutcome::Failed(message) => assert!(
                message.to_lowercase().contains(expected) && !message.contains("is refused"),
                "swap {id}: {message:?} should mention {expected:?}"
            ),
            other => panic!("swap {id} should fail, got {other:?}"),
        }
        let (mut mean, mut var) = ([0.0; 7], [0.0; 7]);
        rig.learner
            .predict(&[0.0; 21], &mut mean, &mut var)
            .expect("predict");
        assert_eq!(mean[0], 7.0, "the old model still answers after swap {id}");
    }
    assert!(
        drops.lock().expect("drops").is_empty(),
        "the old model was never dropped"
    );
}

#[test]
fn reset_forgets_and_keeps_or_refits_hyperparameters() {
    let drops = Arc::new(Mutex::new(Vec::new()));
    let mut rig = Rig::new(probe_factory(3, &drops), hyper());
    rig.warm(1500);
    assert!(rig.learner.replay().len() > 1000);
    rig.learner.reset(true, 41).expect("reset accepted");
    assert_eq!(rig.learner.replay().len(), 0, "replay buffer cleared");
    let event = rig.until_event(100_000).expect("fresh model");
    assert_eq!((event.id, event.change), (41, ModelChange::Fresh));
    assert!(matches!(event.outcome, SwapOutcome::Adopted { .. }));
    assert_eq!(rig.learner.phase(), gp_node::learn::LearnPhase::Active);
    assert_eq!(
        drops.lock().expect("drops").len(),
        1,
        "the old model was retired"
    );

    rig.learner.reset(false, 42).expect("reset accepted");
    assert_eq!(rig.learner.phase(), gp_node::learn::LearnPhase::Collecting);
    let (mut mean, mut var) = ([1.0; 7], [1.0; 7]);
    assert!(
        !rig.learner
            .predict(&[0.0; 21], &mut mean, &mut var)
            .expect("predict")
    );
}

/// The real SkyGP plugin: a learned model saved to a file and loaded into another learner
/// predicts the same; Fast → Dense → Fast swaps warm from the replay buffer.
#[test]
fn skygp_model_files_round_trip_and_fast_dense_swaps_warm_from_the_replay_buffer() {
    let nv = 7;
    let search = SearchPath::standard(Vec::<&str>::new());
    let dense = serde_json::json!({"variant": "dense"});
    let factory = app::model_factory(&SearchPath::standard(Vec::<&str>::new()), "skygp", &dense);
    let mut rig = Rig::new(factory, hyper());
    rig.warm(3000);
    let dir = model_support::scratch_dir("learn_swap_file");
    let path = dir.join("skygp.gpnmodel");
    let file = ModelFile::from_snapshot(rig.learner.snapshot().expect("snapshot"), &dense);
    // Near the data the stream visited (a prediction may move SkyGP's search window, so it
    // is made after the snapshot, on both models from the same state).
    let x = rig
        .learner
        .replay()
        .get(rig.learner.replay().len() / 2)
        .expect("sample")
        .x
        .to_vec();
    let (mut m1, mut v1) = ([0.0; 7], [0.0; 7]);
    rig.learner.predict(&x, &mut m1, &mut v1).expect("predict");
    assert!(
        m1.iter().any(|m| m.abs() > 1e-3),
        "a prediction with content: {m1:?}"
    );
    assert_eq!(file.header.plugin, "skygp");
    file.write_atomic(&path).expect("write");
    let back = ModelFile::read(&path).expect("read");
    assert_eq!(back.header, file.header);
    let ready = back
        .build(&search, InputLayout::new(nv, 0.0), &path)
        .expect("build");

    let drops = Arc::new(Mutex::new(Vec::new()));
    // The rig that loads the file learns nothing: in the tick it adopts the model it would
    // otherwise learn that tick's sample into it before the comparison.
    let mut other = Rig::new_with(probe_factory(9, &drops), hyper(), |p| {
        p.learn.admit_every = u32::MAX;
    });
    other.warm(10);
    other
        .learner
        .request_swap(SwapRequest {
            id: 5,
            source: SwapSource::Ready(Box::new(ready)),
        })
        .map_err(|(_, why)| why)
        .expect("accepted");
    let event = other.until_event(10_000).expect("loaded");
    assert!(
        matches!(event.outcome, SwapOutcome::Adopted { .. }),
        "{event:?}"
    );
    assert_eq!(event.change, ModelChange::Load);
    let (mut m2, mut v2) = ([0.0; 7], [0.0; 7]);
    other
        .learner
        .predict(&x, &mut m2, &mut v2)
        .expect("predict");
    assert_eq!(m1, m2, "the loaded model predicts as the saved one");
    assert_eq!(v1, v2);

    // Files that must be refused, each with its reason.
    let mut wrong_version = file.clone();
    wrong_version.header.plugin_version = "0.0.0-other".into();
    let err = wrong_version
        .build(&search, InputLayout::new(7, 0.0), &path)
        .map(|_| ())
        .expect_err("refused");
    assert!(err.to_string().contains("0.0.0-other"), "{err}");
    let err = file
        .build(&search, InputLayout::new(2, 0.0), &path)
        .map(|_| ())
        .expect_err("refused");
    assert!(err.to_string().contains("inputs"), "{err}");
    let mut truncated = file.to_bytes();
    truncated.truncate(truncated.len() - 3);
    let err = ModelFile::from_bytes(&truncated, &path)
        .map(|_| ())
        .expect_err("refused");
    assert!(err.to_string().contains("state"), "{err}");
    let err = ModelFile::from_bytes(b"not a model at all", &path)
        .map(|_| ())
        .expect_err("refused");
    assert!(
        err.to_string().contains("not a gp-node model file"),
        "{err}"
    );
    let mut other_plugin = file.clone();
    other_plugin.header.plugin = "no_such_plugin_anywhere".into();
    let err = other_plugin
        .build(&search, InputLayout::new(7, 0.0), &path)
        .map(|_| ())
        .expect_err("refused");
    assert!(err.to_string().contains("no_such_plugin_anywhere"), "{err}");

    // Fast → Dense → Fast, each warmed on the replay buffer.
    for (id, variant) in [(11, "fast"), (12, "dense"), (13, "fast")] {
        let factory = app::model_factory(
            &SearchPath::standard(Vec::<&str>::new()),
            "skygp",
            &serde_json::json!({"variant": variant}),
        );
        rig.request_warm_swap(id, factory);
        let event = rig.until_event(100_000).expect("swapped");
        assert!(
            matches!(event.outcome, SwapOutcome::Adopted { .. }),
            "{event:?}"
        );
        let stats = rig.learner.model_stats().expect("a model");
        assert!(
            stats.samples_seen >= 1000,
            "warmed on the replay buffer: {stats:?}"
        );
    }
}
