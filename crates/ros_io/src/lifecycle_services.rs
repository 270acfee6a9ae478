//! The managed-node interface of `gp-node run` on r2r's services (r2r has no lifecycle
//! support): `~/change_state` (forwarded to the operations thread, which owns the state
//! machine, [`super::lifecycle`]), `~/get_state`, `~/get_available_states`,
//! `~/get_available_transitions` and `~/get_transition_graph` (answered on the spin thread
//! from the state the operations publish), and `~/transition_event`: two events per
//! transition (start → transition state, transition state → goal), as rcl_lifecycle sends.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::mpsc::SyncSender;

use futures::StreamExt as _;
use r2r::lifecycle_msgs::msg::{
    State as StateMsg, Transition as TransitionMsg, TransitionDescription, TransitionEvent,
};
use r2r::lifecycle_msgs::srv::{
    ChangeState, GetAvailableStates, GetAvailableTransitions, GetState,
};

use super::lifecycle::{
    Primary, StateId, TRANSITION_STATES, TRANSITIONS, Transition, TransitionId,
};
use super::services::{OpsInput, send_to_ops};
use super::transport::{Requests, RosError, Transport};

/// The lifecycle services.
pub(super) struct LifecycleServices {
    change: Requests<ChangeState::Service>,
    get_state: Requests<GetState::Service>,
    states: Requests<GetAvailableStates::Service>,
    transitions: Requests<GetAvailableTransitions::Service>,
    graph: Requests<GetAvailableTransitions::Service>,
}

/// The `~/transition_event` publisher (used by the operations thread).
pub(super) struct TransitionEvents {
    publisher: r2r::Publisher<TransitionEvent>,
}

fn state_msg(s: StateId) -> StateMsg {
    StateMsg {
        id: s.id,
        label: s.label.into(),
    }
}

fn transition_msg(t: TransitionId) -> TransitionMsg {
    TransitionMsg {
        id: t.id,
        label: t.label.into(),
    }
}

fn description(t: &Transition) -> TransitionDescription {
    TransitionDescription {
        transition: transition_msg(t.id),
        start_state: state_msg(t.start.id()),
        goal_state: state_msg(t.via),
    }
}

fn primary_of(id: u8) -> Primary {
    Primary::ALL
        .into_iter()
        .find(|p| p.id().id == id)
        .unwrap_or(Primary::Unconfigured)
}

impl LifecycleServices {
    /// Creates the services and the event publisher (private to the node: `~/…`).
    pub(super) fn open(transport: &mut Transport) -> Result<(Self, TransitionEvents), RosError> {
        let services = Self {
            change: transport.server::<ChangeState::Service>("~/change_state")?,
            get_state: transport.server::<GetState::Service>("~/get_state")?,
            states: transport.server::<GetAvailableStates::Service>("~/get_available_states")?,
            transitions: transport
                .server::<GetAvailableTransitions::Service>("~/get_available_transitions")?,
            graph: transport
                .server::<GetAvailableTransitions::Service>("~/get_transition_graph")?,
        };
        // rcl_lifecycle's publisher: reliable, volatile, keep last 10.
        let qos = r2r::QosProfile::default().reliable().keep_last(10);
        let publisher = transport.rcl_publisher::<TransitionEvent>("~/transition_event", qos)?;
        Ok((services, TransitionEvents { publisher }))
    }

    /// Answers the queries from `state` (the operations' state id) and forwards changes to the
    /// operations thread, until the node is dropped.
    pub(super) async fn serve(self, state: Arc<AtomicU8>, to_ops: SyncSender<OpsInput>) {
        let current = || primary_of(state.load(Ordering::Relaxed));
        let change = self.change.for_each(|r| {
            send_to_ops(&to_ops, OpsInput::ChangeState(r));
            futures::future::ready(())
        });
        let get_state = self.get_state.for_each(|r| {
            let _ = r.respond(GetState::Response {
                current_state: state_msg(current().id()),
            });
            futures::future::ready(())
        });
        let states = self.states.for_each(|r| {
            let all = Primary::ALL
                .iter()
                .map(|p| p.id())
                .chain(TRANSITION_STATES)
                .map(state_msg)
                .collect();
            let _ = r.respond(GetAvailableStates::Response {
                available_states: all,
            });
            futures::future::ready(())
        });
        let transitions = self.transitions.for_each(|r| {
            let now = current();
            let available = TRANSITIONS
                .iter()
                .filter(|t| t.start == now)
                .map(description)
                .collect();
            let _ = r.respond(GetAvailableTransitions::Response {
                available_transitions: available,
            });
            futures::future::ready(())
        });
        let graph = self.graph.for_each(|r| {
            let all = TRANSITIONS
                .iter()
                .flat_map(|t| {
                    let success = TransitionDescription {
                        transition: transition_msg(t.success),
                        start_state: state_msg(t.via),
                        goal_state: state_msg(t.goal.id()),
                    };
                    [description(t), success]
                })
                .collect();
            let _ = r.respond(GetAvailableTransitions::Response {
                available_transitions: all,
            });
            futures::future::ready(())
        });
        futures::join!(change, get_state, states, transitions, graph);
    }
}

impl TransitionEvents {
    /// Publishes the events of the completed `transitions`, in order.
    pub(super) fn publish(&self, transitions: &[&'static Transition]) {
        let timestamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        for t in transitions {
            for (transition, start, goal) in
                [(t.id, t.start.id(), t.via), (t.success, t.via, t.goal.id())]
            {
                let _ = self.publisher.publish(&TransitionEvent {
                    timestamp,
                    transition: transition_msg(transition),
                    start_state: state_msg(start),
                    goal_state: state_msg(goal),
                });
            }
        }
    }
}
