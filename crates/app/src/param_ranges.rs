//! The allowed range of every number in the node's parameters, checked where numbers come in:
//! a parameter file, a parameter set over ROS, the command line. A value outside its range
//! is refused with the key and the range; nothing downstream converts a number it did not
//! check (no `Duration` from 1e20 s, no fit over 10⁸ points, no ε that makes the law
//! bang-bang).
//!
//! The ranges are what a robot run can use, not what the arithmetic survives: durations up
//! to an hour (the watchdog, diagnostics), run lengths up to 10⁶ s, and the costs that grow
//! fast capped where they stop being usable (the hyperparameter fit is O(n³) in
//! `learn.fit_max_points`: 150 points take about a second, 400 about 16 s, 1000 four
//! minutes). The plugin's configuration (`model.config`) is checked by the plugin itself.
//! A test walks the default parameters so that every numeric key has a range here.

use serde_json::Value;

/// A closed interval `[lo, hi]`, or `(lo, hi]` when `lo_open`; integers when `integer`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    /// Lower end.
    pub lo: f64,
    /// Upper end (included).
    pub hi: f64,
    /// The lower end is excluded.
    pub lo_open: bool,
    /// Whole numbers only.
    pub integer: bool,
    /// 0 is accepted too, outside the interval: "derived from the robot".
    pub or_zero: bool,
}

impl Range {
    const fn closed(lo: f64, hi: f64) -> Self {
        Self {
            lo,
            hi,
            lo_open: false,
            integer: false,
            or_zero: false,
        }
    }

    const fn above(lo: f64, hi: f64) -> Self {
        Self {
            lo,
            hi,
            lo_open: true,
            integer: false,
            or_zero: false,
        }
    }

    const fn count(lo: f64, hi: f64) -> Self {
        Self {
            lo,
            hi,
            lo_open: false,
            integer: true,
            or_zero: false,
        }
    }

    /// `[lo, hi]`, or 0 (derived from the robot).
    const fn closed_or_zero(lo: f64, hi: f64) -> Self {
        Self {
            or_zero: true,
            ..Self::closed(lo, hi)
        }
    }

    /// Whether `x` lies in the range.
    pub fn contains(&self, x: f64) -> bool {
        let above_lo = if self.lo_open {
            x > self.lo
        } else {
            x >= self.lo
        };
        (self.or_zero && x == 0.0)
            || (x.is_finite() && above_lo && x <= self.hi && (!self.integer || x.fract() == 0.0))
    }

    /// "in (0, 3600]", "an integer in [1, 1000000]".
    pub fn describe(&self) -> String {
        format!(
            "{}{}in {}{}, {}]",
            if self.or_zero {
                "0 (derived from the robot) or "
            } else {
                ""
            },
            if self.integer { "an integer " } else { "" },
            if self.lo_open { "(" } else { "[" },
            self.lo,
            self.hi
        )
    }
}

use Range as R;

