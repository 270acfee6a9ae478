//! What the node believes of what it is told. A joint state beyond its URDF position limits by
//! more than a margin, faster than its velocity limit allows, or that jumped further than any
//! velocity within the limit explains is implausible: the command decision answers it with
//! the safe output, never with the law (which would command full effort towards an absurd
//! error). A reference is checked by one validator whatever its source (the topic, an action,
//! the simulator's generator): positions within the limits, velocities, accelerations and the
//! torque it needs within theirs. A refused reference is not time-scaled: the source falls
//! back to holding position and the refusal is counted with its reason. Real-time: no
//! allocation after `new`.

use crate::control::PlausibilityParams;
use crate::robot::JointLimits;

/// Why a joint state is implausible.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateFault {
    /// A position beyond the URDF limits by more than the margin.
    PositionLimit,
    /// A speed above the velocity limit times the factor.
    VelocityLimit,
    /// A position change no velocity within the limit explains.
    Jump,
}

impl StateFault {
    /// Every fault, in the order of [`StateFault::index`].
    pub const ALL: [StateFault; 3] = [
        StateFault::PositionLimit,
        StateFault::VelocityLimit,
        StateFault::Jump,
    ];

    /// Index in [`StateFault::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Short name (diagnostics keys, reports).
    pub fn name(self) -> &'static str {
        match self {
            StateFault::PositionLimit => "position beyond limits",
            StateFault::VelocityLimit => "velocity beyond limits",
            StateFault::Jump => "impossible jump",
        }
    }
}

/// Checks measured states against the limits and the previous plausible state.
#[derive(Debug, Clone)]
pub struct StateCheck {
    lower: Vec<f64>,
    upper: Vec<f64>,
    velocity: Vec<f64>,
    /// Continuous joints: positions may wrap by 2π.
    continuous: Vec<bool>,
    margin: f64,
    velocity_factor: f64,
    jump_tolerance: f64,
    previous_q: Vec<f64>,
    previous_t: f64,
    has_previous: bool,
}

impl StateCheck {
    /// A check for joints with these limits.
    pub fn new(limits: &[JointLimits], params: &PlausibilityParams) -> Self {
        Self {
            lower: limits.iter().map(|l| l.position_lower).collect(),
            upper: limits.iter().map(|l| l.position_upper).collect(),
            velocity: limits.iter().map(|l| l.velocity).collect(),
            continuous: limits
                .iter()
                .map(|l| l.position_lower.is_infinite() && l.position_upper.is_infinite())
                .collect(),
            margin: params.position_margin_rad,
            velocity_factor: params.velocity_factor,
            jump_tolerance: params.jump_tolerance_rad,
            previous_q: vec![0.0; limits.len()],
            previous_t: 0.0,
            has_previous: false,
        }
    }

    /// Checks the state (q, q̇) at `t_secs`; a plausible one becomes the reference of the next
    /// jump check. Non-finite values pass here: the tick refuses them as bad input.
    pub fn check(&mut self, t_secs: f64, q: &[f64], v: &[f64]) -> Result<(), (StateFault, usize)> {
        let dt = (t_secs - self.previous_t).max(0.0);
        for j in 0..q.len() {
            if q[j] < self.lower[j] - self.margin || q[j] > self.upper[j] + self.margin {
                return Err((StateFault::PositionLimit, j));
            }
            let speed_limit = self.velocity[j] * self.velocity_factor;
            if v[j].abs() > speed_limit {
                return Err((StateFault::VelocityLimit, j));
            }
            if self.has_previous && speed_limit.is_finite() {
                let mut dq = q[j] - self.previous_q[j];
                if self.continuous[j] {
                    dq = (dq + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU)
                        - std::f64::consts::PI;
                }
                if dq.abs() > speed_limit * dt + self.jump_tolerance {
                    return Err((StateFault::Jump, j));
                }
            }
        }
        if q.iter().chain(v).all(|x| x.is_finite()) {
            self.previous_q.copy_from_slice(q);
            self.previous_t = t_secs;
            self.has_previous = true;
        }
        Ok(())
    }
}

/// Which limit a reference broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReferenceFault {
    /// A position outside the URDF limits.
    Position,
    /// A velocity (given, or implied by two positions and their times) above the limit.
    Velocity,
    /// An acceleration above `control.plausibility.reference_accel_rad_s2`.
    Acceleration,
    /// The torque the reference needs, M(q_d)q̈_d + C q̇_d + g(q_d), exceeds the effort limit.
    Effort,
    /// A value is NaN or infinite.
    NonFinite,
}

