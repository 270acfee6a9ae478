"""Messages: ROS 2 type names, CDR bytes against an encoder written here from the Jazzy .msg
definitions, ROS → DDS topic names, and a round trip through Cyclone DDS with the driver's QoS."""

import math
import struct
import time

import pytest
from controller import BEST_EFFORT, RELIABLE
from cyclonedds.core import Policy, Qos
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from gpn_mujoco import messages as m
from gpn_mujoco.transport import DriverTransport, Topics, delete_entities


class Cdr:
    """Plain little-endian CDR (XCDR1, as ROS 2 uses): primitives aligned to their size from
    the start of the payload, strings as uint32 length (with the NUL) + bytes + NUL,
    sequences as uint32 count + elements."""

    def __init__(self):
        self.body = bytearray()

    def align(self, n):
        self.body += b"\0" * (-len(self.body) % n)

    def u32(self, x):
        self.align(4)
        self.body += struct.pack("<I", x)

    def i32(self, x):
        self.align(4)
        self.body += struct.pack("<i", x)

    def f64(self, x):
        self.align(8)
        self.body += struct.pack("<d", x)

    def string(self, s):
        data = s.encode() + b"\0"
        self.u32(len(data))
        self.body += data

    def strings(self, xs):
        self.u32(len(xs))
        for x in xs:
            self.string(x)

    def f64s(self, xs):
        self.u32(len(xs))
        for x in xs:
            self.f64(x)

    def header(self, sec, nanosec, frame_id):
        self.i32(sec)
        self.u32(nanosec)
        self.string(frame_id)

    def bytes(self):
        return b"\x00\x01\x00\x00" + bytes(self.body)


def test_type_names_are_ros2s():
    expected = {
        m.Time_: "builtin_interfaces::msg::dds_::Time_",
        m.Duration_: "builtin_interfaces::msg::dds_::Duration_",
        m.Header_: "std_msgs::msg::dds_::Header_",
        m.JointState_: "sensor_msgs::msg::dds_::JointState_",
        m.MultiArrayDimension_: "std_msgs::msg::dds_::MultiArrayDimension_",
        m.MultiArrayLayout_: "std_msgs::msg::dds_::MultiArrayLayout_",
        m.Float64MultiArray_: "std_msgs::msg::dds_::Float64MultiArray_",
        m.JointTrajectoryPoint_: "trajectory_msgs::msg::dds_::JointTrajectoryPoint_",
        m.JointTrajectory_: "trajectory_msgs::msg::dds_::JointTrajectory_",
    }
    for cls, name in expected.items():
        assert cls.__idl_typename__ == name


def test_joint_state_bytes_follow_the_msg_definition():
    msg = m.JointState_(
        header=m.Header_(stamp=m.Time_(sec=12, nanosec=345), frame_id="abc"),
        name=["j1", "joint_two"],
        position=[1.5, -2.25],
        velocity=[0.125, 3.0],
        effort=[-7.0, 1e-3],
    )
    cdr = Cdr()
    cdr.header(12, 345, "abc")
    cdr.strings(["j1", "joint_two"])
    cdr.f64s([1.5, -2.25])
    cdr.f64s([0.125, 3.0])
    cdr.f64s([-7.0, 1e-3])
    assert msg.serialize() == cdr.bytes()
    assert m.JointState_.deserialize(cdr.bytes()) == msg


def test_float64_multi_array_bytes_follow_the_msg_definition():
    msg = m.Float64MultiArray_(
        layout=m.MultiArrayLayout_(dim=[m.MultiArrayDimension_(label="joints", size=3, stride=3)], data_offset=1),
        data=[1.0, -2.0, 3.5],
    )
    cdr = Cdr()
    cdr.u32(1)
    cdr.string("joints")
    cdr.u32(3)
    cdr.u32(3)
    cdr.u32(1)
    cdr.f64s([1.0, -2.0, 3.5])
    assert msg.serialize() == cdr.bytes()
    # What ros2_control's forward controller gets from `ros2 topic pub`: an empty layout.
    empty = Cdr()
    empty.u32(0)
    empty.u32(0)
    empty.f64s([4.0])
    assert m.Float64MultiArray_(data=[4.0]).serialize() == empty.bytes()


