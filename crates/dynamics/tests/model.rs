//! The model built from URDF: limits, joint order, link frames (including links merged by
//! fixed joints), fixed-joint merging against a model merged by hand, forward kinematics,
//! gravity, and the payload and armature variants.

mod common;

use std::f64::consts::FRAC_PI_4;

use common::inertial;
use gpn_dynamics::{
    BodyRef, DEFAULT_GRAVITY_MPS2, Data, JointType, Model, RigidInertia, aba, crba,
    forward_kinematics, gravity, nonlinear_effects, regressor, rnea, world_from_link,
};
use nalgebra::{Matrix3, Rotation3, Vector3};

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/fixtures/dynamics"
);

fn fixture_model(robot: &str) -> Model {
    Model::from_urdf_file(format!("{FIXTURES}/{robot}.urdf")).expect("fixture URDF loads")
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn limits_are_stored_as_read() {
    let panda = fixture_model("panda");
    let j4 = panda.limits()[panda.joint_index("panda_joint4").expect("joint4")];
    assert_eq!(
        (j4.position_lower, j4.position_upper, j4.velocity, j4.effort),
        (-3.0718, -0.0698, 2.175, 87.0)
    );
    let finger = panda.limits()[panda.joint_index("panda_finger_joint2").expect("finger")];
    assert_eq!(
        (
            finger.position_lower,
            finger.position_upper,
            finger.velocity,
            finger.effort
        ),
        (0.0, 0.04, 0.2, 100.0)
    );
    assert_eq!(
        panda.joint_type(panda.joint_index("panda_finger_joint1").expect("finger")),
        JointType::Prismatic
    );

    // The double pendulum's exporter wrote zeros: no velocity or effort limit.
    let pendulum = fixture_model("double_pendulum");
    for l in pendulum.limits() {
        assert_eq!((l.position_lower, l.position_upper), (0.0, 0.0));
        assert_eq!((l.velocity, l.effort), (f64::INFINITY, f64::INFINITY));
    }

    // Continuous joints have no position limits; URDF 1.2 omitted limits are infinite.
    let xml = r#"<robot name="wheel" version="1.2">
        <link name="base"/>
        <link name="wheel"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
        <link name="slider"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
        <joint name="spin" type="continuous"><parent link="base"/><child link="wheel"/><limit effort="5" velocity="3"/></joint>
        <joint name="slide" type="prismatic"><parent link="wheel"/><child link="slider"/><limit upper="0.5"/></joint>
    </robot>"#;
    let model = Model::from_urdf_str(xml, "wheel.urdf").expect("valid");
    let spin = model.limits()[model.joint_index("spin").expect("spin")];
    assert_eq!(
        (
            spin.position_lower,
            spin.position_upper,
            spin.velocity,
            spin.effort
        ),
        (f64::NEG_INFINITY, f64::INFINITY, 3.0, 5.0)
    );
    let slide = model.limits()[model.joint_index("slide").expect("slide")];
    assert_eq!(
        (slide.position_lower, slide.position_upper),
        (f64::NEG_INFINITY, 0.5)
    );
    assert_eq!(
        (slide.velocity, slide.effort),
        (f64::INFINITY, f64::INFINITY)
    );
    assert_eq!(model.joint_type(0), JointType::Continuous);
}

#[test]
fn joints_are_in_topological_order_and_indexed_by_name() {
    for robot in ["panda", "ur5", "double_pendulum"] {
        let model = fixture_model(robot);
        assert_eq!(model.joint_names().len(), model.nv());
        assert_eq!(model.limits().len(), model.nv());
        for (i, name) in model.joint_names().iter().enumerate() {
            assert_eq!(model.joint_index(name), Some(i));
            assert!(model.parent(i).is_none_or(|p| p < i));
        }
    }
    let ur5 = fixture_model("ur5");
    assert_eq!(ur5.nv(), 6);
    assert_eq!(
        ur5.joint_index("ee_fixed_joint"),
        None,
        "fixed joints are not degrees of freedom"
    );
    let panda = fixture_model("panda");
    let f1 = panda.joint_index("panda_finger_joint1").expect("finger");
    let f2 = panda.joint_index("panda_finger_joint2").expect("finger");
    let j7 = panda.joint_index("panda_joint7").expect("joint7");
    assert_eq!(
        (panda.parent(f1), panda.parent(f2)),
        (Some(j7), Some(j7)),
        "both fingers hang on the hand (a branch)"
    );
    assert_eq!(panda.body_link_name(f1), "panda_leftfinger");
}

#[test]
fn every_urdf_link_has_a_frame() {
    let panda = fixture_model("panda");
    assert_eq!(panda.link_names().len(), 13);
    let j7 = panda.joint_index("panda_joint7").expect("joint7");
    // Links welded to the root belong to the world.
    let (body, x) = panda.body_of_link("panda_link0").expect("root");
    assert_eq!(body, BodyRef::World);
    assert!(x.translation.vector.norm() == 0.0 && x.rotation.angle() == 0.0);
    // panda_link8 and panda_hand are merged into link 7's body.
    let (body, x) = panda.body_of_link_transform("panda_hand").expect("hand");
    assert_eq!(body, BodyRef::Body(j7));
    assert!((x.translation - Vector3::new(0.0, 0.0, 0.107)).norm() < 1e-15);
    let expected = Rotation3::from_axis_angle(&Vector3::z_axis(), -FRAC_PI_4);
    assert!((x.rotation - expected.matrix()).norm() < 1e-15);
    let (body, x) = panda.body_of_link("panda_hand_tcp").expect("tcp");
    assert_eq!(body, BodyRef::Body(j7));
    assert!((x.translation.vector - Vector3::new(0.0, 0.0, 0.2104)).norm() < 1e-15);
    let (body, x) = panda.body_of_link("panda_leftfinger").expect("finger");
    assert_eq!(
        body,
        BodyRef::Body(panda.joint_index("panda_finger_joint1").expect("finger"))
    );
    assert!(x.translation.vector.norm() == 0.0);
    assert!(panda.body_of_link("panda_foot").is_none());
    // UR5: world, base and base_link are welded to the world.
    let ur5 = fixture_model("ur5");
    for link in ["world", "base_link", "base"] {
        assert_eq!(ur5.body_of_link(link).expect("link").0, BodyRef::World);
    }
}

#[test]
fn forward_kinematics_matches_hand_computation() {
    // Planar two-link arm about y (the node's own `urdf/two_link_arm.urdf` geometry).
    let xml = r#"<robot name="arm">
      <link name="base"/>
      <link name="upper"><inertial><origin xyz="0 0 0.25"/><mass value="2"/><inertia ixx="0.04" ixy="0" ixz="0" iyy="0.04" iyz="0" izz="0.001"/></inertial></link>
      <link name="fore"><inertial><origin xyz="0 0 0.2"/><mass value="1.5"/><inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.0005"/></inertial></link>
      <link name="tool"/>
      <joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/><origin xyz="0 0 0.05"/><axis xyz="0 2 0"/><limit effort="60" lower="-3" upper="3" velocity="3"/></joint>
      <joint name="elbow" type="revolute"><parent link="upper"/><child link="fore"/><origin xyz="0 0 0.5"/><axis xyz="0 1 0"/><limit effort="30" lower="-3" upper="3" velocity="3"/></joint>
      <joint name="tool_joint" type="fixed"><parent link="fore"/><child link="tool"/><origin xyz="0 0 0.4"/></joint>
    </robot>"#;
    let model = Model::from_urdf_str(xml, "arm.urdf").expect("valid");
    let mut data = Data::new(&model);
    let (q1, q2) = (0.7_f64, -0.4_f64);
    forward_kinematics(&model, &mut data, &[q1, q2]).expect("fk");
    let tool = world_from_link(&model, &data, "tool").expect("tool");
    // Rotation about +y by θ maps z to (sin θ, 0, cos θ).
    let expected = Vector3::new(
        0.5 * q1.sin() + 0.4 * (q1 + q2).sin(),
        0.0,
        0.05 + 0.5 * q1.cos() + 0.4 * (q1 + q2).cos(),
    );
    assert!(
        (tool.translation - expected).norm() < 1e-15,
        "{:?}",
        tool.translation
    );
    assert!(
        (tool.rotation - Rotation3::from_axis_angle(&Vector3::y_axis(), q1 + q2).matrix()).norm()
            < 1e-15
    );
    let base = world_from_link(&model, &data, "base").expect("base");
    assert_eq!(base.translation, Vector3::zeros());

    // Gravity torque by hand: g(q) = ∂U/∂q with U = Σ m·9.81·z_com.
    let g = gravity(&model, &mut data, &[q1, q2])
        .expect("gravity")
        .to_vec();
    let g0 = 9.81;
    let shoulder = g0 * (2.0 * 0.25 * q1.sin() + 1.5 * (0.5 * q1.sin() + 0.2 * (q1 + q2).sin()));
    let elbow = g0 * 1.5 * 0.2 * (q1 + q2).sin();
    assert!(
        close(g[0], -shoulder, 1e-12) && close(g[1], -elbow, 1e-12),
        "{g:?} vs {shoulder} {elbow}"
    );
}

#[test]
fn prismatic_joints_translate_along_their_axis() {
    let panda = fixture_model("panda");
    let mut data = Data::new(&panda);
    let mut q = vec![0.3, -0.5, 0.2, -1.8, 0.4, 1.2, -0.6, 0.0, 0.0];
    forward_kinematics(&panda, &mut data, &q).expect("fk");
    let hand = world_from_link(&panda, &data, "panda_hand").expect("hand");
    let left0 = world_from_link(&panda, &data, "panda_leftfinger").expect("left");
    let right0 = world_from_link(&panda, &data, "panda_rightfinger").expect("right");
    q[7] = 0.03;
    q[8] = 0.01;
    forward_kinematics(&panda, &mut data, &q).expect("fk");
    let left = world_from_link(&panda, &data, "panda_leftfinger").expect("left");
    let right = world_from_link(&panda, &data, "panda_rightfinger").expect("right");
    let y = hand.rotation.column(1).into_owned();
    assert!((left.translation - left0.translation - y * 0.03).norm() < 1e-15);
    assert!(
        (right.translation - right0.translation + y * 0.01).norm() < 1e-15,
        "axis 0 -1 0"
    );
    assert!((left.rotation - hand.rotation).norm() < 1e-15);
}

/// `rpy` of a rotation matrix, for writing composed origins back into URDF text.
fn rpy(r: &Rotation3<f64>) -> (f64, f64, f64) {
    r.euler_angles()
}

#[test]
fn fixed_joint_merge_equals_a_model_merged_by_hand() {
    // base -(revolute j1)- a -(fixed, rotated and offset)- b -(revolute j2)- c,
    // and b carries an inertial with its own rotated frame.
    let (m_a, c_a, rpy_a, i_a) = (
        1.3,
        Vector3::new(0.05, -0.02, 0.1),
        (0.3, -0.2, 0.5),
        Matrix3::new(
            0.03, 0.001, -0.002, 0.001, 0.025, 0.0015, -0.002, 0.0015, 0.02,
        ),
    );
    let (m_b, c_b, rpy_b, i_b) = (
        0.7,
        Vector3::new(-0.03, 0.04, 0.06),
        (-0.4, 0.6, 1.1),
        Matrix3::new(0.004, 0.0, 0.0005, 0.0, 0.006, 0.0, 0.0005, 0.0, 0.005),
    );
    let (xyz_f, rpy_f) = (Vector3::new(0.1, 0.2, 0.3), (0.9, -0.3, 2.2));
    let (xyz_2, rpy_2) = (Vector3::new(0.0, -0.1, 0.25), (-1.0, 0.2, 0.4));
    let c_link = r#"<link name="c"><inertial><origin xyz="0 0 0.1"/><mass value="0.9"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.012" iyz="0" izz="0.008"/></inertial></link>"#;
    let j1 = r#"<joint name="j1" type="revolute"><parent link="base"/><child link="a"/><origin xyz="0 0 0.1" rpy="0.1 0 0"/><axis xyz="0 1 0"/><limit effort="1" velocity="1"/></joint>"#;
    let j2 = |parent: &str, xyz: Vector3<f64>, r: (f64, f64, f64)| {
        format!(
            r#"<joint name="j2" type="revolute"><parent link="{parent}"/><child link="c"/><origin xyz="{} {} {}" rpy="{} {} {}"/><axis xyz="1 0 0"/><limit effort="1" velocity="1"/></joint>"#,
            xyz.x, xyz.y, xyz.z, r.0, r.1, r.2
        )
    };
    let with_fixed = format!(
        r#"<robot name="merged_by_engine"><link name="base"/><link name="a">{}</link><link name="b">{}</link>{c_link}{j1}
           <joint name="weld" type="fixed"><parent link="a"/><child link="b"/><origin xyz="{} {} {}" rpy="{} {} {}"/></joint>{}</robot>"#,
        inertial(m_a, &c_a, rpy_a, &i_a),
        inertial(m_b, &c_b, rpy_b, &i_b),
        xyz_f.x,
        xyz_f.y,
        xyz_f.z,
        rpy_f.0,
        rpy_f.1,
        rpy_f.2,
        j2("b", xyz_2, rpy_2)
    );

    // By hand, in a's frame: b's centre of mass and inertia axes, the combined centre of mass,
    // and the parallel-axis theorem about it.
    let rot = |r: (f64, f64, f64)| Rotation3::from_euler_angles(r.0, r.1, r.2);
    let a_from_b = rot(rpy_f);
    let c_b_in_a = a_from_b * c_b + xyz_f;
    let i_a_in_a = rot(rpy_a).matrix() * i_a * rot(rpy_a).matrix().transpose();
    let r_b_in_a = (a_from_b * rot(rpy_b)).into_inner();
    let i_b_in_a = r_b_in_a * i_b * r_b_in_a.transpose();
    let m = m_a + m_b;
    let com = (c_a * m_a + c_b_in_a * m_b) / m;
    let shift = |d: Vector3<f64>, mass: f64| {
        (Matrix3::identity() * d.norm_squared() - d * d.transpose()) * mass
    };
    let i_total = i_a_in_a + shift(c_a - com, m_a) + i_b_in_a + shift(c_b_in_a - com, m_b);
    let j2_rot = a_from_b * rot(rpy_2);
    let j2_xyz = a_from_b * xyz_2 + xyz_f;
    let by_hand = format!(
        r#"<robot name="merged_by_hand"><link name="base"/><link name="a">{}</link>{c_link}{j1}{}</robot>"#,
        inertial(m, &com, (0.0, 0.0, 0.0), &i_total),
        j2("a", j2_xyz, rpy(&j2_rot))
    );

    let engine = Model::from_urdf_str(&with_fixed, "with_fixed.urdf").expect("valid");
    let hand = Model::from_urdf_str(&by_hand, "by_hand.urdf").expect("valid");
    assert_eq!(engine.nv(), 2);
    let (body, b_frame) = engine.body_of_link_transform("b").expect("b");
    assert_eq!(body, BodyRef::Body(0));
    assert!(
        (b_frame.rotation - a_from_b.matrix()).norm() < 1e-15
            && (b_frame.translation - xyz_f).norm() < 1e-15
    );
    let p_engine = engine.body_inertia(0).params();
    let p_hand = hand.body_inertia(0).params();
    for k in 0..10 {
        assert!(
            close(p_engine[k], p_hand[k], 1e-14),
            "parameter {k}: {p_engine:?} vs {p_hand:?}"
        );
    }

    let mut d_engine = Data::new(&engine);
    let mut d_hand = Data::new(&hand);
    for (q, v, a) in [
        ([0.0, 0.0], [0.0, 0.0], [0.0, 0.0]),
        ([0.4, -1.2], [0.7, 1.5], [-2.0, 0.3]),
        ([2.5, 0.9], [-1.0, 0.2], [1.0, 1.0]),
    ] {
        let t1 = rnea(&engine, &mut d_engine, &q, &v, &a)
            .expect("rnea")
            .to_vec();
        let t2 = rnea(&hand, &mut d_hand, &q, &v, &a).expect("rnea").to_vec();
        let m1 = crba(&engine, &mut d_engine, &q).expect("crba").clone();
        let m2 = crba(&hand, &mut d_hand, &q).expect("crba").clone();
        let a1 = aba(&engine, &mut d_engine, &q, &v, &t1)
            .expect("aba")
            .to_vec();
        let a2 = aba(&hand, &mut d_hand, &q, &v, &t1).expect("aba").to_vec();
        for k in 0..2 {
            assert!(close(t1[k], t2[k], 1e-12), "τ: {t1:?} vs {t2:?}");
            assert!(close(a1[k], a2[k], 1e-10), "q̈: {a1:?} vs {a2:?}");
        }
        assert!((m1 - m2).amax() < 1e-13);
    }
}

#[test]
fn the_node_panda_is_the_fixture_panda_with_fingers_welded() {
    // urdf/panda.urdf fixes the fingers; at finger position 0 its dynamics must equal the
    // first seven joints of the 9-dof fixture Panda with zero finger motion.
    let node = Model::from_urdf_file(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../urdf/panda.urdf"
    ))
    .expect("node Panda");
    let full = fixture_model("panda");
    assert_eq!(node.nv(), 7);
    assert_eq!(node.joint_names(), &full.joint_names()[..7]);
    let mut dn = Data::new(&node);
    let mut df = Data::new(&full);
    let q = [0.3, -0.5, 0.2, -1.8, 0.4, 1.2, -0.6];
    let v = [0.5, 0.1, -0.4, 0.3, 0.9, -0.2, 0.6];
    let a = [1.0, -0.5, 0.2, 0.8, -1.1, 0.4, 0.3];
    let pad = |x: &[f64]| [x, &[0.0, 0.0]].concat();
    let tn = rnea(&node, &mut dn, &q, &v, &a).expect("rnea").to_vec();
    let tf = rnea(&full, &mut df, &pad(&q), &pad(&v), &pad(&a))
        .expect("rnea")
        .to_vec();
    let mn = crba(&node, &mut dn, &q).expect("crba").clone();
    let mf = crba(&full, &mut df, &pad(&q)).expect("crba").clone();
    for i in 0..7 {
        assert!(close(tn[i], tf[i], 1e-10), "τ[{i}]: {} vs {}", tn[i], tf[i]);
        for j in 0..7 {
            assert!(close(mn[(i, j)], mf[(i, j)], 1e-12), "M[{i},{j}]");
        }
    }
}

