//! Side query (b) in `gp-node sim`: after a change, if `learn.probe.enabled`, plan a probing
//! trajectory through the poses whose data went stale ([`gpn_control::learn::plan_probe`]), run it
//! in place of the reference while the task pauses, then resume the task where it paused.
//! Planning runs on the simulation thread (simulated time stands still meanwhile); on a robot
//! it belongs on a background thread.

use std::time::Instant;

use gpn_app::ReferenceParams;
use gpn_control::control_loop::{Desired, ReferenceSource, StateFrame};
use gpn_control::learn::{
    ChangeNotice, Learner, ProbeParams, ProbePlan, ProbeStart, plan_probe, stale_poses,
};
use gpn_dynamics::Model;

/// What became of one probe request.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ProbeRecord {
    /// When the change was noticed, s.
    pub t_secs: f64,
    /// "ran", or why it was refused.
    pub outcome: String,
    /// Waypoints through the stale region.
    pub waypoints: usize,
    /// Duration of the probe, s (0 when refused).
    pub duration_s: f64,
    /// Largest pessimistic torque ÷ effort limit over the checked samples.
    pub worst_effort_ratio: f64,
    /// Wall time of the planning and checking, ms.
    pub plan_ms: f64,
}

/// The reference the loop follows: the task's, paused while a probe runs.
pub(super) struct ProbingReference<'a> {
    robot: Model,
    task: &'a ReferenceParams,
    /// What became of each probe request.
    records: Vec<ProbeRecord>,
    params: ProbeParams,
    active: Option<(ProbePlan, f64)>,
    /// Task time lost to probes, s.
    paused_s: f64,
}

impl<'a> ProbingReference<'a> {
    pub(super) fn new(robot: &Model, task: &'a ReferenceParams, params: &ProbeParams) -> Self {
        Self {
            robot: robot.clone(),
            task,
            records: Vec::new(),
            params: params.clone(),
            active: None,
            paused_s: 0.0,
        }
    }

    /// Desired state at loop time `t`.
    fn sample_at(&mut self, t: f64, q: &mut [f64], qd: &mut [f64], qdd: &mut [f64]) {
        if let Some((plan, start)) = &self.active {
            if t < start + plan.duration_s() {
                plan.sample(t - start, q, qd, qdd);
                return;
            }
            self.paused_s += plan.duration_s();
            self.active = None;
        }
        self.task.sample(t - self.paused_s, q, qd, qdd);
    }

    /// What became of each probe request so far.
    pub(super) fn records(&self) -> &[ProbeRecord] {
        &self.records
    }

    /// A change was noticed at `t` with its onset: plans a probe from the current desired
    /// state through the samples older than the onset and starts it if it passes the checks.
    fn plan(&mut self, learner: &mut Learner, t: f64, onset_secs: f64) -> Option<ProbeRecord> {
        if !self.params.enabled || self.active.is_some() {
            return None;
        }
        let robot = &self.robot;
        let clock = Instant::now();
        let nv = robot.nv();
        let (mut q, mut v, mut a) = (vec![0.0; nv], vec![0.0; nv], vec![0.0; nv]);
        self.sample_at(t, &mut q, &mut v, &mut a);
        let robot = &self.robot;
        let replay = learner.replay();
        let samples = (0..replay.len())
            .filter_map(|i| replay.get(i))
            .map(|s| (s.t_secs, s.x));
        let stale = stale_poses(samples, nv, onset_secs, 10);
        let mut variance = vec![0.0; nv];
        let mut predict = |x: &[f64], mu: &mut [f64], sigma: &mut [f64]| {
            learner
                .predict(x, mu, &mut variance)
                .map_err(|e| e.to_string())?;
            for (s, v) in sigma.iter_mut().zip(&variance) {
                *s = v.max(0.0).sqrt();
            }
            Ok(())
        };
        let start = ProbeStart {
            q: &q,
            v: &v,
            a: &a,
        };
        let planned = plan_probe(robot, start, &stale, &self.params, &mut predict);
        let plan_ms = clock.elapsed().as_secs_f64() * 1e3;
        Some(match planned {
            Ok(plan) => {
                let record = ProbeRecord {
                    t_secs: t,
                    outcome: "ran".into(),
                    waypoints: plan.waypoints.len() - 2,
                    duration_s: plan.duration_s(),
                    worst_effort_ratio: plan.worst_effort_ratio,
                    plan_ms,
                };
                self.active = Some((plan, t));
                record
            }
            Err(refusal) => ProbeRecord {
                t_secs: t,
                outcome: refusal.to_string(),
                waypoints: 0,
                duration_s: 0.0,
                worst_effort_ratio: f64::NAN,
                plan_ms,
            },
        })
    }
}

impl ReferenceSource for ProbingReference<'_> {
    fn sample(&mut self, frame: &StateFrame, _qdd_estimate: &[f64], desired: Desired<'_>) {
        self.sample_at(frame.t_secs, desired.q, desired.qd, desired.qdd);
    }

    fn on_change(&mut self, t_secs: f64, notice: &ChangeNotice, learner: &mut Learner) {
        if let Some(record) = self.plan(learner, t_secs, notice.onset_secs) {
            self.records.push(record);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn robot() -> Model {
        let params = gpn_app::NodeParams::from_yaml(gpn_app::DEFAULT_PARAMS_YAML);
        gpn_app::load_robot(&params.expect("built-in parameters")).expect("built-in robot")
    }

    #[test]
    fn the_task_pauses_during_a_probe_and_resumes_where_it_paused() {
        let task = gpn_app::resolved_default_params()
            .expect("built-in parameters")
            .run
            .reference;
        let mut reference = ProbingReference::new(&robot(), &task, &ProbeParams::default());
        let nv = 7;
        let (mut q, mut v, mut a) = (vec![0.0; nv], vec![0.0; nv], vec![0.0; nv]);
        let (mut tq, mut tv, mut ta) = (vec![0.0; nv], vec![0.0; nv], vec![0.0; nv]);
        task.sample(2.0, &mut tq, &mut tv, &mut ta);
        let mut away = tq.clone();
        away[0] += 0.2;
        let plan = ProbePlan {
            waypoints: vec![tq.clone(), away.clone(), tq.clone()],
            boundary_v: tv.clone(),
            boundary_a: ta.clone(),
            segment_s: 1.0,
            worst_effort_ratio: 0.5,
            checked: 0,
        };
        reference.active = Some((plan, 2.0));
        reference.sample_at(3.0, &mut q, &mut v, &mut a);
        assert!((q[0] - away[0]).abs() < 1e-12, "at the waypoint mid-probe");
        // After the 2 s probe the task continues from t = 2 s of its own clock.
        reference.sample_at(4.5, &mut q, &mut v, &mut a);
        task.sample(2.5, &mut tq, &mut tv, &mut ta);
        assert_eq!(q, tq);
        assert_eq!(v, tv);
        assert!(reference.active.is_none());
        assert!((reference.paused_s - 2.0).abs() < 1e-12);
    }
}
