//! The edge between the node's message vocabulary (`gpn_msgs`: plain structs, used by the
//! validation and conversion code that builds and is tested without ROS) and the types
//! rosidl generates for r2r. Field for field; the receive and publish threads convert, the
//! control thread never sees either.

use gpn_msgs::{
    builtin_interfaces as bi, diagnostic_msgs as dm, gp_learning_node_msgs as gm,
    sensor_msgs as sm, std_msgs as st, trajectory_msgs as tm,
};
use r2r::{
    builtin_interfaces::msg as rbi, diagnostic_msgs::msg as rdm, gp_learning_node_msgs::msg as rgm,
    sensor_msgs::msg as rsm, std_msgs::msg as rst, trajectory_msgs::msg as rtm,
};

/// A `gpn_msgs` type sent through rcl: its rosidl type and the conversion.
pub(crate) trait ToRcl {
    /// The r2r type.
    type Rcl: r2r::WrappedTypesupport + 'static;
    /// This message as the r2r type.
    fn to_rcl(&self) -> Self::Rcl;
}

/// A `gpn_msgs` type received through rcl.
pub(crate) trait FromRcl: ToRcl {
    /// The message of the r2r type.
    fn from_rcl(msg: Self::Rcl) -> Self;
}

fn time_to(t: &bi::Time) -> rbi::Time {
    rbi::Time {
        sec: t.sec,
        nanosec: t.nanosec,
    }
}

fn time_from(t: rbi::Time) -> bi::Time {
    bi::Time {
        sec: t.sec,
        nanosec: t.nanosec,
    }
}

fn header_to(h: &st::Header) -> rst::Header {
    rst::Header {
        stamp: time_to(&h.stamp),
        frame_id: h.frame_id.clone(),
    }
}

fn header_from(h: rst::Header) -> st::Header {
    st::Header {
        stamp: time_from(h.stamp),
        frame_id: h.frame_id,
    }
}

impl ToRcl for sm::JointState {
    type Rcl = rsm::JointState;
    fn to_rcl(&self) -> rsm::JointState {
        rsm::JointState {
            header: header_to(&self.header),
            name: self.name.clone(),
            position: self.position.clone(),
            velocity: self.velocity.clone(),
            effort: self.effort.clone(),
        }
    }
}

impl FromRcl for sm::JointState {
    fn from_rcl(m: rsm::JointState) -> Self {
        Self {
            header: header_from(m.header),
            name: m.name,
            position: m.position,
            velocity: m.velocity,
            effort: m.effort,
        }
    }
}

impl ToRcl for st::Float64MultiArray {
    type Rcl = rst::Float64MultiArray;
    fn to_rcl(&self) -> rst::Float64MultiArray {
        rst::Float64MultiArray {
            layout: rst::MultiArrayLayout {
                dim: self
                    .layout
                    .dim
                    .iter()
                    .map(|d| rst::MultiArrayDimension {
                        label: d.label.clone(),
                        size: d.size,
                        stride: d.stride,
                    })
                    .collect(),
                data_offset: self.layout.data_offset,
            },
            data: self.data.clone(),
        }
    }
}

impl FromRcl for st::Float64MultiArray {
    fn from_rcl(m: rst::Float64MultiArray) -> Self {
        Self {
            layout: st::MultiArrayLayout {
                dim: m
                    .layout
                    .dim
                    .into_iter()
                    .map(|d| st::MultiArrayDimension {
                        label: d.label,
                        size: d.size,
                        stride: d.stride,
                    })
                    .collect(),
                data_offset: m.layout.data_offset,
            },
            data: m.data,
        }
    }
}

impl ToRcl for st::Empty {
    type Rcl = rst::Empty;
    fn to_rcl(&self) -> rst::Empty {
        rst::Empty::default()
    }
}

impl FromRcl for st::Empty {
    fn from_rcl(_: rst::Empty) -> Self {
        Self::default()
    }
}

impl ToRcl for tm::JointTrajectory {
    type Rcl = rtm::JointTrajectory;
    fn to_rcl(&self) -> rtm::JointTrajectory {
        rtm::JointTrajectory {
            header: header_to(&self.header),
            joint_names: self.joint_names.clone(),
            points: self
                .points
                .iter()
                .map(|p| rtm::JointTrajectoryPoint {
                    positions: p.positions.clone(),
                    velocities: p.velocities.clone(),
                    accelerations: p.accelerations.clone(),
                    effort: p.effort.clone(),
                    time_from_start: rbi::Duration {
                        sec: p.time_from_start.sec,
                        nanosec: p.time_from_start.nanosec,
                    },
                })
                .collect(),
        }
    }
}

impl FromRcl for tm::JointTrajectory {
    fn from_rcl(m: rtm::JointTrajectory) -> Self {
        Self {
            header: header_from(m.header),
            joint_names: m.joint_names,
            points: m
                .points
                .into_iter()
                .map(|p| tm::JointTrajectoryPoint {
                    positions: p.positions,
                    velocities: p.velocities,
                    accelerations: p.accelerations,
                    effort: p.effort,
                    time_from_start: bi::Duration {
                        sec: p.time_from_start.sec,
                        nanosec: p.time_from_start.nanosec,
                    },
                })
                .collect(),
        }
    }
}

impl ToRcl for dm::DiagnosticArray {
    type Rcl = rdm::DiagnosticArray;
    fn to_rcl(&self) -> rdm::DiagnosticArray {
        rdm::DiagnosticArray {
            header: header_to(&self.header),
            status: self
                .status
                .iter()
                .map(|s| rdm::DiagnosticStatus {
                    level: s.level,
                    name: s.name.clone(),
                    message: s.message.clone(),
                    hardware_id: s.hardware_id.clone(),
                    values: s
                        .values
                        .iter()
                        .map(|kv| rdm::KeyValue {
                            key: kv.key.clone(),
                            value: kv.value.clone(),
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}

impl ToRcl for gm::ResidualEstimate {
    type Rcl = rgm::ResidualEstimate;
    fn to_rcl(&self) -> rgm::ResidualEstimate {
        rgm::ResidualEstimate {
            header: header_to(&self.header),
            model: self.model.clone(),
            joint_names: self.joint_names.clone(),
            mu: self.mu.clone(),
            sigma: self.sigma.clone(),
            eta: self.eta.clone(),
            eta_thm: self.eta_thm.clone(),
            fallback: self.fallback.clone(),
            samples_seen: self.samples_seen,
            samples_stored: self.samples_stored,
            experts: self.experts,
            model_us: self.model_us,
            tick_us: self.tick_us,
            tracking_bound: self.tracking_bound,
        }
    }
}

impl ToRcl for gm::ChangeEvent {
    type Rcl = rgm::ChangeEvent;
    fn to_rcl(&self) -> rgm::ChangeEvent {
        rgm::ChangeEvent {
            header: header_to(&self.header),
            onset: time_to(&self.onset),
            source: self.source.clone(),
            joint: self.joint.clone(),
            action: self.action.clone(),
            description: self.description.clone(),
        }
    }
}

/// The time on the node's clock (`use_sim_time`: `/clock`) as the node's own struct.
pub(crate) fn node_time(clock: &super::transport::NodeClock) -> bi::Time {
    time_from(super::transport::ros_now(clock))
}
