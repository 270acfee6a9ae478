"""The lock-step loop: publish state k → wait for one command → apply it for one step → k+1.

Per tick k (simulation time t_k = t0 + k/rate_hz, t0 = 1 s so that no stamp is zero — zero
means "now" in ROS — and run time τ_k = k/rate_hz):

1. measure the true state with the sensors; effort = the torque that acted over the step
   that just ended (the applied, clamped command; zero before the first) plus noise — the
   embedded simulator's convention;
2. discard commands still queued (answers to an earlier state; counted as stale), publish
   the JointState stamped t_k;
3. wait for one command (≤ the command timeout). A command of the wrong length or with a
   non-finite entry is refused (logged once per kind, counted) and the wait goes on. On
   timeout the same message (same stamp, same noise) is republished, at most
   ``max_republish`` times; if that stays unanswered too, the commands timed out (counted)
   and ``on_command_timeout`` decides: ``stop`` (the default) — the driver stops with
   :class:`DriverError` naming the topic that stayed silent; ``hold`` — see below;
4. clamp the command to the URDF effort limits (counted), step the plant (all substeps).

Hold (``on_command_timeout="hold"``): a forward command controller keeps the last torque, so
a robot's driver needs a command timeout. From the unanswered state on, the driver runs the
robot on its own, paced by the wall clock at the scenario rate like a real robot: each tick it
measures and publishes the state as above (no stale-command drain), waits for a command until
the tick's end, and if none came applies the safe torque of :mod:`.safe_hold` (gravity
compensation of the true plant plus damping, at the measured state, clamped like a command;
counted as a safe step). The first acceptable command answers the newest state (a
Float64MultiArray carries no stamp to match it with): it is applied, and the lock-step loop
resumes with the next state. The run still ends after ``duration_s`` of simulated time.

The run starts at q(t0) = q_d(0), q̇(t0) = q̇_d(0), once a reader of the joint states and a
writer of commands are matched (≤ the startup timeout) and ``settle_s`` has passed (DDS
discovery is not symmetric: a best-effort reader drops samples of a writer it has not yet
discovered). The reference, if published, is written before the first state; a volatile
reference writer reaches only readers matched at write time, so then a reader of the
reference must be matched too (within the same startup timeout) and the first state waits
until the matched readers acknowledged the reference (at most what is left of the startup
timeout, or the command timeout if longer; a warning, not a stop, if they did not). A
transient-local reference waits up to ``TRANSIENT_REFERENCE_WAIT_S`` for a reader and its
acknowledgement (none is not an error: a late joiner still gets it). Either way the first
state follows ``settle_s`` later, so that the controller has the reference in force from the
start (without it, it holds the first pose and brakes the arm the reference moves). It stops
after ``duration_s`` of simulated time (round(duration·rate) steps).

Real time (``realtime=True``): still lock-step, but state k is not published before
k/rate_hz of wall time has passed since the first state, as on a robot, whose clock the
controller cannot outrun. Without it the loop runs as fast as the controller answers, often
faster than real time, so work the controller does on the wall clock in the background (a
hyperparameter fit, a model build) lands later in simulated time than it would on a robot.
A state that is late (the controller or the physics was slower than a tick) is published at
once and counted (``late_steps``); the ones after it are not bunched to catch up.
Given the same parameters and the same command sequence the states are bit-identical: the
physics and the noise are seeded and nothing depends on the wall clock.
"""

from __future__ import annotations

import collections

import logging
import math
import time
from dataclasses import dataclass, field

import numpy as np

from .messages import (
    NANOS_PER_SEC,
    Float64MultiArray_,
    Header_,
    JointState_,
    JointTrajectory_,
    JointTrajectoryPoint_,
    duration_from_nanos,
    time_from_nanos,
)
from .plant import Plant
from .reference import SineReference
from .safe_hold import SafeHold, hold_time_constant
from .scenario import Scenario
from .sensors import Sensors
from .transport import DriverTransport
from .urdf import Robot

LOG = logging.getLogger("mujoco_driver")

T0_NANOS = NANOS_PER_SEC
"""Simulation time of the first state: 1 s."""