#[test]
fn gravity_is_settable() {
    let mut model = fixture_model("ur5");
    assert_eq!(model.gravity(), DEFAULT_GRAVITY_MPS2);
    let mut data = Data::new(&model);
    let q = [0.1, -0.9, 1.2, 0.3, -0.4, 0.5];
    let v = [0.3, 0.2, -0.1, 0.4, 0.0, 0.2];
    let g_default = gravity(&model, &mut data, &q).expect("gravity").to_vec();
    model
        .set_gravity(Vector3::new(0.0, 0.0, 9.81))
        .expect("finite");
    let g_flipped = gravity(&model, &mut data, &q).expect("gravity").to_vec();
    for (a, b) in g_default.iter().zip(&g_flipped) {
        assert!(close(*a, -*b, 1e-12));
    }
    model.set_gravity(Vector3::zeros()).expect("finite");
    assert!(
        gravity(&model, &mut data, &q)
            .expect("gravity")
            .iter()
            .all(|g| g.abs() < 1e-15)
    );
    // Without gravity, the nonlinear effects are the Coriolis/centrifugal terms alone:
    // quadratic in v.
    let nle1 = nonlinear_effects(&model, &mut data, &q, &v)
        .expect("nle")
        .to_vec();
    let v2: Vec<f64> = v.iter().map(|x| 2.0 * x).collect();
    let nle2 = nonlinear_effects(&model, &mut data, &q, &v2)
        .expect("nle")
        .to_vec();
    for (a, b) in nle1.iter().zip(&nle2) {
        assert!(close(4.0 * a, *b, 1e-12));
    }
}

