//! The node's operations, off the control thread: model swap, save, load and reset, and live
//! parameter changes. Each turns into a [`ControlCommand`] for the control thread (which
//! applies it at a tick boundary without waiting) and, where there is a result, waits for
//! the matching [`ControlReply`]. Plugin loading, model building, file I/O and the drop of
//! whatever the control thread gives back all happen here or on the learner's worker.
//!
//! Transport-free: the ROS adapter calls these methods from its services and parameter
//! callbacks; tests call them directly.
//!
//! Everything here may come from any DDS peer, so nothing here names a file by path: a
//! plugin is a name found on the plugin search path ([`SearchPath`]), and a model file is a
//! name inside `ros.model_dir` ([`ModelDir`]); anything else is refused with the reason.

use std::sync::atomic::{AtomicU8, AtomicU32, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gpn_app::param_schema::{self, Apply, ParamValue};
use gpn_app::{ModelHost, NodeParams, hosted_model_factory};
use gpn_control::control::ControlLaw;
use gpn_control::control_loop::{ControlCommand, ControlReply};
use gpn_control::learn::{
    CancelOutcome, Finished, SwapOutcome, SwapRefusal, SwapRequest, SwapSource,
};
use gpn_dynamics::Model;
use gpn_plugin_host::file::ModelDir;
use gpn_plugin_host::{ModelFile, ModelFileError, Plugin, SearchPath};

use super::lifecycle::{Lifecycle, Primary, Transition};
use super::op_refusals::{OpRefusals, Refused};

/// How long an operation waits for the control thread's answer (a swap includes warming the
/// new model on the replay buffer).
const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a cancel waits for the control thread (it answers between ticks and, without
/// joint states, within 50 ms).
const CANCEL_TIMEOUT: Duration = Duration::from_secs(10);

/// Why no answer came.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WaitError {
    Timeout,
    Stopped,
}

impl WaitError {
    fn refused(self, timeout: Duration) -> Refused {
        let reason = match self {
            WaitError::Timeout => "no_answer",
            WaitError::Stopped => "stopped",
        };
        Refused::new(reason, self.message(timeout))
    }

    fn message(self, timeout: Duration) -> String {
        match self {
            WaitError::Timeout => format!(
                "no answer from the control loop within {} s (are joint states arriving? it answers between ticks)",
                timeout.as_secs_f64()
            ),
            WaitError::Stopped => "the control loop has stopped".into(),
        }
    }
}

/// How a model change ended: exactly one of these.
enum ChangeEnd {
    /// The new model runs (when it was ready and adopted, if known).
    Adopted(Option<(Instant, Instant)>),
    /// No model yet: the plugin is used for the first fit.
    FactorySet,
    /// Building it failed; the old model runs.
    Failed(String),
    /// Refused at once.
    Refused(SwapRefusal),
    /// Given up after the timeout and cancelled; the old model runs.
    Cancelled,
}

impl ChangeEnd {
    fn from_reply(reply: ControlReply) -> Self {
        match reply {
            ControlReply::Event(event) => match event.outcome {
                SwapOutcome::Adopted {
                    ready_at,
                    adopted_at,
                } => ChangeEnd::Adopted(Some((ready_at, adopted_at))),
                SwapOutcome::FactorySet => ChangeEnd::FactorySet,
                SwapOutcome::Failed(message) => ChangeEnd::Failed(message),
            },
            ControlReply::Refused { why, .. } => ChangeEnd::Refused(why),
            _ => ChangeEnd::Failed("unexpected answer from the control loop".into()),
        }
    }
}

/// State shared with the publish thread: the model's label and the residual rate.
#[derive(Debug, Clone)]
pub struct SharedStatus {
    /// "plugin" of the model in use (for `~/residual` and diagnostics).
    pub model_label: Arc<Mutex<String>>,
    /// Publish `~/residual` every n-th tick.
    pub residual_every: Arc<AtomicU32>,
    /// Refused swaps, loads and saves, by reason.
    pub refusals: Arc<OpRefusals>,
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
    answer_timeout: Duration,
    lifecycle: Lifecycle,
    /// The lifecycle's state id, for the spin thread's `get_state`.
    lifecycle_state: Arc<AtomicU8>,
    /// Transitions completed since the last [`Ops::take_transitions`].
    transitions: Vec<&'static Transition>,
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
        let lifecycle = Lifecycle::new(params.ros.active);
        Self {
            robot,
            search,
            commands,
            replies,
            next_id: 0,
            shared,
            answer_timeout: ANSWER_TIMEOUT,
            lifecycle,
            lifecycle_state: Arc::new(AtomicU8::new(lifecycle.state().id().id)),
            transitions: Vec::new(),
            params,
        }
    }

    /// The lifecycle state's id as the operations keep it (shared with the spin thread).
    pub fn lifecycle_state(&self) -> Arc<AtomicU8> {
        self.lifecycle_state.clone()
    }

    /// The lifecycle state.
    pub fn lifecycle(&self) -> Lifecycle {
        self.lifecycle
    }

    /// The lifecycle transitions completed since the last call (for transition events).
    pub fn take_transitions(&mut self) -> Vec<&'static Transition> {
        std::mem::take(&mut self.transitions)
    }

    /// A `ChangeState` request: the transition `id` (or `label` when `id` is 0) from the
    /// current state; activation and deactivation take effect at the loop's next state, as
    /// `ros.active` does (which follows).
    pub fn change_state(&mut self, id: u8, label: &str) -> Result<(), String> {
        let transition = self.lifecycle.find(id, label)?;
        let commands = transition.goal == Primary::Active;
        if commands != self.lifecycle.commands() {
            self.send(ControlCommand::Activate(commands))?;
            self.params.ros.active = commands;
        }
        self.lifecycle.complete(transition);
        self.record(vec![transition]);
        Ok(())
    }

    /// Keeps the completed `transitions` for their events and publishes the new state.
    fn record(&mut self, transitions: Vec<&'static Transition>) {
        self.transitions.extend(transitions);
        self.lifecycle_state
            .store(self.lifecycle.state().id().id, Ordering::Relaxed);
    }

    /// Waits `timeout` instead of 60 s for the control loop's answer (tests).
    pub fn set_answer_timeout(&mut self, timeout: Duration) {
        self.answer_timeout = timeout;
    }

    /// The parameters in force.
    pub fn params(&self) -> &NodeParams {
        &self.params
    }

    fn id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    fn send(&self, command: ControlCommand) -> Result<(), Refused> {
        self.commands.try_send(command).map_err(|e| match e {
            TrySendError::Full(_) => Refused::new(
                "busy",
                "busy: the control thread has not taken the previous change yet",
            ),
            TrySendError::Disconnected(_) => {
                Refused::new("stopped", "the control loop has stopped")
            }
        })
    }

    /// Waits up to `timeout` for the reply to request `id`, dropping whatever else arrives
    /// (old laws, answers to requests that were given up).
    fn wait_for(&self, id: u64, timeout: Duration) -> Result<ControlReply, WaitError> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let reply = match self.replies.recv_timeout(left) {
                Ok(reply) => reply,
                Err(RecvTimeoutError::Timeout) => return Err(WaitError::Timeout),
                Err(RecvTimeoutError::Disconnected) => return Err(WaitError::Stopped),
            };
            let reply_id = match &reply {
                ControlReply::Event(e) => e.id,
                ControlReply::Refused { id, .. }
                | ControlReply::Reset { id, .. }
                | ControlReply::Saved { id, .. }
                | ControlReply::SwapCancel { id, .. } => *id,
                ControlReply::OldLaw(_) => 0,
            };
            if reply_id == id {
                return Ok(reply);
            }
        }
    }

    /// [`Ops::wait_for`] with the operations' timeout, as a refusal for the caller.
    fn answer(&self, id: u64) -> Result<ControlReply, Refused> {
        self.wait_for(id, self.answer_timeout)
            .map_err(|e| e.refused(self.answer_timeout))
    }

    /// Sends a model change and follows it to its one end: adopted (or, before the first
    /// fit, the plugin set for it), failed, refused, or — when no answer came within the
    /// operations' timeout — cancelled. A change is never reported failed and adopted later:
    /// after a timeout the control loop is asked to cancel it, and its answer says whether
    /// the cancel came first or the change had already ended (then that end is reported).
    fn change_model(&mut self, request: SwapRequest) -> Result<ChangeEnd, Refused> {
        let id = request.id;
        self.send(ControlCommand::Swap(request))?;
        match self.wait_for(id, self.answer_timeout) {
            Ok(reply) => Ok(ChangeEnd::from_reply(reply)),
            Err(WaitError::Stopped) => Err(WaitError::Stopped.refused(self.answer_timeout)),
            Err(WaitError::Timeout) => self.cancel(id),
        }
    }

    /// Cancels change `id` after its caller's timeout and returns how it ended.
    fn cancel(&mut self, id: u64) -> Result<ChangeEnd, Refused> {
        let deadline = Instant::now() + CANCEL_TIMEOUT;
        loop {
            match self.send(ControlCommand::CancelSwap { id }) {
                Ok(()) => break,
                Err(_) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                Err(e) => {
                    return Err(Refused::new(
                        "no_answer",
                        format!(
                            "{}, and the cancel could not be sent ({}): the model change's outcome is unknown; see ~/events and diagnostics",
                            WaitError::Timeout.message(self.answer_timeout),
                            e.message
                        ),
                    ));
                }
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match self.wait_for(id, left) {
            Ok(ControlReply::SwapCancel { outcome, .. }) => Ok(match outcome {
                CancelOutcome::Cancelled => ChangeEnd::Cancelled,
                CancelOutcome::Finished(Finished::Adopted) => ChangeEnd::Adopted(None),
                CancelOutcome::Finished(Finished::FactorySet) => ChangeEnd::FactorySet,
                CancelOutcome::Finished(Finished::Failed) => {
                    ChangeEnd::Failed("it failed while the answer was awaited".into())
                }
                CancelOutcome::Unknown => {
                    ChangeEnd::Failed("the control loop does not know it".into())
                }
            }),
            // The change ended before the cancel reached the loop.
            Ok(reply) => Ok(ChangeEnd::from_reply(reply)),
            Err(e) => Err(Refused::new(
                "no_answer",
                format!(
                    "{}; cancelling it got no answer either: the model change's outcome is unknown",
                    e.message(self.answer_timeout)
                ),
            )),
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
        let result = self.try_swap(plugin, config_json);
        self.counted("swap", result)
    }

    /// A refusal of `op` counted by its reason; the caller gets the message.
    fn counted(&self, op: &'static str, result: Result<String, Refused>) -> Result<String, String> {
        result.map_err(|refused| {
            self.shared.refusals.count(op, refused.reason);
            refused.message
        })
    }

    fn try_swap(&mut self, plugin: &str, config_json: &str) -> Result<String, Refused> {
        let config: serde_json::Value = if config_json.trim().is_empty() {
            serde_json::json!({})
        } else {
            serde_json::from_str(config_json)
                .map_err(|e| Refused::new("config_json", format!("config_json is not JSON: {e}")))?
        };
        if !config.is_object() {
            return Err(Refused::new(
                "config_json",
                format!("config_json must be a JSON object, got {config}"),
            ));
        }
        let found = Plugin::find(plugin, &self.search)?;
        found.check_config(&config)?;
        let info = found.info().clone();
        let id = self.id();
        let host = self.model_host()?;
        let factory = hosted_model_factory(&host, &self.search, plugin, &config);
        let requested = Instant::now();
        let end = self.change_model(SwapRequest {
            id,
            source: SwapSource::Warm(factory),
        })?;
        let label = format!("{} {}", info.name, info.version);
        match end {
            ChangeEnd::Adopted(timing) => {
                self.params.model.plugin = plugin.to_owned();
                self.params.model.config = config;
                self.set_label(&info.name);
                Ok(match timing {
                    Some((ready_at, adopted_at)) => format!(
                        "adopted {label}: ready {:.3} s after the request (copy of the replay buffer, build, warm-up), adopted {:.0} µs later",
                        ready_at.duration_since(requested).as_secs_f64(),
                        adopted_at.saturating_duration_since(ready_at).as_secs_f64() * 1e6
                    ),
                    None => format!("adopted {label}"),
                })
            }
            ChangeEnd::FactorySet => {
                self.params.model.plugin = plugin.to_owned();
                self.params.model.config = config;
                self.set_label(&info.name);
                Ok(format!(
                    "no model yet: {label} will be used when the hyperparameter fit is done"
                ))
            }
            ChangeEnd::Failed(message) => Err(Refused::new(
                "build_failed",
                format!("{label} could not be built ({message}); the old model keeps running"),
            )),
            ChangeEnd::Refused(why) => Err(change_refused(why)),
            ChangeEnd::Cancelled => Err(self.cancelled(&label)),
        }
    }

    fn cancelled(&self, what: &str) -> Refused {
        Refused::new(
            "no_answer",
            format!(
                "{what}: {}; the change was cancelled and the old model keeps running",
                WaitError::Timeout.message(self.answer_timeout)
            ),
        )
    }

    fn set_label(&self, plugin: &str) {
        if let Ok(mut label) = self.shared.model_label.lock() {
            *label = plugin.to_owned();
        }
    }

    /// Where new models live (`model.isolation`).
    fn model_host(&self) -> Result<ModelHost, Refused> {
        node_model_host(&self.params).map_err(|m| Refused::new("isolation", m))
    }

    /// The model directory (`ros.model_dir`, see [`RosParams`](super::RosParams)).
    fn model_dir(&self) -> Result<ModelDir, Refused> {
        self.params
            .ros
            .resolved_model_dir(|name| std::env::var(name).ok())
            .map(ModelDir::new)
            .map_err(|m| Refused::new("model_dir", m))
    }

    /// Saves the running model to the file `name` inside `ros.model_dir` (atomically; the
    /// directory is created if missing). The control thread serialises it between ticks;
    /// that time is reported.
    pub fn save_model(&mut self, name: &str) -> Result<String, String> {
        let result = self.try_save(name);
        self.counted("save", result)
    }

    fn try_save(&mut self, name: &str) -> Result<String, Refused> {
        let path = self
            .model_dir()?
            .resolve_for_save(name)
            .map_err(model_dir_error)?;
        let id = self.id();
        self.send(ControlCommand::Save { id })?;
        match self.answer(id)? {
            ControlReply::Saved {
                result,
                blocked_micros,
                ..
            } => {
                let snapshot = result.map_err(|m| Refused::new("snapshot_failed", m))?;
                let samples = snapshot.stats.samples_seen;
                let file = ModelFile::from_snapshot(*snapshot, &self.params.model.config);
                let bytes = file.state.len();
                file.write_atomic(&path)?;
                Ok(format!(
                    "saved {} {} ({samples} samples learned, {bytes} bytes of state) to {}; the control thread spent {blocked_micros:.0} µs serialising between ticks",
                    file.header.plugin,
                    file.header.plugin_version,
                    path.display()
                ))
            }
            _ => Err(unexpected_answer()),
        }
    }

    /// Loads the model file `name` inside `ros.model_dir`: rebuilt here, adopted at a tick
    /// boundary.
    pub fn load_model(&mut self, name: &str) -> Result<String, String> {
        let result = self.try_load(name);
        self.counted("load", result)
    }

    fn try_load(&mut self, name: &str) -> Result<String, Refused> {
        let path = self
            .model_dir()?
            .resolve_for_load(name)
            .map_err(model_dir_error)?;
        let file = ModelFile::read(&path)?;
        let inputs = self.params.learn.input_layout(self.robot.nv());
        let process = match self.model_host()? {
            ModelHost::InProcess => None,
            ModelHost::Process(options) => Some(options),
        };
        let ready = file.build_in(&self.search, inputs, &path, process.as_ref())?;
        let id = self.id();
        let end = self.change_model(SwapRequest {
            id,
            source: SwapSource::Ready(Box::new(ready)),
        })?;
        match end {
            ChangeEnd::Adopted(_) => {
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
            ChangeEnd::Failed(m) => Err(Refused::new("build_failed", m)),
            ChangeEnd::FactorySet => Err(unexpected_answer()),
            ChangeEnd::Refused(why) => Err(change_refused(why)),
            ChangeEnd::Cancelled => Err(self.cancelled(&format!("loading {}", path.display()))),
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
        match self.answer(id)? {
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

    /// Whether a set of `name` to `value` may be applied: a parameter of this node, a valid
    /// value for this robot, not read-only. [`Ops::set_param`] checks this first; an atomic
    /// set checks every parameter with it before applying any.
    pub fn check_param(
        &self,
        name: &str,
        value: &ParamValue,
    ) -> Result<&'static param_schema::ParamSpec, String> {
        let spec = param_schema::find(name).ok_or_else(|| format!("unknown parameter {name}"))?;
        param_schema::validate(spec, value, self.robot.nv())?;
        if spec.apply == Apply::ReadOnly {
            return Err(format!(
                "{name} is read-only: it takes effect at start (parameter file or command line); restart the node"
            ));
        }
        Ok(spec)
    }

    /// Applies a parameter change (`ros2 param set`), refusing it with the reason if it is
    /// unknown, read-only, invalid, or cannot take effect.
    pub fn set_param(&mut self, name: &str, value: &ParamValue) -> Result<(), String> {
        let spec = self.check_param(name, value)?;
        let mut new = param_schema::with_value(&self.params, spec, value)?;
        match spec.apply {
            Apply::ReadOnly => {}
            Apply::Model => {
                if new.model.plugin != self.params.model.plugin
                    && new.model.config == self.params.model.config
                {
                    // Another plugin starts from its own defaults: the configuration in force
                    // is the old plugin's, whose keys the new one refuses.
                    new.model.config = serde_json::json!({});
                }
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
                let timeout = Duration::try_from_secs_f64(new.ros.watchdog_timeout_s)
                    .map_err(|e| format!("ros.watchdog_timeout_s: {e}"))?;
                self.send(ControlCommand::Watchdog {
                    timeout,
                    action: new.ros.watchdog_action,
                })?;
            }
            Apply::Activation => {
                if new.ros.active && self.lifecycle.state() == Primary::Finalized {
                    return Err(
                        "ros.active: the node is finalized (lifecycle shutdown) and commands nothing any more"
                            .into(),
                    );
                }
                self.send(ControlCommand::Activate(new.ros.active))?;
                let taken = self.lifecycle.follow_active(new.ros.active);
                self.record(taken);
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

/// Where the node's models live (`model.isolation`): a plugin process answers within the
/// supervisor's budget, or the call fails (and the supervisor judges it).
pub fn node_model_host(params: &NodeParams) -> Result<ModelHost, String> {
    let budget = params.control.supervisor.budget_micros;
    let deadline = Duration::try_from_secs_f64(budget * 1e-6)
        .map_err(|e| format!("control.supervisor.budget_micros {budget}: {e}"))?;
    ModelHost::of(params, deadline)
}

/// A model-directory error as the services answer it: a refusal names the parameter that
/// sets the directory.
fn model_dir_error(error: ModelFileError) -> Refused {
    match error {
        ModelFileError::OutsideModelDir { .. } => {
            Refused::new(error.reason(), format!("{error} (ros.model_dir)"))
        }
        other => other.into(),
    }
}

/// A change the control loop refused at once.
fn change_refused(why: SwapRefusal) -> Refused {
    let reason = match why {
        SwapRefusal::Busy => "busy",
        SwapRefusal::Fitting => "fitting",
    };
    Refused::new(reason, why.message())
}

fn unexpected_answer() -> Refused {
    Refused::new(
        "unexpected_answer",
        "unexpected answer from the control loop",
    )
}

/// Runs one operation; a handler that panics (a defect) answers its call with the error
/// and the operations thread goes on.
pub fn guarded(
    ops: &mut Ops,
    what: &str,
    f: impl FnOnce(&mut Ops) -> Result<String, String>,
) -> Result<String, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(ops)))
        .unwrap_or_else(|panic| Err(internal_error(what, panic.as_ref())))
}

/// The error a call gets when its handler panicked (a defect: reported, not fatal).
pub fn internal_error(what: &str, panic: &(dyn std::any::Any + Send)) -> String {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    eprintln!("gp-node: internal error in {what}: {message}; the node keeps running");
    format!("internal error in {what} ({message}); the node keeps running")
}
