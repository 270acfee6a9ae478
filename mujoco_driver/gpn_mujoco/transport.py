"""DDS I/O of the driver: one participant, its topics and QoS, matching, command waits.

QoS (as ros2_control's): joint states — reliable, volatile, keep-last 10 (a best-effort
reader, as the node's, is compatible); commands — reliable, volatile, keep-last 10;
reference — reliable, keep-last 1, transient-local by default (a node that joins later still
gets it) or volatile (ROS 2's default QoS: only readers matched when it is written get it, so
the driver writes it once a reader is matched, see :meth:`DriverTransport.reference_readers`).
Writers use XCDR1 (plain CDR), the representation ROS 2 uses.

Network: Cyclone DDS's configuration comes from ``CYCLONEDDS_URI`` as usual. With
:func:`use_localhost_only` (the CLI's ``--localhost-only``, or ROS 2's
``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` / ``ROS_LOCALHOST_ONLY=1``) and no
``CYCLONEDDS_URI``, the driver uses ``mujoco_driver/cyclonedds_localhost.xml``: loopback only,
unicast discovery to 127.0.0.1.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from cyclonedds.core import InstanceState, Policy, Qos, ReadCondition, SampleState, ViewState, WaitSet
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration

from .messages import Float64MultiArray_, JointState_, JointTrajectory_, dds_topic

LOCALHOST_CONFIG = Path(__file__).resolve().parents[1] / "cyclonedds_localhost.xml"

_XCDR1 = Policy.DataRepresentation(use_cdrv0_representation=True)
STATE_QOS = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepLast(10), _XCDR1)
COMMAND_QOS = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepLast(10))
REFERENCE_QOS = Qos(
    Policy.Reliability.Reliable(duration(seconds=1)),
    Policy.Durability.TransientLocal,
    Policy.History.KeepLast(1),
    _XCDR1,
)
REFERENCE_VOLATILE_QOS = Qos(
    Policy.Reliability.Reliable(duration(seconds=1)),
    Policy.Durability.Volatile,
    Policy.History.KeepLast(1),
    _XCDR1,
)
REFERENCE_DURABILITIES = ("transient_local", "volatile")
"""Durabilities of the reference writer (the CLI's ``--reference-durability``)."""


def reference_qos(durability: str) -> Qos:
    """The reference writer's QoS for ``durability`` (one of :data:`REFERENCE_DURABILITIES`)."""
    if durability == "transient_local":
        return REFERENCE_QOS
    if durability == "volatile":
        return REFERENCE_VOLATILE_QOS
    raise ValueError(f"reference durability {durability!r} is not one of {', '.join(REFERENCE_DURABILITIES)}")


def localhost_requested(env: dict[str, str] | None = None) -> bool:
    """Whether ROS 2's environment asks for localhost-only discovery."""
    env = os.environ if env is None else env
    return env.get("ROS_AUTOMATIC_DISCOVERY_RANGE", "").upper() == "LOCALHOST" or env.get("ROS_LOCALHOST_ONLY") == "1"


def use_localhost_only() -> bool:
    """Points Cyclone DDS at the loopback-only configuration unless ``CYCLONEDDS_URI`` is
    set; call before the first participant is created. Returns whether it did."""
    if os.environ.get("CYCLONEDDS_URI"):
        return False
    os.environ["CYCLONEDDS_URI"] = LOCALHOST_CONFIG.as_uri()
    return True


def default_domain_id(env: dict[str, str] | None = None) -> int:
    """``$ROS_DOMAIN_ID``, else 0."""
    env = os.environ if env is None else env
    text = env.get("ROS_DOMAIN_ID", "").strip()
    if not text:
        return 0
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"ROS_DOMAIN_ID={text!r} is not an integer") from None
    check_domain_id(value)
    return value


def check_domain_id(value: int) -> None:
    """ROS 2 domain ids are 0–232 (the RTPS port mapping's limit)."""
    if not 0 <= value <= 232:
        raise ValueError(f"domain id {value} is outside 0–232")


@dataclass(frozen=True)
class Topics:
    """ROS 2 topic names of the driver."""

    joint_states: str = "/joint_states"
    command: str = "/effort_controller/commands"
    reference: str = "/gp_learning_node/reference"


