//! Embedded simulator (foundation issue): determinism, consistency of the true residual
//! with the true dynamics, schedules, glitches, and refusal of bad commands.

use gpn_dynamics::{Data, Model, rnea};
use gpn_embedded_sim::{
    FrictionDrift, FrictionParams, GlitchParams, Integrator, JointValues, PayloadParams,
    PayloadStep, SimError, SimParams, SimState, Simulator,
};

const READY: [f64; 7] = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785];

/// The robot at `READY` moving with `v` at `t_secs`.
fn at_ready(t_secs: f64, v: Vec<f64>) -> SimState {
    SimState {
        t_secs,
        q: READY.to_vec(),
        v,
    }
}

fn panda() -> Model {
    Model::from_urdf_file(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../urdf/panda.urdf"
    ))
    .expect("panda URDF loads")
}

/// Runs `steps` ticks of a PD-plus-gravity loop on measured values; returns every
/// measurement and the final state, bit for bit.
fn run(params: &SimParams, steps: usize) -> (Vec<Vec<f64>>, SimState) {
    let model = panda();
    let mut data = Data::new(&model);
    let mut sim = Simulator::new(&model, params).expect("valid params");
    let mut state = SimState::at_rest(&READY);
    let mut tau = vec![0.0; 7];
    let mut log = Vec::new();
    for _ in 0..steps {
        let m = sim.measure(&state, &tau).expect("measure").clone();
        log.push([m.q.clone(), m.v.clone(), m.tau.clone()].concat());
        let g = rnea(&model, &mut data, &m.q, &m.v, &[0.0; 7])
            .expect("rnea")
            .to_vec();
        for j in 0..7 {
            tau[j] = g[j] - 50.0 * (m.q[j] - READY[j]) - 10.0 * m.v[j];
        }
        sim.step(&mut state, &tau).expect("step");
    }
    (log, state)
}

/// The simulator's parameters with explicit values where the node derives them from the
/// robot (an empty list, a negative payload mass): 1.5 kg payload, friction 0.5, armature 0.1.
fn sim_defaults() -> SimParams {
    SimParams {
        payload: PayloadParams {
            mass_kg: 1.5,
            ..PayloadParams::default()
        },
        friction: FrictionParams {
            viscous_nms_per_rad: JointValues::All(0.5),
            coulomb_nm: JointValues::All(0.5),
            ..FrictionParams::default()
        },
        armature_kgm2: JointValues::All(0.1),
        ..SimParams::default()
    }
}

fn noisy_glitchy() -> SimParams {
    SimParams {
        velocity_noise_std_rad_s: 1e-3,
        glitches: GlitchParams {
            probability_per_sample: 0.01,
            ..GlitchParams::default()
        },
        ..sim_defaults()
    }
}

#[test]
fn same_seed_gives_a_bit_identical_run() {
    let params = noisy_glitchy();
    let (log_a, end_a) = run(&params, 500);
    let (log_b, end_b) = run(&params, 500);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(
        log_a.iter().map(|r| bits(r)).collect::<Vec<_>>(),
        log_b.iter().map(|r| bits(r)).collect::<Vec<_>>()
    );
    assert_eq!(bits(&end_a.q), bits(&end_b.q));
    assert_eq!(bits(&end_a.v), bits(&end_b.v));
    let (log_c, _) = run(&SimParams { seed: 2, ..params }, 500);
    assert_ne!(log_a, log_c, "another seed must give other noise");
}

/// Commanding τ = τ_RBD,nominal(q, q̇, a) + d(q, q̇, a) must produce exactly q̈ = a on the
/// true robot: the residual the simulator reports is the one its dynamics contain.
#[test]
fn true_residual_is_what_the_true_dynamics_miss() {
    let model = panda();
    let mut data = Data::new(&model);
    let params = SimParams {
        payload: PayloadParams {
            link: Some("panda_link8".into()),
            ..sim_defaults().payload
        },
        ..sim_defaults()
    };
    let mut sim = Simulator::new(&model, &params).expect("valid");
    let state = at_ready(0.3, vec![0.3, -0.2, 0.1, 0.4, -0.5, 0.2, 0.05]);
    let a = [1.0, -2.0, 0.5, 0.7, -1.5, 3.0, -0.4];
    let mut d = [0.0; 7];
    sim.true_residual(&state, &a, &mut d).expect("residual");
    let tau_nom = rnea(&model, &mut data, &state.q, &state.v, &a)
        .expect("rnea")
        .to_vec();
    let tau: Vec<f64> = tau_nom.iter().zip(&d).map(|(t, d)| t + d).collect();
    let mut ddq = [0.0; 7];
    sim.true_acceleration(&state, &tau, &mut ddq).expect("fd");
    for j in 0..7 {
        assert!(
            (ddq[j] - a[j]).abs() < 1e-9,
            "joint {j}: {} vs {}",
            ddq[j],
            a[j]
        );
    }
    // The residual is not trivially zero: payload, friction and armature all contribute.
    assert!(d.iter().map(|x| x.abs()).fold(0.0, f64::max) > 1.0);
}

#[test]
fn without_unmodelled_effects_the_residual_vanishes() {
    let model = panda();
    let params = SimParams {
        payload: PayloadParams {
            mass_kg: 0.0,
            ..sim_defaults().payload
        },
        friction: gpn_embedded_sim::FrictionParams {
            viscous_nms_per_rad: JointValues::All(0.0),
            coulomb_nm: JointValues::All(0.0),
            ..Default::default()
        },
        armature_kgm2: JointValues::All(0.0),
        ..sim_defaults()
    };
    let mut sim = Simulator::new(&model, &params).expect("valid");
    let state = at_ready(0.0, vec![0.5; 7]);
    let mut d = [1.0; 7];
    sim.true_residual(&state, &[2.0; 7], &mut d)
        .expect("residual");
    assert!(d.iter().all(|x| x.abs() < 1e-10), "{d:?}");
}

