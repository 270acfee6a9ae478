//! Side query (b) of the time-varying GP bandit (spec `tvgp.md` §2.4, §6.3 (b)): after a
//! change, a short probing trajectory through the region whose data went stale, so the model
//! gets fresh samples there instead of waiting for the task to pass by again.
//!
//! * **Where.** Waypoints are joint positions of stale samples (older than the change's
//!   onset) picked by the spec's greedy pivoted Cholesky on a squared-exponential kernel over
//!   q: each next waypoint is the stale pose least explained by those already chosen, so a
//!   few waypoints span the stale region.
//! * **How.** Quintic segments, `segment_s` each, from the current reference state
//!   (position, velocity, acceleration) through the waypoints (at rest) and back to that same
//!   state, so the task can resume where it paused without a jump.
//! * **Whether.** Sampled every `check_step_s`, the plan is refused unless every sample is
//!   inside the joint limits less a margin and the velocity limits, and the pessimistic
//!   torque |τ_nom + μ| + β·σ (the nominal inverse dynamics plus the model's residual and β
//!   of its standard deviations) stays within `effort_fraction` of every effort limit.
//!
//! Planning is not real-time (it allocates and calls the model once per checked sample): run
//! it off the control thread on a copy of the model or between runs. Off by default. In the
//! ROS node the learning worker plans after each rebuild that follows a change, with the
//! rebuilt model, and the node *offers* the plan ([`ProbeOffer`], `~/probe_offer`): it never
//! runs on its own. `gp-node sim` runs it in place of the task (`simulate::probing`).

use crate::robot::{Data, Model, rnea};

/// The model's residual at x = (q, q̇, q̈): writes its mean and standard deviation (N·m).
pub type ResidualPredictor<'a> =
    dyn FnMut(&[f64], &mut [f64], &mut [f64]) -> Result<(), String> + 'a;

/// Settings (`learn.probe` in the parameter file).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProbeParams {
    /// Plan a probe after a change.
    pub enabled: bool,
    /// Waypoints through the stale region.
    pub points: usize,
    /// Lengthscale of the selection kernel over joint positions, rad.
    pub lengthscale_rad: f64,
    /// Duration of each rest-to-rest segment, s.
    pub segment_s: f64,
    /// Largest pessimistic torque as a fraction of each effort limit.
    pub effort_fraction: f64,
    /// Distance kept from the joint position limits, rad.
    pub position_margin_rad: f64,
    /// β of the pessimistic bound |τ_nom + μ| + β·σ.
    pub beta: f64,
    /// Spacing of the checked samples, s.
    pub check_step_s: f64,
}

impl Default for ProbeParams {
    fn default() -> Self {
        Self {
            enabled: false,
            points: 4,
            lengthscale_rad: 0.3,
            segment_s: 1.5,
            effort_fraction: 0.8,
            position_margin_rad: 0.05,
            beta: 3.0,
            check_step_s: 0.01,
        }
    }
}

impl ProbeParams {
    /// Checks the values.
    pub fn check(&self) -> Result<(), String> {
        let positive = |x: f64| x.is_finite() && x > 0.0;
        if self.points == 0 {
            return Err("learn.probe.points must be ≥ 1".into());
        }
        if !positive(self.lengthscale_rad) || !positive(self.segment_s) {
            return Err("learn.probe.lengthscale_rad and segment_s must be > 0".into());
        }
        if !(positive(self.check_step_s) && self.check_step_s <= self.segment_s) {
            return Err("learn.probe.check_step_s must be in (0, segment_s]".into());
        }
        if !(self.effort_fraction > 0.0 && self.effort_fraction <= 1.0) {
            return Err("learn.probe.effort_fraction must be in (0, 1]".into());
        }
        if !(self.position_margin_rad.is_finite() && self.position_margin_rad >= 0.0) {
            return Err("learn.probe.position_margin_rad must be ≥ 0".into());
        }
        if !(self.beta.is_finite() && self.beta >= 0.0) {
            return Err("learn.probe.beta must be ≥ 0".into());
        }
        Ok(())
    }
}

/// A checked probing trajectory.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbePlan {
    /// Poses visited in order, the first and last being the start pose.
    pub waypoints: Vec<Vec<f64>>,
    /// Velocity at the start and the end (the paused reference's), rad/s.
    pub boundary_v: Vec<f64>,
    /// Acceleration at the start and the end, rad/s².
    pub boundary_a: Vec<f64>,
    /// Duration of each segment, s.
    pub segment_s: f64,
    /// Largest pessimistic torque ÷ effort limit over the checked samples.
    pub worst_effort_ratio: f64,
    /// Samples checked.
    pub checked: usize,
}

