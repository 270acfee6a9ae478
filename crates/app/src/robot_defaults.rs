//! Defaults derived from the robot model, for every robot-specific key the parameters leave
//! empty: the home pose and the reference around it, the gains, and the simulated true
//! robot's unmodelled effects. Nothing here knows a robot by name; every number comes from
//! the URDF's limits and the model's dynamics, by the rules below (README, "Any robot").
//!
//! Empty means derived: `run.reference.center_rad`, `amplitude_rad` and `frequencies_hz`
//! `[]`; `control.kp_per_s2` and `kd_per_s` `[]`; `sim.friction.viscous_nms_per_rad` and
//! `coulomb_nm` `[]`; `sim.armature_kgm2` `[]`; `sim.payload.link` and
//! `learn.change.payload_link` `""`; `sim.payload.mass_kg` negative. A value given is used
//! as given (and checked against the robot as before).
//!
//! The rules, per joint i (range r_i = upper − lower; unlimited joints have no range terms):
//! - **Home pose**: mid-range (0 for unlimited joints). It must be feasible: the true
//!   robot's gravity torque there (payload included) within [`GRAVITY_MARGIN`] of every
//!   effort limit. If mid-range is not, a Levenberg–Marquardt descent on Σ (g_i/effort_i)²
//!   within the middle half of each range moves it until it is; if none is found, an error
//!   names the joint.
//! - **Reference**: q_d,i = home_i + a_i sin(2π f_i t + i φ). Amplitude a_i =
//!   min([`AMPLITUDE_MAX_RAD`] (revolute) or [`AMPLITUDE_MAX_M`] (prismatic),
//!   [`AMPLITUDE_RANGE_FRACTION`]·r_i, the room left to the nearer limit less 5 % of r_i),
//!   so q_d stays inside the limits. Frequencies
//!   f_i = [`FREQUENCY_LOW_HZ`] + [`FREQUENCY_SPAN_HZ`]·frac((i+1)·(√5−1)/2) (no two joints
//!   share a period: the golden-ratio sequence never repeats), scaled down (each by the same
//!   factor, so they stay distinct) where the highest one would take the peak velocity
//!   a_i·2πf past [`VELOCITY_FRACTION`] of the velocity limit or the peak acceleration past
//!   half the reference acceleration limit.
//! - **Gains**: the law is computed torque with gains in acceleration units, so joint i's
//!   stiffness is M_ii(home)·K_p,i. It must hold the expected unmodelled torque
//!   τ_u,i = [`UNMODELLED_EFFORT_FRACTION`]·effort_i within the tolerated error
//!   e_i = [`TOLERATED_ERROR_FRACTION`]·a_i: K_p,i = τ_u,i / (M_ii e_i), at least
//!   [`KP_MIN_PER_S2`], at most (rate/[`TICKS_PER_RADIAN_OF_BANDWIDTH`])² (the closed loop's
//!   natural frequency stays ≤ a tenth of a radian per tick). K_d,i = 2ζ√K_p,i with
//!   ζ = [`DAMPING_RATIO`].
//! - **True robot** (`gp-node sim`): a payload of [`PAYLOAD_MASS_FRACTION`] of the moving
//!   mass on the tool link ([`Model::tool_body`]: the end of the longest chain of rotary
//!   joints), moved up the chain while the nominal law cannot hold it within half the
//!   amplitude (a gripper jaw cannot) and lightened until every joint holds it within the
//!   tolerated error, its centre [`PAYLOAD_OFFSET_M`] along the axis of
//!   the joint moving that link (a load held on the flange axis; the link frame's z is that
//!   axis on some descriptions only); Coulomb and viscous friction
//!   [`FRICTION_FRACTION`] of τ_u,i (N·m, N·m·s/rad); armature [`ARMATURE_PER_NM`]·τ_u,i,
//!   at most M_ii(home) (a rotor adds at most the link's own inertia); torque-sensor noise
//!   [`TORQUE_NOISE_FRACTION`]·τ_u,i; friction's damping
//!   rate (b + c/v_s)/(M_ii + armature) at most [`FRICTION_STIFFNESS_STEP_FRACTION`] per
//!   integration step (each term alone), so the integrator resolves it. Where the gains were
//!   capped by the tick rate, τ_u,i is first lowered to what the capped stiffness holds
//!   within e_i: a description's effort limit can be a placeholder far above what its joint
//!   can use (a hand's 15 N·m fingers), and the simulated robot should be one this
//!   controller can run.