/// Every numeric key (array keys: each element).
pub const RANGES: &[(&str, Range)] = &[
    ("control.kp_per_s2", R::above(0.0, 1e6)),
    ("control.kd_per_s", R::above(0.0, 1e4)),
    // The robustifying gain is 1/(2ε): below 1e-3 the law turns bang-bang.
    ("control.epsilon", R::closed_or_zero(1e-3, 1e6)),
    ("control.effort_limit_fraction", R::above(0.0, 1.0)),
    ("control.effort_limits_nm", R::above(0.0, 1e6)),
    ("control.bound.delta", R::above(0.0, 0.5)),
    ("control.bound.grid_tau", R::above(0.0, 1.0)),
    ("control.bound.rkhs_norm", R::above(0.0, 1e6)),
    ("control.bound.target_bound", R::above(0.0, 1e6)),
    ("control.bound.points_per_model", R::closed(1.0, 1e6)),
    ("control.bound.accel_box_rad_s2", R::above(0.0, 1e4)),
    ("control.supervisor.budget_micros", R::above(0.0, 1e9)),
    (
        "control.supervisor.max_consecutive_faults",
        R::count(1.0, 1e6),
    ),
    ("control.supervisor.quarantine_ticks", R::count(0.0, 1e9)),
    ("control.handover_s", R::closed(0.0, 10.0)),
    ("control.torque_rate_limits_nm_per_s", R::above(0.0, 1e9)),
    ("control.fallback.tracking_ratio", R::closed(1.0, 1e3)),
    ("control.fallback.tracking_floor_rad", R::closed(0.0, 10.0)),
    (
        "control.fallback.tracking_floor_rad_s",
        R::closed(0.0, 100.0),
    ),
    ("control.fallback.tracking_window_s", R::above(0.0, 60.0)),
    ("control.fallback.baseline_window_s", R::above(0.0, 3600.0)),
    ("control.fallback.mu_effort_fraction", R::above(0.0, 10.0)),
    ("control.fallback.saturation_ticks", R::count(1.0, 1e9)),
    ("control.fallback.velocity_fraction", R::above(0.0, 10.0)),
    ("control.fallback.probation_s", R::closed(0.0, 3600.0)),
    ("control.fallback.readopt_coverage", R::closed(0.0, 1.0)),
    (
        "control.plausibility.position_margin_rad",
        R::closed(0.0, 10.0),
    ),
    (
        "control.plausibility.velocity_factor",
        R::closed(1.0, 100.0),
    ),
    (
        "control.plausibility.jump_tolerance_rad",
        R::closed(0.0, 10.0),
    ),
    ("control.plausibility.resume_ticks", R::count(1.0, 1e6)),
    (
        "control.plausibility.reference_accel_rad_s2",
        R::above(0.0, 1e6),
    ),
    ("learn.admit_every", R::count(1.0, 1e6)),
    ("learn.fit_samples", R::count(10.0, 1e6)),
    ("learn.fit_max_points", R::count(10.0, 400.0)),
    ("learn.max_noise_groups", R::count(1.0, 64.0)),
    (
        "learn.friction_feature_velocity_rad_s",
        R::closed(0.0, 100.0),
    ),
    ("learn.replay_capacity", R::count(100.0, 1e6)),
    ("learn.refit_after_samples", R::count(0.0, 1e9)),
    ("learn.max_refits", R::count(0.0, 1000.0)),
    ("learn.torque_noise_std_nm", R::above(0.0, 100.0)),
    ("learn.calibration_level", R::closed(0.5, 0.9999)),
    ("learn.calibration_samples", R::count(1.0, 1e7)),
    ("learn.accel.filter_secs", R::closed(0.0, 10.0)),
    ("learn.accel.max_gap_secs", R::above(0.0, 10.0)),
    ("learn.accel.velocity_noise_std_rad_s", R::closed(0.0, 10.0)),
    ("learn.gate.position_margin_rad", R::closed(0.0, 1.0)),
    ("learn.gate.velocity_factor", R::above(0.0, 100.0)),
    ("learn.gate.effort_factor", R::above(0.0, 100.0)),
    ("learn.gate.jump_tolerance_rad", R::above(0.0, 1.0)),
    ("learn.gate.max_accel_rad_s2", R::above(0.0, 1e5)),
    ("learn.gate.innovation_sigmas", R::above(0.0, 1e3)),
    ("learn.gate.innovation_limit_nm", R::closed(0.0, 1e4)),
    ("learn.gate.max_consecutive_outliers", R::count(0.0, 1e6)),
    ("learn.change.threshold", R::above(0.0, 1e9)),
    ("learn.change.allowance", R::closed(0.0, 1e6)),
    ("learn.change.max_increment", R::above(0.0, 1e9)),
    ("learn.change.warmup_samples", R::count(0.0, 1e9)),
    ("learn.change.normalise_samples", R::count(1.0, 1e9)),
    ("learn.change.min_interval_s", R::closed(0.0, 3600.0)),
    ("learn.change.jump_std_nm", R::closed(0.0, 1e4)),
    ("learn.change.reidentify_window_s", R::above(0.0, 60.0)),
    ("learn.change.coverage_window", R::count(1.0, 1e7)),
    ("learn.change.coverage_alarm", R::closed(0.0, 1.0)),
    ("learn.probe.points", R::count(1.0, 100.0)),
    ("learn.probe.lengthscale_rad", R::above(0.0, 100.0)),
    ("learn.probe.segment_s", R::above(0.0, 60.0)),
    ("learn.probe.effort_fraction", R::above(0.0, 1.0)),
    ("learn.probe.position_margin_rad", R::closed(0.0, 1.0)),
    ("learn.probe.beta", R::closed(0.0, 100.0)),
    ("learn.probe.check_step_s", R::above(0.0, 1.0)),
    ("sim.rate_hz", R::closed(1.0, 1e5)),
    ("sim.substeps", R::count(1.0, 1000.0)),
    ("sim.seed", R::count(0.0, u64::MAX as f64)),
    ("sim.payload.mass_kg", R::closed(-1.0, 1e3)),
    ("sim.payload.com_m", R::closed(-10.0, 10.0)),
    ("sim.payload.inertia_diag_kgm2", R::closed(0.0, 1e3)),
    ("sim.payload.step.at_secs", R::closed(0.0, 1e6)),
    ("sim.payload.step.mass_kg", R::closed(-1.0, 1e3)),
    ("sim.friction.viscous_nms_per_rad", R::closed(0.0, 1e4)),
    ("sim.friction.coulomb_nm", R::closed(0.0, 1e4)),
    ("sim.friction.coulomb_smoothing_rad_s", R::above(0.0, 1e3)),
    ("sim.friction.drift.factor_at_end", R::closed(0.0, 1e3)),
    ("sim.friction.drift.over_secs", R::above(0.0, 1e6)),
    ("sim.armature_kgm2", R::closed(0.0, 1e3)),
    ("sim.torque_noise_std_nm", R::closed(0.0, 1e3)),
    ("sim.encoder_noise_std_rad", R::closed(0.0, 1.0)),
    ("sim.velocity_noise_std_rad_s", R::closed(0.0, 100.0)),
    ("sim.glitches.probability_per_sample", R::closed(0.0, 1.0)),
    ("sim.glitches.torque_spike_nm", R::closed(0.0, 1e4)),
    ("sim.glitches.encoder_spike_rad", R::closed(0.0, 10.0)),
    ("run.duration_s", R::above(0.0, 1e6)),
    ("run.swap_every_s", R::closed(0.0, 1e6)),
    ("run.reference.center_rad", R::closed(-100.0, 100.0)),
    ("run.reference.amplitude_rad", R::closed(0.0, 100.0)),
    ("run.reference.frequencies_hz", R::closed(0.0, 1e3)),
    ("run.reference.phase_step_rad", R::closed(-1e3, 1e3)),
    ("ros.domain_id", R::count(i32::MIN as f64, 232.0)),
    ("ros.watchdog_timeout_s", R::above(0.0, 3600.0)),
    ("ros.residual_every", R::count(0.0, 1e6)),
    ("ros.diagnostics_period_s", R::above(0.0, 3600.0)),
    ("ros.constraints.goal_time", R::closed(0.0, 3600.0)),
    (
        "ros.constraints.stopped_velocity_tolerance",
        R::closed(0.0, 1e3),
    ),
    ("ros.constraints.trajectory", R::closed(0.0, 1e3)),
    ("ros.constraints.goal", R::closed(0.0, 1e3)),
    ("ros.action_monitor_rate", R::above(0.0, 1e4)),
    ("realtime.thread_priority", R::count(0.0, 99.0)),
    ("realtime.heap_reserve_mb", R::count(0.0, 65536.0)),
];

