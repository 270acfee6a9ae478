//! The node's operations, off the control thread: model swap, save, load and reset, and live
//! parameter changes. Each turns into a [`ControlCommand`] for the control thread (which
//! applies it at a tick boundary without waiting) and, where there is a result, waits for
//! the matching [`ControlReply`]. Plugin loading, model building, file I/O and the drop of
//! whatever the control thread gives back all happen here or on the learner's worker.
//!
//! Transport-free: the ROS adapter calls these methods from its services and parameter
//! callbacks; tests call them directly.

use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::control_loop::{ControlCommand, ControlReply};
use super::param_schema::{self, Apply, ParamValue};
use crate::control::ControlLaw;
use crate::learn::{SwapOutcome, SwapRequest, SwapSource};
use crate::model::{ModelFile, Plugin, SearchPath};
use crate::robot::Model;
use crate::simulate::{NodeParams, model_factory};

/// How long an operation waits for the control thread's answer (a swap includes warming the
/// new model on the replay buffer).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);

/// State shared with the publish thread: the model's label and the residual rate.
#[derive(Debug, Clone)]
pub struct SharedStatus {
    /// "plugin" of the model in use (for `~/residual` and diagnostics).
    pub model_label: Arc<Mutex<String>>,
    /// Publish `~/residual` every n-th tick.
    pub residual_every: Arc<AtomicU32>,
}

/// The operations side.
pub struct Ops {
    params: NodeParams,
    robot: Model,
    search: SearchPath,
    commands: SyncSender<ControlCommand>,
    replies: Receiver<ControlReply>,
    next_id: u64,
    shared: SharedStatus,
}

impl Ops {
    /// Operations over the loop reached through `commands`/`replies`, starting from `params`.
    pub fn new(
        params: NodeParams,
        robot: Model,
        search: SearchPath,
        commands: SyncSender<ControlCommand>,
        replies: Receiver<ControlReply>,
        shared: SharedStatus,
    ) -> Self {
        Self {
            params,
            robot,
            search,
            commands,
            replies,
            next_id: 0,
            shared,
        }
    }

    /// The parameters in force.
    pub fn params(&self) -> &NodeParams {
        &self.params
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn send(&self, command: ControlCommand) -> Result<(), String> {
        self.commands.try_send(command).map_err(|e| match e {
            TrySendError::Full(_) => {
                "busy: the control thread has not taken the previous change yet".to_owned()
            }
            TrySendError::Disconnected(_) => "the control loop has stopped".to_owned(),
        })
    }

    /// Waits for the reply to request `id`, dropping whatever else arrives (old laws,
    /// answers to requests that timed out).
    fn wait_for(&self, id: u64) -> Result<ControlReply, String> {
        let deadline = Instant::now() + ANSWER_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let reply = match self.replies.recv_timeout(left) {
                Ok(reply) => reply,
                Err(RecvTimeoutError::Timeout) => {
                    return Err(format!(
                        "no answer from the control loop within {} s (are joint states arriving?)",
                        ANSWER_TIMEOUT.as_secs()
                    ));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err("the control loop has stopped".into());
                }
            };
            let reply_id = match &reply {
                ControlReply::Event(e) => e.id,
                ControlReply::Refused { id, .. }
                | ControlReply::Reset { id, .. }
                | ControlReply::Saved { id, .. } => *id,
                ControlReply::OldLaw(_) => 0,
            };
            if reply_id == id {
                return Ok(reply);
            }
        }
    }

    /// Drops what the control thread gave back meanwhile (call now and then).
    pub fn drain(&self) {
        while self.replies.try_recv().is_ok() {}
    }

    /// Swaps to `plugin` with `config_json` ("" = `{}`): loaded and checked here, built and
    /// warmed on the learner's worker, adopted at a tick boundary. On any failure the old
    /// model keeps running and the error says why.
    pub fn swap_model(&mut self, plugin: &str, config_json: &str) -> Result<String, String> {
        let config: serde_json::Value = if config_json.trim().is_empty() {
            serde_json::json!({})
        } else {
            serde_json::from_str(config_json)
                .map_err(|e| format!("config_json is not JSON: {e}"))?
        };
        if !config.is_object() {
            return Err(format!("config_json must be a JSON object, got {config}"));
        }
        let info = Plugin::find(plugin, &self.search)
            .map_err(|e| e.to_string())?
            .info()
            .clone();
        let nv = self.robot.nv();
        let id = self.id();
        let factory = model_factory(plugin, &config, 3 * nv, nv);
        let requested = Instant::now();
        self.send(ControlCommand::Swap(SwapRequest {
            id,
            source: SwapSource::Warm(factory),
        }))?;
        let label = format!("{} {}", info.name, info.version);
        match self.wait_for(id)? {
            ControlReply::Event(event) => match event.outcome {
                SwapOutcome::Adopted {
                    ready_at,
                    adopted_at,
                } => {
                    self.params.model.plugin = plugin.to_owned();
                    self.params.model.config = config;
                    self.set_label(&info.name);
                    Ok(format!(
                        "adopted {label}: ready {:.3} s after the request (copy of the replay buffer, build, warm-up), adopted {:.0} µs later",
                        ready_at.duration_since(requested).as_secs_f64(),
                        adopted_at.saturating_duration_since(ready_at).as_secs_f64() * 1e6
                    ))
                }
                SwapOutcome::FactorySet => {
                    self.params.model.plugin = plugin.to_owned();
                    self.params.model.config = config;
                    self.set_label(&info.name);
                    Ok(format!(
                        "no model yet: {label} will be used when the hyperparameter fit is done"
                    ))
                }
                SwapOutcome::Failed(message) => Err(format!(
                    "{label} could not be built ({message}); the old model keeps running"
                )),
            },
            ControlReply::Refused { why, .. } => Err(why.message().into()),
            _ => Err("unexpected answer from the control loop".into()),
        }
    }