def test_joint_trajectory_bytes_follow_the_msg_definition():
    point = m.JointTrajectoryPoint_(
        positions=[0.1, 0.2], velocities=[0.3, 0.4], accelerations=[0.5, 0.6], effort=[],
        time_from_start=m.Duration_(sec=2, nanosec=10_000_000),
    )
    msg = m.JointTrajectory_(header=m.Header_(stamp=m.Time_(1, 0), frame_id=""), joint_names=["a", "b"],
                             points=[point, point])
    cdr = Cdr()
    cdr.header(1, 0, "")
    cdr.strings(["a", "b"])
    cdr.u32(2)
    for _ in range(2):
        cdr.f64s([0.1, 0.2])
        cdr.f64s([0.3, 0.4])
        cdr.f64s([0.5, 0.6])
        cdr.f64s([])
        cdr.i32(2)
        cdr.u32(10_000_000)
    assert msg.serialize() == cdr.bytes()


def test_ros_topic_names_map_to_dds_names():
    assert m.dds_topic("/joint_states") == "rt/joint_states"
    assert m.dds_topic("/effort_controller/commands") == "rt/effort_controller/commands"
    for bad in ("joint_states", "/", "/a//b", "/a/", ""):
        with pytest.raises(ValueError, match="not a fully qualified ROS 2 name"):
            m.dds_topic(bad)


def test_stamps_split_into_seconds_and_nanoseconds():
    assert m.time_from_nanos(1_000_000_000) == m.Time_(1, 0)
    assert m.time_from_nanos(12_345_678_901) == m.Time_(12, 345_678_901)
    assert m.nanos_of(m.Duration_(3, 7)) == 3_000_000_007


def wait_for(predicate, timeout_s=5.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.005)
    raise AssertionError("timed out")


def test_round_trip_through_cyclone_dds_with_the_drivers_qos(domain_id):
    topics = Topics()
    driver = DriverTransport(domain_id, topics, with_reference=True)
    peer = DomainParticipant(domain_id)
    state_reader = DataReader(peer, Topic(peer, "rt/joint_states", m.JointState_), qos=BEST_EFFORT)
    command_writer = DataWriter(peer, Topic(peer, "rt/effort_controller/commands", m.Float64MultiArray_), qos=RELIABLE)
    late_reader = None
    try:
        assert driver.wait_for_peer(5.0) == (1, 1)
        state = m.JointState_(header=m.Header_(m.Time_(1, 2), ""), name=["a"], position=[1.0], velocity=[2.0],
                              effort=[3.0])
        driver.publish_state(state)
        assert wait_for(lambda: state_reader.take(N=4)) == [state]

        command_writer.write(m.Float64MultiArray_(data=[1.0, math.inf]))
        got = driver.take_command(time.monotonic() + 5.0)
        assert got.data[0] == 1.0 and math.isinf(got.data[1])
        assert driver.take_command(time.monotonic() + 0.05) is None

        for x in (1.0, 2.0, 3.0):
            command_writer.write(m.Float64MultiArray_(data=[x]))
        wait_for(lambda: len(driver.command_reader.read(N=8)) == 3)
        assert driver.drain_commands() == 3

        # Transient-local, keep-last 1: a reader that joins after the publication gets the
        # last reference.
        old = m.JointTrajectory_(joint_names=["old"])
        new = m.JointTrajectory_(header=m.Header_(m.Time_(1, 0), ""), joint_names=["a"],
                                 points=[m.JointTrajectoryPoint_(positions=[0.5])])
        driver.publish_reference(old)
        driver.publish_reference(new)
        late_qos = Qos(Policy.Reliability.Reliable(0), Policy.Durability.TransientLocal, Policy.History.KeepLast(1))
        late_reader = DataReader(peer, Topic(peer, "rt/gp_learning_node/reference", m.JointTrajectory_), qos=late_qos)
        assert wait_for(lambda: late_reader.take(N=4)) == [new]
    finally:
        delete_entities(late_reader, state_reader, command_writer, peer)
        driver.close()
