//! The reference trajectory of the main job: a pose plus one sinusoid per joint,
//! q_d,i(t) = c_i + a·sin(2π f_i t + i·φ), with analytic velocity and acceleration.
//! Distinct, incommensurate frequencies make the two halves of a run visit different states.

/// Settings of the reference trajectory.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReferenceParams {
    /// Centre pose, rad (default: the Panda's ready pose).
    pub center_rad: Vec<f64>,
    /// Amplitude of every sinusoid, rad.
    pub amplitude_rad: f64,
    /// Frequency per joint, Hz.
    pub frequencies_hz: Vec<f64>,
    /// Phase step between joints, rad (joint i gets i·step).
    pub phase_step_rad: f64,
}

impl Default for ReferenceParams {
    fn default() -> Self {
        use std::f64::consts::PI;
        Self {
            center_rad: vec![
                0.0,
                -PI / 4.0,
                0.0,
                -3.0 * PI / 4.0,
                0.0,
                PI / 2.0,
                PI / 4.0,
            ],
            amplitude_rad: 0.3,
            frequencies_hz: vec![0.21, 0.29, 0.37, 0.43, 0.53, 0.59, 0.67],
            phase_step_rad: PI / 7.0,
        }
    }
}

impl ReferenceParams {
    /// Checks lengths against the robot's joint count.
    pub fn check(&self, nv: usize) -> Result<(), String> {
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
            .chain([&self.amplitude_rad, &self.phase_step_rad])
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
            let a = self.amplitude_rad;
            q[i] = self.center_rad[i] + a * phase.sin();
            qd[i] = a * w * phase.cos();
            qdd[i] = -a * w * w * phase.sin();
        }
    }
}
