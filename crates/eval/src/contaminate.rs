//! Outlier contamination of a stream (`gp-node eval --contaminate KIND:RATE`): the robot
//! sensor and transport faults `torque-spike`, `encoder-spike`, `drop` and `duplicate` are
//! described in [`super::sensor_faults`]; the others follow the
//! protocols of the RCaGP paper (spec `specs/rcagp.md` §4.2) with the choices of its §5
//! item 14: an exact-count random subset, the paper's signs, no permutation.
//!
//! Of the n samples, round(RATE·n) are chosen uniformly without replacement (seeded
//! ChaCha8, `--contaminate-seed`). σ̄_t is the standard deviation of target column t over
//! the whole clean stream (after centring); every target of a chosen sample is changed:
//!
//! * `asymmetric`: y ← y − U(3σ̄, 9σ̄) (the paper subtracts; its code adds);
//! * `uniform`: the chosen samples are split in two halves (in the order drawn); the first
//!   half gets y + U(3σ̄, 9σ̄), the second y − U(3σ̄, 9σ̄) (the reference code's permutation
//!   of y is a bug and is not reproduced);
//! * `focused`: the inputs become med(X) + 0.1·MAD(X)·U(0,1) per column (all chosen points
//!   near the input median), and y ← median(y) − 3·std(y) − 0.1·MAD(y)·U(0,1) per target.
//!
//! What is contaminated: only the copy of x and y streamed to the model's `update` (and
//! used for a hyperparameter fit on the stream). The clean values stay the reference
//! everywhere a metric needs one: `predict` is called at the clean x, SMSE and MSLL compare
//! μ with the clean y, `--truth` columns are untouched (truth RMSE, bound coverage). The
//! calibration of η_cal uses what the model was given (`--calibrate-on target`, the
//! deployment view) or the truth (`--calibrate-on truth`).

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::EvalError;
pub use super::contamination::{Kind, Summary};
use super::dataset::Dataset;
pub use super::sensor_faults::InverseDynamics;
use super::sensor_faults::{self, DEFAULT_ENCODER_SPIKE};

/// A parsed `KIND:RATE` (or `encoder-spike:RATE:SIZE`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Contamination {
    /// The protocol.
    pub kind: Kind,
    /// Fraction of samples contaminated, in [0, 1].
    pub rate: f64,
    /// Seed of the selection and the draws.
    pub seed: u64,
    /// The encoder spike (rad, or m for a prismatic joint); `None` for the other kinds.
    pub spike: Option<f64>,
}

impl Contamination {
    /// Parses `KIND:RATE` (`asymmetric:0.1`), or `encoder-spike:RATE[:SIZE]`.
    pub fn parse(spec: &str, seed: u64) -> Result<Self, EvalError> {
        let err = |why: &str| {
            let kinds: Vec<_> = Kind::ALL.iter().map(|k| k.name()).collect();
            EvalError::Config(format!(
                "--contaminate \"{spec}\": {why}; expected KIND:RATE with KIND one of {} and RATE in [0, 1] (encoder-spike:RATE:SIZE gives the spike, default {DEFAULT_ENCODER_SPIKE} rad)",
                kinds.join(", ")
            ))
        };
        let mut fields = spec.split(':').map(str::trim);
        let kind = fields.next().unwrap_or_default();
        let kind = Kind::from_name(kind).ok_or_else(|| err("unknown KIND"))?;
        let rate: f64 = fields
            .next()
            .ok_or_else(|| err("no ':'"))?
            .parse()
            .map_err(|_| err("RATE is not a number"))?;
        if !(0.0..=1.0).contains(&rate) {
            return Err(err("RATE out of range"));
        }
        let spike = match (kind, fields.next()) {
            (Kind::EncoderSpike, None) => Some(DEFAULT_ENCODER_SPIKE),
            (Kind::EncoderSpike, Some(size)) => {
                let size: f64 = size.parse().map_err(|_| err("SIZE is not a number"))?;
                if !(size.is_finite() && size > 0.0) {
                    return Err(err("SIZE must be positive"));
                }
                Some(size)
            }
            (_, None) => None,
            (_, Some(_)) => return Err(err("only encoder-spike takes a SIZE")),
        };
        if fields.next().is_some() {
            return Err(err("too many ':'"));
        }
        Ok(Self {
            kind,
            rate,
            seed,
            spike,
        })
    }

