//! The operations thread of `gp-node run`: the services (`~/swap_model`, `~/save_model`,
//! `~/load_model`, `~/reset_learning`, `~/announce_change`) and parameter sets, one at a time,
//! through [`super::ops::Ops`]. The spin thread forwards each request here (bounded); this
//! thread answers it when the operation ended.

use std::sync::mpsc::{Receiver, SyncSender, TrySendError};

use futures::StreamExt as _;
use r2r::gp_learning_node_msgs::srv::{
    AnnounceChange, LoadModel, ResetLearning, SaveModel, SwapModel,
};
use r2r::rcl_interfaces::srv::{SetParameters, SetParametersAtomically};

use super::lifecycle_services::TransitionEvents;
use super::ops::{self, Ops};
use super::parameters::{self, ParamEvents, ParamSnapshot, SetRequest};
use super::transport::{Requests, RosError, Transport};

/// The node's service servers.
pub(super) struct Services {
    swap: Requests<SwapModel::Service>,
    save: Requests<SaveModel::Service>,
    load: Requests<LoadModel::Service>,
    reset: Requests<ResetLearning::Service>,
    announce: Requests<AnnounceChange::Service>,
}

impl Services {
    /// Creates the services (private to the node: `~/…`).
    pub(super) fn open(transport: &mut Transport) -> Result<Self, RosError> {
        Ok(Self {
            swap: transport.server::<SwapModel::Service>("~/swap_model")?,
            save: transport.server::<SaveModel::Service>("~/save_model")?,
            load: transport.server::<LoadModel::Service>("~/load_model")?,
            reset: transport.server::<ResetLearning::Service>("~/reset_learning")?,
            announce: transport.server::<AnnounceChange::Service>("~/announce_change")?,
        })
    }

    /// Forwards every request to the operations thread (run on the spin thread); a request
    /// that finds its queue full is answered "busy" at once.
    pub(super) async fn forward(self, to_ops: SyncSender<OpsInput>) {
        let send = |input: OpsInput| {
            send_to_ops(&to_ops, input);
            futures::future::ready(())
        };
        let swap = self.swap.for_each(|r| send(OpsInput::Swap(r)));
        let save = self.save.for_each(|r| send(OpsInput::Save(r)));
        let load = self.load.for_each(|r| send(OpsInput::Load(r)));
        let reset = self.reset.for_each(|r| send(OpsInput::Reset(r)));
        let announce = self.announce.for_each(|r| send(OpsInput::Announce(r)));
        futures::join!(swap, save, load, reset, announce);
    }
}

/// Queues `input` for the operations thread; when the queue is full, answers "busy".
pub(super) fn send_to_ops(to_ops: &SyncSender<OpsInput>, input: OpsInput) {
    if let Err(TrySendError::Full(input)) = to_ops.try_send(input) {
        input.refuse("busy: another operation is running; try again");
    }
}

/// A request for the operations thread.
pub(super) enum OpsInput {
    Swap(r2r::ServiceRequest<SwapModel::Service>),
    Save(r2r::ServiceRequest<SaveModel::Service>),
    Load(r2r::ServiceRequest<LoadModel::Service>),
    Reset(r2r::ServiceRequest<ResetLearning::Service>),
    Announce(r2r::ServiceRequest<AnnounceChange::Service>),
    Params(SetRequest),
    ChangeState(r2r::ServiceRequest<r2r::lifecycle_msgs::srv::ChangeState::Service>),
}

macro_rules! answer {
    ($req:expr, $srv:ident, $result:expr) => {{
        let (success, message) = outcome($result);
        let _ = $req.respond($srv::Response { success, message });
    }};
}

impl OpsInput {
    /// Answers without doing anything: `success: false` and `why`.
    fn refuse(self, why: &str) {
        let no = || Err(why.to_owned());
        match self {
            OpsInput::Swap(req) => answer!(req, SwapModel, no()),
            OpsInput::Save(req) => answer!(req, SaveModel, no()),
            OpsInput::Load(req) => answer!(req, LoadModel, no()),
            OpsInput::Reset(req) => answer!(req, ResetLearning, no()),
            OpsInput::Announce(req) => answer!(req, AnnounceChange, no()),
            OpsInput::Params(request) => parameters::refuse_busy(request),
            OpsInput::ChangeState(req) => {
                eprintln!("gp-node: lifecycle change refused: {why}");
                let _ =
                    req.respond(r2r::lifecycle_msgs::srv::ChangeState::Response { success: false });
            }
        }
    }
}