impl ReferenceFault {
    /// Short name (diagnostics keys).
    pub fn name(self) -> &'static str {
        match self {
            ReferenceFault::Position => "position beyond limits",
            ReferenceFault::Velocity => "velocity beyond limits",
            ReferenceFault::Acceleration => "acceleration beyond limits",
            ReferenceFault::Effort => "torque beyond effort limits",
            ReferenceFault::NonFinite => "not finite",
        }
    }

    /// Every fault, in the order of [`ReferenceFault::index`].
    pub const ALL: [ReferenceFault; 5] = [
        ReferenceFault::Position,
        ReferenceFault::Velocity,
        ReferenceFault::Acceleration,
        ReferenceFault::Effort,
        ReferenceFault::NonFinite,
    ];

    /// Index in [`ReferenceFault::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// A refused reference value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReferenceRefusal {
    /// Which limit.
    pub fault: ReferenceFault,
    /// Joint index (model order).
    pub joint: usize,
    /// The offending value.
    pub value: f64,
    /// The limit it broke.
    pub limit: f64,
}

impl std::fmt::Display for ReferenceRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "joint {}: {} ({} against {})",
            self.joint,
            self.fault.name(),
            self.value,
            self.limit
        )
    }
}

/// The one reference validator.
#[derive(Debug, Clone)]
pub struct ReferenceLimits {
    lower: Vec<f64>,
    upper: Vec<f64>,
    velocity: Vec<f64>,
    effort: Vec<f64>,
    acceleration: f64,
}

/// Rounding allowance on limits (a reference exactly at a limit passes).
const SLACK: f64 = 1e-9;

impl ReferenceLimits {
    /// Limits of joints `limits`; `effort` the effort limits the command saturates at.
    pub fn new(limits: &[JointLimits], effort: &[f64], params: &PlausibilityParams) -> Self {
        Self {
            lower: limits.iter().map(|l| l.position_lower).collect(),
            upper: limits.iter().map(|l| l.position_upper).collect(),
            velocity: limits.iter().map(|l| l.velocity).collect(),
            effort: effort.to_vec(),
            acceleration: params.reference_accel_rad_s2,
        }
    }

    /// Joints.
    pub fn nv(&self) -> usize {
        self.lower.len()
    }

    /// Checks one desired state (position, velocity, acceleration).
    pub fn check(&self, q: &[f64], qd: &[f64], qdd: &[f64]) -> Result<(), ReferenceRefusal> {
        let refuse = |fault, joint, value, limit| {
            Err(ReferenceRefusal {
                fault,
                joint,
                value,
                limit,
            })
        };
        for j in 0..q.len() {
            if !(q[j].is_finite() && qd[j].is_finite() && qdd[j].is_finite()) {
                return refuse(ReferenceFault::NonFinite, j, f64::NAN, 0.0);
            }
            if q[j] < self.lower[j] - SLACK {
                return refuse(ReferenceFault::Position, j, q[j], self.lower[j]);
            }
            if q[j] > self.upper[j] + SLACK {
                return refuse(ReferenceFault::Position, j, q[j], self.upper[j]);
            }
            if qd[j].abs() > self.velocity[j] * (1.0 + SLACK) {
                return refuse(ReferenceFault::Velocity, j, qd[j], self.velocity[j]);
            }
            if qdd[j].abs() > self.acceleration * (1.0 + SLACK) {
                return refuse(ReferenceFault::Acceleration, j, qdd[j], self.acceleration);
            }
        }
        Ok(())
    }

    /// Checks the mean velocity of moving from `q0` to `q1` in `dt_secs` (a lower bound of the
    /// peak velocity of any path between them: over the limit, no interpolation helps).
    pub fn check_step(&self, q0: &[f64], q1: &[f64], dt_secs: f64) -> Result<(), ReferenceRefusal> {
        for j in 0..q0.len() {
            let needed = (q1[j] - q0[j]).abs();
            let allowed = self.velocity[j] * dt_secs * (1.0 + SLACK) + SLACK;
            if needed > allowed {
                return Err(ReferenceRefusal {
                    fault: ReferenceFault::Velocity,
                    joint: j,
                    value: if dt_secs > 0.0 {
                        needed / dt_secs
                    } else {
                        f64::INFINITY
                    },
                    limit: self.velocity[j],
                });
            }
        }
        Ok(())
    }