use gpn_dynamics::{BodyRef, Data, JointType, JointValues, Model, crba, gravity};
use nalgebra::{DMatrix, DVector};

use super::params::NodeParams;

/// Home pose: the gravity torque within this fraction of every effort limit.
pub const GRAVITY_MARGIN: f64 = 0.5;
/// Largest reference amplitude of a revolute joint, rad.
pub const AMPLITUDE_MAX_RAD: f64 = 0.3;
/// Largest reference amplitude of a prismatic joint, m.
pub const AMPLITUDE_MAX_M: f64 = 0.05;
/// Largest reference amplitude as a fraction of the joint's range.
pub const AMPLITUDE_RANGE_FRACTION: f64 = 0.2;
/// Lowest reference frequency, Hz.
pub const FREQUENCY_LOW_HZ: f64 = 0.2;
/// Spread of the reference frequencies, Hz.
pub const FREQUENCY_SPAN_HZ: f64 = 0.5;
/// Peak reference velocity as a fraction of the velocity limit.
pub const VELOCITY_FRACTION: f64 = 0.5;
/// Expected unmodelled torque as a fraction of the effort limit.
pub const UNMODELLED_EFFORT_FRACTION: f64 = 0.05;
/// Tolerated tracking error of the nominal law as a fraction of the amplitude.
pub const TOLERATED_ERROR_FRACTION: f64 = 0.1;
/// Smallest K_p, s⁻².
pub const KP_MIN_PER_S2: f64 = 100.0;
/// √K_p ≤ rate / this (a tenth of a radian of the natural frequency per tick).
pub const TICKS_PER_RADIAN_OF_BANDWIDTH: f64 = 10.0;
/// ζ of K_d = 2ζ√K_p.
pub const DAMPING_RATIO: f64 = 1.0;
/// Simulated payload as a fraction of the robot's moving mass.
pub const PAYLOAD_MASS_FRACTION: f64 = 0.08;
/// The payload moves up the chain while a joint would hold its gravity torque only beyond
/// this many tolerated errors (5: half the amplitude; a gripper jaw cannot hold it).
pub const PAYLOAD_WALK_RATIO: f64 = 5.0;
/// Simulated payload's centre along the tool joint's axis, m.
pub const PAYLOAD_OFFSET_M: f64 = 0.08;
/// Simulated torque-sensor noise (standard deviation) per N·m of τ_u: a sensor sized for
/// its joint (on the Panda's shoulder 0.04 N·m, on its wrist a few mN·m).
pub const TORQUE_NOISE_FRACTION: f64 = 0.01;
/// Simulated Coulomb (N·m) and viscous (N·m·s/rad) friction per N·m of τ_u.
pub const FRICTION_FRACTION: f64 = 0.1;
/// Simulated armature per N·m of τ_u, kg·m² (s²).
pub const ARMATURE_PER_NM: f64 = 0.02;
/// The robust term's damping rate per tick at the home pose stays below this.
pub const ROBUST_DAMPING_STEP_FRACTION: f64 = 0.3;
/// Simulated friction's damping rate (b + c/v_s)/inertia times the integration step stays
/// below this.
pub const FRICTION_STIFFNESS_STEP_FRACTION: f64 = 0.5;