/// Keys whose values are free-form (checked by their owner): not walked.
const FREE_FORM: &[&str] = &["model.config", "run.swap_to"];

/// The range of `key`, if it is numeric.
pub fn range_of(key: &str) -> Option<Range> {
    RANGES
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, r)| *r)
        .or_else(|| {
            // `ros.constraints.<joint>.trajectory` / `.goal`: one joint's tolerance by name.
            crate::ros_params::TrajectoryConstraints::per_joint_key(key)
                .map(|_| R::closed(0.0, 1e3))
        })
}

/// Checks one value of `key` (an element, for array keys).
pub fn check_value(key: &str, x: f64) -> Result<(), String> {
    match range_of(key) {
        Some(range) if range.contains(x) => Ok(()),
        Some(range) => Err(format!("{key} must be {}, got {x}", range.describe())),
        None => Err(format!(
            "{key}: no allowed range is declared for this number"
        )),
    }
}

/// Checks every number in `params` (the parameters as JSON, keys as in the parameter
/// file); the first offence is the error.
pub fn check_json(params: &Value) -> Result<(), String> {
    walk(params, &mut String::new())
}

fn walk(value: &Value, key: &mut String) -> Result<(), String> {
    if FREE_FORM.contains(&key.as_str()) {
        return Ok(());
    }
    match value {
        Value::Number(n) => check_value(key, n.as_f64().unwrap_or(f64::NAN)),
        // JSON has no NaN or infinity: serialising the parameters turns them into null.
        Value::Null => match range_of(key) {
            Some(range) => Err(format!(
                "{key} must be {}, got a non-finite number",
                range.describe()
            )),
            None => Ok(()),
        },
        Value::Array(items) => items.iter().try_for_each(|item| match item {
            Value::Number(_) | Value::Null => walk(item, key),
            _ => Ok(()),
        }),
        Value::Object(map) => {
            for (name, item) in map {
                let len = key.len();
                if !key.is_empty() {
                    key.push('.');
                }
                key.push_str(name);
                let result = walk(item, key);
                key.truncate(len);
                result?;
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_say_what_they_allow() {
        assert!(R::above(0.0, 3600.0).contains(0.1));
        assert!(!R::above(0.0, 3600.0).contains(0.0));
        assert!(!R::above(0.0, 3600.0).contains(1e20));
        assert!(!R::above(0.0, 3600.0).contains(f64::NAN));
        assert!(!R::count(10.0, 400.0).contains(150.5));
        assert_eq!(
            check_value("ros.watchdog_timeout_s", 1e20),
            Err("ros.watchdog_timeout_s must be in (0, 3600], got 100000000000000000000".into())
        );
        assert!(check_value("no.such.key", 1.0).is_err());
    }

    #[test]
    fn nested_keys_and_array_elements_are_walked() {
        let params = serde_json::json!({
            "learn": {"fit_max_points": 150, "gate": {"velocity_factor": 1.5}},
            "sim": {"payload": {"com_m": [0.0, 0.0, 11.0]}},
            "model": {"config": {"anything": 1e300}},
        });
        assert_eq!(
            check_json(&params),
            Err("sim.payload.com_m must be in [-10, 10], got 11".into())
        );
    }
}
