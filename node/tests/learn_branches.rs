//! One model per kinematic branch (`learn.split_branches`) with the real SkyGP plugin, on
//! the pinned Allegro hand (four fingers on a fixed palm): the split follows the tree, a
//! finger's residual does not move with another finger's motion, and a model file of the
//! split model loads back into one that predicts the same.

use gp_node::app;
use gp_node::learn::{InputLayout, ModelSnapshot, create_model, kinematic_parts, parts_hyper};
use gp_node::robot::Model;
use gpn_plugin_host::{ModelFile, SearchPath};

const HAND: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../testing/robots/allegro_right_hand.urdf"
);

fn hand() -> Model {
    Model::from_urdf_file(HAND).expect("the pinned Allegro hand")
}

/// Per-output hyperparameters of a part of `d` inputs and `p` outputs.
fn part_hyper(d: usize, p: usize) -> serde_json::Value {
    serde_json::Value::Array(
        (0..p)
            .map(|_| serde_json::json!({"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": vec![0.7; d]}))
            .collect(),
    )
}

/// Deterministic pseudo-random numbers in [−1, 1).
fn noise(state: &mut u64) -> f64 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*state >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

#[test]
fn the_hand_splits_by_finger_and_a_split_model_file_round_trips() {
    let robot = hand();
    let nv = robot.nv();
    // With the friction features: [q, q̇, q̈, tanh(q̇/v_f)].
    let layout = InputLayout::new(nv, 0.03);
    let (d, p) = (layout.dim(), nv);
    let parts = kinematic_parts(&robot, layout.blocks());
    // Four fingers of four joints, each on its own 16 inputs.
    assert_eq!(parts.len(), 4, "{parts:?}");
    for part in &parts {
        assert_eq!((part.outputs.len(), part.inputs.len()), (4, 16), "{part:?}");
        let finger = &robot.joint_names()[part.outputs[0]];
        for &o in &part.outputs[1..] {
            // Every joint of the part descends from the first (one finger, one chain).
            let mut b = o;
            while let Some(parent) = robot.parent(b) {
                b = parent;
            }
            let mut root = part.outputs[0];
            while let Some(parent) = robot.parent(root) {
                root = parent;
            }
            assert_eq!(b, root, "joint {o} not on the finger of {finger}");
        }
    }
    let hyper = parts_hyper(
        &parts,
        parts
            .iter()
            .map(|part| part_hyper(part.inputs.len(), part.outputs.len()))
            .collect(),
    );
    let search = SearchPath::standard(Vec::<&str>::new());
    let config = serde_json::json!({"variant": "dense"});
    let mut factory = app::model_factory(&search, "skygp", &config);
    // SkyGP's prediction moves its search window, so each comparison is between two models
    // in the same state, built by the same updates.
    let mut learned = || {
        let mut model =
            create_model(&hyper, d, p, |h, d, p| factory(h, d, p)).expect("split model");
        assert_eq!((model.input_dim(), model.output_dim()), (d, p));
        // A residual in which every joint depends on its own finger's motion.
        let mut rng = 7u64;
        let (mut x, mut y) = (vec![0.0; d], vec![0.0; p]);
        for k in 0..400 {
            for v in x.iter_mut() {
                *v = noise(&mut rng);
            }
            for (j, yj) in y.iter_mut().enumerate() {
                *yj = (x[j] + 0.5 * x[nv + j]).sin();
            }
            model
                .update(&x, &y, k as f64 * 1e-3, &vec![0.01; p])
                .expect("update");
        }
        model
    };
    let mut model = learned();
    let x = vec![0.1; d];
    let (mut m1, mut v1) = (vec![0.0; p], vec![0.0; p]);
    model.predict(&x, &mut m1, &mut v1).expect("predict");
    assert!(m1.iter().any(|m| m.abs() > 1e-3), "{m1:?}");

    // Another finger's motion leaves the first finger's prediction exactly as it was.
    let first = &parts[0];
    let mut moved = x.clone();
    for part in &parts[1..] {
        for &i in &part.inputs {
            if !first.inputs.contains(&i) {
                moved[i] = 0.9;
            }
        }
    }
    let (mut m_moved, mut v_moved) = (vec![0.0; p], vec![0.0; p]);
    learned()
        .predict(&moved, &mut m_moved, &mut v_moved)
        .expect("predict");
    for &o in &first.outputs {
        assert_eq!(m_moved[o], m1[o], "output {o}");
        assert_eq!(v_moved[o], v1[o], "output {o}");
    }
    assert_ne!(m_moved, m1, "the other fingers' outputs moved");

    // Saved and loaded through a model file, the split model predicts the same.
    let mut model = learned();
    let (plugin, plugin_version) = model.plugin_identity().expect("from a plugin");
    let snapshot = ModelSnapshot {
        plugin,
        plugin_version,
        hyper: hyper.clone(),
        output_mean: vec![0.0; p],
        output_std: vec![1.0; p],
        input_dim: d,
        friction_feature_velocity: layout.friction_velocity(),
        output_dim: p,
        stats: model.stats(),
        accel_range: Vec::new(),
        state: model.state_bytes().expect("state"),
    };
    let file = ModelFile::from_snapshot(snapshot, &config);
    let path = std::env::temp_dir().join(format!("gpn-branches-{}.gpnmodel", std::process::id()));
    let back = ModelFile::from_bytes(&file.to_bytes(), &path).expect("read back");
    let mut ready = back.build(&search, layout, &path).expect("build");
    assert_eq!(ready.hyper, hyper);
    let (mut m2, mut v2) = (vec![0.0; p], vec![0.0; p]);
    ready.model.predict(&x, &mut m2, &mut v2).expect("predict");
    model.predict(&x, &mut m1, &mut v1).expect("predict");
    assert_eq!(m2, m1, "the loaded split model predicts as the saved one");
    assert_eq!(v2, v1);

    // A node that forms other friction features refuses the file, naming the parameter.
    for other in [0.0, 0.01] {
        let err = back
            .build(&search, InputLayout::new(nv, other), &path)
            .map(|_| ())
            .expect_err("other features");
        assert!(
            err.to_string()
                .contains("learn.friction_feature_velocity_rad_s"),
            "{err}"
        );
    }

    // A state of another split (three parts' worth) is refused, naming the split.
    let mut wrong = back.clone();
    wrong.state.truncate(wrong.state.len() / 2);
    let err = wrong
        .build(&search, layout, &path)
        .map(|_| ())
        .expect_err("refused");
    assert!(err.to_string().contains("split model state"), "{err}");
}

