//! The plant: what the loop controls, in ros2_control's hardware-interface shape — read the
//! measured state, then (after the tick) write the command. The embedded simulator and the
//! ROS topic I/O are two implementations; a plant may be *observe-only*: it reports states
//! and the torque someone else applied and takes no command (`learn` mode; later a
//! recording's replay).

use std::time::{Duration, Instant};

/// What a plausible stamp is to the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timing {
    /// A new state: tick it.
    New,
    /// The last accepted stamp again: answer with the last command.
    Repeat,
}

/// Where a frame's torque came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TorqueOrigin {
    /// Measured (the message's `effort`, the simulator's torque sensor) or the command
    /// someone else applied (observe-only): in `tau`.
    Given,
    /// The loop's own last command: the loop fills it in.
    OwnCommand,
}

/// One measured state in model joint order (buffers allocated once, reused).
#[derive(Debug, Clone)]
pub struct StateFrame {
    /// Time on the node's timeline, s (for ROS the stamp, unless the sender's clock
    /// jumped; see `ros::StampClock`).
    pub t_secs: f64,
    /// The state's stamp on its sender's clock, s.
    pub stamp_secs: f64,
    /// New state or a repeat of the last stamp.
    pub timing: Timing,
    /// When the plant handed the state over (for the in → out latency).
    pub received: Instant,
    /// Positions.
    pub q: Vec<f64>,
    /// Velocities.
    pub v: Vec<f64>,
    /// Torque that acted over the last interval (see `tau_origin`).
    pub tau: Vec<f64>,
    /// Where `tau` comes from.
    pub tau_origin: TorqueOrigin,
}

impl StateFrame {
    /// `stamp_secs − t_secs`: converts the sender's stamps to the node's timeline.
    pub fn shift_secs(&self) -> f64 {
        self.stamp_secs - self.t_secs
    }

    /// A zeroed frame for `nv` joints.
    pub fn new(nv: usize) -> Self {
        Self {
            t_secs: 0.0,
            stamp_secs: 0.0,
            timing: Timing::New,
            received: Instant::now(),
            q: vec![0.0; nv],
            v: vec![0.0; nv],
            tau: vec![0.0; nv],
            tau_origin: TorqueOrigin::OwnCommand,
        }
    }
}

/// What [`Plant::read`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// A state is in the frame; `more_queued`: newer ones are already waiting (a burst),
    /// so this one's command is superseded before it could act and is not written.
    State {
        /// Newer states are waiting.
        more_queued: bool,
    },
    /// Nothing arrived before the deadline (the command decision's watchdog judges it).
    Silent,
    /// The plant has ended (the simulated run is over, the transport closed).
    Closed,
}

/// A command for the plant (model joint order).
#[derive(Debug, Clone, Copy)]
pub struct Command<'a> {
    /// Torque, N·m.
    pub u: &'a [f64],
    /// When the state this command answers was received (`None`: a safe output answering
    /// silence), for the in → out latency.
    pub answers: Option<Instant>,
}

/// A plant the control loop drives. Real-time: `read` and `write` are called on the control
/// thread and must not allocate or block beyond `deadline`.
pub trait Plant {
    /// Why the plant cannot go on (a diverged simulation).
    type Error;

    /// Joints.
    fn nv(&self) -> usize;

    /// Whether the plant takes commands (false: observe-only; the loop estimates the
    /// residual and writes nothing).
    fn accepts_commands(&self) -> bool;

    /// The next measured state into `frame`, waiting at most `deadline` (a simulated plant
    /// has its next state at once).
    fn read(&mut self, frame: &mut StateFrame, deadline: Duration) -> Result<Read, Self::Error>;

    /// Applies `command` (never called on an observe-only plant).
    fn write(&mut self, command: Command<'_>) -> Result<(), Self::Error>;

    /// A plant that knows the truth (a simulator) writes the true state at the last read
    /// and the true residual at its q, q̇ for the accelerations `qdd` into `truth` and
    /// returns true; a real robot returns false (the default).
    fn truth(&mut self, _qdd: &[f64], _truth: &mut Truth) -> Result<bool, Self::Error> {
        Ok(false)
    }
}

/// Ground truth of a simulated plant at a tick (see [`Plant::truth`]).
#[derive(Debug, Clone)]
pub struct Truth {
    /// True positions, rad.
    pub q: Vec<f64>,
    /// True velocities, rad/s.
    pub v: Vec<f64>,
    /// True residual at x* = [q, q̇, q̈_cmd], N·m.
    pub residual: Vec<f64>,
}

impl Truth {
    /// Zeroed buffers for `nv` joints.
    pub fn new(nv: usize) -> Self {
        Self {
            q: vec![0.0; nv],
            v: vec![0.0; nv],
            residual: vec![0.0; nv],
        }
    }

    /// Copies `other` in (same joint count). Real-time: no allocation.
    pub fn copy_from(&mut self, other: &Truth) {
        self.q.copy_from_slice(&other.q);
        self.v.copy_from_slice(&other.v);
        self.residual.copy_from_slice(&other.residual);
    }
}