impl ProbePlan {
    /// Total duration, s.
    pub fn duration_s(&self) -> f64 {
        self.segment_s * self.waypoints.len().saturating_sub(1) as f64
    }

    /// Position, velocity and acceleration at `t` s from the start (held at the end). No
    /// allocation: `gp-node sim` samples it every tick while a probe runs.
    pub fn sample(&self, t: f64, q: &mut [f64], qd: &mut [f64], qdd: &mut [f64]) {
        let segments = self.waypoints.len().saturating_sub(1);
        if segments == 0 {
            return;
        }
        let t = t.clamp(0.0, self.duration_s());
        let k = ((t / self.segment_s).floor() as usize).min(segments - 1);
        let tau = t - k as f64 * self.segment_s;
        // Interior waypoints are visited at rest; the ends keep the paused reference's motion.
        let boundary = (&self.boundary_v[..], &self.boundary_a[..]);
        let segment = Segment {
            from: (&self.waypoints[k], (k == 0).then_some(boundary)),
            to: (
                &self.waypoints[k + 1],
                (k + 1 == segments).then_some(boundary),
            ),
            duration: self.segment_s,
        };
        segment.sample(tau, q, qd, qdd);
    }
}

/// A probe planned off the control thread after a change, or why none could be.
#[derive(Debug, Clone)]
pub struct ProbeOffer {
    /// Time of the newest sample when it was planned (the samples' clock), s.
    pub t_secs: f64,
    /// Onset of the change: the poses before it are the stale ones, s.
    pub onset_secs: f64,
    /// The checked plan, or why none is offered.
    pub plan: Result<ProbePlan, ProbeRefusal>,
    /// Wall time of planning and checking, ms.
    pub plan_ms: f64,
}

/// Every `stride`-th pose (the first `nv` inputs) of the samples older than `before_t`,
/// row-major: the stale poses a probe chooses its waypoints among. Samples are 1 ms apart at
/// 1 kHz, so a stride of 10 loses nothing the selection kernel would see.
pub fn stale_poses<'a>(
    samples: impl Iterator<Item = (f64, &'a [f64])>,
    nv: usize,
    before_t: f64,
    stride: usize,
) -> Vec<f64> {
    samples
        .step_by(stride.max(1))
        .filter(|(t, x)| *t < before_t && x.len() >= nv)
        .flat_map(|(_, x)| x[..nv].iter().copied())
        .collect()
}

/// Why no plan was offered.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProbeRefusal {
    /// No stale poses to probe.
    #[error("no stale samples to probe")]
    NoStaleData,
    /// A sample leaves the joint position (less the margin) or velocity limits.
    #[error("joint {joint} would leave its limits at t = {t_secs:.2} s of the probe")]
    JointLimit {
        /// Joint index.
        joint: usize,
        /// Time into the probe, s.
        t_secs: f64,
    },
    /// The pessimistic torque exceeds the allowed fraction of an effort limit.
    #[error(
        "joint {joint} could need {needed_nm:.1} N·m (|τ_nom + μ| + β·σ) at t = {t_secs:.2} s \
         of the probe, above the {allowed_nm:.1} N·m allowed"
    )]
    Effort {
        /// Joint index.
        joint: usize,
        /// Time into the probe, s.
        t_secs: f64,
        /// Pessimistic torque, N·m.
        needed_nm: f64,
        /// Allowed torque, N·m.
        allowed_nm: f64,
    },
    /// The model or the dynamics failed.
    #[error("the probe could not be checked: {0}")]
    Check(String),
}

/// Picks up to `params.points` waypoints among the stale poses (row-major, `nv` columns) by
/// greedy pivoted Cholesky on a squared-exponential kernel; indices in the order chosen.
pub fn select_waypoints(stale_q: &[f64], nv: usize, params: &ProbeParams) -> Vec<usize> {
    let inv_l2 = 1.0 / (params.lengthscale_rad * params.lengthscale_rad);
    gpn_gp_core::drift::greedy_pivoted_cholesky(stale_q, nv, params.points, 1e-6, |a, b| {
        let d2: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
        (-0.5 * d2 * inv_l2).exp()
    })
}

