//! Spatial (6-D) vector algebra shared by every algorithm: motion and force vectors, rigid
//! transforms between frames, rigid-body inertias and articulated-body inertias.
//!
//! Featherstone, *Rigid Body Dynamics Algorithms* (2008): ch. 2 (spatial motion and force
//! vectors, cross products §2.9, Plücker transforms §2.8, rigid-body inertia §2.13) and §7.1
//! (articulated-body inertia). Vectors are written angular part first, as Featherstone does:
//! a motion is `[ω; v]`, a force is `[n; f]`.
//!
//! Transforms are stored as a rotation matrix and a translation, never as 6×6 matrices: a
//! [`Transform`] named `a_from_b` holds the orientation of frame b in frame a and the origin
//! of frame b in frame a, and maps points, motions, forces and inertias expressed in b into
//! a. Composition reads right to left: `world_from_tip = world_from_link * link_from_tip`.
//!
//! Everything here works on fixed-size nalgebra types and never allocates.

use std::ops::{Add, AddAssign, Mul, Neg, Sub, SubAssign};

use nalgebra::{Isometry3, Matrix3, Rotation3, Translation3, UnitQuaternion, Vector3};

/// The skew-symmetric matrix `[x]×` with `[x]× y = x × y`.
#[inline]
pub fn skew(x: &Vector3<f64>) -> Matrix3<f64> {
    Matrix3::new(0.0, -x.z, x.y, x.z, 0.0, -x.x, -x.y, x.x, 0.0)
}

/// A spatial motion vector `[ω; v]` (velocity or acceleration of a body), Featherstone §2.3.
///
/// `angular` is the angular velocity (rad/s) and `linear` the linear velocity (m/s) of the
/// body-fixed point at the origin of the frame the vector is expressed in.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Motion {
    /// Angular part ω (rad/s, or rad/s² for an acceleration).
    pub angular: Vector3<f64>,
    /// Linear part v at the frame origin (m/s, or m/s² for an acceleration).
    pub linear: Vector3<f64>,
}

/// A spatial force vector `[n; f]` (wrench or momentum), Featherstone §2.4.
///
/// `angular` is the moment about the origin of the frame the vector is expressed in (N·m)
/// and `linear` the force (N).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Force {
    /// Moment n about the frame origin (N·m).
    pub angular: Vector3<f64>,
    /// Force f (N).
    pub linear: Vector3<f64>,
}

impl Motion {
    /// The zero motion.
    pub const ZERO: Motion = Motion {
        angular: Vector3::new(0.0, 0.0, 0.0),
        linear: Vector3::new(0.0, 0.0, 0.0),
    };

    /// A motion from its angular and linear parts.
    #[inline]
    pub fn new(angular: Vector3<f64>, linear: Vector3<f64>) -> Self {
        Self { angular, linear }
    }

    /// The spatial cross product for motions, `self × m` (Featherstone eq. 2.31):
    /// `[ω × m_ω; ω × m_v + v × m_ω]`.
    #[inline]
    pub fn cross_motion(&self, m: &Motion) -> Motion {
        Motion {
            angular: self.angular.cross(&m.angular),
            linear: self.angular.cross(&m.linear) + self.linear.cross(&m.angular),
        }
    }

    /// The spatial cross product for forces, `self ×* f` (Featherstone eq. 2.32):
    /// `[ω × n + v × f; ω × f]`.
    #[inline]
    pub fn cross_force(&self, f: &Force) -> Force {
        Force {
            angular: self.angular.cross(&f.angular) + self.linear.cross(&f.linear),
            linear: self.angular.cross(&f.linear),
        }
    }

    /// The scalar product with a force (power, W): `ω·n + v·f`.
    #[inline]
    pub fn dot(&self, f: &Force) -> f64 {
        self.angular.dot(&f.angular) + self.linear.dot(&f.linear)
    }
}

impl Force {
    /// The zero force.
    pub const ZERO: Force = Force {
        angular: Vector3::new(0.0, 0.0, 0.0),
        linear: Vector3::new(0.0, 0.0, 0.0),
    };

    /// A force from its moment and force parts.
    #[inline]
    pub fn new(angular: Vector3<f64>, linear: Vector3<f64>) -> Self {
        Self { angular, linear }
    }
}