class DriverTransport:
    """The driver's DDS entities. Not thread-safe: one loop uses it."""

    def __init__(
        self, domain_id: int, topics: Topics, with_reference: bool, reference_durability: str = "transient_local"
    ):
        check_domain_id(domain_id)
        qos = reference_qos(reference_durability)
        self.topics = topics
        self.reference_durability = reference_durability
        self.dds_names = {
            "joint_states": dds_topic(topics.joint_states),
            "command": dds_topic(topics.command),
            "reference": dds_topic(topics.reference),
        }
        self.participant = DomainParticipant(domain_id)
        dp = self.participant
        state_topic = Topic(dp, self.dds_names["joint_states"], JointState_)
        command_topic = Topic(dp, self.dds_names["command"], Float64MultiArray_)
        self.state_writer = DataWriter(dp, state_topic, qos=STATE_QOS)
        self.command_reader = DataReader(dp, command_topic, qos=COMMAND_QOS)
        self._condition = ReadCondition(self.command_reader, SampleState.Any | ViewState.Any | InstanceState.Any)
        self._waitset = WaitSet(dp)
        self._waitset.attach(self._condition)
        self.reference_writer = None
        if with_reference:
            reference_topic = Topic(dp, self.dds_names["reference"], JointTrajectory_)
            self.reference_writer = DataWriter(dp, reference_topic, qos=qos)

    def matched(self) -> tuple[int, int]:
        """(readers of our joint states, writers of commands) currently matched.

        From the matched statuses: `get_matched_subscriptions()` sizes its list by one call
        and fills it by another, and raises IndexError when a peer matches in between (seen
        in CI while the node started)."""
        return (
            self.state_writer.get_publication_matched_status().current_count,
            self.command_reader.get_subscription_matched_status().current_count,
        )

    def wait_for_peer(self, timeout_s: float) -> tuple[int, int]:
        """Waits until a joint-state reader and a command writer are matched, or the
        timeout; returns the last :meth:`matched` counts."""
        deadline = time.monotonic() + timeout_s
        while True:
            counts = self.matched()
            if counts[0] > 0 and counts[1] > 0:
                return counts
            if time.monotonic() >= deadline:
                return counts
            time.sleep(0.005)

    def reference_readers(self) -> int:
        """Readers of the reference currently matched (the writer's publication-matched status)."""
        if self.reference_writer is None:
            return 0
        return self.reference_writer.get_publication_matched_status().current_count

    def wait_for_reference_reader(self, timeout_s: float) -> int:
        """Waits until a reader of the reference is matched, or the timeout (the count is
        checked at least once); returns the last :meth:`reference_readers` count."""
        deadline = time.monotonic() + timeout_s
        while True:
            count = self.reference_readers()
            if count > 0 or time.monotonic() >= deadline:
                return count
            time.sleep(0.005)

    def wait_for_reference_acks(self, timeout_s: float) -> bool:
        """Waits until every matched reader acknowledged the reference (reliable), or the
        timeout; returns whether they did."""
        if self.reference_writer is None:
            raise RuntimeError("the transport was created without a reference writer")
        try:
            return self.reference_writer.wait_for_acks(duration(seconds=max(0.0, timeout_s)))
        except AttributeError:  # cyclonedds 11.0.1's DataWriter.wait_for_acks: timeout → missing constant
            return False

    def publish_state(self, msg: JointState_) -> None:
        self.state_writer.write(msg)

    def publish_reference(self, msg: JointTrajectory_) -> None:
        if self.reference_writer is None:
            raise RuntimeError("the transport was created without a reference writer")
        self.reference_writer.write(msg)

    def drain_commands(self) -> int:
        """Takes and discards every command waiting; returns how many."""
        dropped = 0
        while True:
            samples = self.command_reader.take(N=64)
            if not samples:
                return dropped
            dropped += sum(1 for s in samples if isinstance(s, Float64MultiArray_))

    def take_command(self, deadline: float) -> Float64MultiArray_ | None:
        """The next command, waiting until ``deadline`` (``time.monotonic()`` seconds);
        ``None`` on timeout."""
        while True:
            for sample in self.command_reader.take(N=1):
                if isinstance(sample, Float64MultiArray_):
                    return sample
            remaining = deadline - time.monotonic()
            if remaining <= 0.0:
                return None
            self._waitset.wait(duration(seconds=remaining))

    def close(self) -> None:
        """Deletes the DDS entities (readers and writers first, then the participant)."""
        delete_entities(
            self._waitset, self._condition, self.reference_writer, self.command_reader, self.state_writer, self.participant
        )
        self._waitset = self._condition = self.reference_writer = None
        self.command_reader = self.state_writer = self.participant = None


def delete_entities(*entities) -> None:
    """Deletes cyclonedds entities now rather than at garbage collection (``None`` skipped)."""
    for entity in entities:
        if entity is not None:
            entity.__del__()