#[test]
fn payload_on_a_frame_equals_payload_on_its_parent_link_with_shifted_com() {
    let panda = fixture_model("panda");
    let i = Matrix3::new(2e-3, 1e-4, 0.0, 1e-4, 3e-3, 0.0, 0.0, 0.0, 2.5e-3);
    let on_tcp = panda
        .with_added_inertia("panda_hand_tcp", 1.2, Vector3::new(0.01, 0.0, 0.02), i)
        .expect("payload");
    let on_hand = panda
        .with_added_inertia("panda_hand", 1.2, Vector3::new(0.01, 0.0, 0.1234), i)
        .expect("payload");
    let body = panda.joint_index("panda_joint7").expect("joint7");
    let (a, b) = (
        on_tcp.body_inertia(body).params(),
        on_hand.body_inertia(body).params(),
    );
    for k in 0..10 {
        assert!(close(a[k], b[k], 1e-14), "{a:?} vs {b:?}");
    }
    assert!(close(
        on_tcp.moving_mass_kg() - panda.moving_mass_kg(),
        1.2,
        1e-12
    ));
    // A point mass is a valid payload; mass on a world-welded link changes nothing.
    let point = panda
        .with_added_inertia("panda_hand_tcp", 0.5, Vector3::zeros(), Matrix3::zeros())
        .expect("point mass");
    assert!(point.moving_mass_kg() > panda.moving_mass_kg());
    let on_world = panda
        .with_added_inertia("panda_link0", 5.0, Vector3::zeros(), i)
        .expect("world");
    assert_eq!(on_world.moving_mass_kg(), panda.moving_mass_kg());
}