/// The reference's state where the probe leaves it and rejoins it.
#[derive(Debug, Clone, Copy)]
pub struct ProbeStart<'a> {
    /// Position, rad.
    pub q: &'a [f64],
    /// Velocity, rad/s.
    pub v: &'a [f64],
    /// Acceleration, rad/s².
    pub a: &'a [f64],
}

/// Plans a probe from `start` through the stale poses and back, and checks it.
/// `predict(x, mu, sigma)` gives the model's residual mean and standard deviation (N·m) at
/// x = (q, q̇, q̈).
pub fn plan_probe(
    robot: &Model,
    start: ProbeStart<'_>,
    stale_q: &[f64],
    params: &ProbeParams,
    predict: &mut ResidualPredictor<'_>,
) -> Result<ProbePlan, ProbeRefusal> {
    let nv = robot.nv();
    if [start.q, start.v, start.a].iter().any(|s| s.len() != nv) {
        return Err(ProbeRefusal::Check(format!(
            "the start state needs {nv} values per vector"
        )));
    }
    if stale_q.is_empty() || !stale_q.len().is_multiple_of(nv) {
        return Err(ProbeRefusal::NoStaleData);
    }
    let chosen = select_waypoints(stale_q, nv, params);
    if chosen.is_empty() {
        return Err(ProbeRefusal::NoStaleData);
    }
    let mut waypoints = vec![start.q.to_vec()];
    waypoints.extend(
        chosen
            .iter()
            .map(|&i| stale_q[i * nv..(i + 1) * nv].to_vec()),
    );
    waypoints.push(start.q.to_vec());
    let mut plan = ProbePlan {
        waypoints,
        boundary_v: start.v.to_vec(),
        boundary_a: start.a.to_vec(),
        segment_s: params.segment_s,
        worst_effort_ratio: 0.0,
        checked: 0,
    };
    check(robot, &mut plan, params, predict)?;
    Ok(plan)
}

fn check(
    robot: &Model,
    plan: &mut ProbePlan,
    params: &ProbeParams,
    predict: &mut ResidualPredictor<'_>,
) -> Result<(), ProbeRefusal> {
    let nv = robot.nv();
    let mut data = Data::new(robot);
    let mut x = vec![0.0; 3 * nv];
    let (mut mu, mut sigma) = (vec![0.0; nv], vec![0.0; nv]);
    let steps = (plan.duration_s() / params.check_step_s).ceil() as usize;
    for k in 0..=steps {
        let t = (k as f64 * params.check_step_s).min(plan.duration_s());
        let (q, rest) = x.split_at_mut(nv);
        let (qd, qdd) = rest.split_at_mut(nv);
        plan.sample(t, q, qd, qdd);
        for (j, limits) in robot.limits().iter().enumerate() {
            let inside = q[j] >= limits.position_lower + params.position_margin_rad
                && q[j] <= limits.position_upper - params.position_margin_rad
                && qd[j].abs() <= limits.velocity;
            if !inside {
                return Err(ProbeRefusal::JointLimit {
                    joint: j,
                    t_secs: t,
                });
            }
        }
        let tau =
            rnea(robot, &mut data, q, qd, qdd).map_err(|e| ProbeRefusal::Check(e.to_string()))?;
        predict(&x, &mut mu, &mut sigma).map_err(ProbeRefusal::Check)?;
        for (j, limits) in robot.limits().iter().enumerate() {
            let needed = (tau[j] + mu[j]).abs() + params.beta * sigma[j].max(0.0);
            let allowed = params.effort_fraction * limits.effort;
            if !needed.is_finite() || needed > allowed {
                return Err(ProbeRefusal::Effort {
                    joint: j,
                    t_secs: t,
                    needed_nm: needed,
                    allowed_nm: allowed,
                });
            }
            if allowed.is_finite() {
                plan.worst_effort_ratio = plan.worst_effort_ratio.max(needed / limits.effort);
            }
        }
        plan.checked += 1;
    }
    Ok(())
}

/// Velocity and acceleration per joint at a segment's end (None: at rest).
type Motion<'a> = Option<(&'a [f64], &'a [f64])>;

/// A quintic between two states: position and motion per joint.
struct Segment<'a> {
    from: (&'a [f64], Motion<'a>),
    to: (&'a [f64], Motion<'a>),
    duration: f64,
}

