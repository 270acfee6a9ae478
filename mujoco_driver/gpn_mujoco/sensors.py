"""The measurement model: what the robot's drivers report, given the true state.

As ``crates/embedded_sim/src/sensors.rs``: per joint, in this order, an encoder-noise draw on q, a
velocity-noise draw on q̇ and a torque-sensor-noise draw on the applied torque (each drawn
even when its σ is 0, so changing one noise level leaves the others' draws unchanged), then
a uniform draw that decides a glitch: with probability ``probability_per_sample`` a torque
spike of uniform size in ``torque_spike_nm`` or an encoder spike of ``encoder_spike_rad``
(random sign, each kind equally likely). One seeded numpy PCG64 stream: the same seed gives
the same measurements (not the same numbers as the Rust simulator's ChaCha stream).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .scenario import Sim


@dataclass
class Measurement:
    """One joint-state sample as reported (node joint order)."""

    q: np.ndarray
    v: np.ndarray
    tau: np.ndarray
    glitches: int


class Sensors:
    """Noise and glitch generator of one run."""

    def __init__(self, sim: Sim):
        self.rng = np.random.Generator(np.random.PCG64(sim.seed))
        self.encoder_std = sim.encoder_noise_std_rad
        self.velocity_std = sim.velocity_noise_std_rad_s
        self.torque_noise = sim.torque_noise_std_nm
        self.torque_std: list[float] | None = None
        self.glitch_probability = sim.glitches.probability_per_sample
        self.torque_spike = sim.glitches.torque_spike_nm
        self.encoder_spike = sim.glitches.encoder_spike_rad

    def measure(self, q: np.ndarray, v: np.ndarray, tau_applied: np.ndarray) -> Measurement:
        """Measures the true q, q̇ and the torque that acted over the last step."""
        n = len(q)
        out = Measurement(q.astype(float).copy(), v.astype(float).copy(), tau_applied.astype(float).copy(), 0)
        rng = self.rng
        if self.torque_std is None or len(self.torque_std) != n:
            self.torque_std = self.torque_noise.expand(n)
        torque_std = self.torque_std
        for j in range(n):
            out.q[j] += self.encoder_std * rng.standard_normal()
            out.v[j] += self.velocity_std * rng.standard_normal()
            out.tau[j] += torque_std[j] * rng.standard_normal()
            if rng.random() < self.glitch_probability:
                out.glitches += 1
                sign = 1.0 if rng.random() < 0.5 else -1.0
                if rng.random() < 0.5:
                    lo, hi = self.torque_spike
                    out.tau[j] += sign * (lo + (hi - lo) * rng.random())
                else:
                    out.q[j] += sign * self.encoder_spike
        return out