/// What was derived, for the report: the keys and the values they got.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct DerivedDefaults {
    /// The parameter keys that were empty and got a value from the model.
    pub keys: Vec<&'static str>,
    /// Moving mass of the robot, kg.
    pub moving_mass_kg: f64,
    /// Largest |g_i|/effort_i of the true robot at the home pose, and its joint.
    pub home_gravity_ratio: (f64, String),
    /// Whether the home pose left mid-range to be feasible.
    pub home_moved: bool,
}

/// Why no defaults could be derived.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DeriveError {
    /// No home pose holds the robot against gravity within the margin.
    #[error(
        "no feasible home pose: joint '{joint}' needs {torque_nm:.3} N·m against gravity at the \
         best pose found ({ratio:.2} of its effort limit {effort_nm} N·m; the rule allows \
         {GRAVITY_MARGIN}); give run.reference.center_rad (rad, joint order: {joints}), or \
         larger control.effort_limits_nm, or a lighter sim.payload.mass_kg"
    )]
    Infeasible {
        /// The most loaded joint.
        joint: String,
        /// Its gravity torque.
        torque_nm: f64,
        /// |g|/effort.
        ratio: f64,
        /// Its effort limit.
        effort_nm: f64,
        /// The joint order.
        joints: String,
    },
    /// The model's dynamics failed (a length mismatch; not expected).
    #[error("{0}")]
    Dynamics(String),
    /// A given value does not fit the robot.
    #[error("{0}")]
    Param(String),
}

/// For the ROS node (`gp-node run`): fills the empty keys the node uses (gains, ε, the
/// payload link) by the same rules, at the mid-range pose when no feasible home pose is
/// found (the node follows the references it is given; it does not choose a pose). Never
/// fails on the pose.
pub fn derive_node_defaults(
    model: &Model,
    params: &mut NodeParams,
) -> Result<DerivedDefaults, DeriveError> {
    derive(model, params, Pose::MidRangeIfInfeasible)
}

/// Fills every empty robot-specific key of `params` from `model` (see the module doc).
/// The model must carry finite effort limits (loaded for a controller).
pub fn derive_defaults(
    model: &Model,
    params: &mut NodeParams,
) -> Result<DerivedDefaults, DeriveError> {
    derive(model, params, Pose::MustBeFeasible)
}

/// What an infeasible home pose does.
#[derive(Clone, Copy, PartialEq)]
enum Pose {
    /// An error naming the joint (`gp-node sim` chooses the pose, so it must be right).
    MustBeFeasible,
    /// The mid-range pose stands (the node's gains only need a pose to evaluate M at).
    MidRangeIfInfeasible,
}

fn derive(
    model: &Model,
    params: &mut NodeParams,
    pose: Pose,
) -> Result<DerivedDefaults, DeriveError> {
    let payload_derived = params.sim.payload.link.as_deref().is_none_or(str::is_empty);
    let Some(mut body) = model.tool_body() else {
        return derive_with_tool(model, params, "", pose);
    };
    if !payload_derived {
        return derive_with_tool(model, params, model.body_link_name(body), pose);
    }
    // The tool's joint must hold the payload: a gripper jaw at the end of the chain cannot
    // hold 8 % of the robot, the link carrying it can. Up the chain until one holds it.
    loop {
        let mut trial = params.clone();
        let derived = derive_with_tool(model, &mut trial, model.body_link_name(body), pose)?;
        let parent = model.parent(body);
        let ratio = payload_ratio(model, &trial)?;
        if parent.is_none() || ratio <= PAYLOAD_WALK_RATIO {
            // Held, but perhaps not within the tolerated error: then the largest payload
            // that is (the ratio is linear in the heaviest simulated mass).
            let base = trial.sim.payload.mass_kg;
            let heaviest = base.max(trial.sim.payload.step.as_ref().map_or(0.0, |s| s.mass_kg));
            let ratio_at_base = ratio * base / heaviest.max(f64::MIN_POSITIVE);
            if params.sim.payload.mass_kg < 0.0 && ratio_at_base > 1.0 {
                let mass = base / ratio_at_base;
                trial.sim.payload.mass_kg = mass;
                if let Some(step) = &mut trial.sim.payload.step
                    && params
                        .sim
                        .payload
                        .step
                        .as_ref()
                        .is_some_and(|s| s.mass_kg < 0.0)
                {
                    step.mass_kg = 2.0 * mass;
                }
            }
            *params = trial;
            return Ok(derived);
        }
        body = parent.unwrap_or(body);
    }
}

