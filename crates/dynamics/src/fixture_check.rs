//! Agreement test of the engine against reference values (Pinocchio fixtures, format in the
//! shared `fixtures/dynamics/README.md`), used by `gp-node dynamics check` and the tests.
//!
//! Joints are matched by name: the fixture may order them differently from the engine. For
//! each sample the engine computes τ = RNEA(q, q̇, q̈), M(q) (CRBA), g(q), C(q, q̇)q̇ + g(q) and
//! q̈ = ABA(q, q̇, τ_aba) with the fixture's gravity. τ, M, g and C q̇ + g agree when
//! `max |engine − reference| ≤ 1e-8 · max(1, max |reference|)` over all samples (an absolute
//! floor, since many entries are exactly zero). Forward dynamics amplifies rounding by the
//! condition number of M, so q̈ agrees when, in every sample,
//! `max |engine − reference| ≤ cond(M) · 1e-14 · max(1, max |reference|)` (cond(M) in the
//! 2-norm, of the engine's M of that sample). NaN never agrees.

use std::collections::HashSet;
use std::path::Path;

use nalgebra::Vector3;
use serde::Deserialize;

use super::data::Data;
use super::error::{Result, RobotError};
use super::model::Model;
use super::{aba, crba, gravity, nonlinear_effects, rnea};

/// Relative tolerance of the agreement test (τ, M, g, C q̇ + g).
pub const RELATIVE_TOLERANCE: f64 = 1e-8;

/// Relative tolerance of forward dynamics per unit of cond(M).
pub const FD_TOLERANCE_PER_COND: f64 = 1e-14;

/// A reference fixture: joint names, gravity and samples.
#[derive(Clone, Debug, Deserialize)]
pub struct Fixture {
    /// Robot name (informational).
    #[serde(default)]
    pub robot: String,
    /// Movable joints, in the order of every vector of the samples.
    pub joints: Vec<String>,
    /// Gravity (m/s², world frame); (0, 0, −9.81) when absent.
    #[serde(default = "default_gravity")]
    pub gravity: [f64; 3],
    /// Number of degrees of freedom, if given (must equal `joints.len()`).
    #[serde(default)]
    pub nv: Option<usize>,
    /// The reference samples.
    pub samples: Vec<FixtureSample>,
    /// Where the fixture came from (for error messages).
    #[serde(skip)]
    pub source_name: String,
}

/// One reference sample; every vector is in [`Fixture::joints`] order.
#[derive(Clone, Debug, Deserialize)]
pub struct FixtureSample {
    /// Joint positions (rad or m).
    pub q: Vec<f64>,
    /// Joint velocities.
    pub v: Vec<f64>,
    /// Joint accelerations.
    pub a: Vec<f64>,
    /// Inverse dynamics τ = M a + C v + g.
    pub tau_rnea: Vec<f64>,
    /// Joint-space inertia matrix, rows.
    #[serde(rename = "M")]
    pub m: Vec<Vec<f64>>,
    /// g(q).
    pub gravity: Vec<f64>,
    /// C(q, v) v + g(q).
    pub nonlinear: Vec<f64>,
    /// Torques for the forward-dynamics check.
    pub tau_aba: Vec<f64>,
    /// q̈ = FD(q, v, tau_aba).
    pub ddq_aba: Vec<f64>,
}

fn default_gravity() -> [f64; 3] {
    [0.0, 0.0, -9.81]
}

impl Fixture {
    /// Reads a fixture JSON file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Fixture> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|error| RobotError::Io {
            what: "dynamics fixture",
            error,
            path: path.to_path_buf(),
        })?;
        Fixture::from_json_str(&text, &path.display().to_string())
    }

    /// Parses fixture JSON; `source_name` names it in errors.
    pub fn from_json_str(text: &str, source_name: &str) -> Result<Fixture> {
        let mut fixture: Fixture = serde_json::from_str(text).map_err(|e| RobotError::Fixture {
            element: format!("JSON line {} column {}", e.line(), e.column()),
            message: e.to_string(),
            file: source_name.to_owned(),
        })?;
        fixture.source_name = source_name.to_owned();
        Ok(fixture)
    }
}

