//! The algorithms set against each other (pinocchio `unittest/crba.cpp`, `aba.cpp`,
//! `rnea.cpp`) on seeded random trees — branches, revolute, continuous, prismatic and fixed
//! joints, random origins, axes and inertials, links and joints shuffled in the file — and
//! on the fixture robots:
//! - columns of RNEA(q, 0, eᵢ) − RNEA(q, 0, 0) equal M from CRBA; M symmetric positive definite;
//! - ABA(q, v, RNEA(q, v, a)) = a;
//! - g = RNEA(q, 0, 0), nle = RNEA(q, v, 0);
//! - vᵀ Ṁ v = 2 vᵀ (nle − g) with Ṁ by central differences (Ṁ − 2C is skew);
//! - g(q) = ∂U/∂q with the potential energy U from forward kinematics, by central differences;
//! - Σ_k Y_k π_k = RNEA, and Y_k π_payload = RNEA(with payload) − RNEA;
//! - armature and payload variants consistent across RNEA, CRBA and ABA.

mod common;

use gpn_dynamics::{
    BodyRef, Data, Model, aba, crba, forward_kinematics, gravity, nonlinear_effects, regressor,
    rnea,
};
use nalgebra::{DMatrix, DVector, Matrix3, Rotation3, Vector3};
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/fixtures/dynamics"
);
const NODE_PANDA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../urdf/panda.urdf");
const N_RANDOM_ROBOTS: u64 = 60;