macro_rules! vector_ops {
    ($t:ty) => {
        impl Add for $t {
            type Output = $t;
            #[inline]
            fn add(self, o: $t) -> $t {
                Self {
                    angular: self.angular + o.angular,
                    linear: self.linear + o.linear,
                }
            }
        }
        impl Sub for $t {
            type Output = $t;
            #[inline]
            fn sub(self, o: $t) -> $t {
                Self {
                    angular: self.angular - o.angular,
                    linear: self.linear - o.linear,
                }
            }
        }
        impl AddAssign for $t {
            #[inline]
            fn add_assign(&mut self, o: $t) {
                self.angular += o.angular;
                self.linear += o.linear;
            }
        }
        impl SubAssign for $t {
            #[inline]
            fn sub_assign(&mut self, o: $t) {
                self.angular -= o.angular;
                self.linear -= o.linear;
            }
        }
        impl Mul<f64> for $t {
            type Output = $t;
            #[inline]
            fn mul(self, s: f64) -> $t {
                Self {
                    angular: self.angular * s,
                    linear: self.linear * s,
                }
            }
        }
        impl Neg for $t {
            type Output = $t;
            #[inline]
            fn neg(self) -> $t {
                Self {
                    angular: -self.angular,
                    linear: -self.linear,
                }
            }
        }
    };
}
vector_ops!(Motion);
vector_ops!(Force);

/// A rigid transform `a_from_b`: the placement of frame b in frame a (Featherstone §2.8
/// writes the same information as the Plücker transform `ᵃX_b`).
///
/// Points map as `p_a = rotation · p_b + translation`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform {
    /// Orientation of frame b in frame a (columns are b's axes in a).
    pub rotation: Matrix3<f64>,
    /// Origin of frame b expressed in frame a (m).
    pub translation: Vector3<f64>,
}

impl Default for Transform {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Transform {
    /// The identity transform.
    pub const IDENTITY: Transform = Transform {
        rotation: Matrix3::new(1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0),
        translation: Vector3::new(0.0, 0.0, 0.0),
    };

    /// A transform from a rotation matrix and a translation.
    #[inline]
    pub fn new(rotation: Matrix3<f64>, translation: Vector3<f64>) -> Self {
        Self {
            rotation,
            translation,
        }
    }

    /// A transform from URDF `<origin xyz rpy>`: rotation `Rz(yaw)·Ry(pitch)·Rx(roll)` (fixed
    /// axes roll, pitch, yaw, as the URDF specification defines), then translation `xyz`.
    pub fn from_xyz_rpy(xyz: [f64; 3], rpy: [f64; 3]) -> Self {
        Self {
            rotation: rotation_from_rpy(rpy),
            translation: Vector3::from(xyz),
        }
    }

    /// The inverse, `b_from_a`.
    #[inline]
    pub fn inverse(&self) -> Transform {
        let rt = self.rotation.transpose();
        Transform {
            rotation: rt,
            translation: -(rt * self.translation),
        }
    }

    /// Maps a point expressed in b into a.
    #[inline]
    pub fn transform_point(&self, p_b: &Vector3<f64>) -> Vector3<f64> {
        self.rotation * p_b + self.translation
    }

    /// Maps a motion expressed in b into a (`ᵃX_b m`): `ω_a = R ω_b`, `v_a = R v_b + t × ω_a`.
    #[inline]
    pub fn apply_motion(&self, m: &Motion) -> Motion {
        let angular = self.rotation * m.angular;
        let linear = self.rotation * m.linear + self.translation.cross(&angular);
        Motion { angular, linear }
    }

    /// Maps a motion expressed in a into b (`ᵇX_a m`): `ω_b = Rᵀ ω_a`, `v_b = Rᵀ (v_a − t × ω_a)`.
    #[inline]
    pub fn inverse_apply_motion(&self, m: &Motion) -> Motion {
        let angular = self.rotation.tr_mul(&m.angular);
        let linear = self
            .rotation
            .tr_mul(&(m.linear - self.translation.cross(&m.angular)));
        Motion { angular, linear }
    }