/// The agreement of one quantity over all samples.
#[derive(Clone, Debug)]
pub struct QuantityCheck {
    /// Fixture key: `tau_rnea`, `M`, `gravity`, `nonlinear` or `ddq_aba`.
    pub name: &'static str,
    /// Largest |engine − reference| over all samples and entries (NaN if any entry is NaN).
    pub max_abs_diff: f64,
    /// Largest |reference|.
    pub max_abs_ref: f64,
    /// `1e-8 · max(1, max_abs_ref)`; for `ddq_aba`, the tolerance of the worst sample,
    /// `cond(M) · 1e-14 · max(1, max |ref| of that sample)`.
    pub tolerance: f64,
    /// `max_abs_diff ≤ tolerance`.
    pub passed: bool,
    /// Sample index of the largest difference.
    pub worst_sample: usize,
    /// Where in that sample, e.g. `panda_joint4` or `panda_joint2,panda_joint4`.
    pub worst_entry: String,
}

/// The result of [`check_fixture`].
#[derive(Clone, Debug)]
pub struct CheckReport {
    /// The fixture's robot name.
    pub robot: String,
    /// Degrees of freedom compared.
    pub nv: usize,
    /// Samples compared.
    pub n_samples: usize,
    /// One entry per quantity, in the order tau_rnea, M, gravity, nonlinear, ddq_aba.
    pub quantities: Vec<QuantityCheck>,
    /// Condition number (2-norm) of the engine's M over the samples: largest.
    pub cond_m_max: f64,
    /// Condition number of M over the samples: median.
    pub cond_m_median: f64,
}

impl CheckReport {
    /// Whether every quantity agrees.
    pub fn passed(&self) -> bool {
        self.quantities.iter().all(|q| q.passed)
    }
}

struct Accumulator {
    check: QuantityCheck,
    /// Forward dynamics: the largest diff/tolerance over the samples, each with its own
    /// tolerance (`None` for the other quantities, judged against one tolerance at the end).
    worst_ratio: Option<f64>,
}

impl Accumulator {
    fn new(name: &'static str) -> Self {
        Self {
            check: QuantityCheck {
                name,
                max_abs_diff: 0.0,
                max_abs_ref: 0.0,
                tolerance: 0.0,
                passed: false,
                worst_sample: 0,
                worst_entry: String::new(),
            },
            worst_ratio: None,
        }
    }

    /// Forward dynamics: every entry of sample `s` against the sample's own tolerance.
    fn add_sample_with_tolerance(
        &mut self,
        s: usize,
        engine: &[f64],
        reference: &[f64],
        tolerance: f64,
        entry: impl Fn(usize) -> String,
    ) {
        let c = &mut self.check;
        for (k, (&e, &r)) in engine.iter().zip(reference).enumerate() {
            let diff = (e - r).abs();
            let ratio = diff / tolerance;
            let worst = self.worst_ratio.unwrap_or(0.0);
            if worst.is_nan() {
                return;
            }
            if ratio.is_nan() || ratio > worst || self.worst_ratio.is_none() {
                self.worst_ratio = Some(ratio);
                c.max_abs_diff = diff;
                c.tolerance = tolerance;
                c.worst_sample = s;
                c.worst_entry = entry(k);
            }
            if r.abs() > c.max_abs_ref || r.is_nan() {
                c.max_abs_ref = r.abs();
            }
        }
    }

    fn add(&mut self, sample: usize, engine: f64, reference: f64, entry: impl FnOnce() -> String) {
        let c = &mut self.check;
        let diff = (engine - reference).abs();
        if c.max_abs_diff.is_nan() {
            return;
        }
        if diff.is_nan() || diff > c.max_abs_diff {
            c.max_abs_diff = diff;
            c.worst_sample = sample;
            c.worst_entry = entry();
        }
        if reference.abs() > c.max_abs_ref || reference.is_nan() {
            c.max_abs_ref = reference.abs();
        }
    }

    fn finish(mut self) -> QuantityCheck {
        let c = &mut self.check;
        match self.worst_ratio {
            Some(ratio) => c.passed = ratio <= 1.0 && !c.max_abs_ref.is_nan(),
            None => {
                c.tolerance = RELATIVE_TOLERANCE * c.max_abs_ref.max(1.0);
                c.passed = c.max_abs_diff <= c.tolerance && !c.max_abs_ref.is_nan();
            }
        }
        self.check
    }
}

