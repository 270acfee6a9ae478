"""A fake controller for the lock-step tests: reads joint states (best-effort, as the node
does) and answers each with an effort command (reliable, keep-last 10), in its own thread.

Its law is computed torque on a MuJoCo model (by default the nominal one): u = M(q)(q̈_d −
K_d ė − K_p e) + c(q, q̇) via ``mj_inverse``, with the reference of the scenario at the
state's stamp (τ = stamp − t0). Tests change what it sends with ``script``: a function of
(the state's index in arrival order, the law's command) → list of commands to send.
"""

from __future__ import annotations

import threading

import mujoco
import numpy as np
from cyclonedds.core import InstanceState, Policy, Qos, ReadCondition, SampleState, ViewState, WaitSet
from cyclonedds.domain import DomainParticipant
from cyclonedds.pub import DataWriter
from cyclonedds.sub import DataReader
from cyclonedds.topic import Topic
from cyclonedds.util import duration
from gpn_mujoco.driver import T0_NANOS
from gpn_mujoco.messages import Float64MultiArray_, JointState_, nanos_of
from gpn_mujoco.reference import SineReference
from gpn_mujoco.scenario import Scenario
from gpn_mujoco.transport import Topics, delete_entities
from gpn_mujoco.urdf import Robot, joint_map

BEST_EFFORT = Qos(Policy.Reliability.BestEffort, Policy.History.KeepLast(10))
RELIABLE = Qos(Policy.Reliability.Reliable(duration(seconds=1)), Policy.History.KeepLast(10))


def command(values) -> Float64MultiArray_:
    return Float64MultiArray_(data=[float(v) for v in values])


class ComputedTorque:
    """u = M(q)(q̈_d − K_d ė − K_p e) + c(q, q̇) on ``model`` (joints matched by name)."""

    def __init__(self, robot: Robot, scenario: Scenario, model: mujoco.MjModel | None = None,
                 kp_per_s2: float = 100.0, kd_per_s: float = 20.0):
        self.model = model if model is not None else robot.nominal_model()
        self.data = mujoco.MjData(self.model)
        self.map = joint_map(self.model, robot)
        self.names = robot.joint_names
        self.reference = SineReference(scenario.run.reference)
        self.kp, self.kd = kp_per_s2, kd_per_s

    def __call__(self, msg: JointState_) -> np.ndarray:
        order = [msg.name.index(n) for n in self.names]
        q = np.asarray(msg.position)[order]
        v = np.asarray(msg.velocity)[order]
        tau_run = (nanos_of(msg.header.stamp) - T0_NANOS) / 1e9
        q_d, qd_d, qdd_d = self.reference.sample(tau_run)
        a = qdd_d - self.kd * (v - qd_d) - self.kp * (q - q_d)
        d = self.data
        d.qpos[self.map.qpos] = q
        d.qvel[self.map.dof] = v
        d.qacc[self.map.dof] = a
        mujoco.mj_inverse(self.model, d)
        return d.qfrc_inverse[self.map.dof].copy()


class FakeController(threading.Thread):
    """Answers every joint state with ``script(index, law(msg))`` commands."""

    def __init__(self, domain_id: int, law, script=None, topics: Topics = Topics()):
        super().__init__(daemon=True)
        self.law = law
        self.script = script or (lambda index, u: [command(u)])
        self.participant = DomainParticipant(domain_id)
        dp = self.participant
        self.reader = DataReader(dp, Topic(dp, "rt" + topics.joint_states, JointState_), qos=BEST_EFFORT)
        self.writer = DataWriter(dp, Topic(dp, "rt" + topics.command, Float64MultiArray_), qos=RELIABLE)
        self.waitset = WaitSet(dp)
        self.condition = ReadCondition(self.reader, SampleState.Any | ViewState.Any | InstanceState.Any)
        self.waitset.attach(self.condition)
        self.states: list[JointState_] = []
        self.sent: list[list[float]] = []
        self.error: BaseException | None = None
        self._halt = threading.Event()

    def run(self) -> None:
        try:
            while not self._halt.is_set():
                self.waitset.wait(duration(milliseconds=50))
                for msg in self.reader.take(N=16):
                    if not isinstance(msg, JointState_):
                        continue
                    index = len(self.states)
                    self.states.append(msg)
                    for cmd in self.script(index, self.law(msg)):
                        self.sent.append(list(cmd.data))
                        self.writer.write(cmd)
        except BaseException as err:  # reported by stop()
            self.error = err

    def stop(self) -> None:
        self._halt.set()
        self.join(timeout=5)
        delete_entities(self.waitset, self.condition, self.reader, self.writer, self.participant)
        if self.error is not None:
            raise self.error