/// A random tree-shaped URDF: `n_links` links, each attached to a random earlier one.
fn random_urdf(seed: u64) -> String {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n_links: usize = rng.random_range(2..=10);
    let parents: Vec<usize> = (1..n_links).map(|i| rng.random_range(0..i)).collect();
    let mut has_child = vec![false; n_links];
    for &p in &parents {
        has_child[p] = true;
    }
    let mut types: Vec<&str> = (1..n_links)
        .map(|_| match rng.random_range(0..20) {
            0..7 => "revolute",
            7..10 => "continuous",
            10..15 => "prismatic",
            _ => "fixed",
        })
        .collect();
    if types.iter().all(|t| *t == "fixed") {
        types[0] = "revolute";
    }
    let mut r = |lo: f64, hi: f64| rng.random_range(lo..hi);
    let mut elements = Vec::new();
    for (k, &inner) in has_child.iter().enumerate() {
        // Leaves always carry mass, so every movable joint moves some; inner links may not.
        let massless = k == 0 && r(0.0, 1.0) < 0.5 || inner && r(0.0, 1.0) < 0.15;
        let inertial = if massless {
            String::new()
        } else {
            let mass = r(0.2, 3.0);
            let (x, y, z) = (r(0.05, 0.5), r(0.05, 0.5), r(0.05, 0.5));
            let principal = Matrix3::from_diagonal(&Vector3::new(
                mass / 12.0 * (y * y + z * z),
                mass / 12.0 * (x * x + z * z),
                mass / 12.0 * (x * x + y * y),
            ));
            let rot = Rotation3::from_euler_angles(r(-3.0, 3.0), r(-1.5, 1.5), r(-3.0, 3.0));
            let i = rot.matrix() * principal * rot.matrix().transpose();
            // Origin, then orientation: drawn in this order.
            let xyz = Vector3::new(r(-0.3, 0.3), r(-0.3, 0.3), r(-0.3, 0.3));
            let rpy = (r(-3.0, 3.0), r(-1.5, 1.5), r(-3.0, 3.0));
            common::inertial(mass, &xyz, rpy, &i)
        };
        elements.push(format!(r#"<link name="l{k}">{inertial}<visual><geometry><mesh filename="package://nowhere/l{k}.stl"/></geometry></visual></link>"#));
    }
    for k in 1..n_links {
        let kind = types[k - 1];
        let axis = Vector3::new(r(-1.0, 1.0), r(-1.0, 1.0), r(-1.0, 1.0)) * r(0.5, 2.0);
        let limit = match kind {
            "revolute" | "prismatic" => r#"<limit lower="-1" upper="1" effort="50" velocity="2"/>"#,
            _ => "",
        };
        elements.push(format!(
            r#"<joint name="j{k}" type="{kind}"><parent link="l{}"/><child link="l{k}"/>
               <origin xyz="{} {} {}" rpy="{} {} {}"/><axis xyz="{} {} {}"/>{limit}
               <dynamics damping="0.7" friction="0.1"/></joint>"#,
            parents[k - 1],
            r(-0.5, 0.5),
            r(-0.5, 0.5),
            r(-0.5, 0.5),
            r(-3.0, 3.0),
            r(-1.5, 1.5),
            r(-3.0, 3.0),
            axis.x,
            axis.y,
            axis.z
        ));
    }
    elements.shuffle(&mut rng);
    format!(
        "<?xml version=\"1.0\"?>\n<robot name=\"random{seed}\">\n{}\n</robot>\n",
        elements.join("\n")
    )
}

fn random_models() -> Vec<Model> {
    (0..N_RANDOM_ROBOTS)
        .map(|seed| {
            Model::from_urdf_str(&random_urdf(seed), &format!("random{seed}.urdf"))
                .unwrap_or_else(|e| panic!("random robot {seed} loads: {e}"))
        })
        .collect()
}

fn reference_models() -> Vec<Model> {
    let mut models: Vec<Model> = ["panda", "ur5", "double_pendulum"]
        .iter()
        .map(|r| Model::from_urdf_file(format!("{FIXTURES}/{r}.urdf")).expect("fixture URDF loads"))
        .collect();
    models.push(Model::from_urdf_file(NODE_PANDA).expect("node Panda loads"));
    models
}

fn all_models() -> Vec<Model> {
    let mut models = random_models();
    models.extend(reference_models());
    models
}

fn random_vec(rng: &mut ChaCha8Rng, n: usize, scale: f64) -> Vec<f64> {
    (0..n).map(|_| rng.random_range(-scale..scale)).collect()
}

/// Random (q, v, a) states for a model.
fn states(model: &Model, seed: u64) -> Vec<(Vec<f64>, Vec<f64>, Vec<f64>)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    let n = model.nv();
    (0..4)
        .map(|_| {
            (
                random_vec(&mut rng, n, 2.0),
                random_vec(&mut rng, n, 1.5),
                random_vec(&mut rng, n, 3.0),
            )
        })
        .collect()
}

fn max_abs(x: &[f64]) -> f64 {
    x.iter().fold(0.0, |m, v| m.max(v.abs()))
}

/// `|x − y|∞ ≤ rel · max(1, |y|∞)`.
fn assert_close(x: &[f64], y: &[f64], rel: f64, what: &str) {
    assert_eq!(x.len(), y.len(), "{what}: lengths");
    let tol = rel * max_abs(y).max(1.0);
    let err = x
        .iter()
        .zip(y)
        .fold(0.0, |m: f64, (a, b)| m.max((a - b).abs()));
    assert!(
        err <= tol,
        "{what}: |Δ| = {err:e} > {tol:e}\n  got {x:?}\n  exp {y:?}"
    );
}

fn tau(model: &Model, data: &mut Data, q: &[f64], v: &[f64], a: &[f64]) -> Vec<f64> {
    rnea(model, data, q, v, a).expect("rnea").to_vec()
}

fn mass_matrix(model: &Model, data: &mut Data, q: &[f64]) -> DMatrix<f64> {
    crba(model, data, q).expect("crba").clone()
}

/// CRBA against RNEA columns, and the two ways of computing M agree entry by entry.
fn check_crba_against_rnea(model: &Model, data: &mut Data, q: &[f64]) {
    let n = model.nv();
    let zeros = vec![0.0; n];
    let bias = tau(model, data, q, &zeros, &zeros);
    let m = mass_matrix(model, data, q);
    for i in 0..n {
        let mut e = zeros.clone();
        e[i] = 1.0;
        let column: Vec<f64> = tau(model, data, q, &zeros, &e)
            .iter()
            .zip(&bias)
            .map(|(t, b)| t - b)
            .collect();
        let from_crba: Vec<f64> = m.column(i).iter().copied().collect();
        assert_close(
            &from_crba,
            &column,
            1e-10,
            &format!("{}: M column {i}", model.name()),
        );
    }
    assert!(
        (&m - m.transpose()).amax() <= 1e-13 * m.amax().max(1.0),
        "{}: M not symmetric",
        model.name()
    );
    assert!(
        m.clone().cholesky().is_some(),
        "{}: M not positive definite",
        model.name()
    );
}

#[test]
fn crba_equals_rnea_columns() {
    for (k, model) in all_models().iter().enumerate() {
        let mut data = Data::new(model);
        for (q, _, _) in states(model, k as u64) {
            check_crba_against_rnea(model, &mut data, &q);
        }
    }
}

#[test]
fn aba_inverts_rnea() {
    for (k, model) in all_models().iter().enumerate() {
        let mut data = Data::new(model);
        for (q, v, a) in states(model, k as u64) {
            let t = tau(model, &mut data, &q, &v, &a);
            let ddq = aba(model, &mut data, &q, &v, &t).expect("aba").to_vec();
            assert_close(&ddq, &a, 1e-8, &format!("{}: ABA(RNEA(a))", model.name()));
            // And forward dynamics by M⁻¹(τ − nle).
            let nle = nonlinear_effects(model, &mut data, &q, &v)
                .expect("nle")
                .to_vec();
            let m = mass_matrix(model, &mut data, &q);
            let rhs = DVector::from_iterator(model.nv(), t.iter().zip(&nle).map(|(t, n)| t - n));
            let solved = m.cholesky().expect("M positive definite").solve(&rhs);
            assert_close(
                solved.as_slice(),
                &a,
                1e-8,
                &format!("{}: M⁻¹(τ − nle)", model.name()),
            );
        }
    }
}

#[test]
fn gravity_and_nonlinear_effects_are_rnea_special_cases() {
    for (k, model) in all_models().iter().enumerate() {
        let mut data = Data::new(model);
        let zeros = vec![0.0; model.nv()];
        for (q, v, _) in states(model, k as u64) {
            let g = gravity(model, &mut data, &q).expect("gravity").to_vec();
            assert_close(
                &g,
                &tau(model, &mut data, &q, &zeros, &zeros),
                1e-13,
                "g = RNEA(q,0,0)",
            );
            let nle = nonlinear_effects(model, &mut data, &q, &v)
                .expect("nle")
                .to_vec();
            assert_close(
                &nle,
                &tau(model, &mut data, &q, &v, &zeros),
                1e-13,
                "nle = RNEA(q,v,0)",
            );
            assert_eq!(data.g.as_slice(), g.as_slice());
        }
    }
}

#[test]
fn mass_matrix_derivative_matches_coriolis_power() {
    // vᵀ Ṁ v = 2 vᵀ C v because Ṁ − 2C is skew-symmetric; C v = nle − g.
    for (k, model) in all_models().iter().enumerate() {
        let mut data = Data::new(model);
        let n = model.nv();
        for (q, v, _) in states(model, k as u64) {
            let eps = 1e-6;
            let shifted =
                |s: f64| -> Vec<f64> { q.iter().zip(&v).map(|(q, v)| q + s * eps * v).collect() };
            let m_plus = mass_matrix(model, &mut data, &shifted(1.0));
            let m_minus = mass_matrix(model, &mut data, &shifted(-1.0));
            let m_dot = (m_plus - m_minus) / (2.0 * eps);
            let vv = DVector::from_column_slice(&v);
            let lhs = vv.dot(&(m_dot * &vv));
            let nle = nonlinear_effects(model, &mut data, &q, &v)
                .expect("nle")
                .to_vec();
            let g = gravity(model, &mut data, &q).expect("gravity").to_vec();
            let rhs: f64 = 2.0 * (0..n).map(|i| v[i] * (nle[i] - g[i])).sum::<f64>();
            assert!(
                (lhs - rhs).abs() <= 1e-6 * rhs.abs().max(1.0),
                "{}: vᵀṀv = {lhs} vs 2vᵀCv = {rhs}",
                model.name()
            );
        }
    }
}

/// Potential energy U(q) = −Σ m_i gᵀ c_i from forward kinematics.
fn potential_energy(model: &Model, data: &mut Data, q: &[f64]) -> f64 {
    let world_from_body = forward_kinematics(model, data, q).expect("fk").to_vec();
    (0..model.nv())
        .map(|i| {
            let inertia = model.body_inertia(i);
            match inertia.com() {
                Some(c) => {
                    -inertia.mass * model.gravity().dot(&world_from_body[i].transform_point(&c))
                }
                None => 0.0,
            }
        })
        .sum()
}

#[test]
fn gravity_is_the_gradient_of_potential_energy() {
    for (k, model) in all_models().iter().enumerate() {
        let mut data = Data::new(model);
        for (q, _, _) in states(model, k as u64) {
            let g = gravity(model, &mut data, &q).expect("gravity").to_vec();
            let eps = 1e-6;
            let numeric: Vec<f64> = (0..model.nv())
                .map(|i| {
                    let mut qp = q.clone();
                    let mut qm = q.clone();
                    qp[i] += eps;
                    qm[i] -= eps;
                    (potential_energy(model, &mut data, &qp)
                        - potential_energy(model, &mut data, &qm))
                        / (2.0 * eps)
                })
                .collect();
            assert_close(&g, &numeric, 1e-6, &format!("{}: g = ∂U/∂q", model.name()));
        }
    }
}

#[test]
fn regressors_times_parameters_sum_to_rnea() {
    for (k, model) in all_models().iter().enumerate() {
        let mut data = Data::new(model);
        for (q, v, a) in states(model, k as u64) {
            let t = tau(model, &mut data, &q, &v, &a);
            let mut sum = DVector::zeros(model.nv());
            for body in 0..model.nv() {
                let pi = DVector::from_row_slice(&model.body_inertia(body).params());
                let y = regressor(model, &mut data, body, &q, &v, &a).expect("regressor");
                sum += y * pi;
            }
            assert_close(
                sum.as_slice(),
                &t,
                1e-10,
                &format!("{}: Σ Y_k π_k", model.name()),
            );
        }
    }
}

/// For each link of a model: a payload there changes τ by exactly Y_body · π_payload, and the
/// payload model is self-consistent (CRBA vs RNEA, ABA vs RNEA).
#[test]
fn payload_contribution_equals_regressor_and_payload_models_are_consistent() {
    let mut rng = ChaCha8Rng::seed_from_u64(99);
    for (k, model) in all_models().iter().enumerate() {
        let mut data = Data::new(model);
        let links = model.link_names().to_vec();
        let link = &links[rng.random_range(0..links.len())];
        let mass = rng.random_range(0.1..2.0);
        let com = Vector3::new(
            rng.random_range(-0.2..0.2),
            rng.random_range(-0.2..0.2),
            rng.random_range(-0.2..0.2),
        );
        let rot = Rotation3::from_euler_angles(
            rng.random_range(-3.0..3.0),
            0.4,
            rng.random_range(-3.0..3.0),
        );
        let inertia = rot.matrix()
            * Matrix3::from_diagonal(&Vector3::new(0.01, 0.02, 0.025))
            * rot.matrix().transpose();
        let loaded = model
            .with_added_inertia(link, mass, com, inertia)
            .expect("payload");
        let mut loaded_data = Data::new(&loaded);
        let (body, body_from_link) = model.body_of_link_transform(link).expect("link exists");
        for (q, v, a) in states(model, k as u64) {
            let difference: Vec<f64> = tau(&loaded, &mut loaded_data, &q, &v, &a)
                .iter()
                .zip(tau(model, &mut data, &q, &v, &a))
                .map(|(l, t)| l - t)
                .collect();
            match body {
                BodyRef::World => assert!(
                    max_abs(&difference) == 0.0,
                    "mass on the world changes nothing"
                ),
                BodyRef::Body(b) => {
                    let in_link =
                        gpn_dynamics::RigidInertia::from_mass_com_inertia(mass, com, inertia);
                    let pi = DVector::from_row_slice(
                        &body_from_link.apply_rigid_inertia(&in_link).params(),
                    );
                    let y = regressor(model, &mut data, b, &q, &v, &a)
                        .expect("regressor")
                        .clone();
                    assert_close(
                        (y * pi).as_slice(),
                        &difference,
                        1e-10,
                        &format!("{}: payload on {link}", model.name()),
                    );
                }
            }
            check_crba_against_rnea(&loaded, &mut loaded_data, &q);
            let t = tau(&loaded, &mut loaded_data, &q, &v, &a);
            let ddq = aba(&loaded, &mut loaded_data, &q, &v, &t)
                .expect("aba")
                .to_vec();
            assert_close(&ddq, &a, 1e-8, &format!("{}: payload ABA", model.name()));
        }
    }
}

#[test]
fn armature_is_consistent_across_rnea_crba_and_aba() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for (k, model) in all_models().iter().enumerate() {
        let n = model.nv();
        let armature: Vec<f64> = (0..n).map(|_| rng.random_range(0.0..0.5)).collect();
        let geared = model.with_armature(&armature).expect("armature");
        assert_eq!(geared.armature(), armature.as_slice());
        assert!(
            model.armature().iter().all(|&a| a == 0.0),
            "the original is untouched"
        );
        let mut data = Data::new(model);
        let mut geared_data = Data::new(&geared);
        for (q, v, a) in states(model, k as u64) {
            let plain = tau(model, &mut data, &q, &v, &a);
            let with = tau(&geared, &mut geared_data, &q, &v, &a);
            let expected: Vec<f64> = (0..n).map(|i| plain[i] + armature[i] * a[i]).collect();
            assert_close(&with, &expected, 1e-13, "RNEA + armature·a");
            let m = mass_matrix(model, &mut data, &q)
                + DMatrix::from_diagonal(&DVector::from_column_slice(&armature));
            let m_geared = mass_matrix(&geared, &mut geared_data, &q);
            assert!(
                (m - &m_geared).amax() <= 1e-13 * m_geared.amax().max(1.0),
                "CRBA + diag(armature)"
            );
            check_crba_against_rnea(&geared, &mut geared_data, &q);
            let ddq = aba(&geared, &mut geared_data, &q, &v, &with)
                .expect("aba")
                .to_vec();
            assert_close(
                &ddq,
                &a,
                1e-8,
                &format!("{}: ABA with armature", model.name()),
            );
            // Gravity and nonlinear effects do not see the armature.
            let g = gravity(&geared, &mut geared_data, &q)
                .expect("gravity")
                .to_vec();
            assert_close(
                &g,
                gravity(model, &mut data, &q).expect("gravity"),
                1e-14,
                "g unchanged",
            );
        }
    }
}

#[test]
fn random_trees_are_topologically_ordered_trees() {
    for (seed, model) in random_models().iter().enumerate() {
        let urdf = random_urdf(seed as u64);
        let movable = urdf.matches("type=\"revolute\"").count()
            + urdf.matches("type=\"continuous\"").count()
            + urdf.matches("type=\"prismatic\"").count();
        assert_eq!(model.nv(), movable);
        for i in 0..model.nv() {
            if let Some(p) = model.parent(i) {
                assert!(p < i);
            }
            assert!(
                (model.joint_axis(i).norm() - 1.0).abs() < 1e-15,
                "axes are normalised"
            );
            assert_eq!(model.joint_index(&model.joint_names()[i]), Some(i));
        }
        assert_eq!(model.link_names().len(), urdf.matches("<link ").count());
    }
}
