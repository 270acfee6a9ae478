"""The reference of the ``run:`` section: q_d,i(τ) = c_i + a_i·sin(2π f_i τ + i·φ), with its
analytic velocity and acceleration (as ``crates/app/src/reference.rs``). τ is the run
time: the driver's simulation time minus its start t0."""

from __future__ import annotations

import math

import numpy as np

from .scenario import Reference


class SineReference:
    """Samples q_d, q̇_d, q̈_d (node joint order) at run time τ."""

    def __init__(self, params: Reference):
        self.center = np.array(params.center_rad, dtype=float)
        self.amplitude = np.array(params.amplitude_rad.expand(len(self.center)), dtype=float)
        self.omega = 2.0 * math.pi * np.array(params.frequencies_hz, dtype=float)
        self.phase = params.phase_step_rad * np.arange(len(self.center), dtype=float)

    def sample(self, tau_secs: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q_d in rad, q̇_d in rad/s, q̈_d in rad/s²) at τ = ``tau_secs``."""
        angle = self.omega * tau_secs + self.phase
        s, c = np.sin(angle), np.cos(angle)
        a = self.amplitude
        return self.center + a * s, a * self.omega * c, -a * self.omega**2 * s
