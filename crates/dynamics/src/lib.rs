//! Rigid-body dynamics of fixed-base robots with revolute, continuous and prismatic joints:
//! URDF → kinematic tree, forward kinematics, inverse dynamics (RNEA), the joint-space
//! inertia matrix (CRBA), gravity and nonlinear effects, forward dynamics (ABA) and the
//! inertial-parameter regressor of one body.
//!
//! Boundary: this crate knows rigid bodies and URDF, nothing of learning, plugins or ROS.
//! Its shape follows Pinocchio: an immutable [`Model`] built once from the URDF and a
//! [`Data`] holding every buffer, allocated once by [`Data::new`]. After that, no algorithm
//! allocates (`tests/alloc.rs` proves it with a counting allocator). The
//! formulas are those of Featherstone, *Rigid Body Dynamics Algorithms* (2008); each file
//! cites its chapter.
//!
//! # Conventions
//! - Joint order: [`Model::joint_names`], topological (`parent(i) < i`); every per-joint
//!   slice and vector uses it. Match external data by name with [`Model::joint_index`].
//! - Units SI and radians. Gravity is in the world (root link) frame, default (0, 0, −9.81)
//!   m/s²; change it with [`Model::set_gravity`].
//! - Body i is moved by joint i and its frame is the frame of that joint's child link; links
//!   welded by fixed joints are merged into it ([`Model::body_of_link`] finds any link).
//! - Transforms are named `a_from_b` and compose right to left ([`Transform`]).
//!
//! # Algorithms
//! Every algorithm has the same shape, `fn(&Model, &mut Data, inputs...) -> Result<&output>`:
//! it checks each slice length once (an `Err` saying expected vs found, never a panic),
//! writes its result into a documented [`Data`] field and returns a reference to it.
//!
//! | call | inputs (nv each) | result |
//! |---|---|---|
//! | [`forward_kinematics`]`(&m, &mut d, q)` | q | [`Data::world_from_body`] (`&[Transform]`) |
//! | [`rnea`]`(&m, &mut d, q, v, a)` | q, q̇, q̈ | [`Data::tau`] = M q̈ + C q̇ + g (`&[f64]`) |
//! | [`crba`]`(&m, &mut d, q)` | q | [`Data::m`] = M(q), nv × nv symmetric (`&DMatrix`) |
//! | [`gravity`]`(&m, &mut d, q)` | q | [`Data::g`] = g(q) (`&[f64]`) |
//! | [`nonlinear_effects`]`(&m, &mut d, q, v)` | q, q̇ | [`Data::nle`] = C q̇ + g (`&[f64]`) |
//! | [`aba`]`(&m, &mut d, q, v, tau)` | q, q̇, τ | [`Data::ddq`] = q̈ (`&[f64]`) |
//! | [`regressor`]`(&m, &mut d, body, q, v, a)` | q, q̇, q̈ | [`Data::regressor`], nv × 10 (`&DMatrix`) |
//!
//! [`world_from_link`] gives any URDF link's pose after [`forward_kinematics`].
//!
//! # Model variants
//! [`Model::with_added_inertia`] (a payload on a link) and [`Model::with_armature`] (rotor
//! inertia, entering RNEA, CRBA and ABA consistently) return modified copies; build a new
//! [`Data`] only if nv changes (it never does for these two).
//!
//! # Checking against reference values
//! [`fixture_check::check_fixture`] compares every algorithm with a Pinocchio fixture; the
//! `gp-node dynamics check` command prints its report.
//!
//! # Example
//! ```
//! use gpn_dynamics::{Data, Model, aba, crba, rnea};
//!
//! let urdf = r#"<robot name="pendulum">
//!   <link name="base"/>
//!   <link name="arm">
//!     <inertial>
//!       <origin xyz="0 0 -0.5"/>
//!       <mass value="2.0"/>
//!       <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.001"/>
//!     </inertial>
//!   </link>
//!   <joint name="hinge" type="continuous">
//!     <parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
//!   </joint>
//! </robot>"#;
//! let model = Model::from_urdf_str(urdf, "pendulum.urdf")?;
//! let mut data = Data::new(&model);
//! let (q, v, a) = ([0.3], [0.0], [1.0]);
//!
//! let tau = rnea(&model, &mut data, &q, &v, &a)?.to_vec();
//! let m = crba(&model, &mut data, &q)?[(0, 0)];
//! assert!((m - (0.01 + 2.0 * 0.25)).abs() < 1e-12);
//! let ddq = aba(&model, &mut data, &q, &v, &tau)?;
//! assert!((ddq[0] - 1.0).abs() < 1e-12);
//!
//! // Wrong sizes are errors, not panics.
//! assert!(rnea(&model, &mut data, &[0.0, 0.0], &v, &a).is_err());
//! # Ok::<(), gpn_dynamics::RobotError>(())
//! ```

#![warn(missing_docs)]

mod aba;
mod crba;
mod data;
mod error;
pub mod fixture_check;
mod joint_values;
mod kinematics;
mod load;
mod model;
mod regressor;
mod rnea;
pub mod spatial;
mod urdf;
mod urdf_diagnose;

pub use aba::aba;
pub use crba::crba;
pub use data::{Data, N_INERTIAL_PARAMS};
pub use error::{Result, RobotError};
pub use joint_values::{JointValues, JointValuesError};
pub use kinematics::{forward_kinematics, world_from_link};
pub use model::{BodyRef, DEFAULT_GRAVITY_MPS2, JointLimits, JointType, Model};
pub use regressor::regressor;
pub use rnea::{gravity, nonlinear_effects, rnea};
pub use spatial::{Force, Motion, RigidInertia, Transform};
pub use urdf::JointSelection;