REFERENCE_PERIOD_NANOS = 10_000_000
"""Spacing of the published reference trajectory's points: 10 ms."""

ON_COMMAND_TIMEOUT = ("stop", "hold")
"""What the driver does when the commands timed out (:attr:`DriverOptions.on_command_timeout`)."""

HOLD_MESSAGE = "command timeout: holding gravity with damping"


# How long a transient-local reference waits for a reader (and its acknowledgement) before the
# run: a controller matched for the joint states matches the reference within milliseconds;
# one that does not read it (or joins late, as transient local allows) costs this once.
TRANSIENT_REFERENCE_WAIT_S = 2.0


class DriverError(Exception):
    """The run cannot go on; the message says what is missing."""


@dataclass
class DriverOptions:
    """How the loop runs (the scenario says what it simulates)."""

    duration_s: float
    command_timeout_s: float = 2.0
    startup_timeout_s: float = 30.0
    publish_reference: bool = False
    max_republish: int = 3
    """Republications of one state before the commands count as timed out."""
    on_command_timeout: str = "stop"
    """``stop``: raise :class:`DriverError` (the silent controller is a failed run); ``hold``:
    apply the safe torque in real time until commands come back, complete the run."""
    settle_s: float = 0.2
    """Pause after matching before the first state."""
    record: bool = False
    """Keep the true states and applied torques (tests)."""
    realtime: bool = False
    """Pace the lock-step by the wall clock: state k no earlier than k/rate_hz after the first."""
    command_delay_steps: int = 0
    """Apply the command answering state k at step k + this (a ros2_control robot: the
    controller manager reads the state, the command written in that cycle reaches the
    hardware in the next one). The first steps, and the first after a hold, apply the safe
    torque."""


@dataclass
class Counters:
    """What the loop counted; the result JSON is made from it."""

    steps: int = 0
    republished_states: int = 0
    refused_wrong_length: int = 0
    refused_non_finite: int = 0
    clamped_commands: int = 0
    clamped_per_joint: list[int] = field(default_factory=list)
    stale_commands_dropped: int = 0
    command_timeouts: int = 0
    """Times the commands timed out (with ``hold``: episodes of holding)."""
    safe_steps: int = 0
    """Steps driven by the safe torque instead of a command."""
    clamped_safe_steps: int = 0
    """Safe steps whose torque was clamped to the effort limits (the hold may then sag)."""
    glitches: int = 0
    round_trip_ns: list[int] = field(default_factory=list)
    wall_s: float = 0.0
    late_steps: int = 0
    """With ``realtime``: states published more than one tick after their wall-clock time."""


def stamp_nanos(k: int, rate_hz: float) -> int:
    """Simulation time of tick k, integer nanoseconds: t0 + k/rate_hz."""
    return T0_NANOS + round(k * NANOS_PER_SEC / rate_hz)


def reference_message(names: list[str], reference: SineReference, duration_s: float) -> JointTrajectory_:
    """The run's reference as a JointTrajectory: stamped t0, a point every 10 ms over the
    duration (τ = 0 … duration), positions, velocities and accelerations."""
    count = int(math.floor(duration_s * NANOS_PER_SEC / REFERENCE_PERIOD_NANOS + 1e-9)) + 1
    points = []
    for i in range(count):
        nanos = i * REFERENCE_PERIOD_NANOS
        q, qd, qdd = reference.sample(nanos / NANOS_PER_SEC)
        points.append(
            JointTrajectoryPoint_(
                positions=q.tolist(),
                velocities=qd.tolist(),
                accelerations=qdd.tolist(),
                effort=[],
                time_from_start=duration_from_nanos(nanos),
            )
        )
    return JointTrajectory_(
        header=Header_(stamp=time_from_nanos(T0_NANOS), frame_id=""), joint_names=list(names), points=points
    )


