//! The tick side of the logger: a fixed pool of preallocated [`Frame`]s circulating between
//! the simulation thread and the logger thread through two bounded channels.
//!
//! ```text
//!   sim thread                                   logger thread
//!   free.try_recv() ─► fill ─► full.try_send() ─► full.recv() ─► log ─► free.try_send()
//!        ▲                                                                   │
//!        └───────────────────────────── free frames ◄────────────────────────┘
//! ```
//!
//! Both channels hold as many slots as there are frames, so neither `try_send` can find its
//! channel full. When the logger lags, the free channel runs empty and the tick's frame is
//! dropped and counted. Real-time: [`FrameSender::send`] does not allocate or wait (waking a
//! sleeping logger takes the channel's short internal lock).

use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, TrySendError, sync_channel};

use gpn_control::control_loop::Mode;

use super::{VizRun, VizTick};

/// One tick's worth of logged values (per-joint slices have `nv` entries, joint order of
/// [`Model::joint_names`](gpn_dynamics::Model::joint_names)).
#[derive(Debug, Clone)]
pub(crate) struct Frame {
    /// The run.
    pub run: VizRun,
    /// Tick index.
    pub tick: u64,
    /// Simulated time, s.
    pub t_secs: f64,
    /// Joint positions, rad.
    pub q: Vec<f64>,
    /// Reference positions, rad.
    pub q_d: Vec<f64>,
    /// Applied torque u, N·m.
    pub u: Vec<f64>,
    /// τ_RBD(q, q̇, q̈_cmd), N·m.
    pub tau_rbd: Vec<f64>,
    /// True residual at the query point, N·m.
    pub true_residual: Vec<f64>,
    /// Measured residual of a learning sample formed at this tick, N·m (NaN: none).
    pub measured_residual: Vec<f64>,
    /// Predicted residual μ used in the law, N·m.
    pub mu: Vec<f64>,
    /// Latent posterior standard deviation σ, N·m.
    pub sigma: Vec<f64>,
    /// η_cal, N·m (NaN until calibrated).
    pub eta_cal: Vec<f64>,
    /// Wall time of the tick, µs.
    pub exec_micros: f64,
    /// Experts of the active model (NaN without a model).
    pub experts: f64,
    /// Coverage of ±η_cal over the recent window (NaN before it is known).
    pub coverage: f64,
    /// A change of the dynamics noticed at this tick.
    pub change: Option<gpn_control::learn::ChangeNotice>,
    /// A model went live at this tick.
    pub adopted_model: bool,
    /// Who commanded the output.
    pub law: Mode,
}

impl Frame {
    /// A zeroed frame for `nv` joints (allocates; done once per pool slot).
    pub fn new(nv: usize) -> Self {
        let z = || vec![0.0; nv];
        Self {
            run: VizRun::Learned,
            tick: 0,
            t_secs: 0.0,
            q: z(),
            q_d: z(),
            u: z(),
            tau_rbd: z(),
            true_residual: z(),
            measured_residual: z(),
            mu: z(),
            sigma: z(),
            eta_cal: z(),
            exec_micros: 0.0,
            experts: f64::NAN,
            coverage: f64::NAN,
            change: None,
            adopted_model: false,
            law: Mode::Inactive,
        }
    }

    /// Whether every per-joint slice of `tick` has this frame's length.
    fn fits(&self, tick: &VizTick<'_>) -> bool {
        let nv = self.q.len();
        let out = tick.out;
        [
            tick.q.len(),
            tick.q_d.len(),
            tick.true_residual.len(),
            tick.measured_residual.map_or(nv, <[f64]>::len),
            out.u.len(),
            out.tau_rbd.len(),
            out.mu.len(),
            out.sigma.len(),
            out.eta_cal.len(),
        ]
        .iter()
        .all(|&n| n == nv)
    }

    /// Copies `tick` in. Lengths must [`fit`](Self::fits). No allocation.
    fn fill(&mut self, tick: &VizTick<'_>) {
        self.run = tick.run;
        self.tick = tick.tick;
        self.t_secs = tick.t_secs;
        self.q.copy_from_slice(tick.q);
        self.q_d.copy_from_slice(tick.q_d);
        self.u.copy_from_slice(&tick.out.u);
        self.tau_rbd.copy_from_slice(&tick.out.tau_rbd);
        self.true_residual.copy_from_slice(tick.true_residual);
        match tick.measured_residual {
            Some(measured) => self.measured_residual.copy_from_slice(measured),
            None => self.measured_residual.fill(f64::NAN),
        }
        self.mu.copy_from_slice(&tick.out.mu);
        self.sigma.copy_from_slice(&tick.out.sigma);
        self.eta_cal.copy_from_slice(&tick.out.eta_cal);
        self.exec_micros = tick.exec_micros;
        self.experts = tick.experts.map_or(f64::NAN, |n| n as f64);
        self.coverage = tick.coverage.unwrap_or(f64::NAN);
        self.change = tick.change;
        self.adopted_model = tick.adopted_model;
        self.law = tick.law;
    }
}

