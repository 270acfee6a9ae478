//! The measurement model: what the robot's drivers report, given the true state.
//!
//! Encoder noise on q, optional noise on q̇, torque-sensor noise on the applied torque, and
//! rare glitches (spikes) on either. All draws come from one seeded ChaCha stream owned by
//! the simulator, in a fixed order, so a seed reproduces a run bit for bit.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

use super::error::SimResult;
use super::params::SimParams;

/// One joint-state sample as the robot reports it (all vectors in joint order).
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    /// Simulated time of the sample, s.
    pub t_secs: f64,
    /// Measured joint positions, rad (encoder noise and glitches included).
    pub q: Vec<f64>,
    /// Measured joint velocities, rad/s.
    pub v: Vec<f64>,
    /// Measured joint torques, N·m: the applied torque plus sensor noise and glitches.
    pub tau: Vec<f64>,
    /// Count of glitches injected into this sample (for tests and diagnostics).
    pub glitches: u32,
}

impl Measurement {
    pub(super) fn zeros(nv: usize) -> Self {
        Self {
            t_secs: 0.0,
            q: vec![0.0; nv],
            v: vec![0.0; nv],
            tau: vec![0.0; nv],
            glitches: 0,
        }
    }
}

/// Noise and glitch generator; allocation-free per sample.
pub(super) struct Sensors {
    rng: ChaCha8Rng,
    /// Per joint.
    torque_std: Vec<f64>,
    encoder_std: f64,
    velocity_std: f64,
    glitch_probability: f64,
    torque_spike: [f64; 2],
    encoder_spike: f64,
}

impl Sensors {
    pub(super) fn new(params: &SimParams, nv: usize) -> SimResult<Self> {
        Ok(Self {
            rng: ChaCha8Rng::seed_from_u64(params.seed),
            torque_std: params
                .torque_noise_std_nm
                .expand("torque_noise_std_nm", nv)?,
            encoder_std: params.encoder_noise_std_rad,
            velocity_std: params.velocity_noise_std_rad_s,
            glitch_probability: params.glitches.probability_per_sample,
            torque_spike: params.glitches.torque_spike_nm,
            encoder_spike: params.glitches.encoder_spike_rad,
        })
    }

    fn gaussian(&mut self, std: f64) -> f64 {
        // Draw even when std = 0 so that the random stream does not depend on which noises
        // are enabled: changing one noise level leaves the others' draws identical.
        let z: f64 = StandardNormal.sample(&mut self.rng);
        std * z
    }

    fn sign(&mut self) -> f64 {
        if self.rng.random::<bool>() { 1.0 } else { -1.0 }
    }

    /// Fills `out` from the true q, v and applied torque. Real-time: no allocation.
    pub(super) fn measure(
        &mut self,
        t_secs: f64,
        q: &[f64],
        v: &[f64],
        tau_applied: &[f64],
        out: &mut Measurement,
    ) {
        out.t_secs = t_secs;
        out.glitches = 0;
        for j in 0..q.len() {
            out.q[j] = q[j] + self.gaussian(self.encoder_std);
            out.v[j] = v[j] + self.gaussian(self.velocity_std);
            out.tau[j] = tau_applied[j] + self.gaussian(self.torque_std[j]);
            let u: f64 = self.rng.random();
            if u < self.glitch_probability {
                out.glitches += 1;
                let sign = self.sign();
                if self.rng.random::<bool>() {
                    let [lo, hi] = self.torque_spike;
                    let size = lo + (hi - lo) * self.rng.random::<f64>();
                    out.tau[j] += sign * size;
                } else {
                    out.q[j] += sign * self.encoder_spike;
                }
            }
        }
    }
}