    /// Maps a force expressed in b into a (`ᵃX_b* f`): `f_a = R f_b`, `n_a = R n_b + t × f_a`.
    #[inline]
    pub fn apply_force(&self, f: &Force) -> Force {
        let linear = self.rotation * f.linear;
        let angular = self.rotation * f.angular + self.translation.cross(&linear);
        Force { angular, linear }
    }

    /// Maps a force expressed in a into b: `f_b = Rᵀ f_a`, `n_b = Rᵀ (n_a − t × f_a)`.
    #[inline]
    pub fn inverse_apply_force(&self, f: &Force) -> Force {
        let linear = self.rotation.tr_mul(&f.linear);
        let angular = self
            .rotation
            .tr_mul(&(f.angular - self.translation.cross(&f.linear)));
        Force { angular, linear }
    }

    /// Maps a rigid-body inertia expressed in b into a (`ᵃX_b* I ᵇX_a`, Featherstone eq. 2.66),
    /// in closed form: `h_a = R h_b + m t`,
    /// `I_a = R I_b Rᵀ − [t]×[R h_b]× − [R h_b]×[t]× − m [t]×²`.
    #[inline]
    pub fn apply_rigid_inertia(&self, inertia: &RigidInertia) -> RigidInertia {
        let r = &self.rotation;
        let m = inertia.mass;
        let h = r * inertia.first_moment;
        let t = skew(&self.translation);
        let hx = skew(&h);
        let rotational = r * inertia.rotational * r.transpose() - t * hx - hx * t - t * t * m;
        RigidInertia {
            mass: m,
            first_moment: h + self.translation * m,
            rotational,
        }
    }

    /// Maps an articulated-body inertia expressed in b into a (`ᵃX_b* Iᴬ ᵇX_a`, Featherstone
    /// §7.3). With `[A B; Bᵀ C]` rotated by R into `[A' B'; B'ᵀ C']` and `P = [t]×`:
    /// `A_a = A' − B'P + P B'ᵀ − P C' P` (= `A' − B'P − (B'P)ᵀ − P C' P`), `B_a = B' + P C'`,
    /// `C_a = C'`.
    #[inline]
    pub fn apply_articulated_inertia(&self, inertia: &ArticulatedInertia) -> ArticulatedInertia {
        let r = &self.rotation;
        let rt = r.transpose();
        let a = r * inertia.ang_ang * rt;
        let b = r * inertia.ang_lin * rt;
        let c = r * inertia.lin_lin * rt;
        let p = skew(&self.translation);
        let pc = p * c;
        let bp = b * p;
        ArticulatedInertia {
            ang_ang: a - bp - bp.transpose() - pc * p,
            ang_lin: b + pc,
            lin_lin: c,
        }
    }

    /// The same transform as an nalgebra isometry.
    pub fn to_isometry(&self) -> Isometry3<f64> {
        let rotation =
            UnitQuaternion::from_rotation_matrix(&Rotation3::from_matrix_unchecked(self.rotation));
        Isometry3::from_parts(Translation3::from(self.translation), rotation)
    }

