//! [`Model`]: the immutable kinematic tree of a fixed-base robot with single-DoF joints, built
//! once from a URDF (see `urdf.rs`), and the copies with extra payload or rotor inertia that
//! the simulator builds from it.
//!
//! Each movable joint i carries body i (its child link plus every link welded to it by fixed
//! joints). Bodies are numbered in topological order, `parent(i) < i`, and body i's frame is
//! the frame of its joint's child link. The joint model is Featherstone 2008 §4.4
//! (`ᵖX_i(q) = X_tree,i · X_J(q)`, motion subspace S = [a; 0] for revolute, [0; a] for
//! prismatic joints, a the unit axis in the body frame).

use std::collections::HashMap;

use nalgebra::{Isometry3, Matrix3, SymmetricEigen, Vector3};

use super::error::{Result, RobotError};
use super::spatial::{Force, Motion, RigidInertia, Transform, rotation_about_axis};

/// The default gravity, (0, 0, −9.81) m/s² in the world (root link) frame.
pub const DEFAULT_GRAVITY_MPS2: Vector3<f64> = Vector3::new(0.0, 0.0, -9.81);

/// The type of a movable joint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JointType {
    /// Rotation about the axis, with position limits (rad).
    Revolute,
    /// Rotation about the axis without position limits (rad, one angle, not unwrapped).
    Continuous,
    /// Translation along the axis (m).
    Prismatic,
}

/// The limits of one joint as read from its URDF `<limit>` element. They play no part in the
/// dynamics; controllers and the simulator read them.
///
/// Units are those of the joint: rad, rad/s, N·m for revolute and continuous joints; m, m/s,
/// N for prismatic ones. "No limit" is ±∞.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointLimits {
    /// Lower position limit, as read (`-∞` for continuous joints, and when URDF ≥ 1.2 omits it).
    pub position_lower: f64,
    /// Upper position limit, as read (`+∞` for continuous joints, and when URDF ≥ 1.2 omits it).
    pub position_upper: f64,
    /// Velocity limit (magnitude); a value ≤ 0 in the file means none and is stored as `+∞`.
    pub velocity: f64,
    /// Effort limit (magnitude). Finite and > 0 in a model loaded by
    /// [`Model::from_urdf_file_with_effort_limits`] (the URDF's or the given one); in a model
    /// loaded by [`Model::from_urdf_file`] (dynamics only), a missing, zero, negative or
    /// infinite one is stored as `+∞` (none).
    pub effort: f64,
}

/// Which rigid body a URDF link belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BodyRef {
    /// The link is welded (through fixed joints) to the root link, i.e. to the world.
    World,
    /// The link is part of body `i`, moved by joint `i`.
    Body(usize),
}

/// One body and the joint that moves it.
#[derive(Clone, Debug)]
pub(crate) struct Body {
    /// Parent body, `None` for the world; always `< ` this body's index.
    pub(crate) parent: Option<usize>,
    /// Joint type.
    pub(crate) joint_type: JointType,
    /// Unit joint axis in the joint (= body) frame.
    pub(crate) axis: Vector3<f64>,
    /// The joint frame at q = 0 in the parent body's frame (`X_tree`).
    pub(crate) parent_from_joint: Transform,
    /// Inertia of the body (all its welded links), in the body frame.
    pub(crate) inertia: RigidInertia,
    /// The URDF name of the child link of the joint (the link whose frame is the body frame).
    pub(crate) link_name: String,
}

impl Body {
    #[inline]
    pub(crate) fn is_prismatic(&self) -> bool {
        self.joint_type == JointType::Prismatic
    }

    /// `parent_from_body(q) = X_tree · X_J(q)`.
    #[inline]
    pub(crate) fn parent_from_body(&self, q: f64) -> Transform {
        let tree = &self.parent_from_joint;
        if self.is_prismatic() {
            Transform {
                rotation: tree.rotation,
                translation: tree.translation + tree.rotation * (self.axis * q),
            }
        } else {
            Transform {
                rotation: tree.rotation * rotation_about_axis(&self.axis, q),
                translation: tree.translation,
            }
        }
    }

    /// `S · x`: the joint motion for joint velocity (or acceleration) x, in the body frame.
    #[inline]
    pub(crate) fn motion(&self, x: f64) -> Motion {
        if self.is_prismatic() {
            Motion::new(Vector3::zeros(), self.axis * x)
        } else {
            Motion::new(self.axis * x, Vector3::zeros())
        }
    }