/// The learner's own fit on the hand: hyperparameters fitted per finger (the `"hyper"` it
/// adopts is split in four parts, each with 16 lengthscales: [q, q̇, q̈, friction feature]
/// of 4 joints), and with `split_branches` off one model over all 64 inputs.
#[test]
fn the_learner_fits_one_model_per_finger_and_one_model_when_told_not_to_split() {
    for split in [true, false] {
        let robot = hand();
        let nv = robot.nv();
        let params = gp_node::learn::LearnParams {
            fit_samples: 300,
            fit_max_points: 60,
            refit_after_samples: 0,
            split_branches: split,
            ..gp_node::learn::LearnParams::default()
        };
        let search = SearchPath::standard(Vec::<&str>::new());
        let factory =
            app::model_factory(&search, "skygp", &serde_json::json!({"variant": "dense"}));
        let mut learner =
            gp_node::learn::Learner::new(&robot, params, None, factory).expect("learner");
        let mut data = gp_node::robot::Data::new(&robot);
        let (mut q, mut v, mut a) = (vec![0.0; nv], vec![0.0; nv], vec![0.0; nv]);
        let mut tau = vec![0.0; nv];
        let mut adopted = false;
        for k in 0..20_000 {
            let t = k as f64 * 1e-3;
            for j in 0..nv {
                let l = robot.limits()[j];
                let (c, w) = (
                    0.5 * (l.position_lower + l.position_upper),
                    1.0 + 0.1 * j as f64,
                );
                q[j] = c + 0.1 * (w * t).sin();
                v[j] = 0.1 * w * (w * t).cos();
                a[j] = -0.1 * w * w * (w * t).sin();
            }
            let rbd = gp_node::robot::rnea(&robot, &mut data, &q, &v, &a).expect("rnea");
            for j in 0..nv {
                // A residual of the joint's own finger: viscous friction.
                tau[j] = rbd[j] + 0.01 * v[j];
            }
            learner.observe(t, &q, &v, &tau);
            learner.poll();
            if learner.phase() == gp_node::learn::LearnPhase::Active {
                adopted = true;
                break;
            }
            if learner.phase() == gp_node::learn::LearnPhase::Fitting {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
        assert!(adopted, "no model: {:?}", learner.failure());
        let hyper = learner.hyper().expect("fitted");
        match hyper.get("parts").and_then(|p| p.as_array()) {
            Some(parts) => {
                assert!(split);
                assert_eq!(parts.len(), 4);
                for part in parts {
                    let entries = part["hyper"].as_array().expect("per output");
                    assert_eq!(entries.len(), 4);
                    assert_eq!(entries[0]["lengthscales"].as_array().expect("ℓ").len(), 16);
                }
            }
            None => {
                assert!(!split, "{hyper}");
                let entries = hyper.as_array().expect("per output");
                assert_eq!(entries.len(), nv);
                assert_eq!(
                    entries[0]["lengthscales"].as_array().expect("ℓ").len(),
                    4 * nv
                );
            }
        }
    }
}

/// Hyperparameters given over [q, q̇, q̈] (as written before the friction features) do not
/// fit the default input: the error says what the input is and how to leave them out.
#[test]
fn given_hyperparameters_for_the_input_without_friction_features_are_refused_clearly() {
    let robot = hand();
    let nv = robot.nv();
    let search = SearchPath::standard(Vec::<&str>::new());
    let dense = serde_json::json!({"variant": "dense"});
    let old =
        serde_json::json!({"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": vec![1.0; 3 * nv]});
    let learner = |v_f: f64| {
        let params = gp_node::learn::LearnParams {
            friction_feature_velocity_rad_s: v_f,
            ..gp_node::learn::LearnParams::default()
        };
        let factory = app::model_factory(&search, "skygp", &dense);
        gp_node::learn::Learner::new(&robot, params, Some(old.clone()), factory)
    };
    let err = learner(0.03)
        .map(|_| ())
        .expect_err("48 lengthscales for 64 inputs");
    let text = err.to_string();
    assert!(text.contains("64 values"), "{text}");
    assert!(
        text.contains("learn.friction_feature_velocity_rad_s: 0"),
        "{text}"
    );
    assert!(
        learner(0.0).is_ok(),
        "without the features the same values fit"
    );
}