    /// A transform from an nalgebra isometry.
    pub fn from_isometry(iso: &Isometry3<f64>) -> Self {
        Self {
            rotation: *iso.rotation.to_rotation_matrix().matrix(),
            translation: iso.translation.vector,
        }
    }
}

impl Mul for Transform {
    type Output = Transform;
    /// Composition: `a_from_c = a_from_b * b_from_c`.
    #[inline]
    fn mul(self, b_from_c: Transform) -> Transform {
        Transform {
            rotation: self.rotation * b_from_c.rotation,
            translation: self.rotation * b_from_c.translation + self.translation,
        }
    }
}

/// The URDF rotation for fixed-axis roll, pitch, yaw: `Rz(yaw)·Ry(pitch)·Rx(roll)`.
pub fn rotation_from_rpy([roll, pitch, yaw]: [f64; 3]) -> Matrix3<f64> {
    let (sr, cr) = roll.sin_cos();
    let (sp, cp) = pitch.sin_cos();
    let (sy, cy) = yaw.sin_cos();
    Matrix3::new(
        cy * cp,
        cy * sp * sr - sy * cr,
        cy * sp * cr + sy * sr,
        sy * cp,
        sy * sp * sr + cy * cr,
        sy * sp * cr - cy * sr,
        -sp,
        cp * sr,
        cp * cr,
    )
}

/// Rotation by `angle_rad` about the unit vector `axis` (Rodrigues' formula,
/// `cos θ·1 + sin θ·[a]× + (1 − cos θ)·a aᵀ`).
#[inline]
pub fn rotation_about_axis(axis: &Vector3<f64>, angle_rad: f64) -> Matrix3<f64> {
    let (s, c) = angle_rad.sin_cos();
    let k = 1.0 - c;
    let (x, y, z) = (axis.x, axis.y, axis.z);
    let (kx, ky, kz) = (k * x, k * y, k * z);
    Matrix3::new(
        c + kx * x,
        kx * y - s * z,
        kx * z + s * y,
        kx * y + s * z,
        c + ky * y,
        ky * z - s * x,
        kx * z - s * y,
        ky * z + s * x,
        c + kz * z,
    )
}

/// A rigid-body spatial inertia (Featherstone §2.13), stored as the ten inertial parameters
/// about the origin of the frame it is expressed in.
///
/// As a 6×6 matrix it is `[I_o, [h]×; [h]×ᵀ, m·1]` with `h = m·c`. It acts linearly in its
/// parameters, so zero or non-physical values (used by the regressor) are fine here; physical
/// validity is checked where inertias enter a [`Model`](super::Model).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RigidInertia {
    /// Mass m (kg).
    pub mass: f64,
    /// First moment of mass `h = m·c` (kg·m), c the centre of mass in this frame.
    pub first_moment: Vector3<f64>,
    /// Rotational inertia about the frame origin (not the centre of mass), in this frame
    /// (kg·m²), symmetric.
    pub rotational: Matrix3<f64>,
}

impl Default for RigidInertia {
    fn default() -> Self {
        Self::ZERO
    }
}

impl RigidInertia {
    /// No mass at all.
    pub const ZERO: RigidInertia = RigidInertia {
        mass: 0.0,
        first_moment: Vector3::new(0.0, 0.0, 0.0),
        rotational: Matrix3::new(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
    };

    /// From mass (kg), centre of mass `com` (m, in this frame) and the rotational inertia about
    /// the centre of mass with axes parallel to this frame (kg·m²); parallel-axis theorem:
    /// `I_o = I_c − m [c]×²`.
    pub fn from_mass_com_inertia(
        mass_kg: f64,
        com: Vector3<f64>,
        inertia_about_com: Matrix3<f64>,
    ) -> Self {
        let cx = skew(&com);
        Self {
            mass: mass_kg,
            first_moment: com * mass_kg,
            rotational: inertia_about_com - cx * cx * mass_kg,
        }
    }

    /// From the ten parameters `[m, m·cx, m·cy, m·cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`
    /// (rotational inertia about the frame origin; order as in [`Self::params`]).
    pub fn from_params(p: &[f64; 10]) -> Self {
        Self {
            mass: p[0],
            first_moment: Vector3::new(p[1], p[2], p[3]),
            rotational: Matrix3::new(p[4], p[5], p[7], p[5], p[6], p[8], p[7], p[8], p[9]),
        }
    }

    /// The ten inertial parameters `π = [m, m·cx, m·cy, m·cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`:
    /// mass (kg), first moment (kg·m) and the rotational inertia about the frame ORIGIN
    /// (kg·m², tensor entries as in URDF, `Ixy = −∫xy dm`), all in this frame. This is the
    /// order of the columns of [`regressor`](super::regressor).
    pub fn params(&self) -> [f64; 10] {
        let h = &self.first_moment;
        let i = &self.rotational;
        [
            self.mass,
            h.x,
            h.y,
            h.z,
            i[(0, 0)],
            i[(0, 1)],
            i[(1, 1)],
            i[(0, 2)],
            i[(1, 2)],
            i[(2, 2)],
        ]
    }

    /// Centre of mass in this frame (m), or `None` for zero mass.
    pub fn com(&self) -> Option<Vector3<f64>> {
        (self.mass > 0.0).then(|| self.first_moment / self.mass)
    }

    /// Rotational inertia about the centre of mass, axes of this frame (kg·m²); zero for zero
    /// mass.
    pub fn inertia_about_com(&self) -> Matrix3<f64> {
        match self.com() {
            Some(c) => {
                let cx = skew(&c);
                self.rotational + cx * cx * self.mass
            }
            None => self.rotational,
        }
    }

    /// `I·m`: momentum of a body with this inertia moving with `m` (Featherstone eq. 2.63):
    /// `[I_o ω + h × v; m v − h × ω]`.
    #[inline]
    pub fn mul_motion(&self, m: &Motion) -> Force {
        Force {
            angular: self.rotational * m.angular + self.first_moment.cross(&m.linear),
            linear: m.linear * self.mass - self.first_moment.cross(&m.angular),
        }
    }
}

impl Add for RigidInertia {
    type Output = RigidInertia;
    #[inline]
    fn add(self, o: RigidInertia) -> RigidInertia {
        RigidInertia {
            mass: self.mass + o.mass,
            first_moment: self.first_moment + o.first_moment,
            rotational: self.rotational + o.rotational,
        }
    }
}

impl AddAssign for RigidInertia {
    #[inline]
    fn add_assign(&mut self, o: RigidInertia) {
        self.mass += o.mass;
        self.first_moment += o.first_moment;
        self.rotational += o.rotational;
    }
}

/// An articulated-body inertia (Featherstone §7.1): a symmetric 6×6 matrix kept as its three
/// 3×3 blocks `[ang_ang, ang_lin; ang_linᵀ, lin_lin]` acting on `[ω; v]`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ArticulatedInertia {
    /// Upper-left block (moment from angular motion), symmetric.
    pub ang_ang: Matrix3<f64>,
    /// Upper-right block (moment from linear motion); the lower-left block is its transpose.
    pub ang_lin: Matrix3<f64>,
    /// Lower-right block (force from linear motion), symmetric.
    pub lin_lin: Matrix3<f64>,
}