/// The simulated payload's gravity torque at the home pose against what the nominal law's
/// stiffness holds within the tolerated error, worst joint: max_j |Δg_j| / (K_p,j·M_jj·e_j).
fn payload_ratio(model: &Model, params: &NodeParams) -> Result<f64, DeriveError> {
    let nv = model.nv();
    let home = &params.run.reference.center_rad;
    let truth = true_robot_for_gravity(model, params)?;
    let mut data = Data::new(model);
    let g_nominal = gravity(model, &mut data, home)
        .map_err(|e| DeriveError::Dynamics(e.to_string()))?
        .to_vec();
    let mut data_true = Data::new(&truth);
    let g_true =
        gravity(&truth, &mut data_true, home).map_err(|e| DeriveError::Dynamics(e.to_string()))?;
    let m = inertia_diagonal(model, home)?;
    let expand = |v: &JointValues, key| {
        v.expand(key, nv)
            .map_err(|e| DeriveError::Param(e.to_string()))
    };
    let kp = expand(&params.control.kp_per_s2, "control.kp_per_s2")?;
    let a = expand(
        &params.run.reference.amplitude_rad,
        "run.reference.amplitude_rad",
    )?;
    Ok((0..nv)
        .map(|j| {
            (g_true[j] - g_nominal[j]).abs() / (kp[j] * m[j] * TOLERATED_ERROR_FRACTION * a[j])
        })
        .fold(0.0, f64::max))
}