    /// Contaminates the streamed copy of `data` (see the module doc). Once per dataset.
    /// `robot` is the inverse dynamics the stream's targets were formed with; only
    /// `encoder-spike` needs it (and fails without it).
    pub fn apply(
        &self,
        data: &mut Dataset,
        robot: Option<&mut dyn InverseDynamics>,
    ) -> Result<Summary, EvalError> {
        if data.x_update.is_some() || data.y_update.is_some() || data.update_repeats.is_some() {
            return Err(EvalError::Config(
                "the stream already streams other inputs or targets to update (contaminated, or --predict-inputs)".into(),
            ));
        }
        let (n, p) = (data.len(), data.output_dim());
        let count = ((self.rate * n as f64).round() as usize).min(n);
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let target_std: Vec<f64> = data.target_variances().iter().map(|v| v.sqrt()).collect();
        let mut summary = Summary {
            kind: self.kind,
            rate: self.rate,
            seed: self.seed,
            count,
            target_std: target_std.clone(),
            spike: self.spike,
        };
        match self.kind {
            Kind::Asymmetric => {
                let mut y = data.y.clone();
                for i in choose(n, count, &mut rng) {
                    for (t, s) in target_std.iter().enumerate() {
                        y[i * p + t] -= s * (3.0 + 6.0 * rng.random::<f64>());
                    }
                }
                data.y_update = Some(y);
            }
            Kind::Uniform => {
                let mut y = data.y.clone();
                let half = count / 2;
                for (k, i) in choose(n, count, &mut rng).into_iter().enumerate() {
                    let sign = if k < half { 1.0 } else { -1.0 };
                    for (t, s) in target_std.iter().enumerate() {
                        y[i * p + t] += sign * s * (3.0 + 6.0 * rng.random::<f64>());
                    }
                }
                data.y_update = Some(y);
            }
            Kind::Focused => focused(data, count, &mut rng),
            Kind::TorqueSpike => {
                summary.count = sensor_faults::torque_spikes(data, count, &target_std, &mut rng);
            }
            Kind::EncoderSpike => {
                let robot = robot.ok_or_else(|| {
                    EvalError::Config(
                        "--contaminate encoder-spike recomputes the targets at the spiked positions and needs the robot (--urdf)".into(),
                    )
                })?;
                let spike = self.spike.unwrap_or(DEFAULT_ENCODER_SPIKE);
                sensor_faults::encoder_spikes(data, count, spike, robot, &mut rng)?;
            }
            Kind::Drop | Kind::Duplicate => {
                let times = if self.kind == Kind::Drop { 0 } else { 2 };
                let mut repeats = vec![1u8; n];
                for i in choose(n, count, &mut rng) {
                    repeats[i] = times;
                }
                data.update_repeats = Some(repeats);
            }
        }
        data.contamination = Some(summary.clone());
        Ok(summary)
    }
}

/// `count` of `0..n` chosen uniformly without replacement, in draw order (partial
/// Fisher–Yates).
pub(crate) fn choose(n: usize, count: usize, rng: &mut ChaCha8Rng) -> Vec<usize> {
    let count = count.min(n);
    let mut idx: Vec<usize> = (0..n).collect();
    for k in 0..count {
        let j = k + (rng.random::<f64>() * (n - k) as f64) as usize;
        idx.swap(k, j.min(n - 1));
    }
    idx.truncate(count);
    idx
}

/// The focused protocol: chosen inputs near the input median, their targets far below.
fn focused(data: &mut Dataset, count: usize, rng: &mut ChaCha8Rng) {
    let (n, d, p) = (data.len(), data.input_dim(), data.output_dim());
    let column =
        |v: &[f64], k: usize, t: usize| -> Vec<f64> { (0..n).map(|i| v[i * k + t]).collect() };
    let x_stats: Vec<(f64, f64)> = (0..d).map(|j| median_mad(&column(&data.x, d, j))).collect();
    let y_stats: Vec<(f64, f64, f64)> = (0..p)
        .map(|t| {
            let c = column(&data.y, p, t);
            let (med, mad) = median_mad(&c);
            (med, mad, std(&c))
        })
        .collect();
    let (mut x, mut y) = (data.x.clone(), data.y.clone());
    for i in choose(n, count, rng) {
        for (j, (med, mad)) in x_stats.iter().enumerate() {
            x[i * d + j] = med + 0.1 * mad * rng.random::<f64>();
        }
        for (t, (med, mad, sd)) in y_stats.iter().enumerate() {
            y[i * p + t] = med - 3.0 * sd - 0.1 * mad * rng.random::<f64>();
        }
    }
    data.x_update = Some(x);
    data.y_update = Some(y);
}

/// Population standard deviation (0 for fewer than 2 values).
fn std(v: &[f64]) -> f64 {
    if v.len() < 2 {
        return 0.0;
    }
    let m = v.iter().sum::<f64>() / v.len() as f64;
    (v.iter().map(|a| (a - m).powi(2)).sum::<f64>() / v.len() as f64).sqrt()
}