    /// `Sᵀ · f`: the part of a body-frame force the joint transmits (N·m or N).
    #[inline]
    pub(crate) fn project(&self, f: &Force) -> f64 {
        if self.is_prismatic() {
            self.axis.dot(&f.linear)
        } else {
            self.axis.dot(&f.angular)
        }
    }
}

/// Where a URDF link sits: its body and its placement in that body's frame.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LinkFrame {
    pub(crate) body: BodyRef,
    pub(crate) body_from_link: Transform,
}

/// The immutable rigid-body model of a fixed-base robot (Pinocchio's `Model`): joints in
/// topological order, body inertias, joint limits, rotor inertias and gravity.
///
/// Built by [`Model::from_urdf_file`] or [`Model::from_urdf_str`] (dynamics; effort limits
/// optional), or by [`Model::from_urdf_file_with_effort_limits`] (a finite effort limit on
/// every joint, for a controller); algorithms take it by shared reference and write into a
/// [`Data`](super::Data).
#[derive(Clone, Debug)]
pub struct Model {
    pub(crate) name: String,
    pub(crate) file: String,
    pub(crate) bodies: Vec<Body>,
    pub(crate) joint_names: Vec<String>,
    pub(crate) joint_index: HashMap<String, usize>,
    pub(crate) limits: Vec<JointLimits>,
    pub(crate) armature: Vec<f64>,
    pub(crate) gravity: Vector3<f64>,
    /// Every URDF link, in file order, with its frame.
    pub(crate) link_names: Vec<String>,
    pub(crate) links: HashMap<String, LinkFrame>,
    /// What the loader accepted but a user should know (e.g. unphysical inertias).
    pub(crate) warnings: Vec<String>,
}

impl Model {
    /// The `<robot name>`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file (or source name) the model was loaded from, as used in error messages.
    pub fn source_name(&self) -> &str {
        &self.file
    }

    /// Number of degrees of freedom = number of movable joints = number of bodies.
    pub fn nv(&self) -> usize {
        self.bodies.len()
    }

    /// Movable joint names in the engine's (topological) order; every per-joint vector uses
    /// this order.
    pub fn joint_names(&self) -> &[String] {
        &self.joint_names
    }

    /// Index of a movable joint by name (`None` for unknown and fixed joints).
    pub fn joint_index(&self, name: &str) -> Option<usize> {
        self.joint_index.get(name).copied()
    }

    /// The type of joint `i`. Panics if `i >= nv()`.
    pub fn joint_type(&self, i: usize) -> JointType {
        self.bodies[i].joint_type
    }

    /// The unit axis of joint `i` in body i's frame. Panics if `i >= nv()`.
    pub fn joint_axis(&self, i: usize) -> Vector3<f64> {
        self.bodies[i].axis
    }

    /// Parent body of body `i` (`None`: the world). Always `< i`. Panics if `i >= nv()`.
    pub fn parent(&self, i: usize) -> Option<usize> {
        self.bodies[i].parent
    }

    /// Joint i's frame at q = 0 in its parent body's frame (`X_tree`, the composed URDF
    /// `<origin>`s). Panics if `i >= nv()`.
    pub fn parent_from_joint(&self, i: usize) -> Transform {
        self.bodies[i].parent_from_joint
    }

    /// The URDF link whose frame is body `i`'s frame (the child link of joint i). Panics if
    /// `i >= nv()`.
    pub fn body_link_name(&self, i: usize) -> &str {
        &self.bodies[i].link_name
    }

    /// Inertia of body `i` (including links merged by fixed joints, payloads and nothing
    /// else), in body i's frame. Panics if `i >= nv()`.
    pub fn body_inertia(&self, i: usize) -> &RigidInertia {
        &self.bodies[i].inertia
    }

    /// What the loader accepted but a user should know, one sentence each (e.g. a link whose
    /// principal moments violate the triangle inequality). Tools print them at start.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The tool body: the end of the longest chain of rotary joints from the root (the
    /// body with the most revolute or continuous joints between it and the root, reached
    /// without a prismatic joint: gripper fingers and linear stages beyond the flange are not
    /// the tool; ties go to the later body in joint order). A robot of prismatic joints only:
    /// the end of its longest chain. `None` when nv = 0.
    pub fn tool_body(&self) -> Option<usize> {
        let n = self.bodies.len();
        // (rotary depth, reached without a prismatic joint) per body.
        let mut depth = vec![(0usize, true); n];
        for (i, body) in self.bodies.iter().enumerate() {
            let (d, clean) = body.parent.map_or((0, true), |p| depth[p]);
            depth[i] = match body.joint_type {
                JointType::Prismatic => (d, false),
                JointType::Revolute | JointType::Continuous => (d + 1, clean),
            };
        }
        let deepest = |clean_only: bool| {
            (0..n)
                .filter(|&i| !clean_only || depth[i].1)
                .fold(None, |best: Option<usize>, i| match best {
                    Some(b) if depth[b].0 > depth[i].0 => Some(b),
                    _ => Some(i),
                })
        };
        deepest(true).filter(|&b| depth[b].0 > 0).or_else(|| {
            // No rotary joint: the end of the longest chain of any joints.
            let mut all = vec![0usize; n];
            for (i, body) in self.bodies.iter().enumerate() {
                all[i] = body.parent.map_or(1, |p| all[p] + 1);
            }
            (0..n).rev().max_by_key(|&i| all[i])
        })
    }

