//! Shared by the dynamics tests: URDF fragments.

use nalgebra::{Matrix3, Vector3};

/// A URDF `<inertial>`: `mass` with its centre of mass at `xyz` and principal axes turned by
/// `rpy`, inertia `i` about the centre of mass (its upper triangle is written).
pub fn inertial(mass: f64, xyz: &Vector3<f64>, rpy: (f64, f64, f64), i: &Matrix3<f64>) -> String {
    format!(
        r#"<inertial><origin xyz="{} {} {}" rpy="{} {} {}"/><mass value="{mass}"/><inertia ixx="{}" ixy="{}" ixz="{}" iyy="{}" iyz="{}" izz="{}"/></inertial>"#,
        xyz.x,
        xyz.y,
        xyz.z,
        rpy.0,
        rpy.1,
        rpy.2,
        i[(0, 0)],
        i[(0, 1)],
        i[(0, 2)],
        i[(1, 1)],
        i[(1, 2)],
        i[(2, 2)]
    )
}