/// [`derive_defaults`] with `tool_link` as the tool.
fn derive_with_tool(
    model: &Model,
    params: &mut NodeParams,
    tool_link: &str,
    pose: Pose,
) -> Result<DerivedDefaults, DeriveError> {
    let nv = model.nv();
    let mut derived = DerivedDefaults {
        moving_mass_kg: model.moving_mass_kg(),
        ..DerivedDefaults::default()
    };
    if params.sim.payload.link.as_deref().is_none_or(str::is_empty) {
        params.sim.payload.link = Some(tool_link.to_owned());
        derived.keys.push("sim.payload.link");
    }
    if params.learn.change.payload_link.is_empty() {
        params.learn.change.payload_link = tool_link.to_owned();
        derived.keys.push("learn.change.payload_link");
    }
    if params.sim.payload.mass_kg < 0.0 {
        params.sim.payload.mass_kg = PAYLOAD_MASS_FRACTION * derived.moving_mass_kg;
        params.sim.payload.com_m = payload_com(model, tool_link);
        derived.keys.push("sim.payload.mass_kg");
    }
    if let Some(step) = &mut params.sim.payload.step
        && step.mass_kg < 0.0
    {
        // The payload-step scenario: twice the payload.
        step.mass_kg = 2.0 * params.sim.payload.mass_kg;
    }

    let truth = true_robot_for_gravity(model, params)?;
    let reference = &mut params.run.reference;
    let center_given = !reference.center_rad.is_empty();
    let (home, moved) = if center_given {
        (reference.center_rad.clone(), false)
    } else {
        derived.keys.push("run.reference.center_rad");
        match (feasible_home(model, &truth), pose) {
            (Ok(found), _) => found,
            (Err(DeriveError::Infeasible { .. }), Pose::MidRangeIfInfeasible) => {
                (mid_range(model), false)
            }
            (Err(e), _) => return Err(e),
        }
    };
    if home.len() != nv {
        return Err(DeriveError::Param(format!(
            "run.reference.center_rad has {} entries, the robot has {nv} joints ({})",
            home.len(),
            joint_list(model)
        )));
    }
    derived.home_moved = moved;
    derived.home_gravity_ratio = worst_gravity_ratio(model, &truth, &home)?;
    if !center_given {
        reference.center_rad = home.clone();
    } else if derived.home_gravity_ratio.0 > 1.0 && pose == Pose::MustBeFeasible {
        let (ratio, joint) = &derived.home_gravity_ratio;
        return Err(DeriveError::Param(format!(
            "run.reference.center_rad: joint '{joint}' needs {ratio:.2} × its effort limit \
             against gravity there"
        )));
    }

    let amplitudes = if reference.amplitude_rad.is_empty() {
        derived.keys.push("run.reference.amplitude_rad");
        let a = amplitudes(model, &home);
        reference.amplitude_rad = JointValues::Each(a.clone());
        a
    } else {
        reference
            .amplitude_rad
            .expand("run.reference.amplitude_rad", nv)
            .map_err(|e| DeriveError::Param(e.to_string()))?
    };
    if reference.frequencies_hz.is_empty() {
        derived.keys.push("run.reference.frequencies_hz");
        let accel_limit = params.control.plausibility.reference_accel_rad_s2;
        reference.frequencies_hz = frequencies(model, &amplitudes, accel_limit);
    }

    let m_home = inertia_diagonal(model, &home)?;
    let rate_hz = params.sim.rate_hz;
    let kp_max = (rate_hz / TICKS_PER_RADIAN_OF_BANDWIDTH).powi(2);
    let tolerated: Vec<f64> = amplitudes
        .iter()
        .map(|a| TOLERATED_ERROR_FRACTION * a)
        .collect();
    let mut unmodelled: Vec<f64> = model
        .limits()
        .iter()
        .map(|l| UNMODELLED_EFFORT_FRACTION * l.effort)
        .collect();
    let control = &mut params.control;
    if control.kp_per_s2.is_empty() {
        derived.keys.push("control.kp_per_s2");
        let kp: Vec<f64> = (0..nv)
            .map(|i| {
                (unmodelled[i] / (m_home[i] * tolerated[i]))
                    .clamp(KP_MIN_PER_S2, kp_max.max(KP_MIN_PER_S2))
            })
            .collect();
        control.kp_per_s2 = JointValues::Each(kp);
    }
    let kp = control
        .kp_per_s2
        .expand("control.kp_per_s2", nv)
        .map_err(|e| DeriveError::Param(e.to_string()))?;
    if control.kd_per_s.is_empty() {
        derived.keys.push("control.kd_per_s");
        control.kd_per_s =
            JointValues::Each(kp.iter().map(|k| 2.0 * DAMPING_RATIO * k.sqrt()).collect());
    }
    let kd = control
        .kd_per_s
        .expand("control.kd_per_s", nv)
        .map_err(|e| DeriveError::Param(e.to_string()))?;
    if control.epsilon <= 0.0 {
        derived.keys.push("control.epsilon");
        control.epsilon = robust_epsilon(model, &home, &kp, &kd, 1.0 / rate_hz)?;
    }
    // The unmodelled torque the gains hold within the tolerated error.
    for i in 0..nv {
        unmodelled[i] = unmodelled[i].min(kp[i] * m_home[i] * tolerated[i]);
    }
    let sim = &mut params.sim;
    let per_joint = |f: &dyn Fn(usize) -> f64| JointValues::Each((0..nv).map(f).collect());
    if sim.torque_noise_std_nm.is_empty() {
        derived.keys.push("sim.torque_noise_std_nm");
        sim.torque_noise_std_nm = per_joint(&|i| TORQUE_NOISE_FRACTION * unmodelled[i]);
    }
    if sim.armature_kgm2.is_empty() {
        derived.keys.push("sim.armature_kgm2");
        sim.armature_kgm2 = per_joint(&|i| (ARMATURE_PER_NM * unmodelled[i]).min(m_home[i]));
    }
    // Friction is a damping of (b + c/v_s) per unit of inertia: the integrator resolves it
    // only while that rate times the step stays below 1 (RK4's real-axis limit is 2.8), which
    // a light distal joint (a wrist of 10⁻⁴ kg·m²) does not give a friction scaled by effort.
    let armature = sim
        .armature_kgm2
        .expand("sim.armature_kgm2", nv)
        .map_err(|e| DeriveError::Param(e.to_string()))?;
    let step_s = sim.dt_secs() / f64::from(sim.substeps.max(1));
    let resolvable =
        |i: usize| FRICTION_STIFFNESS_STEP_FRACTION * (m_home[i] + armature[i]) / step_s;
    let smoothing = sim.friction.coulomb_smoothing_rad_s;
    if sim.friction.coulomb_nm.is_empty() {
        derived.keys.push("sim.friction.coulomb_nm");
        sim.friction.coulomb_nm =
            per_joint(&|i| (FRICTION_FRACTION * unmodelled[i]).min(resolvable(i) * smoothing));
    }
    if sim.friction.viscous_nms_per_rad.is_empty() {
        derived.keys.push("sim.friction.viscous_nms_per_rad");
        sim.friction.viscous_nms_per_rad =
            per_joint(&|i| (FRICTION_FRACTION * unmodelled[i]).min(resolvable(i)));
    }
    Ok(derived)
}

