//! Faults of a robot's sensors and transport in a recorded robot stream (`gp-node eval
//! --contaminate`, on a `gp-node sim --record` or robot recording whose inputs are
//! [q, q̇, q̈] (optionally followed by one friction feature per joint) and whose targets
//! are the residual τ − τ_RBD(q, q̇, q̈) per joint).
//!
//! They reach only what the model learns from, as a fault in the learner's copy of the
//! stream would: the controller, the predictions and the metrics see the clean stream.
//! RATE is the fraction of each target's samples that are wrong, so that "10 %" means the
//! same to a model of independent outputs for every kind:
//!
//! * `torque-spike`: each joint's torque sensor on its own: round(RATE·n) samples per
//!   target column, chosen independently per column, get y_t + U(3σ̄_t, 9σ̄_t) — one sign,
//!   the harder case for a mean (σ̄_t the clean column's standard deviation). A torque
//!   reading enters only its own joint's residual.
//! * `encoder-spike[:SIZE]`: round(RATE·n) samples each get one joint's position reading
//!   (uniform over the joints) off by ±SIZE (random sign; default 0.05 rad). The learner
//!   forms both the input and the target from that reading, so q_j in x moves and every
//!   target becomes τ − τ_RBD(q′, q̇, q̈) = y + τ_RBD(q) − τ_RBD(q′): the robot's inverse
//!   dynamics ([`InverseDynamics`], `--urdf`) recomputes it exactly.
//! * `drop`: round(RATE·n) samples never reach `update` (they are still predicted and
//!   scored; they do not calibrate the bound).
//! * `duplicate`: round(RATE·n) samples reach `update` twice in a row (same time stamp).

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::EvalError;
use super::contaminate::choose;
use super::dataset::Dataset;

/// The encoder spike when none is given, rad: the glitch of `gp-node sim --scenario glitches`.
pub const DEFAULT_ENCODER_SPIKE: f64 = 0.05;

/// The rigid-body inverse dynamics τ_RBD(q, q̇, q̈) the stream's targets were formed with.
pub trait InverseDynamics {
    /// Degrees of freedom (nv).
    fn dof(&self) -> usize;
    /// τ_RBD(q, v, a) into `tau` (nv each).
    fn torque(&mut self, q: &[f64], v: &[f64], a: &[f64], tau: &mut [f64]) -> Result<(), String>;
}

/// `torque-spike`: `count` spikes per target column; returns how many targets changed.
pub(crate) fn torque_spikes(
    data: &mut Dataset,
    count: usize,
    target_std: &[f64],
    rng: &mut ChaCha8Rng,
) -> usize {
    let (n, p) = (data.len(), data.output_dim());
    let mut y = data.y.clone();
    let mut spiked = 0;
    for (t, s) in target_std.iter().enumerate() {
        for i in choose(n, count, rng) {
            y[i * p + t] += s * (3.0 + 6.0 * rng.random::<f64>());
            spiked += 1;
        }
    }
    data.y_update = Some(y);
    spiked
}

