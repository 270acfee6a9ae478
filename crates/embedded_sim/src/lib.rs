//! The embedded simulator: integrates the *true* robot, which is the nominal URDF model
//! plus the effects the nominal model misses (end-effector payload, viscous and Coulomb
//! friction, rotor inertia), and measures it like a real arm would (torque-sensor and
//! encoder noise, rare glitches). Each effect may change on a schedule (a payload step,
//! a friction drift) for the time-varying work.
//!
//! Knows nothing of learning or ROS. The stepper owns only scratch buffers; the state is
//! passed in ([`SimState`]), as in rapier's `PhysicsPipeline`. The same seed gives a
//! bit-identical run.
//!
//! ```no_run
//! use gpn_dynamics::Model;
//! use gpn_embedded_sim::{SimParams, SimState, Simulator};
//! let nominal = Model::from_urdf_file("urdf/panda.urdf")?; // the repository's Panda
//! let mut sim = Simulator::new(&nominal, &SimParams::default())?;
//! let mut state = SimState::at_rest(&[0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]);
//! let tau = [0.0; 7];
//! sim.step(&mut state, &tau)?;
//! let measured = sim.measure(&state, &tau)?;
//! println!("q = {:?}", measured.q);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![warn(missing_docs)]

mod error;
mod params;
mod sensors;
mod stepper;
mod truth;

pub use error::{SimError, SimResult};
pub use params::{
    FrictionDrift, FrictionParams, GlitchParams, Integrator, JointValues, PayloadParams,
    PayloadStep, SimParams,
};
pub use sensors::Measurement;
pub use stepper::{SimState, Simulator};