#[test]
fn inertial_parameters_follow_the_documented_order() {
    // π = [m, m·cx, m·cy, m·cz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz], inertia about the frame origin.
    let (m, c) = (2.0, Vector3::new(0.1, 0.2, 0.3));
    let ic = Matrix3::new(1.0, 0.1, 0.2, 0.1, 2.0, 0.3, 0.2, 0.3, 3.0);
    let p = RigidInertia::from_mass_com_inertia(m, c, ic).params();
    let expected = [
        m,
        m * c.x,
        m * c.y,
        m * c.z,
        1.0 + m * (c.y * c.y + c.z * c.z),
        0.1 - m * c.x * c.y,
        2.0 + m * (c.x * c.x + c.z * c.z),
        0.2 - m * c.x * c.z,
        0.3 - m * c.y * c.z,
        3.0 + m * (c.x * c.x + c.y * c.y),
    ];
    for k in 0..10 {
        assert!(
            close(p[k], expected[k], 1e-15),
            "parameter {k}: {p:?} vs {expected:?}"
        );
    }

    // The regressor's columns follow the same order: a vertical slider feels only its mass,
    // τ = m (q̈ + 9.81); a vertical spinner only Izz, τ = Izz q̈.
    let xml = r#"<robot name="lift">
      <link name="base"/>
      <link name="carriage"><inertial><origin xyz="0.1 0.2 0.3"/><mass value="2"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>
      <link name="spinner"><inertial><origin xyz="0.05 0 0"/><mass value="1"/><inertia ixx="0.1" ixy="0.01" ixz="0.02" iyy="0.1" iyz="0.03" izz="0.1"/></inertial></link>
      <joint name="lift" type="prismatic"><parent link="base"/><child link="carriage"/><axis xyz="0 0 1"/><limit effort="100" lower="0" upper="1" velocity="1"/></joint>
      <joint name="spin" type="continuous"><parent link="carriage"/><child link="spinner"/><axis xyz="0 0 1"/></joint>
    </robot>"#;
    let model = Model::from_urdf_str(xml, "lift.urdf").expect("valid");
    let mut data = Data::new(&model);
    let (q, v, a) = ([0.3, 0.8], [0.4, -1.3], [0.7, 2.5]);
    let y = regressor(&model, &mut data, 0, &q, &v, &a)
        .expect("regressor")
        .clone();
    assert!(close(y[(0, 0)], 0.7 + 9.81, 1e-14), "{y}");
    assert!(
        (0..10).all(|k| k == 0 || y[(0, k)] == 0.0) && y.row(1).iter().all(|&x| x == 0.0),
        "{y}"
    );
    let y = regressor(&model, &mut data, 1, &q, &v, &a)
        .expect("regressor")
        .clone();
    assert!(close(y[(1, 9)], 2.5, 1e-14), "{y}");
    assert!((0..9).all(|k| y[(1, k)].abs() < 1e-14), "{y}");
    assert!(
        close(y[(0, 0)], 0.7 + 9.81, 1e-14),
        "the slider carries the spinner's mass: {y}"
    );
}