impl Default for ArticulatedInertia {
    fn default() -> Self {
        Self {
            ang_ang: Matrix3::zeros(),
            ang_lin: Matrix3::zeros(),
            lin_lin: Matrix3::zeros(),
        }
    }
}

impl ArticulatedInertia {
    /// The 6×6 form of a rigid-body inertia.
    #[inline]
    pub fn from_rigid(inertia: &RigidInertia) -> Self {
        Self {
            ang_ang: inertia.rotational,
            ang_lin: skew(&inertia.first_moment),
            lin_lin: Matrix3::from_diagonal_element(inertia.mass),
        }
    }

    /// `Iᴬ·m`, a force.
    #[inline]
    pub fn mul_motion(&self, m: &Motion) -> Force {
        Force {
            angular: self.ang_ang * m.angular + self.ang_lin * m.linear,
            linear: self.ang_lin.tr_mul(&m.angular) + self.lin_lin * m.linear,
        }
    }

    /// `self −= s · u uᵀ` for a force-like column `u` (the rank-one update of Featherstone
    /// eq. 7.37).
    #[inline]
    pub fn sub_scaled_outer(&mut self, u: &Force, s: f64) {
        let un = u.angular * s;
        let uf = u.linear * s;
        self.ang_ang -= un * u.angular.transpose();
        self.ang_lin -= un * u.linear.transpose();
        self.lin_lin -= uf * u.linear.transpose();
    }
}