/// `encoder-spike`: `count` samples with one joint's position off by ±`spike`.
pub(crate) fn encoder_spikes(
    data: &mut Dataset,
    count: usize,
    spike: f64,
    robot: &mut dyn InverseDynamics,
    rng: &mut ChaCha8Rng,
) -> Result<(), EvalError> {
    let (n, d, p) = (data.len(), data.input_dim(), data.output_dim());
    let nv = robot.dof();
    if nv == 0 || p != nv || !(d == 3 * nv || d == 4 * nv) {
        return Err(EvalError::Config(format!(
            "--contaminate encoder-spike needs a robot stream: inputs [q, q̇, q̈] (3·nv, or 4·nv with friction features) and one target per joint; the robot has nv = {nv}, the stream {d} inputs and {p} targets"
        )));
    }
    let (mut x, mut y) = (data.x.clone(), data.y.clone());
    let offsets = data.input_offsets.clone();
    // Positions, velocities, accelerations as measured (the stream may be centred).
    let mut state = vec![0.0; 3 * nv];
    let (mut clean, mut spiked) = (vec![0.0; nv], vec![0.0; nv]);
    for i in choose(n, count, rng) {
        let joint = ((rng.random::<f64>() * nv as f64) as usize).min(nv - 1);
        let sign = if rng.random::<f64>() < 0.5 { -1.0 } else { 1.0 };
        for (k, s) in state.iter_mut().enumerate() {
            *s = data.x[i * d + k] + offsets[k];
        }
        let (q, rest) = state.split_at_mut(nv);
        let (v, a) = rest.split_at(nv);
        let fail = |why: String| EvalError::Config(format!("encoder-spike at sample {i}: {why}"));
        robot.torque(q, v, a, &mut clean).map_err(fail)?;
        q[joint] += sign * spike;
        robot.torque(q, v, a, &mut spiked).map_err(fail)?;
        x[i * d + joint] += sign * spike;
        for t in 0..p {
            y[i * p + t] += clean[t] - spiked[t];
        }
    }
    data.x_update = Some(x);
    data.y_update = Some(y);
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::contaminate::{Contamination, Kind};
    use crate::dataset::{Centering, ColumnSelection};

    /// Two independent pendulums (mass 2 kg, length 0.5 m): τ_j = m l² q̈_j + m g l sin q_j,
    /// an inverse dynamics written out by hand, independent of the crate under test.
    struct TwoPendulums;

    const M: f64 = 2.0;
    const L: f64 = 0.5;
    const G: f64 = 9.81;

    impl InverseDynamics for TwoPendulums {
        fn dof(&self) -> usize {
            2
        }
        fn torque(
            &mut self,
            q: &[f64],
            _v: &[f64],
            a: &[f64],
            tau: &mut [f64],
        ) -> Result<(), String> {
            for j in 0..2 {
                tau[j] = M * L * L * a[j] + M * G * L * q[j].sin();
            }
            Ok(())
        }
    }

    /// A robot stream of the two pendulums: x = [q, q̇, q̈], y = τ − τ_RBD + a smooth residual.
    fn robot_stream(n: usize) -> Dataset {
        let mut s = String::from("q0,q1,v0,v1,a0,a1,y0,y1\n");
        for i in 0..n {
            let t = i as f64 * 0.01;
            let (q0, q1) = (0.8 * t.sin(), 0.5 * (1.3 * t).cos());
            let (v0, v1) = (0.8 * t.cos(), -0.65 * (1.3 * t).sin());
            let (a0, a1) = (-q0, -1.69 * q1);
            let (y0, y1) = (0.3 * v0, 0.2 * q0 * q1);
            s += &format!("{q0},{q1},{v0},{v1},{a0},{a1},{y0},{y1}\n");
        }
        let sel = ColumnSelection {
            inputs: Some("q0..a1".into()),
            targets: Some("y0,y1".into()),
            truth: None,
            predict_inputs: None,
        };
        let mut d = Dataset::from_reader(s.as_bytes(), "pendulums", &sel).unwrap();
        d.center(Centering::WholeFile);
        d
    }

    fn apply(
        d: &mut Dataset,
        spec: &str,
        seed: u64,
    ) -> Result<crate::contamination::Summary, EvalError> {
        Contamination::parse(spec, seed)
            .unwrap()
            .apply(d, Some(&mut TwoPendulums))
    }

    #[test]
    fn torque_spikes_hit_each_joint_on_its_own_samples_upwards_within_3_to_9_sigma() {
        let mut d = robot_stream(400);
        let s = apply(&mut d, "torque-spike:0.1", 5).unwrap();
        assert_eq!(s.count, 80, "40 per joint");
        assert!(d.x_update.is_none(), "a torque reading moves no input");
        let mut hit = [Vec::new(), Vec::new()];
        for i in 0..400 {
            for (t, rows) in hit.iter_mut().enumerate() {
                let shift = d.y_update_row(i)[t] - d.y_row(i)[t];
                if shift != 0.0 {
                    let k = shift / s.target_std[t];
                    assert!((3.0..=9.0).contains(&k), "joint {t}: {k} σ̄");
                    rows.push(i);
                }
            }
        }
        assert_eq!((hit[0].len(), hit[1].len()), (40, 40));
        assert_ne!(hit[0], hit[1], "each sensor spikes on its own samples");
    }

    #[test]
    fn an_encoder_spike_moves_one_position_and_the_targets_by_the_dynamics() {
        let mut d = robot_stream(300);
        let s = apply(&mut d, "encoder-spike:0.1:0.05", 2).unwrap();
        assert_eq!((s.count, s.spike), (30, Some(0.05)));
        let mut spiked = 0;
        for i in 0..300 {
            let (x, xu) = (d.x_row(i), d.x_update_row(i));
            let moved: Vec<usize> = (0..6).filter(|&k| x[k] != xu[k]).collect();
            if moved.is_empty() {
                assert_eq!(d.y_update_row(i), d.y_row(i));
                continue;
            }
            spiked += 1;
            assert_eq!(moved.len(), 1, "one joint's position");
            let j = moved[0];
            assert!(j < 2, "a position, not a velocity or acceleration");
            let delta = xu[j] - x[j];
            assert!((delta.abs() - 0.05).abs() < 1e-12);
            // Raw position (the stream is centred): y′ − y = m g l (sin q − sin q′) on joint
            // j only, as the pendulums are independent.
            let q = x[j] + d.input_offsets[j];
            let expected = M * G * L * (q.sin() - (q + delta).sin());
            let dy = d.y_update_row(i)[j] - d.y_row(i)[j];
            assert!((dy - expected).abs() < 1e-12, "{dy} vs {expected}");
            assert_eq!(d.y_update_row(i)[1 - j], d.y_row(i)[1 - j]);
        }
        assert_eq!(spiked, 30);
    }

    #[test]
    fn an_encoder_spike_needs_the_robot_and_a_robot_stream() {
        let mut d = robot_stream(50);
        let e = Contamination::parse("encoder-spike:0.1", 0)
            .unwrap()
            .apply(&mut d, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--urdf"), "{e}");
        // Two targets but six inputs is a robot stream; two inputs is not.
        let sel = ColumnSelection {
            inputs: Some("a,b".into()),
            targets: Some("y,z".into()),
            truth: None,
            predict_inputs: None,
        };
        let mut other =
            Dataset::from_reader("a,b,y,z\n1,2,3,4\n2,3,4,5\n".as_bytes(), "m", &sel).unwrap();
        let e = apply(&mut other, "encoder-spike:0.5", 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("nv = 2") && e.contains("2 inputs"), "{e}");
        for bad in [
            "encoder-spike:0.1:0",
            "encoder-spike:0.1:x",
            "drop:0.1:0.05",
            "drop:0.1:1:2",
        ] {
            assert!(Contamination::parse(bad, 0).is_err(), "{bad}");
        }
    }

    #[test]
    fn drop_and_duplicate_change_how_often_update_sees_a_sample() {
        for (spec, kind, times) in [
            ("drop:0.2", Kind::Drop, 0),
            ("duplicate:0.2", Kind::Duplicate, 2),
        ] {
            let mut d = robot_stream(100);
            let s = apply(&mut d, spec, 9).unwrap();
            assert_eq!((s.kind, s.count), (kind, 20));
            let counts: Vec<usize> = (0..100).map(|i| d.update_count(i)).collect();
            assert_eq!(counts.iter().filter(|&&c| c == times).count(), 20, "{spec}");
            assert_eq!(counts.iter().filter(|&&c| c == 1).count(), 80, "{spec}");
            assert!(
                d.x_update.is_none() && d.y_update.is_none(),
                "values unchanged"
            );
            // What a fit on the stream sees: 80 or 120 samples.
            assert_eq!(d.as_streamed().len(), 80 + 20 * times, "{spec}");
        }
    }
}