/// The simulation thread's end of the pool.
pub(crate) struct FrameSender {
    free: Receiver<Frame>,
    full: SyncSender<Frame>,
    /// A frame taken from the pool whose tick did not fit; reused next time.
    spare: Option<Frame>,
    nv: usize,
    sent: u64,
    dropped: u64,
}

/// The logger thread's end of the pool.
pub(crate) struct FrameReceiver {
    /// Filled frames, in tick order.
    pub full: Receiver<Frame>,
    /// Where processed frames go back to.
    pub free: SyncSender<Frame>,
}

/// Allocates `capacity` frames for `nv` joints and the two channels between the ends.
pub(crate) fn frame_pool(nv: usize, capacity: usize) -> (FrameSender, FrameReceiver) {
    let capacity = capacity.max(1);
    let (free_tx, free_rx) = sync_channel(capacity);
    let (full_tx, full_rx) = sync_channel(capacity);
    for _ in 0..capacity {
        // Cannot fail: the channel has `capacity` slots and its receiver is alive.
        let _ = free_tx.try_send(Frame::new(nv));
    }
    (
        FrameSender {
            free: free_rx,
            full: full_tx,
            spare: None,
            nv,
            sent: 0,
            dropped: 0,
        },
        FrameReceiver {
            full: full_rx,
            free: free_tx,
        },
    )
}

impl FrameSender {
    /// Hands `tick` to the logger if a free frame is available; otherwise, or if a slice
    /// has the wrong length, counts a drop. Real-time: no allocation, I/O or waiting.
    pub fn send(&mut self, tick: &VizTick<'_>) {
        let frame = match self.spare.take() {
            Some(frame) => Ok(frame),
            None => self.free.try_recv(),
        };
        let mut frame = match frame {
            Ok(frame) => frame,
            Err(TryRecvError::Empty | TryRecvError::Disconnected) => {
                self.dropped += 1;
                return;
            }
        };
        if frame.q.len() != self.nv || !frame.fits(tick) {
            self.spare = Some(frame);
            self.dropped += 1;
            return;
        }
        frame.fill(tick);
        match self.full.try_send(frame) {
            Ok(()) => self.sent += 1,
            // Full cannot happen (as many slots as frames); Disconnected: the logger is gone.
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => self.dropped += 1,
        }
    }

    /// Frames handed to the logger so far.
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Ticks dropped so far (no free frame, wrong slice length, or the logger gone).
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpn_control::control::TickOutput;

    fn tick<'a>(k: u64, q: &'a [f64], out: &'a TickOutput) -> VizTick<'a> {
        VizTick {
            run: VizRun::Learned,
            tick: k,
            t_secs: k as f64 * 1e-3,
            q,
            q_d: q,
            out,
            true_residual: q,
            measured_residual: Some(q),
            exec_micros: 1.0,
            experts: Some(3),
            coverage: Some(0.95),
            change: None,
            adopted_model: false,
            law: Mode::Learned,
        }
    }

    #[test]
    fn a_stalled_logger_costs_drops_not_waits() {
        let out = TickOutput::new(2);
        let q = [0.1, 0.2];
        let (mut tx, rx) = frame_pool(2, 4);
        for k in 0..10 {
            tx.send(&tick(k, &q, &out));
        }
        assert_eq!((tx.sent(), tx.dropped()), (4, 6));
        // The logger catches up: frames come back and ticks flow again, in order.
        let first: Vec<u64> = rx.full.try_iter().map(|f| f.tick).collect();
        assert_eq!(first, [0, 1, 2, 3]);
        for k in 0..4 {
            let mut f = Frame::new(2);
            f.tick = k;
            rx.free.try_send(f).expect("free slot");
        }
        tx.send(&tick(10, &q, &out));
        assert_eq!((tx.sent(), tx.dropped()), (5, 6));
        let frame = rx.full.try_recv().expect("frame");
        assert_eq!(
            (frame.tick, frame.q.as_slice(), frame.experts),
            (10, &q[..], 3.0)
        );
    }

    #[test]
    fn wrong_lengths_are_dropped_without_losing_the_frame() {
        let out = TickOutput::new(2);
        let (mut tx, rx) = frame_pool(2, 1);
        tx.send(&tick(0, &[0.0; 3], &out));
        assert_eq!((tx.sent(), tx.dropped()), (0, 1));
        tx.send(&tick(1, &[0.0; 2], &out));
        assert_eq!((tx.sent(), tx.dropped()), (1, 1));
        assert_eq!(rx.full.try_recv().map(|f| f.tick).ok(), Some(1));
    }

    #[test]
    fn a_gone_logger_counts_drops() {
        let out = TickOutput::new(1);
        let (mut tx, rx) = frame_pool(1, 2);
        drop(rx);
        tx.send(&tick(0, &[0.0], &out));
        tx.send(&tick(1, &[0.0], &out));
        tx.send(&tick(2, &[0.0], &out));
        assert_eq!((tx.sent(), tx.dropped()), (0, 3));
    }
}