impl Segment<'_> {
    /// State at `tau` s into the segment (the quintic meeting both boundary states).
    fn sample(&self, tau: f64, q: &mut [f64], qd: &mut [f64], qdd: &mut [f64]) {
        let t = self.duration;
        let (t2, t3) = (t * t, t * t * t);
        let (p0, m0) = self.from;
        let (p1, m1) = self.to;
        let motion =
            |m: Option<(&[f64], &[f64])>, j: usize| m.map_or((0.0, 0.0), |(v, a)| (v[j], a[j]));
        for j in 0..q.len() {
            let ((v0, a0), (v1, a1)) = (motion(m0, j), motion(m1, j));
            let dp = p1[j] - p0[j];
            let c2 = 0.5 * a0;
            let c3 = (20.0 * dp - (8.0 * v1 + 12.0 * v0) * t - (3.0 * a0 - a1) * t2) / (2.0 * t3);
            let c4 = (-30.0 * dp + (14.0 * v1 + 16.0 * v0) * t + (3.0 * a0 - 2.0 * a1) * t2)
                / (2.0 * t3 * t);
            let c5 = (12.0 * dp - 6.0 * (v1 + v0) * t - (a0 - a1) * t2) / (2.0 * t3 * t2);
            let s = tau;
            q[j] = p0[j] + s * (v0 + s * (c2 + s * (c3 + s * (c4 + s * c5))));
            qd[j] = v0 + s * (2.0 * c2 + s * (3.0 * c3 + s * (4.0 * c4 + s * 5.0 * c5)));
            qdd[j] = 2.0 * c2 + s * (6.0 * c3 + s * (12.0 * c4 + s * 20.0 * c5));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    const DEFAULT_URDF: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../urdf/panda.urdf"
    ));

    fn panda() -> Model {
        Model::from_urdf_str(DEFAULT_URDF, "panda.urdf").expect("panda")
    }

    const HOME: [f64; 7] = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785];
    const REST: [f64; 7] = [0.0; 7];

    fn at_home() -> ProbeStart<'static> {
        ProbeStart {
            q: &HOME,
            v: &REST,
            a: &REST,
        }
    }

    fn stale_cloud() -> Vec<f64> {
        // Three clusters of stale poses around home: the selection should visit each.
        let mut v = Vec::new();
        for (c, offset) in [(1, 0.4), (3, 0.4), (5, -0.4)] {
            for k in 0..20 {
                let mut q = HOME;
                q[c] += offset + 0.002 * k as f64;
                v.extend_from_slice(&q);
            }
        }
        v
    }

    fn zero_model(_: &[f64], mu: &mut [f64], sigma: &mut [f64]) -> Result<(), String> {
        mu.fill(0.0);
        sigma.fill(0.1);
        Ok(())
    }

    #[test]
    fn waypoints_span_the_stale_region() {
        let params = ProbeParams {
            points: 3,
            ..ProbeParams::default()
        };
        let chosen = select_waypoints(&stale_cloud(), 7, &params);
        assert_eq!(chosen.len(), 3);
        let mut clusters: Vec<usize> = chosen.iter().map(|i| i / 20).collect();
        clusters.sort_unstable();
        assert_eq!(
            clusters,
            vec![0, 1, 2],
            "one waypoint per cluster: {chosen:?}"
        );
    }

    #[test]
    fn a_safe_probe_is_offered_and_returns_home_at_rest() {
        let robot = panda();
        let params = ProbeParams {
            points: 3,
            ..ProbeParams::default()
        };
        let plan =
            plan_probe(&robot, at_home(), &stale_cloud(), &params, &mut zero_model).expect("plan");
        assert_eq!(plan.waypoints.len(), 5);
        assert!((plan.duration_s() - 4.0 * params.segment_s).abs() < 1e-12);
        assert_eq!(plan.checked, (plan.duration_s() / 0.01).ceil() as usize + 1);
        assert!(plan.worst_effort_ratio > 0.0 && plan.worst_effort_ratio < 0.8);
        let (mut q, mut qd, mut qdd) = ([0.0; 7], [0.0; 7], [0.0; 7]);
        for t in [0.0, plan.segment_s, plan.duration_s()] {
            plan.sample(t, &mut q, &mut qd, &mut qdd);
            assert!(
                qd.iter().chain(&qdd).all(|v| v.abs() < 1e-9),
                "at rest at {t}"
            );
        }
        assert!(q.iter().zip(&HOME).all(|(a, b)| (a - b).abs() < 1e-12));
    }

    #[test]
    fn a_moving_start_is_left_and_rejoined_with_its_velocity_and_acceleration() {
        let robot = panda();
        let v = [0.3, -0.2, 0.1, 0.25, -0.1, 0.2, 0.4];
        let a = [1.0, 0.5, -0.5, 0.2, 0.0, -1.0, 0.3];
        let start = ProbeStart {
            q: &HOME,
            v: &v,
            a: &a,
        };
        let plan = plan_probe(
            &robot,
            start,
            &stale_cloud(),
            &ProbeParams::default(),
            &mut zero_model,
        )
        .expect("plan");
        let (mut q, mut qd, mut qdd) = ([0.0; 7], [0.0; 7], [0.0; 7]);
        for t in [0.0, plan.duration_s()] {
            plan.sample(t, &mut q, &mut qd, &mut qdd);
            for j in 0..7 {
                assert!((q[j] - HOME[j]).abs() < 1e-9, "q at {t}");
                assert!((qd[j] - v[j]).abs() < 1e-9, "q̇ at {t}");
                assert!((qdd[j] - a[j]).abs() < 1e-9, "q̈ at {t}");
            }
        }
        // Continuous through a waypoint (at rest there) and q̇ = dq/dt by finite differences.
        let t = plan.segment_s;
        let (mut q1, mut v1, mut a1) = ([0.0; 7], [0.0; 7], [0.0; 7]);
        plan.sample(t - 1e-6, &mut q, &mut qd, &mut qdd);
        plan.sample(t + 1e-6, &mut q1, &mut v1, &mut a1);
        for j in 0..7 {
            assert!((q1[j] - q[j]).abs() < 1e-8 && qd[j].abs() < 1e-4 && v1[j].abs() < 1e-4);
            assert!(((q1[j] - q[j]) / 2e-6 - 0.5 * (qd[j] + v1[j])).abs() < 1e-3);
        }
    }

    #[test]
    fn an_uncertain_model_makes_the_pessimistic_check_refuse() {
        let robot = panda();
        let mut unsure = |_: &[f64], mu: &mut [f64], sigma: &mut [f64]| -> Result<(), String> {
            mu.fill(0.0);
            sigma.fill(20.0); // β·σ = 60 N·m: above 0.8 × 12 N·m on the wrist joints
            Ok(())
        };
        let err = plan_probe(
            &robot,
            at_home(),
            &stale_cloud(),
            &ProbeParams::default(),
            &mut unsure,
        )
        .expect_err("refused");
        assert!(matches!(err, ProbeRefusal::Effort { .. }), "{err}");
    }

    #[test]
    fn a_pose_near_a_joint_limit_is_refused_and_a_fast_probe_too() {
        let robot = panda();
        let upper = robot.limits()[3].position_upper;
        let mut near_limit = HOME;
        near_limit[3] = upper - 0.01; // inside the limit, not inside the 0.05 margin
        let err = plan_probe(
            &robot,
            at_home(),
            &near_limit,
            &ProbeParams::default(),
            &mut zero_model,
        )
        .expect_err("refused");
        assert!(
            matches!(err, ProbeRefusal::JointLimit { joint: 3, .. }),
            "{err}"
        );
        let mut far = HOME;
        far[0] += 2.5;
        let fast = ProbeParams {
            segment_s: 0.2,
            ..ProbeParams::default()
        };
        let err = plan_probe(&robot, at_home(), &far, &fast, &mut zero_model).expect_err("refused");
        assert!(
            matches!(
                err,
                ProbeRefusal::JointLimit { .. } | ProbeRefusal::Effort { .. }
            ),
            "{err}"
        );
    }

    #[test]
    fn model_failures_and_empty_input_are_refusals_not_panics() {
        let robot = panda();
        let mut failing = |_: &[f64], _: &mut [f64], _: &mut [f64]| -> Result<(), String> {
            Err("model gone".into())
        };
        let err = plan_probe(
            &robot,
            at_home(),
            &stale_cloud(),
            &ProbeParams::default(),
            &mut failing,
        )
        .expect_err("refused");
        assert!(matches!(err, ProbeRefusal::Check(_)));
        assert_eq!(
            plan_probe(
                &robot,
                at_home(),
                &[],
                &ProbeParams::default(),
                &mut zero_model
            ),
            Err(ProbeRefusal::NoStaleData)
        );
        assert!(
            ProbeParams {
                points: 0,
                ..ProbeParams::default()
            }
            .check()
            .is_err()
        );
        assert!(ProbeParams::default().check().is_ok());
    }
}
