//! Failure double for the plugin host: `predict` sleeps (config `predict_sleep_ms`, default
//! 50) before answering, as a model blowing its real-time budget would, and every model runs
//! a background thread (a stand-in for a refit worker) that `destroy` must join. With
//! `abort_after_predicts` n, the n-th `predict` aborts the process (SIGABRT), as a plugin
//! that crashes (a segfault) would: the case of `model.isolation: process`. Exports the
//! live-model and live-thread counters.
//!
//! Boundary: test support only. Used by `node/tests/model_doubles.rs` and, later, by the
//! control loop's budget supervisor tests.
//!
//! ```
//! use gpn_online_model::OnlineModel;
//! use gpn_plugin_api::Plugin;
//! let cfg = gpn_double_common::serde_json::json!({"predict_sleep_ms": 1});
//! let mut m = gpn_double_slow::Slow::create(&cfg, 1, 1).unwrap();
//! let (mut mean, mut var) = ([0.0], [0.0]);
//! m.predict(&[0.0], &mut mean, &mut var).unwrap();
//! drop(m);
//! assert_eq!(gpn_double_common::live_threads(), 0);
//! ```
#![warn(missing_docs)]

use std::sync::mpsc::{Sender, channel};
use std::thread::JoinHandle;
use std::time::Duration;

use gpn_double_common::serde_json::Value;
use gpn_double_common::{Fault, Faulty, LiveThread};
use gpn_online_model::ModelError;

/// A sleep before each prediction, and a worker thread joined on drop.
#[derive(Debug)]
pub struct SlowWithWorker {
    predict_sleep: Duration,
    /// Predictions left before the process is aborted (None: never).
    predicts_before_abort: Option<u64>,
    // Dropping the sender tells the worker to stop; `Drop` then joins it.
    stop: Option<Sender<()>>,
    worker: Option<JoinHandle<()>>,
}

impl Fault for SlowWithWorker {
    fn from_config(config: &Value) -> Result<Self, ModelError> {
        let sleep_ms = match config.get("predict_sleep_ms") {
            None => 50,
            Some(v) => v.as_u64().ok_or_else(|| {
                ModelError::Config(format!("predict_sleep_ms must be a whole number, got {v}"))
            })?,
        };
        let predicts_before_abort = match config.get("abort_after_predicts") {
            None => None,
            Some(v) => Some(v.as_u64().filter(|n| *n > 0).ok_or_else(|| {
                ModelError::Config(format!(
                    "abort_after_predicts must be a whole number > 0, got {v}"
                ))
            })?),
        };
        let (stop, stopped) = channel::<()>();
        // Counted from here (not from inside the thread, which may not have started when
        // `create` returns) until the thread's closure ends.
        let counted = LiveThread::new();
        let worker = std::thread::Builder::new()
            .name("slow-double-worker".into())
            .spawn(move || {
                let _counted = counted;
                // Returns when the model drops the sender.
                while stopped.recv().is_ok() {}
            })
            .map_err(|e| ModelError::Other(format!("cannot start the worker thread: {e}")))?;
        Ok(SlowWithWorker {
            predict_sleep: Duration::from_millis(sleep_ms),
            predicts_before_abort,
            stop: Some(stop),
            worker: Some(worker),
        })
    }

    fn before_predict(&mut self) {
        if let Some(left) = self.predicts_before_abort.as_mut() {
            *left -= 1;
            if *left == 0 {
                std::process::abort();
            }
        }
        std::thread::sleep(self.predict_sleep);
    }
}

impl Drop for SlowWithWorker {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

/// A model with a slow `predict` and a background thread.
pub type Slow = Faulty<SlowWithWorker>;

gpn_plugin_api::export_plugin!(
    Slow,
    name = "slow",
    version = env!("CARGO_PKG_VERSION"),
    description = "Failure double: predict sleeps 50 ms; joins a worker thread on destroy",
);
gpn_double_common::export_counters!();