    /// Checks the torque `tau` a reference needs against the effort limits.
    pub fn check_effort(&self, tau: &[f64]) -> Result<(), ReferenceRefusal> {
        match tau
            .iter()
            .enumerate()
            // NaN is beyond every limit.
            .find(|(j, t)| t.is_nan() || t.abs() > self.effort[*j] * (1.0 + SLACK))
        {
            Some((joint, t)) => Err(ReferenceRefusal {
                fault: ReferenceFault::Effort,
                joint,
                value: *t,
                limit: self.effort[joint],
            }),
            None => Ok(()),
        }
    }

    /// `q` clamped into the position limits (a pose to hold).
    pub fn clamp_position(&self, q: &mut [f64]) {
        for ((q, lower), upper) in q.iter_mut().zip(&self.lower).zip(&self.upper) {
            *q = q.clamp(*lower, *upper);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Vec<JointLimits> {
        vec![
            JointLimits {
                position_lower: -1.0,
                position_upper: 1.0,
                velocity: 2.0,
                effort: 10.0,
            },
            JointLimits {
                position_lower: f64::NEG_INFINITY,
                position_upper: f64::INFINITY,
                velocity: 3.0,
                effort: 10.0,
            },
        ]
    }

    #[test]
    fn states_beyond_limits_fast_or_jumping_are_implausible() {
        let p = PlausibilityParams::default();
        let mut check = StateCheck::new(&limits(), &p);
        assert_eq!(check.check(0.0, &[0.0, 0.0], &[0.0, 0.0]), Ok(()));
        assert_eq!(
            check.check(0.001, &[1.2, 0.0], &[0.0, 0.0]),
            Err((StateFault::PositionLimit, 0))
        );
        assert_eq!(
            check.check(0.001, &[1.05, 0.0], &[0.0, 0.0]),
            Err((StateFault::Jump, 0))
        );
        assert_eq!(
            check.check(0.001, &[0.0, 0.0], &[0.0, 4.6]),
            Err((StateFault::VelocityLimit, 1))
        );
        // A continuous joint wrapping from +π to −π moved by almost nothing.
        let mut wrap = StateCheck::new(&limits(), &p);
        let pi = std::f64::consts::PI;
        assert_eq!(wrap.check(0.0, &[0.0, pi - 0.001], &[0.0, 0.0]), Ok(()));
        assert_eq!(wrap.check(0.001, &[0.0, -pi + 0.001], &[0.0, 0.0]), Ok(()));
        // After a second the arm may have moved far.
        assert_eq!(wrap.check(1.001, &[0.9, 1.0], &[0.0, 0.0]), Ok(()));
    }

    #[test]
    fn references_are_checked_against_every_limit() {
        let r = ReferenceLimits::new(&limits(), &[10.0, 10.0], &PlausibilityParams::default());
        assert!(r.check(&[1.0, 100.0], &[2.0, -3.0], &[100.0, 0.0]).is_ok());
        let fault = |res: Result<(), ReferenceRefusal>| res.map_err(|e| (e.fault, e.joint));
        assert_eq!(
            fault(r.check(&[1.1, 0.0], &[0.0, 0.0], &[0.0, 0.0])),
            Err((ReferenceFault::Position, 0))
        );
        assert_eq!(
            fault(r.check(&[0.0, 0.0], &[0.0, 1e300], &[0.0, 0.0])),
            Err((ReferenceFault::Velocity, 1))
        );
        assert_eq!(
            fault(r.check(&[0.0, 0.0], &[0.0, 0.0], &[0.0, -1e300])),
            Err((ReferenceFault::Acceleration, 1))
        );
        assert_eq!(
            fault(r.check(&[0.0, f64::NAN], &[0.0, 0.0], &[0.0, 0.0])),
            Err((ReferenceFault::NonFinite, 1))
        );
        // To the limit in 1 ms: 1 rad in 0.001 s is 1000 rad/s.
        assert_eq!(
            fault(r.check_step(&[0.0, 0.0], &[1.0, 0.0], 0.001)),
            Err((ReferenceFault::Velocity, 0))
        );
        assert!(r.check_step(&[0.0, 0.0], &[1.0, 0.0], 0.5).is_ok());
        assert_eq!(
            fault(r.check_effort(&[0.0, -10.5])),
            Err((ReferenceFault::Effort, 1))
        );
    }
}