    fn set_label(&self, plugin: &str) {
        if let Ok(mut label) = self.shared.model_label.lock() {
            *label = plugin.to_owned();
        }
    }

    /// Saves the running model to `path` (atomically). The control thread serialises it
    /// between ticks; that time is reported.
    pub fn save_model(&mut self, path: &str) -> Result<String, String> {
        if path.trim().is_empty() {
            return Err("path is empty".into());
        }
        let id = self.id();
        self.send(ControlCommand::Save { id })?;
        match self.wait_for(id)? {
            ControlReply::Saved {
                result,
                blocked_micros,
                ..
            } => {
                let snapshot = result?;
                let samples = snapshot.stats.samples_seen;
                let file = ModelFile::from_snapshot(*snapshot, &self.params.model.config);
                let bytes = file.state.len();
                file.write_atomic(Path::new(path))
                    .map_err(|e| e.to_string())?;
                Ok(format!(
                    "saved {} {} ({samples} samples learned, {bytes} bytes of state) to {path}; the control thread spent {blocked_micros:.0} µs serialising between ticks",
                    file.header.plugin, file.header.plugin_version
                ))
            }
            _ => Err("unexpected answer from the control loop".into()),
        }
    }

    /// Loads a model file: rebuilt here, adopted at a tick boundary.
    pub fn load_model(&mut self, path: &str) -> Result<String, String> {
        let path = Path::new(path);
        let file = ModelFile::read(path).map_err(|e| e.to_string())?;
        let nv = self.robot.nv();
        let ready = file
            .build(&self.search, 3 * nv, nv, path)
            .map_err(|e| e.to_string())?;
        let id = self.id();
        self.send(ControlCommand::Swap(SwapRequest {
            id,
            source: SwapSource::Ready(Box::new(ready)),
        }))?;
        match self.wait_for(id)? {
            ControlReply::Event(event) => match event.outcome {
                SwapOutcome::Adopted { .. } => {
                    self.params.model.plugin = file.header.plugin.clone();
                    self.params.model.config = file.header.config.clone();
                    self.set_label(&file.header.plugin);
                    Ok(format!(
                        "loaded {} {} ({} samples learned) from {}",
                        file.header.plugin,
                        file.header.plugin_version,
                        file.header.samples_seen,
                        path.display()
                    ))
                }
                SwapOutcome::Failed(m) => Err(m),
                SwapOutcome::FactorySet => Err("unexpected answer".into()),
            },
            ControlReply::Refused { why, .. } => Err(why.message().into()),
            _ => Err("unexpected answer from the control loop".into()),
        }
    }

    /// "The dynamics changed now": the learner reacts as configured (`learn.change.action`).
    pub fn announce_change(&mut self, description: &str) -> Result<String, String> {
        self.send(ControlCommand::AnnounceChange)?;
        Ok(format!(
            "announced{}: the reaction ({:?}) is reported on ~/events",
            if description.is_empty() {
                String::new()
            } else {
                format!(" ({description})")
            },
            self.params.learn.change.action
        ))
    }

    /// Forgets what was learned (see `Learner::reset`).
    pub fn reset_learning(&mut self, keep_hyperparameters: bool) -> Result<String, String> {
        let id = self.id();
        self.send(ControlCommand::Reset {
            keep_hyperparameters,
            id,
        })?;
        match self.wait_for(id)? {
            ControlReply::Reset { result, .. } => result
                .map(|()| {
                    if keep_hyperparameters {
                        "reset: a fresh model with the current hyperparameters is being built"
                            .into()
                    } else {
                        "reset: collecting samples for a new hyperparameter fit".into()
                    }
                })
                .map_err(|why| why.message().into()),
            _ => Err("unexpected answer from the control loop".into()),
        }
    }

    /// Applies a parameter change (`ros2 param set`), refusing it with the reason if it is
    /// unknown, read-only, invalid, or cannot take effect.
    pub fn set_param(&mut self, name: &str, value: &ParamValue) -> Result<(), String> {
        let spec = param_schema::find(name).ok_or_else(|| format!("unknown parameter {name}"))?;
        param_schema::validate(spec, value, self.robot.nv())?;
        if spec.apply == Apply::ReadOnly {
            return Err(format!(
                "{name} is read-only: it takes effect at start (parameter file or command line); restart the node"
            ));
        }
        let new = param_schema::with_value(&self.params, spec, value)?;
        match spec.apply {
            Apply::ReadOnly => {}
            Apply::Model => {
                let config = new.model.config.to_string();
                self.swap_model(&new.model.plugin, &config)?;
            }
            Apply::Law => {
                let law = ControlLaw::new(&self.robot, &new.control).map_err(|e| e.to_string())?;
                self.send(ControlCommand::Law(Box::new(law)))?;
            }
            Apply::UseModel => self.send(ControlCommand::UseModel(new.control.use_model))?,
            Apply::Supervisor => {
                self.send(ControlCommand::Supervisor(new.control.supervisor.clone()))?;
            }
            Apply::Gate => self.send(ControlCommand::Gate(new.learn.gate.clone()))?,
            Apply::AdmitEvery => self.send(ControlCommand::AdmitEvery(new.learn.admit_every))?,
            Apply::Watchdog => {
                new.ros.check()?;
                self.send(ControlCommand::Watchdog {
                    timeout: Duration::from_secs_f64(new.ros.watchdog_timeout_s),
                    action: new.ros.watchdog_action,
                })?;
            }
            Apply::Publishing => self
                .shared
                .residual_every
                .store(new.ros.residual_every, Ordering::Relaxed),
        }
        self.params = new;
        Ok(())
    }
}
