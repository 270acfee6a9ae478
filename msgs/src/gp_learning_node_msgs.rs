//! `gp_learning_node_msgs`: the node's own interface package (`msg/` and `srv/` beside this
//! crate). The field comments are in the `.msg`/`.srv` files.

use serde::{Deserialize, Serialize};

use crate::builtin_interfaces::Time;
use crate::std_msgs::Header;
use crate::{RosService, ros_message};

/// `gp_learning_node_msgs/msg/ResidualEstimate`: one tick's learned residual per joint.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResidualEstimate {
    /// Stamp of the joint state the tick answered.
    pub header: Header,
    /// Plugin of the model in use ("" while none is).
    pub model: String,
    /// Joint names; every array below is in this order.
    pub joint_names: Vec<String>,
    /// Residual used in the law, N·m.
    pub mu: Vec<f64>,
    /// Latent posterior standard deviation, N·m.
    pub sigma: Vec<f64>,
    /// Calibrated bound η_cal, N·m.
    pub eta: Vec<f64>,
    /// Lemma-1 bound η_thm, N·m.
    pub eta_thm: Vec<f64>,
    /// The joint ran the nominal law this tick.
    pub fallback: Vec<bool>,
    /// Samples the model has learned from.
    pub samples_seen: u64,
    /// Samples it holds.
    pub samples_stored: u64,
    /// Experts or components.
    pub experts: u64,
    /// Learn + predict wall time, µs.
    pub model_us: f64,
    /// Whole tick wall time, µs.
    pub tick_us: f64,
    /// Theorem-2 tracking bound.
    pub tracking_bound: f64,
}
ros_message!(
    ResidualEstimate,
    "gp_learning_node_msgs/msg/ResidualEstimate",
    [
        ("header", "std_msgs/Header"),
        ("model", "string"),
        ("joint_names", "string[]"),
        ("mu", "float64[]"),
        ("sigma", "float64[]"),
        ("eta", "float64[]"),
        ("eta_thm", "float64[]"),
        ("fallback", "bool[]"),
        ("samples_seen", "uint64"),
        ("samples_stored", "uint64"),
        ("experts", "uint64"),
        ("model_us", "float64"),
        ("tick_us", "float64"),
        ("tracking_bound", "float64"),
    ]
);

/// The reply every service of the node gives.
macro_rules! outcome_response {
    ($ty:ident, $name:literal) => {
        #[doc = concat!("`", $name, "`: whether it worked, and a message saying why not or what was done.")]
        #[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
        pub struct $ty {
            /// It worked.
            pub success: bool,
            /// Why not, or what was done.
            pub message: String,
        }
        ros_message!($ty, $name, [("success", "bool"), ("message", "string")]);
    };
}

/// `gp_learning_node_msgs/srv/SwapModel` request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwapModelRequest {
    /// Plugin name or library path.
    pub plugin: String,
    /// Plugin configuration, JSON ("" means `{}`).
    pub config_json: String,
}
ros_message!(
    SwapModelRequest,
    "gp_learning_node_msgs/srv/SwapModel_Request",
    [("plugin", "string"), ("config_json", "string")]
);
outcome_response!(
    SwapModelResponse,
    "gp_learning_node_msgs/srv/SwapModel_Response"
);

/// `gp_learning_node_msgs/srv/SwapModel`.
#[derive(Debug, Clone, Copy)]
pub struct SwapModel;
impl RosService for SwapModel {
    const TYPE_NAME: &'static str = "gp_learning_node_msgs/srv/SwapModel";
    type Request = SwapModelRequest;
    type Response = SwapModelResponse;
}

/// `gp_learning_node_msgs/srv/SaveModel` request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SaveModelRequest {
    /// File to write.
    pub path: String,
}
ros_message!(
    SaveModelRequest,
    "gp_learning_node_msgs/srv/SaveModel_Request",
    [("path", "string")]
);
outcome_response!(
    SaveModelResponse,
    "gp_learning_node_msgs/srv/SaveModel_Response"
);

/// `gp_learning_node_msgs/srv/SaveModel`.
#[derive(Debug, Clone, Copy)]
pub struct SaveModel;
impl RosService for SaveModel {
    const TYPE_NAME: &'static str = "gp_learning_node_msgs/srv/SaveModel";
    type Request = SaveModelRequest;
    type Response = SaveModelResponse;
}

/// `gp_learning_node_msgs/srv/LoadModel` request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadModelRequest {
    /// File to read.
    pub path: String,
}
ros_message!(
    LoadModelRequest,
    "gp_learning_node_msgs/srv/LoadModel_Request",
    [("path", "string")]
);
outcome_response!(
    LoadModelResponse,
    "gp_learning_node_msgs/srv/LoadModel_Response"
);

/// `gp_learning_node_msgs/srv/LoadModel`.
#[derive(Debug, Clone, Copy)]
pub struct LoadModel;
impl RosService for LoadModel {
    const TYPE_NAME: &'static str = "gp_learning_node_msgs/srv/LoadModel";
    type Request = LoadModelRequest;
    type Response = LoadModelResponse;
}

/// `gp_learning_node_msgs/srv/ResetLearning` request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResetLearningRequest {
    /// Reuse the current hyperparameters instead of fitting them again.
    pub keep_hyperparameters: bool,
}
ros_message!(
    ResetLearningRequest,
    "gp_learning_node_msgs/srv/ResetLearning_Request",
    [("keep_hyperparameters", "bool")]
);
outcome_response!(
    ResetLearningResponse,
    "gp_learning_node_msgs/srv/ResetLearning_Response"
);

/// `gp_learning_node_msgs/srv/ResetLearning`.
#[derive(Debug, Clone, Copy)]
pub struct ResetLearning;
impl RosService for ResetLearning {
    const TYPE_NAME: &'static str = "gp_learning_node_msgs/srv/ResetLearning";
    type Request = ResetLearningRequest;
    type Response = ResetLearningResponse;
}

/// `gp_learning_node_msgs/msg/ChangeEvent`: a change of the dynamics and the node's reaction.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeEvent {
    /// When it was detected or announced.
    pub header: Header,
    /// Estimated onset.
    pub onset: Time,
    /// "detected" or "announced".
    pub source: String,
    /// The joint whose detector fired ("" when announced).
    pub joint: String,
    /// report | inject | drop | reidentify.
    pub action: String,
    /// One line.
    pub description: String,
}
ros_message!(
    ChangeEvent,
    "gp_learning_node_msgs/msg/ChangeEvent",
    [
        ("header", "std_msgs/Header"),
        ("onset", "builtin_interfaces/Time"),
        ("source", "string"),
        ("joint", "string"),
        ("action", "string"),
        ("description", "string"),
    ]
);

/// `gp_learning_node_msgs/srv/AnnounceChange` request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnnounceChangeRequest {
    /// Why.
    pub description: String,
}
ros_message!(
    AnnounceChangeRequest,
    "gp_learning_node_msgs/srv/AnnounceChange_Request",
    [("description", "string")]
);
outcome_response!(
    AnnounceChangeResponse,
    "gp_learning_node_msgs/srv/AnnounceChange_Response"
);

/// `gp_learning_node_msgs/srv/AnnounceChange`.
#[derive(Debug, Clone, Copy)]
pub struct AnnounceChange;
impl RosService for AnnounceChange {
    const TYPE_NAME: &'static str = "gp_learning_node_msgs/srv/AnnounceChange";
    type Request = AnnounceChangeRequest;
    type Response = AnnounceChangeResponse;
}
