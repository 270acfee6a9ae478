//! The ROS topics as a [`Plant`] and the node's ends of the loop's other seams, joined to
//! the receive and publish threads by bounded channels of preallocated frames (ADR 0003):
//!
//! - [`RosPlant`]: states from the receive thread; commands to the publish thread. Every
//!   queued state is read (and ticked); a state with newer ones queued behind it reports
//!   `more_queued`, so only the newest command of a burst is written. In `learn` mode the
//!   plant is observe-only.
//! - [`ChannelOperations`]: the operations thread's commands in, replies and model-change
//!   events out.
//! - [`PublishQueue`]: the loop's outputs to the publish thread (the newest of a burst).
//!
//! Nothing here blocks or allocates: a full channel or an empty pool drops the message.
//! Waiting for a state is the one wait, and std's channels allocate the first time a thread
//! waits (its wait context) and the first time a channel has a waiter (its list of waiters).
//! Both are done before the loop's first state (`prime_wait`), because when a robot streams
//! before the node is up, the loop's first wait can come at any later tick.

use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::time::{Duration, Instant};

use gpn_control::control_loop::{
    Command, ControlCommand, ControlReply, LoopOutput, LoopView, Operations, OutputListener, Plant,
    Read, StateFrame,
};
use gpn_control::learn::SwapEvent;

/// A command on its way to the publish thread.
#[derive(Debug, Clone)]
pub struct CommandFrame {
    /// Torque, N·m (model joint order).
    pub u: Vec<f64>,
    /// When the state it answers was received (None: a safe output).
    pub answers: Option<Instant>,
}

/// What the control thread sends the publish thread.
#[derive(Debug)]
pub enum Outgoing {
    /// A command to publish (control mode).
    Command(CommandFrame),
    /// An output: the estimate, events, counters for diagnostics.
    Output(Box<LoopOutput>),
}

/// The publish thread's end: outgoing messages, and the pools to return their frames to.
pub struct PublishEnd {
    /// Commands and outputs, in the order the loop produced them.
    pub outgoing: Receiver<Outgoing>,
    /// Free command frames.
    pub free_commands: SyncSender<CommandFrame>,
    /// Free output frames.
    pub free_outputs: SyncSender<Box<LoopOutput>>,
}

impl PublishEnd {
    /// Returns a frame to its pool.
    pub fn recycle(&self, message: Outgoing) {
        match message {
            Outgoing::Command(frame) => {
                let _ = self.free_commands.try_send(frame);
            }
            Outgoing::Output(frame) => {
                let _ = self.free_outputs.try_send(frame);
            }
        }
    }
}

/// How long a priming wait lasts: long enough that the channel's waiter list is reached
/// (the wait gives up before registering once its deadline has passed).
const PRIME_WAIT: Duration = Duration::from_millis(1);

/// Waits once on `rx` (empty), so that this thread's wait context and `rx`'s waiter list
/// exist before real-time waits.
fn prime_wait<T>(rx: &Receiver<T>) {
    let _ = rx.recv_timeout(PRIME_WAIT);
}

/// The ROS topics as the loop's plant.
pub struct RosPlant {
    nv: usize,
    /// The loop's thread has waited once (see the module doc).
    primed: bool,
    accepts_commands: bool,
    states: Receiver<StateFrame>,
    free_states: SyncSender<StateFrame>,
    next: Option<StateFrame>,
    free_commands: Receiver<CommandFrame>,
    spare: Option<CommandFrame>,
    outgoing: SyncSender<Outgoing>,
}

/// The receive thread's end: filled state frames in, free ones back.
pub struct ReceiveEnd {
    /// Filled frames to the loop.
    pub states: SyncSender<StateFrame>,
    /// Free frames from the loop.
    pub free_states: Receiver<StateFrame>,
}