/// Median and median absolute deviation (unscaled).
fn median_mad(v: &[f64]) -> (f64, f64) {
    let med = median(v.to_vec());
    let mad = median(v.iter().map(|a| (a - med).abs()).collect());
    (med, mad)
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::dataset::ColumnSelection;

    fn data(n: usize) -> Dataset {
        let mut s = String::from("a,b,y,z\n");
        for i in 0..n {
            let (a, b) = ((i as f64 * 0.37).sin(), (i as f64 * 0.11).cos());
            s += &format!("{a},{b},{},{}\n", a + b, 2.0 * a - b);
        }
        let sel = ColumnSelection {
            inputs: Some("a,b".into()),
            targets: Some("y,z".into()),
            truth: None,
            predict_inputs: None,
        };
        Dataset::from_reader(s.as_bytes(), "test", &sel).unwrap()
    }

    fn changed(d: &Dataset) -> Vec<usize> {
        let p = d.output_dim();
        (0..d.len())
            .filter(|&i| d.y_update_row(i) != &d.y[i * p..(i + 1) * p])
            .collect()
    }

    #[test]
    fn parses_and_rejects() {
        let c = Contamination::parse("asymmetric:0.1", 3).unwrap();
        assert_eq!((c.kind, c.rate, c.seed), (Kind::Asymmetric, 0.1, 3));
        assert_eq!(
            Contamination::parse("focused: 0.25", 0).unwrap().kind,
            Kind::Focused
        );
        for bad in [
            "asymmetric",
            "sideways:0.1",
            "uniform:x",
            "uniform:1.5",
            "uniform:-0.1",
        ] {
            let e = Contamination::parse(bad, 0).unwrap_err().to_string();
            assert!(e.contains("--contaminate"), "{bad}: {e}");
        }
    }

    #[test]
    fn asymmetric_changes_an_exact_count_downwards_within_3_to_9_sigma() {
        let mut d = data(200);
        let s = Contamination::parse("asymmetric:0.1", 7)
            .unwrap()
            .apply(&mut d, None)
            .unwrap();
        assert_eq!(s.count, 20);
        let hit = changed(&d);
        assert_eq!(hit.len(), 20);
        for &i in &hit {
            for t in 0..2 {
                let shift = d.y_update_row(i)[t] - d.y[i * 2 + t];
                let k = -shift / s.target_std[t];
                assert!((3.0..=9.0).contains(&k), "shift {k} σ̄");
            }
        }
        // Inputs and clean targets untouched; same seed → same result; other seed → other.
        assert!(d.x_update.is_none());
        let mut again = data(200);
        Contamination::parse("asymmetric:0.1", 7)
            .unwrap()
            .apply(&mut again, None)
            .unwrap();
        assert_eq!(again.y_update, d.y_update);
        let mut other = data(200);
        Contamination::parse("asymmetric:0.1", 8)
            .unwrap()
            .apply(&mut other, None)
            .unwrap();
        assert_ne!(changed(&other), hit);
    }

    #[test]
    fn uniform_has_both_signs_in_halves() {
        let mut d = data(300);
        let s = Contamination::parse("uniform:0.2", 1)
            .unwrap()
            .apply(&mut d, None)
            .unwrap();
        assert_eq!(s.count, 60);
        let (mut up, mut down) = (0, 0);
        for i in changed(&d) {
            let shift = d.y_update_row(i)[0] - d.y[i * 2];
            let k = shift.abs() / s.target_std[0];
            assert!((3.0..=9.0).contains(&k));
            if shift > 0.0 { up += 1 } else { down += 1 }
        }
        assert_eq!((up, down), (30, 30));
    }

    #[test]
    fn focused_moves_inputs_to_the_median_and_targets_far_below() {
        let mut d = data(400);
        let s = Contamination::parse("focused:0.05", 2)
            .unwrap()
            .apply(&mut d, None)
            .unwrap();
        assert_eq!(s.count, 20);
        let xs = d.x_update.clone().unwrap();
        let (med_a, mad_a) = median_mad(&(0..400).map(|i| d.x[i * 2]).collect::<Vec<_>>());
        let ys: Vec<f64> = (0..400).map(|i| d.y[i * 2]).collect();
        let (med_y, mad_y) = median_mad(&ys);
        let sd_y = std(&ys);
        let hit = changed(&d);
        assert_eq!(hit.len(), 20);
        for i in 0..400 {
            let moved = xs[i * 2] != d.x[i * 2];
            assert_eq!(
                moved,
                hit.contains(&i),
                "inputs move exactly for the chosen samples"
            );
        }
        for &i in &hit {
            assert!(xs[i * 2] >= med_a && xs[i * 2] <= med_a + 0.1 * mad_a);
            let y = d.y_update_row(i)[0];
            assert!(y <= med_y - 3.0 * sd_y && y >= med_y - 3.0 * sd_y - 0.1 * mad_y);
        }
    }

    #[test]
    fn zero_rate_changes_nothing_and_twice_is_an_error() {
        let mut d = data(50);
        let s = Contamination::parse("uniform:0", 0)
            .unwrap()
            .apply(&mut d, None)
            .unwrap();
        assert_eq!(s.count, 0);
        assert!(changed(&d).is_empty());
        assert!(
            Contamination::parse("uniform:0.1", 0)
                .unwrap()
                .apply(&mut d, None)
                .is_err()
        );
    }
}
