//! `gp-node learn`: learn from a rosbag2 recording. The recording is an observe-only plant
//! of the one control loop (`plant`): its joint states go through the node's joint-state
//! reader, time-aligned with the recorded effort command (`align`), and the node's learner
//! learns in bag time. The tail is held out and scored (`holdout`); the model is saved as a
//! model file that `gp-node run` can start from. `samples` gives the learning samples of a
//! recording without learning them, for `gp-node eval --bag`.
//!
//! Boundary: the formats are `gpn_bag`'s, the loop and learner `gpn_control`'s, the message
//! conversion `gpn_ros_io`'s (its plain-Rust part); no ROS at run time.

pub mod align;
pub mod holdout;
mod job;
pub mod plant;
mod report;
mod samples;
pub mod scan;
mod topics;

pub use job::{LearnOptions, ReplayError, default_model_path, learn};
pub use plant::Progress;
pub use report::{LearnReport, OffsetMs, Refusal};
pub use samples::{RecordedSamples, samples};
pub use topics::ReplayTopics;