/// The channels of a node with pools of `frames` frames for `nv` joints: the plant, the
/// publish queue (the listener), and the receive and publish threads' ends.
/// `accepts_commands` false: observe-only (learn mode).
pub fn channels(
    nv: usize,
    frames: usize,
    accepts_commands: bool,
) -> (RosPlant, PublishQueue, ReceiveEnd, PublishEnd) {
    let (free_states_tx, free_states_rx) = sync_channel(frames);
    let (states_tx, states_rx) = sync_channel(frames);
    // Empty, and nothing can fill it yet: its waiter list is made here.
    prime_wait(&states_rx);
    for _ in 0..frames {
        let _ = free_states_tx.try_send(StateFrame::new(nv));
    }
    let (free_commands_tx, free_commands_rx) = sync_channel(frames);
    for _ in 0..frames {
        let _ = free_commands_tx.try_send(CommandFrame {
            u: vec![0.0; nv],
            answers: None,
        });
    }
    let (free_outputs_tx, free_outputs_rx) = sync_channel(frames);
    for _ in 0..frames {
        let _ = free_outputs_tx.try_send(Box::new(LoopOutput::new(nv)));
    }
    // Room for a command and an output per pooled frame.
    let (outgoing_tx, outgoing_rx) = sync_channel(2 * frames);
    let plant = RosPlant {
        nv,
        primed: false,
        accepts_commands,
        states: states_rx,
        free_states: free_states_tx,
        next: None,
        free_commands: free_commands_rx,
        spare: None,
        outgoing: outgoing_tx.clone(),
    };
    let queue = PublishQueue {
        free: free_outputs_rx,
        spare: None,
        outgoing: outgoing_tx,
    };
    let receive = ReceiveEnd {
        states: states_tx,
        free_states: free_states_rx,
    };
    let publish = PublishEnd {
        outgoing: outgoing_rx,
        free_commands: free_commands_tx,
        free_outputs: free_outputs_tx,
    };
    (plant, queue, receive, publish)
}

impl Plant for RosPlant {
    type Error = std::convert::Infallible;

    fn nv(&self) -> usize {
        self.nv
    }

    fn accepts_commands(&self) -> bool {
        self.accepts_commands
    }

    fn read(&mut self, frame: &mut StateFrame, deadline: Duration) -> Result<Read, Self::Error> {
        if !self.primed {
            // The loop's thread, which may not be the one that made the channels: a private
            // channel, empty and open, so that the wait lasts.
            let (_open, never) = sync_channel::<()>(1);
            prime_wait(&never);
            self.primed = true;
        }
        let mut received = match self.next.take() {
            Some(f) => f,
            None => match self.states.recv_timeout(deadline) {
                Ok(f) => f,
                Err(RecvTimeoutError::Timeout) => return Ok(Read::Silent),
                Err(RecvTimeoutError::Disconnected) => return Ok(Read::Closed),
            },
        };
        std::mem::swap(frame, &mut received);
        // The loop's previous buffer goes back to the receive thread's pool (which has room
        // for every frame: it cannot be full).
        let _ = self.free_states.try_send(received);
        self.next = self.states.try_recv().ok();
        Ok(Read::State {
            more_queued: self.next.is_some(),
        })
    }

    fn write(&mut self, command: Command<'_>) -> Result<(), Self::Error> {
        // Without a free frame (the publish thread is behind) the command is not published.
        let free = self
            .spare
            .take()
            .or_else(|| self.free_commands.try_recv().ok());
        if let Some(mut frame) = free {
            frame.u.copy_from_slice(command.u);
            frame.answers = command.answers;
            if let Err(TrySendError::Full(Outgoing::Command(f))) =
                self.outgoing.try_send(Outgoing::Command(frame))
            {
                // Kept, not dropped: freeing memory is not for the control thread.
                self.spare = Some(f);
            }
        }
        Ok(())
    }
}

/// The loop's outputs to the publish thread: the newest answer of a burst only.
pub struct PublishQueue {
    free: Receiver<Box<LoopOutput>>,
    spare: Option<Box<LoopOutput>>,
    outgoing: SyncSender<Outgoing>,
}

impl OutputListener for PublishQueue {
    fn on_output(&mut self, out: &LoopOutput) {
        if out.superseded {
            return;
        }
        let free = self.spare.take().or_else(|| self.free.try_recv().ok());
        if let Some(mut frame) = free {
            frame.copy_from(out);
            if let Err(TrySendError::Full(Outgoing::Output(f))) =
                self.outgoing.try_send(Outgoing::Output(frame))
            {
                self.spare = Some(f);
            }
        }
    }
}

/// The operations thread's commands and answers as the loop's operations.
pub struct ChannelOperations {
    /// Commands from the operations thread.
    pub commands: Receiver<ControlCommand>,
    /// Replies and model-change events to it.
    pub replies: SyncSender<ControlReply>,
}

impl Operations for ChannelOperations {
    fn next_command(&mut self, _: &LoopView) -> Option<ControlCommand> {
        self.commands.try_recv().ok()
    }

    fn on_applied(&mut self, reply: Option<ControlReply>) {
        if let Some(reply) = reply {
            let _ = self.replies.try_send(reply);
        }
    }

    fn on_event(&mut self, _: u64, event: SwapEvent) {
        let _ = self.replies.try_send(ControlReply::Event(event));
    }
}
