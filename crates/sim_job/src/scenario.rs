//! Named scenarios: changes applied to the simulator parameters of a parameter file.

use gpn_app::NodeParams;
use gpn_embedded_sim::{FrictionDrift, GlitchParams, PayloadStep};

/// The scenarios `gp-node sim --scenario NAME` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scenario {
    /// The parameter file as it is (by default: payload, friction, armature, sensor noise).
    Default,
    /// The default plus, per sample and joint with probability 1e-3, a torque-sensor spike
    /// of 5–20 N·m or an encoder spike of 0.05 rad.
    Glitches,
    /// The default with twice the payload from half the run on.
    PayloadStep,
    /// The default with viscous friction rising linearly to 3× over the run.
    FrictionDrift,
}

impl Scenario {
    /// Its name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Scenario::Default => "default",
            Scenario::Glitches => "glitches",
            Scenario::PayloadStep => "payload-step",
            Scenario::FrictionDrift => "friction-drift",
        }
    }

    /// Applies the scenario to the parameters.
    pub fn apply(self, params: &mut NodeParams) {
        let duration = params.run.duration_s;
        let sim = &mut params.sim;
        match self {
            Scenario::Default => {}
            Scenario::Glitches => {
                sim.glitches = GlitchParams {
                    probability_per_sample: 1e-3,
                    torque_spike_nm: [5.0, 20.0],
                    encoder_spike_rad: 0.05,
                };
            }
            Scenario::PayloadStep => {
                // Twice the payload (a derived payload doubles once it is derived: −1).
                let mass_kg = sim.payload.mass_kg;
                sim.payload.step = Some(PayloadStep {
                    at_secs: 0.5 * duration,
                    mass_kg: if mass_kg < 0.0 { -1.0 } else { 2.0 * mass_kg },
                });
            }
            Scenario::FrictionDrift => {
                sim.friction.drift = Some(FrictionDrift {
                    factor_at_end: 3.0,
                    over_secs: duration,
                });
            }
        }
    }
}