#[test]
fn payload_step_and_friction_drift_follow_their_schedules() {
    let model = panda();
    let params = SimParams {
        payload: PayloadParams {
            link: Some("panda_link8".into()),
            mass_kg: 1.5,
            step: Some(PayloadStep {
                at_secs: 15.0,
                mass_kg: 3.0,
            }),
            ..sim_defaults().payload
        },
        friction: gpn_embedded_sim::FrictionParams {
            coulomb_nm: JointValues::All(0.0),
            drift: Some(FrictionDrift {
                factor_at_end: 3.0,
                over_secs: 30.0,
            }),
            ..sim_defaults().friction
        },
        armature_kgm2: JointValues::All(0.0),
        ..sim_defaults()
    };
    let mut sim = Simulator::new(&model, &params).expect("valid");
    let at = |t: f64, v: f64| at_ready(t, vec![v; 7]);
    let residual = |sim: &mut Simulator, s: &SimState| {
        let mut d = [0.0; 7];
        sim.true_residual(s, &[0.0; 7], &mut d).expect("residual");
        d
    };
    // Static: payload gravity only; it doubles at the step (joint 2 carries it).
    let before = residual(&mut sim, &at(14.9, 0.0));
    let after = residual(&mut sim, &at(15.0, 0.0));
    assert!(
        (after[1] / before[1] - 2.0).abs() < 1e-9,
        "{} vs {}",
        after[1],
        before[1]
    );
    // Moving joint 1 alone (its own centrifugal torque is zero: M does not depend on q₁), so
    // the velocity-dependent residual of joint 1 is the viscous friction 0.5·k(t)·v, with the
    // drift factor k = 1 at t = 0, 2 at 15 s (halfway up the ramp to 3), 3 from 30 s on.
    let moving = |t: f64| {
        let mut v = vec![0.0; 7];
        v[0] = 1.0;
        at_ready(t, v)
    };
    let viscous =
        |sim: &mut Simulator, t: f64| residual(sim, &moving(t))[0] - residual(sim, &at(t, 0.0))[0];
    for (t, expected) in [(0.0, 0.5), (15.0, 1.0), (45.0, 1.5)] {
        let got = viscous(&mut sim, t);
        assert!(
            (got - expected).abs() < 1e-9,
            "t = {t}: {got} vs {expected}"
        );
    }
}

#[test]
fn glitches_occur_at_the_configured_rate() {
    let model = panda();
    let params = noisy_glitchy();
    let mut sim = Simulator::new(&model, &params).expect("valid");
    let state = SimState::at_rest(&READY);
    let mut glitches = 0u32;
    let samples = 20_000;
    for _ in 0..samples {
        glitches += sim.measure(&state, &[0.0; 7]).expect("measure").glitches;
    }
    let expected = 0.01 * f64::from(samples) * 7.0;
    assert!(
        (f64::from(glitches) - expected).abs() < 5.0 * expected.sqrt(),
        "{glitches} vs {expected}"
    );
}

#[test]
fn integrators_agree_on_a_smooth_trajectory() {
    let mut last = Vec::new();
    for integrator in [Integrator::Rk4, Integrator::SemiImplicitEuler] {
        let params = SimParams {
            integrator,
            substeps: 4,
            torque_noise_std_nm: gpn_dynamics::JointValues::All(0.0),
            encoder_noise_std_rad: 0.0,
            ..sim_defaults()
        };
        let (_, end) = run(&params, 300);
        last.push(end.q);
    }
    for j in 0..7 {
        assert!(
            (last[0][j] - last[1][j]).abs() < 1e-3,
            "joint {j}: {:?}",
            last
        );
    }
}

#[test]
fn bad_commands_and_params_are_refused_with_the_reason() {
    let model = panda();
    let mut sim = Simulator::new(&model, &sim_defaults()).expect("valid");
    let mut state = SimState::at_rest(&READY);
    let before = state.clone();
    let mut tau = [0.0; 7];
    tau[3] = f64::NAN;
    let err = sim.step(&mut state, &tau).expect_err("NaN refused");
    assert!(
        matches!(err, SimError::NonFiniteCommand { joint: 3, .. }),
        "{err}"
    );
    assert_eq!(state, before, "a refused step leaves the state as it was");
    let err = sim
        .step(&mut state, &[0.0; 6])
        .expect_err("short command refused");
    assert!(err.to_string().contains("expected 7"), "{err}");

    // Each refused with the setting named: (settings, name).
    for (bad, named) in [
        (
            SimParams {
                rate_hz: 0.0,
                ..sim_defaults()
            },
            "rate_hz",
        ),
        (
            SimParams {
                armature_kgm2: JointValues::Each(vec![0.1; 3]),
                ..sim_defaults()
            },
            "armature_kgm2",
        ),
        (
            SimParams {
                payload: PayloadParams {
                    link: Some("no_such_link".into()),
                    ..sim_defaults().payload
                },
                ..sim_defaults()
            },
            "no_such_link",
        ),
    ] {
        let err = Simulator::new(&model, &bad)
            .err()
            .unwrap_or_else(|| panic!("{named}: accepted"));
        assert!(err.to_string().contains(named), "{named}: {err}");
    }
}