/// The payload's centre of mass in `tool_link`'s frame: [`PAYLOAD_OFFSET_M`] along the axis
/// of the joint that moves the link, as a gripper holds its load on the flange axis (the
/// link frame's z is that axis on some robots, not on others). A link welded to the world
/// gets the offset along its z.
fn payload_com(model: &Model, tool_link: &str) -> [f64; 3] {
    let axis = match model.body_of_link(tool_link) {
        Some((BodyRef::Body(body), body_from_link)) => {
            body_from_link.rotation.inverse() * model.joint_axis(body)
        }
        _ => nalgebra::Vector3::z(),
    };
    let offset = axis.normalize() * PAYLOAD_OFFSET_M;
    [offset.x, offset.y, offset.z]
}

fn joint_list(model: &Model) -> String {
    model.joint_names().join(", ")
}

/// The nominal model with the simulated payload at its heaviest (as the simulator builds
/// it): what must hold its pose.
fn true_robot_for_gravity(model: &Model, params: &NodeParams) -> Result<Model, DeriveError> {
    let payload = &params.sim.payload;
    let mass = payload
        .mass_kg
        .max(payload.step.as_ref().map_or(0.0, |s| s.mass_kg))
        .max(0.0);
    payload
        .added_to(model, mass)
        .map_err(|e| DeriveError::Param(format!("sim.payload: {e}")))
}

/// Finite position limits of joint i, if both are.
fn range(model: &Model, i: usize) -> Option<(f64, f64)> {
    let l = model.limits()[i];
    (l.position_lower.is_finite()
        && l.position_upper.is_finite()
        && l.position_upper > l.position_lower)
        .then_some((l.position_lower, l.position_upper))
}

/// Each joint at the middle of its range (0 when unlimited).
fn mid_range(model: &Model) -> Vec<f64> {
    (0..model.nv())
        .map(|i| range(model, i).map_or(0.0, |(lo, hi)| 0.5 * (lo + hi)))
        .collect()
}

/// |g_i|/effort_i per joint of the true robot at `q`.
fn gravity_ratios(
    model: &Model,
    truth: &Model,
    data: &mut Data,
    q: &[f64],
) -> Result<Vec<f64>, DeriveError> {
    let g = gravity(truth, data, q).map_err(|e| DeriveError::Dynamics(e.to_string()))?;
    Ok(g.iter()
        .zip(model.limits())
        .map(|(g, l)| g.abs() / l.effort)
        .collect())
}