/// Compares the engine with every sample of `fixture`, joints matched by name, with the
/// fixture's gravity.
///
/// Errors: the fixture's joint names are not exactly the model's movable joints (the error
/// lists the joints missing on each side), duplicate names, wrong vector lengths, no samples.
pub fn check_fixture(model: &Model, fixture: &Fixture) -> Result<CheckReport> {
    let file = fixture.source_name.as_str();
    let n = fixture.joints.len();
    let perm = match_joints(model, fixture)?;
    if fixture.samples.is_empty() {
        return Err(fixture_error(file, "samples".into(), "no samples".into()));
    }
    let mut model = model.clone();
    model
        .set_gravity(Vector3::from(fixture.gravity))
        .map_err(|e| fixture_error(file, "gravity".into(), e.to_string()))?;

    let mut data = Data::new(&model);
    let mut acc = Accumulators::new();
    for (s, sample) in fixture.samples.iter().enumerate() {
        check_sample_shape(file, s, sample, n)?;
        acc.compare(&model, &mut data, fixture, &perm, s, sample)?;
    }
    let mut conds = std::mem::take(&mut acc.cond_m);
    conds.sort_by(f64::total_cmp);
    Ok(CheckReport {
        robot: fixture.robot.clone(),
        nv: n,
        n_samples: fixture.samples.len(),
        quantities: acc.finish(),
        cond_m_max: conds.last().copied().unwrap_or(f64::NAN),
        cond_m_median: conds.get(conds.len() / 2).copied().unwrap_or(f64::NAN),
    })
}

/// A [`RobotError::Fixture`] about `element` of the fixture `file`.
fn fixture_error(file: &str, element: String, message: String) -> RobotError {
    RobotError::Fixture {
        element,
        message,
        file: file.to_owned(),
    }
}

/// Checks the fixture's joint list against the model's movable joints and returns, for each
/// fixture joint k, its engine index.
fn match_joints(model: &Model, fixture: &Fixture) -> Result<Vec<usize>> {
    let file = fixture.source_name.as_str();
    let n = fixture.joints.len();
    if let Some(nv) = fixture.nv.filter(|&nv| nv != n) {
        return Err(fixture_error(
            file,
            "nv".into(),
            format!("nv = {nv} but {n} joints are listed"),
        ));
    }
    let mut seen = HashSet::new();
    if let Some(dup) = fixture.joints.iter().find(|j| !seen.insert(j.as_str())) {
        return Err(fixture_error(
            file,
            "joints".into(),
            format!("joint '{dup}' is listed twice"),
        ));
    }
    let missing_in_urdf: Vec<String> = fixture
        .joints
        .iter()
        .filter(|j| model.joint_index(j).is_none())
        .cloned()
        .collect();
    let missing_in_fixture: Vec<String> = model
        .joint_names()
        .iter()
        .filter(|j| !seen.contains(j.as_str()))
        .cloned()
        .collect();
    if !missing_in_urdf.is_empty() || !missing_in_fixture.is_empty() {
        return Err(RobotError::FixtureJoints {
            missing_in_urdf,
            missing_in_fixture,
            urdf: model.source_name().to_owned(),
            file: file.to_owned(),
        });
    }
    // perm[k]: the engine index of fixture joint k.
    Ok(fixture
        .joints
        .iter()
        .filter_map(|j| model.joint_index(j))
        .collect())
}

/// Checks that every vector of sample `s` has `n` entries and `M` is n×n.
fn check_sample_shape(file: &str, s: usize, sample: &FixtureSample, n: usize) -> Result<()> {
    let vectors: [(&str, &Vec<f64>); 8] = [
        ("q", &sample.q),
        ("v", &sample.v),
        ("a", &sample.a),
        ("tau_rnea", &sample.tau_rnea),
        ("gravity", &sample.gravity),
        ("nonlinear", &sample.nonlinear),
        ("tau_aba", &sample.tau_aba),
        ("ddq_aba", &sample.ddq_aba),
    ];
    for (key, values) in vectors {
        if values.len() != n {
            return Err(fixture_error(
                file,
                format!("samples[{s}].{key}"),
                format!(
                    "expected {n} entries (one per joint), found {}",
                    values.len()
                ),
            ));
        }
    }
    if sample.m.len() != n {
        return Err(fixture_error(
            file,
            format!("samples[{s}].M"),
            format!("expected {n} rows, found {}", sample.m.len()),
        ));
    }
    if let Some((r, row)) = sample.m.iter().enumerate().find(|(_, row)| row.len() != n) {
        return Err(fixture_error(
            file,
            format!("samples[{s}].M row {r}"),
            format!("expected {n} entries, found {}", row.len()),
        ));
    }
    Ok(())
}

