//! The change detector after a new model (`learn.change`, ADR 0007): a model still learning
//! (the first fit's) warms the detector up on live samples; a refit, warmed on the replay
//! buffer, brings the normaliser it measured there and the detector is armed from its
//! first tick. SkyGP-Dense on the embedded simulator, simulated time waiting for the
//! worker's fits (build the plugin first: `cargo build -p gpn_skygp`).

use gp_node::app;
use gp_node::learn::{Learner, ModelChange};

mod loop_support;

#[test]
fn a_refit_arms_the_change_detector_at_once_and_the_first_fit_warms_it_up() {
    let mut params = app::resolved_default_params().expect("parameters");
    params.learn.fit_samples = 600;
    params.learn.refit_after_samples = 1500;
    params.learn.max_refits = 1;
    params.learn.change.normalise_samples = 500;
    params.learn.change.warmup_samples = 5000;
    let robot = app::load_robot(&params).expect("robot");
    let factory = app::model_factory(
        &app::plugin_search(&params),
        &params.model.plugin,
        &params.model.config,
    );
    let mut learner = Learner::new(&robot, params.learn.clone(), None, factory).expect("learner");
    let mut closed_loop = loop_support::SimulatedLoop::new(&robot, &params);
    // (change, samples learned since it when first seen, armed then)
    let mut adoptions: Vec<(ModelChange, u64, bool)> = Vec::new();
    for k in 0..8000 {
        closed_loop.step(k, &mut learner);
        let latest = learner.last_adoption().map(|a| (a.change, a.ready_at));
        if let Some((change, _)) = latest
            && adoptions.last().is_none_or(|(c, _, _)| *c != change)
        {
            adoptions.push((
                change,
                learner.counts().learned,
                learner.change_detector_armed(),
            ));
        }
        // Simulated time waits for the worker's fit and refit.
        learner.wait_for_model(std::time::Duration::from_secs(300));
        if adoptions.len() == 2 {
            break;
        }
    }
    let changes: Vec<ModelChange> = adoptions.iter().map(|a| a.0).collect();
    assert_eq!(
        changes,
        [ModelChange::Fit, ModelChange::Refit],
        "{adoptions:?}, {:?}",
        learner.counts()
    );
    assert!(
        !adoptions[0].2,
        "the first fit's model warms the detector up"
    );
    assert!(
        adoptions[1].2,
        "the refit's model arms the detector: {adoptions:?}"
    );
    assert_eq!(learner.changes(), 0, "no alarm on the stationary run");
}