/// The largest |g_i|/effort_i at `q` and its joint.
fn worst_gravity_ratio(
    model: &Model,
    truth: &Model,
    q: &[f64],
) -> Result<(f64, String), DeriveError> {
    let mut data = Data::new(truth);
    let (i, r) = largest(&gravity_ratios(model, truth, &mut data, q)?);
    Ok((r, model.joint_names().get(i).cloned().unwrap_or_default()))
}

/// The index and value of the largest entry ((0, 0) when empty).
fn largest(values: &[f64]) -> (usize, f64) {
    values
        .iter()
        .copied()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or((0, 0.0))
}

/// Mid-range, or the nearest pose found by the descent where gravity is within the margin;
/// whether it moved.
fn feasible_home(model: &Model, truth: &Model) -> Result<(Vec<f64>, bool), DeriveError> {
    let nv = model.nv();
    let mut q = mid_range(model);
    // The box of the search: the middle half of each range (unlimited joints: ±π/2).
    let bounds: Vec<(f64, f64)> = (0..nv)
        .map(|i| match range(model, i) {
            Some((lo, hi)) => (lo + 0.25 * (hi - lo), hi - 0.25 * (hi - lo)),
            None if model.joint_type(i) == JointType::Prismatic => (0.0, 0.0),
            None => (-std::f64::consts::FRAC_PI_2, std::f64::consts::FRAC_PI_2),
        })
        .collect();
    let mut data = Data::new(truth);
    let mut r = gravity_ratios(model, truth, &mut data, &q)?;
    let worst = |r: &[f64]| r.iter().copied().fold(0.0_f64, f64::max);
    if worst(&r) <= GRAVITY_MARGIN {
        return Ok((q, false));
    }
    let mut lambda = 1e-2;
    for _ in 0..200 {
        // Jacobian of r (signed g/effort) by central differences.
        let signed = |data: &mut Data, q: &[f64]| -> Result<DVector<f64>, DeriveError> {
            let g = gravity(truth, data, q).map_err(|e| DeriveError::Dynamics(e.to_string()))?;
            Ok(DVector::from_iterator(
                nv,
                g.iter().zip(model.limits()).map(|(g, l)| g / l.effort),
            ))
        };
        let r0 = signed(&mut data, &q)?;
        let mut jac = DMatrix::<f64>::zeros(nv, nv);
        for k in 0..nv {
            let h = 1e-6;
            let mut qp = q.clone();
            qp[k] += h;
            let rp = signed(&mut data, &qp)?;
            qp[k] -= 2.0 * h;
            let rm = signed(&mut data, &qp)?;
            jac.set_column(k, &((rp - rm) / (2.0 * h)));
        }
        let jt = jac.transpose();
        let mut normal = &jt * &jac;
        for k in 0..nv {
            normal[(k, k)] += lambda * (1.0 + normal[(k, k)]);
        }
        let Some(chol) = normal.cholesky() else {
            lambda *= 10.0;
            continue;
        };
        let step = chol.solve(&(-&jt * &r0));
        let trial: Vec<f64> = (0..nv)
            .map(|k| (q[k] + step[k]).clamp(bounds[k].0, bounds[k].1))
            .collect();
        let r_trial = signed(&mut data, &trial)?;
        if r_trial.norm_squared() < r0.norm_squared() {
            q = trial;
            lambda = (lambda * 0.3).max(1e-9);
            r = r_trial.iter().map(|x| x.abs()).collect();
            if worst(&r) <= GRAVITY_MARGIN {
                return Ok((q, true));
            }
        } else {
            lambda *= 10.0;
            if lambda > 1e8 {
                break;
            }
        }
    }
    let (i, ratio) = largest(&r);
    let effort = model.limits()[i].effort;
    Err(DeriveError::Infeasible {
        joint: model.joint_names()[i].clone(),
        torque_nm: ratio * effort,
        ratio,
        effort_nm: effort,
        joints: joint_list(model),
    })
}

