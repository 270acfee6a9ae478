"""ROS 2 message types as cyclonedds IDL classes, under the names ROS 2 gives them in DDS.

Field order and types follow the ROS 2 Jazzy ``.msg`` definitions exactly (the CDR bytes
depend on nothing else); the DDS type name is ``pkg::msg::dds_::Type_``:

- builtin_interfaces/Time, Duration: ``int32 sec``, ``uint32 nanosec``
- std_msgs/Header: ``builtin_interfaces/Time stamp``, ``string frame_id``
- sensor_msgs/JointState: ``Header header``, ``string[] name``, ``float64[] position``,
  ``float64[] velocity``, ``float64[] effort``
- std_msgs/MultiArrayDimension: ``string label``, ``uint32 size``, ``uint32 stride``
- std_msgs/MultiArrayLayout: ``MultiArrayDimension[] dim``, ``uint32 data_offset``
- std_msgs/Float64MultiArray: ``MultiArrayLayout layout``, ``float64[] data``
- trajectory_msgs/JointTrajectoryPoint: ``float64[] positions``, ``float64[] velocities``,
  ``float64[] accelerations``, ``float64[] effort``,
  ``builtin_interfaces/Duration time_from_start``
- trajectory_msgs/JointTrajectory: ``Header header``, ``string[] joint_names``,
  ``JointTrajectoryPoint[] points``

ROS 2 topic ``/name`` is DDS topic ``rt/name`` (:func:`dds_topic`).
"""

# No `from __future__ import annotations`: cyclonedds resolves the field types at run time.

from dataclasses import dataclass, field

from cyclonedds.idl import IdlStruct
from cyclonedds.idl.types import float64, int32, sequence, uint32

NANOS_PER_SEC = 1_000_000_000


@dataclass
class Time_(IdlStruct, typename="builtin_interfaces::msg::dds_::Time_"):
    sec: int32 = 0
    nanosec: uint32 = 0


@dataclass
class Duration_(IdlStruct, typename="builtin_interfaces::msg::dds_::Duration_"):
    sec: int32 = 0
    nanosec: uint32 = 0


@dataclass
class Header_(IdlStruct, typename="std_msgs::msg::dds_::Header_"):
    stamp: Time_ = field(default_factory=Time_)
    frame_id: str = ""


@dataclass
class JointState_(IdlStruct, typename="sensor_msgs::msg::dds_::JointState_"):
    header: Header_ = field(default_factory=Header_)
    name: sequence[str] = field(default_factory=list)
    position: sequence[float64] = field(default_factory=list)
    velocity: sequence[float64] = field(default_factory=list)
    effort: sequence[float64] = field(default_factory=list)


@dataclass
class MultiArrayDimension_(IdlStruct, typename="std_msgs::msg::dds_::MultiArrayDimension_"):
    label: str = ""
    size: uint32 = 0
    stride: uint32 = 0


@dataclass
class MultiArrayLayout_(IdlStruct, typename="std_msgs::msg::dds_::MultiArrayLayout_"):
    dim: sequence[MultiArrayDimension_] = field(default_factory=list)
    data_offset: uint32 = 0


@dataclass
class Float64MultiArray_(IdlStruct, typename="std_msgs::msg::dds_::Float64MultiArray_"):
    layout: MultiArrayLayout_ = field(default_factory=MultiArrayLayout_)
    data: sequence[float64] = field(default_factory=list)


@dataclass
class JointTrajectoryPoint_(IdlStruct, typename="trajectory_msgs::msg::dds_::JointTrajectoryPoint_"):
    positions: sequence[float64] = field(default_factory=list)
    velocities: sequence[float64] = field(default_factory=list)
    accelerations: sequence[float64] = field(default_factory=list)
    effort: sequence[float64] = field(default_factory=list)
    time_from_start: Duration_ = field(default_factory=Duration_)


@dataclass
class JointTrajectory_(IdlStruct, typename="trajectory_msgs::msg::dds_::JointTrajectory_"):
    header: Header_ = field(default_factory=Header_)
    joint_names: sequence[str] = field(default_factory=list)
    points: sequence[JointTrajectoryPoint_] = field(default_factory=list)


def dds_topic(ros_name: str) -> str:
    """The DDS topic of a fully qualified ROS 2 topic name: ``/joint_states`` → ``rt/joint_states``."""
    if not ros_name.startswith("/") or len(ros_name) < 2 or ros_name.endswith("/") or "//" in ros_name:
        raise ValueError(f"topic {ros_name!r} is not a fully qualified ROS 2 name (like /joint_states)")
    return "rt" + ros_name


def time_from_nanos(nanos: int) -> Time_:
    """A ``builtin_interfaces/Time`` from integer nanoseconds (≥ 0)."""
    sec, nanosec = divmod(int(nanos), NANOS_PER_SEC)
    return Time_(sec=sec, nanosec=nanosec)


def duration_from_nanos(nanos: int) -> Duration_:
    """A ``builtin_interfaces/Duration`` from integer nanoseconds (≥ 0)."""
    sec, nanosec = divmod(int(nanos), NANOS_PER_SEC)
    return Duration_(sec=sec, nanosec=nanosec)


def nanos_of(stamp: Time_ | Duration_) -> int:
    """Integer nanoseconds of a Time or Duration."""
    return stamp.sec * NANOS_PER_SEC + stamp.nanosec