    /// Sum of the masses of all moving bodies (kg); links welded to the world are not counted.
    pub fn moving_mass_kg(&self) -> f64 {
        self.bodies.iter().map(|b| b.inertia.mass).sum()
    }

    /// Per-joint limits, in joint order.
    pub fn limits(&self) -> &[JointLimits] {
        &self.limits
    }

    /// Per-joint rotor inertia (kg·m² or kg), in joint order; all zero unless set by
    /// [`Model::with_armature`].
    pub fn armature(&self) -> &[f64] {
        &self.armature
    }

    /// Gravity in the world (root link) frame, m/s². Default [`DEFAULT_GRAVITY_MPS2`].
    pub fn gravity(&self) -> Vector3<f64> {
        self.gravity
    }

    /// Sets gravity (m/s², world frame). Errors if a component is not finite.
    pub fn set_gravity(&mut self, gravity_mps2: Vector3<f64>) -> Result<()> {
        if !gravity_mps2.iter().all(|g| g.is_finite()) {
            return Err(RobotError::InvalidArgument {
                argument: "gravity".into(),
                reason: format!("{gravity_mps2:?} is not finite"),
                file: self.file.clone(),
            });
        }
        self.gravity = gravity_mps2;
        Ok(())
    }

    /// Every URDF link name (including links merged by fixed joints and the root), in file
    /// order.
    pub fn link_names(&self) -> &[String] {
        &self.link_names
    }

    /// Where URDF link `name` is: the body it belongs to ([`BodyRef::World`] if welded to the
    /// root) and `body_from_link`, the link frame in that body's frame (world frame for
    /// [`BodyRef::World`]). `None` if no link has this name.
    pub fn body_of_link(&self, name: &str) -> Option<(BodyRef, Isometry3<f64>)> {
        self.links
            .get(name)
            .map(|l| (l.body, l.body_from_link.to_isometry()))
    }

    /// As [`Model::body_of_link`], with the placement as a [`Transform`] (exact, no quaternion).
    pub fn body_of_link_transform(&self, name: &str) -> Option<(BodyRef, Transform)> {
        self.links.get(name).map(|l| (l.body, l.body_from_link))
    }

    /// A copy with extra mass rigidly attached to URDF link `link_name` (e.g. an end-effector
    /// payload the nominal model lacks): `mass_kg` > 0, centre of mass `com_in_link` (m, link
    /// frame), `inertia_about_com` (kg·m², about the centre of mass, link axes; symmetric,
    /// positive semi-definite and satisfying the triangle inequality — a point mass is fine).
    ///
    /// Mass attached to a link welded to the world changes no dynamics; the copy is then
    /// identical. Errors: unknown link, invalid mass or inertia.
    pub fn with_added_inertia(
        &self,
        link_name: &str,
        mass_kg: f64,
        com_in_link: Vector3<f64>,
        inertia_about_com: Matrix3<f64>,
    ) -> Result<Model> {
        let frame = self
            .links
            .get(link_name)
            .ok_or_else(|| RobotError::UnknownLink {
                link: link_name.to_owned(),
                file: self.file.clone(),
            })?;
        let invalid = |reason: String| RobotError::InvalidArgument {
            argument: format!("payload on link '{link_name}'"),
            reason,
            file: self.file.clone(),
        };
        if !(mass_kg.is_finite() && mass_kg > 0.0) {
            return Err(invalid(format!("mass {mass_kg} kg must be finite and > 0")));
        }
        if !com_in_link.iter().all(|c| c.is_finite()) {
            return Err(invalid(format!(
                "centre of mass {com_in_link:?} is not finite"
            )));
        }
        if !inertia_about_com.iter().all(|c| c.is_finite()) {
            return Err(invalid("inertia tensor is not finite".into()));
        }
        let asym = (inertia_about_com - inertia_about_com.transpose())
            .abs()
            .max();
        if asym > 1e-12 * inertia_about_com.abs().max().max(1e-300) {
            return Err(invalid("inertia tensor is not symmetric".into()));
        }
        // A payload is ours to describe: a warning is an error here.
        if let Some(unphysical) = check_inertia_tensor(
            &inertia_about_com,
            &format!("payload on link '{link_name}'"),
            &self.file,
        ) {
            return Err(unphysical);
        }
        let mut model = self.clone();
        if let BodyRef::Body(i) = frame.body {
            let in_link =
                RigidInertia::from_mass_com_inertia(mass_kg, com_in_link, inertia_about_com);
            model.bodies[i].inertia += frame.body_from_link.apply_rigid_inertia(&in_link);
        }
        Ok(model)
    }