/// a_i = min(the joint type's cap, a fraction of the range, what keeps q_d inside the limits).
fn amplitudes(model: &Model, home: &[f64]) -> Vec<f64> {
    (0..model.nv())
        .map(|i| {
            let cap = match model.joint_type(i) {
                JointType::Prismatic => AMPLITUDE_MAX_M,
                JointType::Revolute | JointType::Continuous => AMPLITUDE_MAX_RAD,
            };
            match range(model, i) {
                Some((lo, hi)) => {
                    let margin = 0.05 * (hi - lo);
                    let room = (home[i] - lo).min(hi - home[i]) - margin;
                    cap.min(AMPLITUDE_RANGE_FRACTION * (hi - lo))
                        .min(room.max(0.0))
                }
                None => cap,
            }
        })
        .collect()
}

/// The golden-ratio frequencies, lowered to the velocity and acceleration limits.
fn frequencies(model: &Model, amplitudes: &[f64], accel_limit: f64) -> Vec<f64> {
    let golden = (5.0_f64.sqrt() - 1.0) / 2.0;
    (0..model.nv())
        .map(|i| {
            let f = FREQUENCY_LOW_HZ + FREQUENCY_SPAN_HZ * ((i as f64 + 1.0) * golden).fract();
            let a = amplitudes[i];
            if a <= 0.0 {
                return f;
            }
            let two_pi = 2.0 * std::f64::consts::PI;
            let by_velocity = VELOCITY_FRACTION * model.limits()[i].velocity / (two_pi * a);
            let by_accel = (0.5 * accel_limit / a).sqrt() / two_pi;
            // Scaled, not clipped: joints under the same cap keep distinct periods.
            let highest = FREQUENCY_LOW_HZ + FREQUENCY_SPAN_HZ;
            f * (by_velocity.min(by_accel) / highest).min(1.0)
        })
        .collect()
}

/// ε of the robust term −M⁻¹(P₂₁e + P₂₂ė)/(2ε): that torque, divided by the inertia once
/// more, damps at a rate up to p₂₂·λ_max(M⁻¹)²/(2ε) per second, which must stay below
/// [`ROBUST_DAMPING_STEP_FRACTION`] per tick at the home pose: ε = max(1, p₂₂,max·
/// λ_max(M⁻¹)²·dt / (2·fraction)). A robot as heavy as the Panda keeps ε = 1; a light wrist
/// (λ_min(M) ~ 10⁻⁴ kg·m²) needs a gentler term, or the discrete loop is unstable.
fn robust_epsilon(
    model: &Model,
    home: &[f64],
    kp: &[f64],
    kd: &[f64],
    dt: f64,
) -> Result<f64, DeriveError> {
    let mut data = Data::new(model);
    let m = crba(model, &mut data, home).map_err(|e| DeriveError::Dynamics(e.to_string()))?;
    let lambda_min = m
        .clone()
        .symmetric_eigenvalues()
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min);
    let p = gpn_control::control::lyapunov::joints_lyapunov_identity(kp, kd)
        .map_err(|e| DeriveError::Param(format!("control.kp_per_s2/kd_per_s: {e}")))?;
    let p22 = p.0.iter().map(|j| j.p22).fold(0.0_f64, f64::max);
    let needed = p22 * dt / (2.0 * ROBUST_DAMPING_STEP_FRACTION * lambda_min * lambda_min);
    Ok(needed.max(1.0))
}

/// M_ii(q), the nominal model's joint-space inertia diagonal.
fn inertia_diagonal(model: &Model, q: &[f64]) -> Result<Vec<f64>, DeriveError> {
    let mut data = Data::new(model);
    let m = crba(model, &mut data, q).map_err(|e| DeriveError::Dynamics(e.to_string()))?;
    Ok((0..model.nv()).map(|i| m[(i, i)]).collect())
}