/// The operations thread: services, parameter changes and lifecycle transitions, one at a
/// time; after each parameter set or transition, `snapshot` holds the parameters in force,
/// `events` announced the changes and `transitions` the lifecycle's.
pub(super) fn ops_thread(
    mut ops: Ops,
    inputs: &Receiver<OpsInput>,
    snapshot: &ParamSnapshot,
    events: &ParamEvents,
    transitions: &TransitionEvents,
) {
    while let Ok(input) = inputs.recv() {
        match input {
            OpsInput::Swap(req) => {
                let r = ops::guarded(&mut ops, "swap_model", |ops| {
                    ops.swap_model(&req.message.plugin, &req.message.config_json)
                });
                answer!(req, SwapModel, r);
            }
            OpsInput::Save(req) => {
                let r = ops::guarded(&mut ops, "save_model", |ops| {
                    ops.save_model(&req.message.path)
                });
                answer!(req, SaveModel, r);
            }
            OpsInput::Load(req) => {
                let r = ops::guarded(&mut ops, "load_model", |ops| {
                    ops.load_model(&req.message.path)
                });
                answer!(req, LoadModel, r);
            }
            OpsInput::Reset(req) => {
                let keep = req.message.keep_hyperparameters;
                let r = ops::guarded(&mut ops, "reset_learning", |ops| ops.reset_learning(keep));
                answer!(req, ResetLearning, r);
            }
            OpsInput::Announce(req) => {
                let r = ops::guarded(&mut ops, "announce_change", |ops| {
                    ops.announce_change(&req.message.description)
                });
                answer!(req, AnnounceChange, r);
            }
            OpsInput::Params(request) => {
                let changed = set_params(&mut ops, request);
                if let Ok(mut params) = snapshot.lock() {
                    *params = ops.params().clone();
                }
                events.changed(ops.params(), &changed);
            }
            OpsInput::ChangeState(req) => {
                let (id, label) = (
                    req.message.transition.id,
                    req.message.transition.label.clone(),
                );
                let active = ops.params().ros.active;
                let r = ops::guarded(&mut ops, "change_state", |ops| {
                    ops.change_state(id, &label).map(|()| String::new())
                });
                if let Err(why) = &r {
                    eprintln!("gp-node: lifecycle transition refused: {why}");
                }
                let _ = req.respond(r2r::lifecycle_msgs::srv::ChangeState::Response {
                    success: r.is_ok(),
                });
                if ops.params().ros.active != active {
                    if let Ok(mut params) = snapshot.lock() {
                        *params = ops.params().clone();
                    }
                    events.changed(ops.params(), &["ros.active".to_owned()]);
                }
            }
        }
        transitions.publish(&ops.take_transitions());
        ops.drain();
    }
}

/// Applies a parameter set: each parameter on its own, or (atomically) all after checking
/// that every one is acceptable. A change that could not take effect (a plugin that does
/// not load) is refused and its value stays. Returns the names of the parameters changed.
fn set_params(ops: &mut Ops, request: SetRequest) -> Vec<String> {
    // An atomic set is checked whole before anything is applied.
    let checked = match &request {
        SetRequest::Atomically(req) => parameters::check_all(&req.message.parameters, |n, v| {
            ops.check_param(n, v).map(|_| ())
        }),
        SetRequest::Each(_) => Ok(()),
    };
    let mut changed = Vec::new();
    let mut apply = |name: &str, value: &gpn_app::param_schema::ParamValue| {
        let result = ops::guarded(ops, "set_parameters", |ops| {
            ops.set_param(name, value).map(|()| String::new())
        })
        .map(|_| ());
        if result.is_ok() {
            changed.push(name.to_owned());
        }
        result
    };
    match request {
        SetRequest::Each(req) => {
            let results = req
                .message
                .parameters
                .iter()
                .map(|p| parameters::set_one(&p.name, &p.value, &mut apply))
                .collect();
            let _ = req.respond(SetParameters::Response { results });
        }
        SetRequest::Atomically(req) => {
            let result = match checked {
                Err(reason) => r2r::rcl_interfaces::msg::SetParametersResult {
                    successful: false,
                    reason,
                },
                // Checked: what remains to fail is taking effect (a plugin that does not
                // load); the ones before it stay applied, which the reason says.
                Ok(()) => {
                    let mut result = r2r::rcl_interfaces::msg::SetParametersResult {
                        successful: true,
                        reason: String::new(),
                    };
                    for p in &req.message.parameters {
                        let one = parameters::set_one(&p.name, &p.value, &mut apply);
                        if !one.successful {
                            result = r2r::rcl_interfaces::msg::SetParametersResult {
                                successful: false,
                                reason: format!(
                                    "{} (the parameters before {} were applied)",
                                    one.reason, p.name
                                ),
                            };
                            break;
                        }
                    }
                    result
                }
            };
            let _ = req.respond(SetParametersAtomically::Response { result });
        }
    }
    changed
}

/// A service's answer: (`success`, `message`).
pub(super) fn outcome(result: Result<String, String>) -> (bool, String) {
    match result {
        Ok(message) => (true, message),
        Err(message) => (false, message),
    }
}