/// The five quantities' accumulators, in report order.
struct Accumulators {
    tau: Accumulator,
    mass: Accumulator,
    grav: Accumulator,
    nle: Accumulator,
    ddq: Accumulator,
    /// cond(M) of each sample.
    cond_m: Vec<f64>,
}

impl Accumulators {
    fn new() -> Self {
        Self {
            tau: Accumulator::new("tau_rnea"),
            mass: Accumulator::new("M"),
            grav: Accumulator::new("gravity"),
            nle: Accumulator::new("nonlinear"),
            ddq: Accumulator::new("ddq_aba"),
            cond_m: Vec::new(),
        }
    }

    /// Runs the engine on sample `s` (already shape-checked) and adds every quantity.
    fn compare(
        &mut self,
        model: &Model,
        data: &mut Data,
        fixture: &Fixture,
        perm: &[usize],
        s: usize,
        sample: &FixtureSample,
    ) -> Result<()> {
        let n = fixture.joints.len();
        let to_engine = |values: &[f64]| {
            let mut out = vec![0.0; n];
            for (k, &x) in values.iter().enumerate() {
                out[perm[k]] = x;
            }
            out
        };
        let (q, v, a, tau_aba) = (
            to_engine(&sample.q),
            to_engine(&sample.v),
            to_engine(&sample.a),
            to_engine(&sample.tau_aba),
        );
        let name = |k: usize| fixture.joints[k].clone();

        let out = rnea(model, data, &q, &v, &a)?;
        for k in 0..n {
            self.tau
                .add(s, out[perm[k]], sample.tau_rnea[k], || name(k));
        }
        let m = crba(model, data, &q)?;
        let cond = condition_number(m);
        self.cond_m.push(cond);
        for k in 0..n {
            for l in 0..n {
                self.mass.add(s, m[(perm[k], perm[l])], sample.m[k][l], || {
                    format!("{},{}", name(k), name(l))
                });
            }
        }
        let out = gravity(model, data, &q)?;
        for k in 0..n {
            self.grav
                .add(s, out[perm[k]], sample.gravity[k], || name(k));
        }
        let out = nonlinear_effects(model, data, &q, &v)?;
        for k in 0..n {
            self.nle
                .add(s, out[perm[k]], sample.nonlinear[k], || name(k));
        }
        let out = aba(model, data, &q, &v, &tau_aba)?;
        let engine: Vec<f64> = (0..n).map(|k| out[perm[k]]).collect();
        let scale = sample.ddq_aba.iter().fold(1.0_f64, |m, r| m.max(r.abs()));
        self.ddq.add_sample_with_tolerance(
            s,
            &engine,
            &sample.ddq_aba,
            cond * FD_TOLERANCE_PER_COND * scale,
            name,
        );
        Ok(())
    }

    fn finish(self) -> Vec<QuantityCheck> {
        vec![
            self.tau.finish(),
            self.mass.finish(),
            self.grav.finish(),
            self.nle.finish(),
            self.ddq.finish(),
        ]
    }
}

/// The 2-norm condition number of a symmetric positive-definite matrix (ratio of its extreme
/// eigenvalues); infinite when it is singular.
fn condition_number(m: &nalgebra::DMatrix<f64>) -> f64 {
    let eigenvalues = m.clone().symmetric_eigenvalues();
    let (lo, hi) = eigenvalues
        .iter()
        .fold((f64::INFINITY, 0.0_f64), |(lo, hi), &x| {
            (lo.min(x.abs()), hi.max(x.abs()))
        });
    if lo > 0.0 { hi / lo } else { f64::INFINITY }
}
