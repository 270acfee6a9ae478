"""The result of a run: the ``--result`` JSON (stable keys, units in names, per-joint arrays
in joint order) and the short human summary printed to stderr.

Keys: ``completed`` (bool), ``error`` (message or null), ``joints``, ``duration_s``,
``rate_hz``, ``steps`` (done), ``steps_planned``, ``rms_tracking_error_rad`` and
``max_tracking_error_rad`` (true q − q_d per joint over the second half; null without
``--publish-reference``), ``rms_tracking_error_first_s_rad`` (the same RMS over the first
simulated second: how a warm-started model does before it has learned), ``republished_states``, ``on_command_timeout`` (``stop`` or
``hold``), ``command_timeouts`` (times a state stayed unanswered after its republications:
with ``hold``, episodes of holding; > 0 says the commands timed out), ``safe_steps`` (steps
driven by the hold's gravity compensation with damping), ``clamped_safe_steps``,
``refused_commands`` (total), ``refused_wrong_length``, ``refused_non_finite``,
``clamped_commands`` (commands with at least one entry clamped),
``clamped_commands_per_joint``, ``stale_commands_dropped``, ``glitches``, ``round_trip_us``
{``p50``, ``p99``, ``max``} (state published → command taken, as the driver measured it;
null before the first step), ``wall_s``, ``realtime`` (bool), ``command_delay_steps`` and ``late_steps`` (states published
more than a tick after their wall-clock time; 0 without ``--realtime``), ``domain_id``, ``topics`` (ROS names),
``reference_durability`` (``transient_local`` or ``volatile``; null without
``--publish-reference``), ``payload_switched``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .driver import Driver

RESULT_KEYS = (
    "completed",
    "error",
    "joints",
    "duration_s",
    "rate_hz",
    "steps",
    "steps_planned",
    "rms_tracking_error_rad",
    "max_tracking_error_rad",
    "rms_tracking_error_first_s_rad",
    "republished_states",
    "on_command_timeout",
    "command_timeouts",
    "safe_steps",
    "clamped_safe_steps",
    "refused_commands",
    "refused_wrong_length",
    "refused_non_finite",
    "clamped_commands",
    "clamped_commands_per_joint",
    "stale_commands_dropped",
    "glitches",
    "round_trip_us",
    "wall_s",
    "realtime",
    "command_delay_steps",
    "late_steps",
    "domain_id",
    "topics",
    "reference_durability",
    "payload_switched",
)


def round_trip_us(samples_ns: list[int]) -> dict[str, float] | None:
    """p50, p99 and max of round-trip times, µs."""
    if not samples_ns:
        return None
    us = np.asarray(samples_ns, dtype=float) / 1e3
    return {
        "p50": float(np.percentile(us, 50)),
        "p99": float(np.percentile(us, 99)),
        "max": float(us.max()),
    }


def result(driver: Driver, domain_id: int, error: str | None = None) -> dict[str, Any]:
    """The result JSON of ``driver``'s run, finished or not."""
    c = driver.counters
    tracking = driver.tracking_error()
    topics = driver.transport.topics
    out = {
        "completed": driver.completed and error is None,
        "error": error,
        "joints": list(driver.names),
        "duration_s": driver.ticks / driver.rate_hz,
        "rate_hz": driver.rate_hz,
        "steps": c.steps,
        "steps_planned": driver.ticks,
        "rms_tracking_error_rad": tracking[0] if tracking else None,
        "max_tracking_error_rad": tracking[1] if tracking else None,
        "rms_tracking_error_first_s_rad": driver.tracking_error_first_second(),
        "republished_states": c.republished_states,
        "on_command_timeout": driver.options.on_command_timeout,
        "command_timeouts": c.command_timeouts,
        "safe_steps": c.safe_steps,
        "clamped_safe_steps": c.clamped_safe_steps,
        "refused_commands": c.refused_wrong_length + c.refused_non_finite,
        "refused_wrong_length": c.refused_wrong_length,
        "refused_non_finite": c.refused_non_finite,
        "clamped_commands": c.clamped_commands,
        "clamped_commands_per_joint": list(c.clamped_per_joint),
        "stale_commands_dropped": c.stale_commands_dropped,
        "glitches": c.glitches,
        "round_trip_us": round_trip_us(c.round_trip_ns),
        "wall_s": c.wall_s,
        "realtime": driver.options.realtime,
        "command_delay_steps": driver.options.command_delay_steps,
        "late_steps": c.late_steps,
        "domain_id": domain_id,
        "topics": {"joint_states": topics.joint_states, "command": topics.command, "reference": topics.reference},
        "reference_durability": driver.transport.reference_durability if driver.options.publish_reference else None,
        "payload_switched": driver.plant.payload_switched,
    }
    return out


def summary(res: dict[str, Any]) -> str:
    """A few human lines about a result."""
    lines = [
        f"mujoco_driver: {'done' if res['completed'] else 'STOPPED'}: {res['steps']}/{res['steps_planned']} steps "
        f"at {res['rate_hz']:g} Hz in {res['wall_s']:.2f} s wall",
        f"  commands: {res['refused_commands']} refused ({res['refused_wrong_length']} wrong length, "
        f"{res['refused_non_finite']} non-finite), {res['clamped_commands']} clamped, "
        f"{res['stale_commands_dropped']} stale dropped; states republished: {res['republished_states']}",
    ]
    if res["command_timeouts"]:
        lines.append(
            f"  commands timed out {res['command_timeouts']} time(s) ({res['on_command_timeout']}): "
            f"{res['safe_steps']} steps held with gravity compensation and damping "
            f"({res['clamped_safe_steps']} clamped)"
        )
    rt = res["round_trip_us"]
    if rt:
        lines.append(f"  round trip state→command: p50 {rt['p50']:.0f} µs, p99 {rt['p99']:.0f} µs, max {rt['max']:.0f} µs")
    if res["rms_tracking_error_rad"] is not None:
        rms = ", ".join(f"{v:.2e}" for v in res["rms_tracking_error_rad"])
        lines.append(f"  true tracking error over the second half, RMS per joint (rad): {rms}")
    if res["error"]:
        lines.append(f"  error: {res['error']}")
    return "\n".join(lines)
