//! The reference trajectory of the main job: a pose plus one sinusoid per joint,
//! q_d,i(t) = c_i + a_i·sin(2π f_i t + i·φ), with analytic velocity and acceleration.
//! Distinct, incommensurate frequencies make the two halves of a run visit different states.
//! Empty centre, amplitudes or frequencies are derived from the robot
//! ([`crate::robot_defaults`]).

use gpn_dynamics::JointValues;

/// Settings of the reference trajectory.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReferenceParams {
    /// Centre pose, rad (m for prismatic joints); empty: the derived home pose.
    pub center_rad: Vec<f64>,
    /// Amplitude of the sinusoids, one for all joints or one per joint, rad (m); empty:
    /// derived from the joint limits.
    pub amplitude_rad: JointValues,
    /// Frequency per joint, Hz; empty: derived.
    pub frequencies_hz: Vec<f64>,
    /// Phase step between joints, rad (joint i gets i·step).
    pub phase_step_rad: f64,
}

impl Default for ReferenceParams {
    fn default() -> Self {
        Self {
            center_rad: Vec::new(),
            amplitude_rad: JointValues::Each(Vec::new()),
            frequencies_hz: Vec::new(),
            phase_step_rad: std::f64::consts::PI / 7.0,
        }
    }
}

impl ReferenceParams {
    /// Checks lengths against the robot's joint count (after the defaults are derived).
    pub fn check(&self, nv: usize) -> Result<(), String> {
        self.amplitude_rad
            .expand("run.reference.amplitude_rad", nv)
            .map_err(|e| format!("reference: {e}"))?;
        if self.center_rad.len() != nv || self.frequencies_hz.len() != nv {
            return Err(format!(
                "reference: center_rad has {} and frequencies_hz {} entries, the robot has {nv} joints",
                self.center_rad.len(),
                self.frequencies_hz.len()
            ));
        }
        if !self
            .center_rad
            .iter()
            .chain(&self.frequencies_hz)
            .chain([&self.phase_step_rad])
            .all(|v| v.is_finite())
        {
            return Err("reference: every value must be finite".into());
        }
        Ok(())
    }

    /// q_d, q̇_d, q̈_d at time `t_secs`, into the three slices. Real-time.
    pub fn sample(&self, t_secs: f64, q: &mut [f64], qd: &mut [f64], qdd: &mut [f64]) {
        for i in 0..q.len() {
            let w = 2.0 * std::f64::consts::PI * self.frequencies_hz[i];
            let phase = w * t_secs + i as f64 * self.phase_step_rad;
            let a = self.amplitude_rad.get(i);
            q[i] = self.center_rad[i] + a * phase.sin();
            qd[i] = a * w * phase.cos();
            qdd[i] = -a * w * w * phase.sin();
        }
    }
}
