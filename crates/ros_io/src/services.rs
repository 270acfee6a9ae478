//! The operations thread of `gp-node run`: the services (`~/swap_model`, `~/save_model`,
//! `~/load_model`, `~/reset_learning`, `~/announce_change`) and parameter sets, one at a time,
//! through [`super::ops::Ops`].

use std::pin::pin;
use std::sync::Mutex;
use std::sync::mpsc::{SyncSender, sync_channel};
use std::time::Duration;

use futures::StreamExt as _;
use gpn_app::param_schema::{self, ParamValue};
use gpn_msgs::gp_learning_node_msgs::{
    AnnounceChangeRequest, AnnounceChangeResponse, LoadModelRequest, LoadModelResponse,
    ResetLearningRequest, ResetLearningResponse, SaveModelRequest, SaveModelResponse,
    SwapModelRequest, SwapModelResponse,
};
use ros2_client::service::RmwRequestId;

use super::ops::{self, Ops};
use super::transport::{Server, from_ros};

/// Service names (private to the node: `~/…`).
pub(super) const SERVICE_SWAP: &str = "~/swap_model";
pub(super) const SERVICE_SAVE: &str = "~/save_model";
pub(super) const SERVICE_LOAD: &str = "~/load_model";
pub(super) const SERVICE_RESET: &str = "~/reset_learning";
pub(super) const SERVICE_ANNOUNCE: &str = "~/announce_change";

/// The node's service servers.
pub(super) struct Services {
    pub(super) swap: Server<SwapModelRequest, SwapModelResponse>,
    pub(super) save: Server<SaveModelRequest, SaveModelResponse>,
    pub(super) load: Server<LoadModelRequest, LoadModelResponse>,
    pub(super) reset: Server<ResetLearningRequest, ResetLearningResponse>,
    pub(super) announce: Server<AnnounceChangeRequest, AnnounceChangeResponse>,
}

/// A parameter set, from the parameter service's callback to the operations thread.
pub(super) struct ParamRequest {
    pub(super) name: String,
    pub(super) value: ParamValue,
    pub(super) answer: SyncSender<Result<(), String>>,
}

/// The parameter validator: type and constraint from the schema; read-only ones refused
/// once the node runs.
pub(super) fn validate_param(
    name: &str,
    value: &ros2_client::ParameterValue,
    nv: usize,
    started: bool,
) -> Result<(), String> {
    let Some(spec) = param_schema::find(name) else {
        return Err(format!("unknown parameter {name}"));
    };
    if started && spec.apply == param_schema::Apply::ReadOnly {
        return Err(format!(
            "{name} is read-only: it takes effect at start (parameter file or command line); restart the node"
        ));
    }
    let value = from_ros(value).ok_or_else(|| format!("{name}: unsupported parameter type"))?;
    param_schema::validate(spec, &value, nv)
}

/// The parameter set action: hands the change to the operations thread and waits for it
/// to take effect (ros2-client stores the value only if this returns Ok).
pub(super) fn apply_param(
    sender: &Mutex<futures::channel::mpsc::Sender<ParamRequest>>,
    name: &str,
    value: &ros2_client::ParameterValue,
) -> Result<(), String> {
    let value = from_ros(value).ok_or_else(|| format!("{name}: unsupported parameter type"))?;
    let (answer, answered) = sync_channel(1);
    sender
        .lock()
        .map_err(|_| "the parameter channel is broken".to_owned())?
        .try_send(ParamRequest {
            name: name.to_owned(),
            value,
            answer,
        })
        .map_err(|_| "busy: another parameter change is being applied".to_owned())?;
    answered
        .recv_timeout(Duration::from_secs(90))
        .map_err(|_| format!("{name}: no answer from the node's operations thread"))?
}

pub(super) enum OpsInput {
    Swap(RmwRequestId, SwapModelRequest),
    Save(RmwRequestId, SaveModelRequest),
    Load(RmwRequestId, LoadModelRequest),
    Reset(RmwRequestId, ResetLearningRequest),
    Announce(RmwRequestId, AnnounceChangeRequest),
    Param(ParamRequest),
}

/// The operations thread: services and parameter changes, one at a time.
pub(super) fn ops_thread(
    mut ops: Ops,
    services: Services,
    params: futures::channel::mpsc::Receiver<ParamRequest>,
) {
    use futures::stream;
    futures::executor::block_on(async {
        let swap = services
            .swap
            .receive_request_stream()
            .filter_map(|r| async { r.ok().map(|(id, req)| OpsInput::Swap(id, req)) });
        let save = services
            .save
            .receive_request_stream()
            .filter_map(|r| async { r.ok().map(|(id, req)| OpsInput::Save(id, req)) });
        let load = services
            .load
            .receive_request_stream()
            .filter_map(|r| async { r.ok().map(|(id, req)| OpsInput::Load(id, req)) });
        let reset = services
            .reset
            .receive_request_stream()
            .filter_map(|r| async { r.ok().map(|(id, req)| OpsInput::Reset(id, req)) });
        let announce = services
            .announce
            .receive_request_stream()
            .filter_map(|r| async { r.ok().map(|(id, req)| OpsInput::Announce(id, req)) });
        let params = params.map(OpsInput::Param);
        let inputs = stream::select(
            stream::select(stream::select(swap, save), stream::select(load, reset)),
            stream::select(announce, params),
        );
        let mut inputs = pin!(inputs);
        while let Some(input) = inputs.next().await {
            match input {
                OpsInput::Swap(id, req) => {
                    let r = ops::guarded(&mut ops, "swap_model", |ops| {
                        ops.swap_model(&req.plugin, &req.config_json)
                    });
                    let (success, message) = outcome(r);
                    let _ = services
                        .swap
                        .send_response(id, SwapModelResponse { success, message });
                }
                OpsInput::Save(id, req) => {
                    let (success, message) = outcome(ops::guarded(&mut ops, "save_model", |ops| {
                        ops.save_model(&req.path)
                    }));
                    let _ = services
                        .save
                        .send_response(id, SaveModelResponse { success, message });
                }
                OpsInput::Load(id, req) => {
                    let (success, message) = outcome(ops::guarded(&mut ops, "load_model", |ops| {
                        ops.load_model(&req.path)
                    }));
                    let _ = services
                        .load
                        .send_response(id, LoadModelResponse { success, message });
                }
                OpsInput::Reset(id, req) => {
                    let (success, message) =
                        outcome(ops::guarded(&mut ops, "reset_learning", |ops| {
                            ops.reset_learning(req.keep_hyperparameters)
                        }));
                    let _ = services
                        .reset
                        .send_response(id, ResetLearningResponse { success, message });
                }
                OpsInput::Announce(id, req) => {
                    let (success, message) =
                        outcome(ops::guarded(&mut ops, "announce_change", |ops| {
                            ops.announce_change(&req.description)
                        }));
                    let _ = services
                        .announce
                        .send_response(id, AnnounceChangeResponse { success, message });
                }
                OpsInput::Param(req) => {
                    let result = ops::guarded(&mut ops, "set_parameters", |ops| {
                        ops.set_param(&req.name, &req.value).map(|()| String::new())
                    });
                    let _ = req.answer.try_send(result.map(|_| ()));
                }
            }
            ops.drain();
        }
    });
}

pub(super) fn outcome(result: Result<String, String>) -> (bool, String) {
    match result {
        Ok(message) => (true, message),
        Err(message) => (false, message),
    }
}
