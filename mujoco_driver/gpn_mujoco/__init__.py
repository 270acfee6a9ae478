"""gpn_mujoco: a MuJoCo robot driver speaking ROS 2 over DDS, for gp-learning-node.

The independent physics engine of the closed-loop test. It behaves like a ros2_control
hardware interface with a joint_state_broadcaster and an effort forward controller:
it loads a URDF (visuals and collisions stripped), adds a scenario's unmodelled payload,
friction and armature, publishes ``/joint_states`` and applies effort commands in
lock-step (state out → wait for the command → step), so the loop is deterministic at any
speed. Knows nothing of learning; speaks ROS 2 only through DDS names
(``rt/…``, ``pkg::msg::dds_::Type_``) with PyPI ``cyclonedds``.

Modules, one job each:

- ``urdf``: URDF → joint list (the node's order) and the nominal MuJoCo model spec.
- ``scenario``: the node's parameter YAML → checked driver settings.
- ``reference``: the sine reference q_d(τ) of the ``run:`` section.
- ``plant``: the true robot in MuJoCo (payload, friction, armature, integration).
- ``sensors``: encoder, velocity and torque-sensor noise, glitches.
- ``messages``: the ROS 2 message types as cyclonedds IDL classes.
- ``transport``: DDS participant, topics, QoS, matching, waiting for a command.
- ``safe_hold``: the robot's own safe torque when commands time out (gravity + damping).
- ``driver``: the lock-step loop, the command timeout's hold, and the counters.
- ``report``: the result JSON and the human summary.
- ``cli``: the command line of ``mujoco_driver/mujoco_driver.py``.
"""

__all__ = ["__version__"]

__version__ = "0.1.0"