    /// A copy with rotor inertia ("armature") `armature[i]` (kg·m² or kg, ≥ 0) on joint i, in
    /// joint order. It adds `armature[i]` to `M[i][i]` (CRBA), `armature[i]·q̈[i]` to τ (RNEA)
    /// and enters the ABA consistently. Errors: wrong length, negative or non-finite entries.
    pub fn with_armature(&self, armature: &[f64]) -> Result<Model> {
        self.check_len("armature", armature.len())?;
        for (i, &a) in armature.iter().enumerate() {
            if !(a.is_finite() && a >= 0.0) {
                return Err(RobotError::InvalidArgument {
                    argument: format!("armature[{i}] (joint '{}')", self.joint_names[i]),
                    reason: format!("{a} must be finite and >= 0"),
                    file: self.file.clone(),
                });
            }
        }
        let mut model = self.clone();
        model.armature.copy_from_slice(armature);
        Ok(model)
    }

    /// Checks a per-joint slice length (`Err` naming `argument`, expected vs found).
    #[inline]
    pub(crate) fn check_len(&self, argument: &'static str, found: usize) -> Result<()> {
        if found == self.bodies.len() {
            Ok(())
        } else {
            Err(RobotError::SizeMismatch {
                argument,
                expected: self.bodies.len(),
                found,
                file: self.file.clone(),
            })
        }
    }
}

/// Checks a rotational inertia about the centre of mass: principal moments non-negative
/// (point masses and rods allowed; −1e-9 of the largest for rounding) and the triangle
/// inequality `I₁ + I₂ ≥ I₃` between them (Featherstone §2.13 notes a physical inertia must
/// satisfy it), with a relative tolerance of 1e-6 for the rounding that URDFs carry.
///
/// A tensor that is not semi-definite, or that violates the triangle inequality, is returned
/// as a warning, for the caller to report or refuse: CAD exports carry such tensors (a
/// hand's finger links, an antenna of 10⁻⁷ kg·m²), Pinocchio loads them, and what the
/// dynamics need — a positive-definite joint-space inertia — is checked on the model.
pub(crate) fn check_inertia_tensor(
    inertia_about_com: &Matrix3<f64>,
    link: &str,
    file: &str,
) -> Option<RobotError> {
    let mut moments: [f64; 3] = SymmetricEigen::new(*inertia_about_com).eigenvalues.into();
    moments.sort_by(f64::total_cmp);
    let scale = moments[2].abs().max(f64::MIN_POSITIVE);
    let error = |reason| RobotError::InvalidInertia {
        link: link.to_owned(),
        principal_moments: moments,
        reason,
        file: file.to_owned(),
    };
    if moments[0] < -1e-9 * scale {
        return Some(error("the inertia tensor is not positive semi-definite"));
    }
    if moments[0] + moments[1] < moments[2] * (1.0 - 1e-6) {
        return Some(error(
            "the principal moments violate the triangle inequality (I1 + I2 >= I3)",
        ));
    }
    None
}

/// The first index whose Cholesky pivot of the symmetric matrix `m` vanishes (≤ 1e-12 of the
/// largest diagonal entry, or not finite), or `None` when `m` is positive definite.
pub(crate) fn first_vanishing_pivot(m: &nalgebra::DMatrix<f64>) -> Option<usize> {
    let n = m.nrows();
    let floor = 1e-12 * m.diagonal().amax();
    let mut l = nalgebra::DMatrix::<f64>::zeros(n, n);
    for j in 0..n {
        let pivot = m[(j, j)] - (0..j).map(|k| l[(j, k)] * l[(j, k)]).sum::<f64>();
        if !(pivot.is_finite() && pivot > floor) {
            return Some(j);
        }
        let d = pivot.sqrt();
        l[(j, j)] = d;
        for i in j + 1..n {
            let s = m[(i, j)] - (0..j).map(|k| l[(i, k)] * l[(j, k)]).sum::<f64>();
            l[(i, j)] = s / d;
        }
    }
    None
}