class Driver:
    """One run of the robot driver over a transport."""

    def __init__(self, robot: Robot, scenario: Scenario, transport: DriverTransport, options: DriverOptions):
        if not (math.isfinite(options.duration_s) and options.duration_s > 0.0):
            raise ValueError(f"duration {options.duration_s} s must be > 0")
        if options.command_delay_steps < 0:
            raise ValueError(f"command delay {options.command_delay_steps} steps must be >= 0")
        if options.on_command_timeout not in ON_COMMAND_TIMEOUT:
            raise ValueError(
                f"on_command_timeout {options.on_command_timeout!r} is not one of {', '.join(ON_COMMAND_TIMEOUT)}"
            )
        self.robot = robot
        self.scenario = scenario
        self.transport = transport
        self.options = options
        self.names = robot.joint_names
        self.rate_hz = scenario.sim.rate_hz
        self.ticks = max(1, round(options.duration_s * self.rate_hz))
        self.plant = Plant(robot, scenario, t0_secs=T0_NANOS / NANOS_PER_SEC)
        self.sensors = Sensors(scenario.sim)
        self.reference = SineReference(scenario.run.reference)
        self.limits = robot.effort_limits
        self.safe_hold = SafeHold(self.plant.model, self.plant.map, hold_time_constant(self.rate_hz))
        self._holding = False
        self._hold_deadline = 0.0
        self._safe_steps_at_hold_start = 0
        self._delayed: collections.deque[np.ndarray] = collections.deque()
        nv = len(self.names)
        self.counters = Counters(clamped_per_joint=[0] * nv)
        self._err_sq = np.zeros(nv)
        self._err_max = np.zeros(nv)
        self._err_count = 0
        # Over the first simulated second: how a warm-started model does before it learns.
        self._first_sq = np.zeros(nv)
        self._first_count = 0
        self.true_q: list[np.ndarray] = []
        self.true_v: list[np.ndarray] = []
        self.applied: list[np.ndarray] = []
        self.completed = False

    # -- the loop ---------------------------------------------------------------------

    def run(self) -> None:
        """Runs to the end; raises :class:`DriverError` when the peer is missing or silent."""
        q0, v0, _ = self.reference.sample(0.0)
        self.plant.reset(q0, v0)
        deadline = time.monotonic() + self.options.startup_timeout_s
        self._wait_for_peer(deadline)
        if self.options.publish_reference:
            self.transport.publish_reference(reference_message(self.names, self.reference, self.options.duration_s))
            if self._volatile_reference():
                wait_s = max(deadline - time.monotonic(), self.options.command_timeout_s)
                if not self.transport.wait_for_reference_acks(wait_s):
                    LOG.warning(
                        "the reference on %s was not acknowledged by every matched reader within %.1f s; "
                        "starting anyway",
                        self.transport.topics.reference,
                        wait_s,
                    )
            elif self.transport.wait_for_reference_reader(TRANSIENT_REFERENCE_WAIT_S) > 0:
                # A controller that reads the reference gets it before the first state: started
                # without it, it holds the first pose and brakes the arm the reference moves.
                self.transport.wait_for_reference_acks(TRANSIENT_REFERENCE_WAIT_S)
            # Time for the controller to check the reference and put it in force.
            time.sleep(self.options.settle_s)
        wall = time.perf_counter()
        try:
            self._loop()
        finally:
            self.counters.wall_s = time.perf_counter() - wall
        self.completed = True

    def _volatile_reference(self) -> bool:
        return self.options.publish_reference and self.transport.reference_durability == "volatile"

    def _wait_for_peer(self, deadline: float) -> None:
        readers, writers = self.transport.wait_for_peer(max(0.0, deadline - time.monotonic()))
        reference_readers = 1
        if self._volatile_reference():
            reference_readers = self.transport.wait_for_reference_reader(max(0.0, deadline - time.monotonic()))
        if readers == 0 or writers == 0 or reference_readers == 0:
            names = self.transport.dds_names
            topics = self.transport.topics
            missing = []
            if readers == 0:
                missing.append(f"no reader of {topics.joint_states} (DDS {names['joint_states']})")
            if writers == 0:
                missing.append(f"no writer of {topics.command} (DDS {names['command']})")
            if reference_readers == 0:
                missing.append(
                    f"no reader of {topics.reference} (DDS {names['reference']}; the volatile reference "
                    "reaches only readers matched before the run starts)"
                )
            raise DriverError(
                f"after {self.options.startup_timeout_s:g} s of waiting for the controller: "
                + " and ".join(missing)
                + f" on domain {self.transport.participant.domain_id}"
            )
        time.sleep(self.options.settle_s)

    def _loop(self) -> None:
        nv = len(self.names)
        tau_prev = np.zeros(nv)
        half = self.ticks // 2
        record = self.options.record
        if record:
            self.true_q.append(self.plant.q())
            self.true_v.append(self.plant.v())
        next_state_at = time.monotonic()
        for k in range(self.ticks):
            if self.options.realtime:
                next_state_at = self._pace(next_state_at)
            q_true, v_true = self.plant.q(), self.plant.v()
            if self.options.publish_reference and (k >= half or k < self.rate_hz):
                q_d, _, _ = self.reference.sample(k / self.rate_hz)
                err = q_true - q_d
                if k < self.rate_hz:
                    self._first_sq += err * err
                    self._first_count += 1
                if k >= half:
                    self._err_sq += err * err
                    self._err_max = np.maximum(self._err_max, np.abs(err))
                    self._err_count += 1
            measured = self.sensors.measure(q_true, v_true, tau_prev)
            self.counters.glitches += measured.glitches
            msg = JointState_(
                header=Header_(stamp=time_from_nanos(stamp_nanos(k, self.rate_hz)), frame_id=""),
                name=list(self.names),
                position=measured.q.tolist(),
                velocity=measured.v.tolist(),
                effort=measured.tau.tolist(),
            )
            command = self._exchange_holding(msg) if self._holding else self._exchange(k, msg)
            if command is None:
                if not self._holding:
                    self._start_hold(k)
                tau = self._safe_torque(measured.q, measured.v)
                self._delayed.clear()
            else:
                if self._holding:
                    self._end_hold(k)
                tau = self._clamp_command(command)
                if self.options.command_delay_steps > 0:
                    self._delayed.append(tau)
                    if len(self._delayed) > self.options.command_delay_steps:
                        tau = self._delayed.popleft()
                    else:
                        tau = self._safe_torque(measured.q, measured.v)
            self.plant.step(tau)
            tau_prev = tau
            self.counters.steps += 1
            if record:
                self.true_q.append(self.plant.q())
                self.true_v.append(self.plant.v())
                self.applied.append(tau.copy())

    def _pace(self, due: float) -> float:
        """Waits until the state due at ``due`` (monotonic s) may go out; returns when the
        next one is due. A late state goes out at once and the schedule restarts from now."""
        now = time.monotonic()
        if now < due:
            time.sleep(due - now)
            return due + 1.0 / self.rate_hz
        if now - due > 1.0 / self.rate_hz:
            self.counters.late_steps += 1
            return now + 1.0 / self.rate_hz
        return due + 1.0 / self.rate_hz

    def _clamp_command(self, command: np.ndarray) -> np.ndarray:
        tau = np.clip(command, -self.limits, self.limits)
        clamped = tau != command
        if clamped.any():
            self.counters.clamped_commands += 1
            for j in np.flatnonzero(clamped):
                self.counters.clamped_per_joint[j] += 1
        return tau

    def _safe_torque(self, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        """The hold's torque at the measured state, clamped as a command would be."""
        u = self.safe_hold.torque(q, v)
        tau = np.clip(u, -self.limits, self.limits)
        if np.any(tau != u):
            self.counters.clamped_safe_steps += 1
        self.counters.safe_steps += 1
        return tau

    def _start_hold(self, k: int) -> None:
        self._holding = True
        self._safe_steps_at_hold_start = self.counters.safe_steps
        # The unanswered state's safe step acts now; the following ticks are paced from here.
        self._hold_deadline = time.monotonic()
        LOG.warning(
            "%s: %s; states go on at %g Hz in real time, a command resumes the lock-step",
            HOLD_MESSAGE,
            self._silence_message(k, self.options.max_republish + 1),
            self.rate_hz,
        )

    def _end_hold(self, k: int) -> None:
        self._holding = False
        LOG.info(
            "commands resumed at step %d after %d safe steps; lock-step again",
            k,
            self.counters.safe_steps - self._safe_steps_at_hold_start,
        )

    def _exchange_holding(self, msg: JointState_) -> np.ndarray | None:
        """While holding: publishes the state and returns the first acceptable command that
        arrives before the tick ends, or ``None``."""
        # No stale drain: whatever a (re)started controller sends is the newest news there is,
        # and one slower than a tick must still be able to take over.
        self.transport.publish_state(msg)
        published_ns = time.perf_counter_ns()
        # Real time at rate_hz: a tick that starts late only polls, and the ticks after it are
        # paced from now rather than run back to back to catch up.
        self._hold_deadline = max(self._hold_deadline + 1.0 / self.rate_hz, time.monotonic())
        while True:
            command = self.transport.take_command(self._hold_deadline)
            if command is None:
                return None
            values = self._accept(command)
            if values is not None:
                self.counters.round_trip_ns.append(time.perf_counter_ns() - published_ns)
                return values

    def _exchange(self, k: int, msg: JointState_) -> np.ndarray | None:
        """Publishes state k and returns the first acceptable command for it; when the
        commands timed out, ``None`` (hold) or :class:`DriverError` (stop)."""
        transport = self.transport
        self.counters.stale_commands_dropped += transport.drain_commands()
        transport.publish_state(msg)
        published_ns = time.perf_counter_ns()
        deadline = time.monotonic() + self.options.command_timeout_s
        publications = 1
        while True:
            command = transport.take_command(deadline)
            if command is None:
                if publications > self.options.max_republish:
                    self.counters.command_timeouts += 1
                    if self.options.on_command_timeout == "stop":
                        raise DriverError(self._silence_message(k, publications))
                    return None
                transport.publish_state(msg)
                published_ns = time.perf_counter_ns()
                deadline = time.monotonic() + self.options.command_timeout_s
                publications += 1
                self.counters.republished_states += 1
                continue
            values = self._accept(command)
            if values is not None:
                self.counters.round_trip_ns.append(time.perf_counter_ns() - published_ns)
                return values

    def _accept(self, command: Float64MultiArray_) -> np.ndarray | None:
        nv = len(self.names)
        values = np.asarray(command.data, dtype=float)
        if values.shape != (nv,):
            if self.counters.refused_wrong_length == 0:
                LOG.warning(
                    "refused a command with %d values on %s: expected %d (one per joint, in the order %s); "
                    "further ones are counted, not logged",
                    values.size,
                    self.transport.topics.command,
                    nv,
                    ", ".join(self.names),
                )
            self.counters.refused_wrong_length += 1
            return None
        if not np.all(np.isfinite(values)):
            if self.counters.refused_non_finite == 0:
                bad = int(np.flatnonzero(~np.isfinite(values))[0])
                LOG.warning(
                    "refused a command with a non-finite value (%s = %r) on %s; further ones are counted, not logged",
                    self.names[bad],
                    values[bad],
                    self.transport.topics.command,
                )
            self.counters.refused_non_finite += 1
            return None
        return values

    def _silence_message(self, k: int, publications: int) -> str:
        readers, writers = self.transport.matched()
        t = stamp_nanos(k, self.rate_hz) / NANOS_PER_SEC
        return (
            f"no command on {self.transport.topics.command} (DDS {self.transport.dds_names['command']}) "
            f"for the state stamped t = {t:.6f} s (step {k} of {self.ticks}), published {publications} times "
            f"{self.options.command_timeout_s:g} s apart; matched now: {readers} joint-state reader(s), "
            f"{writers} command writer(s)"
        )

    # -- results ----------------------------------------------------------------------

    def tracking_error_first_second(self) -> list[float] | None:
        """RMS of the true q − q_d per joint over the first simulated second, if known."""
        if not self.options.publish_reference or self._first_count == 0:
            return None
        return np.sqrt(self._first_sq / self._first_count).tolist()

    def tracking_error(self) -> tuple[list[float], list[float]] | None:
        """(RMS, max) of the true q − q_d per joint over the second half, if known."""
        if not self.options.publish_reference or self._err_count == 0:
            return None
        rms = np.sqrt(self._err_sq / self._err_count)
        return rms.tolist(), self._err_max.tolist()