impl AddAssign for ArticulatedInertia {
    #[inline]
    fn add_assign(&mut self, o: ArticulatedInertia) {
        self.ang_ang += o.ang_ang;
        self.ang_lin += o.ang_lin;
        self.lin_lin += o.lin_lin;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dense_motion_transform(x: &Transform) -> nalgebra::Matrix6<f64> {
        // ᵃX_b as a 6×6 matrix: [R 0; [t]×R R].
        let mut m = nalgebra::Matrix6::zeros();
        m.fixed_view_mut::<3, 3>(0, 0).copy_from(&x.rotation);
        m.fixed_view_mut::<3, 3>(3, 3).copy_from(&x.rotation);
        m.fixed_view_mut::<3, 3>(3, 0)
            .copy_from(&(skew(&x.translation) * x.rotation));
        m
    }

    fn dense_inertia(i: &ArticulatedInertia) -> nalgebra::Matrix6<f64> {
        let mut m = nalgebra::Matrix6::zeros();
        m.fixed_view_mut::<3, 3>(0, 0).copy_from(&i.ang_ang);
        m.fixed_view_mut::<3, 3>(0, 3).copy_from(&i.ang_lin);
        m.fixed_view_mut::<3, 3>(3, 0)
            .copy_from(&i.ang_lin.transpose());
        m.fixed_view_mut::<3, 3>(3, 3).copy_from(&i.lin_lin);
        m
    }

    fn sample_transform() -> Transform {
        Transform::from_xyz_rpy([0.3, -0.2, 0.5], [0.4, -1.1, 2.0])
    }

    fn sample_inertia() -> RigidInertia {
        let ic = Matrix3::new(0.2, 0.01, -0.02, 0.01, 0.3, 0.03, -0.02, 0.03, 0.25);
        RigidInertia::from_mass_com_inertia(2.5, Vector3::new(0.1, -0.3, 0.2), ic)
    }

    #[test]
    fn transforms_match_dense_plucker_matrices() {
        let x = sample_transform();
        let xm = dense_motion_transform(&x);
        let m = Motion::new(Vector3::new(0.1, 0.2, -0.3), Vector3::new(1.0, -2.0, 0.5));
        let dense = xm * nalgebra::Vector6::new(0.1, 0.2, -0.3, 1.0, -2.0, 0.5);
        let fast = x.apply_motion(&m);
        for k in 0..3 {
            assert!((dense[k] - fast.angular[k]).abs() < 1e-14);
            assert!((dense[k + 3] - fast.linear[k]).abs() < 1e-14);
        }
        let back = x.inverse_apply_motion(&fast);
        assert!((back - m).angular.norm() + (back - m).linear.norm() < 1e-14);
        // Forces: ᵃX_b* = ᵃX_b⁻ᵀ, and power is invariant.
        let f = Force::new(Vector3::new(0.5, -0.1, 0.2), Vector3::new(3.0, 1.0, -1.0));
        let fa = x.apply_force(&f);
        assert!(
            (fa.angular.dot(&fast.angular) + fa.linear.dot(&fast.linear) - m.dot(&f)).abs() < 1e-13
        );
        let fb = x.inverse_apply_force(&fa);
        assert!((fb - f).angular.norm() + (fb - f).linear.norm() < 1e-14);
    }

    #[test]
    fn inertia_transforms_match_dense_congruence() {
        let x = sample_transform();
        let i = sample_inertia();
        let xinv = dense_motion_transform(&x.inverse());
        let expected = xinv.transpose() * dense_inertia(&ArticulatedInertia::from_rigid(&i)) * xinv;
        let rigid = dense_inertia(&ArticulatedInertia::from_rigid(&x.apply_rigid_inertia(&i)));
        let art = dense_inertia(&x.apply_articulated_inertia(&ArticulatedInertia::from_rigid(&i)));
        assert!((expected - rigid).norm() < 1e-13);
        assert!((expected - art).norm() < 1e-13);
    }

    #[test]
    fn rotations_agree_with_nalgebra() {
        let rpy = [0.4, -1.1, 2.0];
        let r = Rotation3::from_euler_angles(rpy[0], rpy[1], rpy[2]);
        assert!((rotation_from_rpy(rpy) - r.matrix()).norm() < 1e-15);
        let axis = Vector3::new(1.0, -2.0, 0.5).normalize();
        let r = Rotation3::from_axis_angle(&nalgebra::Unit::new_normalize(axis), 0.7);
        assert!((rotation_about_axis(&axis, 0.7) - r.matrix()).norm() < 1e-15);
    }

    #[test]
    fn params_round_trip_and_com() {
        let i = sample_inertia();
        let back = RigidInertia::from_params(&i.params());
        assert_eq!(back, i);
        let com = i.com().expect("positive mass");
        assert!((com - Vector3::new(0.1, -0.3, 0.2)).norm() < 1e-15);
        let ic = Matrix3::new(0.2, 0.01, -0.02, 0.01, 0.3, 0.03, -0.02, 0.03, 0.25);
        assert!((i.inertia_about_com() - ic).norm() < 1e-15);
    }
}
