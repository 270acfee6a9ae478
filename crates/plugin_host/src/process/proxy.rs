//! The node's end: a [`ProcessModel`] is an [`OnlineModel`] whose calls run in a plugin
//! process.

use std::cell::RefCell;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gpn_online_model::{ModelError, ModelStats, OnlineModel, Readiness, check_len};

use super::shm::{SharedRegion, futex_wait, futex_wake};
use super::{Layout, MAX_DIMS, Op, REGION_BYTES, STATUS_OK};

/// The descriptor number the region has in the plugin process.
const CHILD_FD: i32 = 3;

/// How the node runs plugin processes.
#[derive(Debug, Clone)]
pub struct ProcessOptions {
    /// The executable with the `plugin-server` subcommand (`gp-node`).
    pub server: PathBuf,
    /// Deadline of a `predict` or `update` from a control thread (it waits this long at most;
    /// [`gpn_online_model::mark_control_thread`]); other threads wait as long as it takes.
    pub call_timeout: Duration,
    /// Deadline of creating the model (loading the library, `create`).
    pub create_timeout: Duration,
    /// `SCHED_FIFO` priority of the process (that of the node's control thread: the call
    /// waits for it), or None for normal scheduling.
    pub priority: Option<u8>,
}

/// Spin this long on the answer before sleeping on it: a fast plugin answers within it and
/// the call costs no wake-up of the control thread.
const SPIN: Duration = Duration::from_micros(100);

/// The deadline of a call from a thread that is not a control loop's.
const OFF_CONTROL_THREAD_TIMEOUT: Duration = Duration::from_secs(60);

/// How the process ended, set by its watcher thread.
#[derive(Default)]
struct Ended {
    is: AtomicBool,
    why: Mutex<String>,
    /// The node ended it (dropping the model): nothing to report.
    closing: AtomicBool,
}

/// The channel to `child` over `region`: takes its pipes and starts the thread that waits
/// for it: when it ends, the calls fail at once (no deadline to wait out) and, unless the
/// node ended it, the log says why — from that thread, never the control thread.
fn open_channel(region: SharedRegion, mut child: Child, library: &Path) -> Result<Channel, String> {
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err("the plugin process has no pipes".into());
    };
    let pid = child.id();
    let ended = Arc::new(Ended::default());
    let name = library.file_name().map_or_else(
        || library.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let watcher = {
        let ended = ended.clone();
        std::thread::Builder::new()
            .name("gpn-plugin-watch".into())
            .spawn(move || {
                let status = child.wait();
                let why = match status {
                    Ok(s) => format!("the plugin process of {name} (pid {pid}) ended: {s}"),
                    Err(e) => format!("the plugin process of {name} (pid {pid}): {e}"),
                };
                if !ended.closing.load(Ordering::Acquire) {
                    eprintln!(
                        "gp-node: {why}; its model answers nothing from now (the supervisor falls back to the nominal law)"
                    );
                }
                if let Ok(mut w) = ended.why.lock() {
                    *w = why;
                }
                ended.is.store(true, Ordering::Release);
            })
            .map_err(|e| format!("starting the plugin process's watcher: {e}"))?
    };
    Ok(Channel {
        region,
        pid,
        watcher: Some(watcher),
        ended,
        stdin,
        stdout,
        next: 0,
        pending: None,
    })
}

/// During a wait longer than this, whether the process still lives is checked this often.
const LIVENESS_SLICE: Duration = Duration::from_millis(10);

/// A model in a plugin process.
pub struct ProcessModel {
    /// The calls' state (`state_bytes` takes `&self` and still talks to the process).
    channel: RefCell<Channel>,
    d: usize,
    p: usize,
    call_timeout: Duration,
    identity: (String, String),
}

/// The region, the process and the sequence numbers.
struct Channel {
    region: SharedRegion,
    pid: u32,
    /// Waits for the process (reaps it) and says why it ended.
    watcher: Option<std::thread::JoinHandle<()>>,
    ended: Arc<Ended>,
    stdin: ChildStdin,
    stdout: ChildStdout,
    next: u32,
    /// A request that missed its deadline, still unanswered.
    pending: Option<u32>,
}

impl ProcessModel {
    /// Starts a plugin process for the plugin library at `library` and creates its model
    /// from `config` (JSON text) for `d` inputs and `p` outputs.
    pub fn spawn(
        options: &ProcessOptions,
        library: &Path,
        config: &str,
        d: usize,
        p: usize,
    ) -> Result<Self, String> {
        if d + p > MAX_DIMS / 2 {
            return Err(format!(
                "{d} inputs and {p} outputs: a plugin process carries at most {} in all",
                MAX_DIMS / 2
            ));
        }
        let region = SharedRegion::create(REGION_BYTES)
            .map_err(|e| format!("creating the shared region: {e}"))?;
        let fd = region.fd();
        let mut command = Command::new(&options.server);
        command
            .arg(super::SUBCOMMAND)
            .args(["--fd", &CHILD_FD.to_string()])
            .arg("--library")
            .arg(library)
            .args(["--inputs", &d.to_string(), "--outputs", &p.to_string()])
            .args(["--config", config])
            .args(
                options
                    .priority
                    .map(|p| ["--priority".to_owned(), p.to_string()])
                    .into_iter()
                    .flatten(),
            )
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        // SAFETY: between fork and exec only async-signal-safe calls: dup2 gives the region
        // the agreed number and clears close-on-exec on it (when it has the number already,
        // dup2 does nothing: fcntl clears the flag).
        unsafe {
            command.pre_exec(move || {
                let rc = if fd == CHILD_FD {
                    libc::fcntl(fd, libc::F_SETFD, 0)
                } else {
                    libc::dup2(fd, CHILD_FD)
                };
                if rc < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().map_err(|e| {
            format!(
                "starting the plugin process {}: {e}",
                options.server.display()
            )
        })?;
        let mut channel = open_channel(region, child, library)?;
        channel
            .call(Op::Hello, options.create_timeout)
            .map_err(|e| e.to_string())?;
        let text = channel.layout().read_text();
        let (name, version) = text.split_once('\n').unwrap_or((&text, ""));
        Ok(Self {
            identity: (name.to_owned(), version.to_owned()),
            channel: RefCell::new(channel),
            d,
            p,
            call_timeout: options.call_timeout,
        })
    }

    /// The process's id (tests: to end it).
    pub fn pid(&self) -> u32 {
        self.channel.borrow().pid
    }

    /// `call_timeout` on a control thread; elsewhere (a worker warming the model on the
    /// replay buffer, an evaluation) as long as it takes, bounded only against a hung process.
    fn call_deadline(&self) -> Duration {
        if gpn_online_model::on_control_thread() {
            self.call_timeout
        } else {
            OFF_CONTROL_THREAD_TIMEOUT
        }
    }
}

impl Channel {
    fn layout(&self) -> Layout {
        Layout {
            base: self.region.ptr(),
        }
    }

    /// Sends request `op` (its inputs already written) and waits for the answer until
    /// `timeout`.
    fn call(&mut self, op: Op, timeout: Duration) -> Result<(), ModelError> {
        self.ready_for_call()?;
        self.post(op);
        self.wait(timeout)
    }

    /// Refuses a call while the process is gone or a late answer is outstanding.
    fn ready_for_call(&mut self) -> Result<(), ModelError> {
        self.check_alive()?;
        if let Some(pending) = self.pending {
            if self.layout().header().response.load(Ordering::Acquire) != pending {
                self.check_alive()?;
                return Err(ModelError::Other(
                    "plugin process: still busy with a call that missed its deadline".into(),
                ));
            }
            self.pending = None;
        }
        Ok(())
    }

    fn post(&mut self, op: Op) {
        self.next = self.next.wrapping_add(1).max(1);
        let layout = self.layout();
        let h = layout.header();
        h.op.store(op as u32, Ordering::Relaxed);
        h.request.store(self.next, Ordering::Release);
        futex_wake(&h.request);
    }

    fn wait(&mut self, timeout: Duration) -> Result<(), ModelError> {
        let start = Instant::now();
        let layout = self.layout();
        let h = layout.header();
        loop {
            let seen = h.response.load(Ordering::Acquire);
            if seen == self.next {
                return if h.status.load(Ordering::Relaxed) == STATUS_OK {
                    Ok(())
                } else {
                    Err(ModelError::Other(layout.read_text()))
                };
            }
            let waited = start.elapsed();
            if waited >= timeout {
                self.pending = Some(self.next);
                self.check_alive()?;
                return Err(ModelError::Other(format!(
                    "plugin process: no answer within {} µs",
                    timeout.as_micros()
                )));
            }
            if waited < SPIN {
                std::hint::spin_loop();
            } else if timeout - waited > LIVENESS_SLICE {
                // A long call (creating, saving): a process that died must not cost the
                // whole timeout.
                futex_wait(&h.response, seen, Some(LIVENESS_SLICE));
                if h.response.load(Ordering::Acquire) != self.next {
                    self.check_alive()?;
                }
            } else {
                futex_wait(&h.response, seen, Some(timeout - waited));
            }
        }
    }

    /// Err if the process has ended (one atomic load while it lives).
    fn check_alive(&self) -> Result<(), ModelError> {
        if self.ended.is.load(Ordering::Acquire) {
            let why = self.ended.why.lock().map(|w| w.clone()).unwrap_or_default();
            return Err(ModelError::Other(why));
        }
        Ok(())
    }
}

impl Drop for Channel {
    fn drop(&mut self) {
        // The server ends when its model goes: kill it; the watcher reaps it (no zombie).
        self.ended.closing.store(true, Ordering::Release);
        // SAFETY: kill with our child's pid (not reaped before the watcher is joined below,
        // so the pid cannot have been reused).
        unsafe {
            libc::kill(self.pid as libc::pid_t, libc::SIGKILL);
        }
        if let Some(watcher) = self.watcher.take() {
            let _ = watcher.join();
        }
    }
}

impl OnlineModel for ProcessModel {
    fn input_dim(&self) -> usize {
        self.d
    }

    fn output_dim(&self) -> usize {
        self.p
    }

    fn predict(&mut self, x: &[f64], mean: &mut [f64], var: &mut [f64]) -> Result<(), ModelError> {
        check_len("x", x, self.d)?;
        check_len("mean", mean, self.p)?;
        check_len("var", var, self.p)?;
        let deadline = self.call_deadline();
        let c = self.channel.get_mut();
        c.ready_for_call()?;
        let layout = c.layout();
        // SAFETY: d ≤ SLOTS input slots; the server reads them after the request.
        unsafe { std::ptr::copy_nonoverlapping(x.as_ptr(), layout.inputs(), self.d) };
        c.call(Op::Predict, deadline)?;
        // SAFETY: 2p ≤ SLOTS output slots, written before the answer.
        unsafe {
            std::ptr::copy_nonoverlapping(layout.outputs(), mean.as_mut_ptr(), self.p);
            std::ptr::copy_nonoverlapping(layout.outputs().add(self.p), var.as_mut_ptr(), self.p);
        }
        Ok(())
    }

    fn update(
        &mut self,
        x: &[f64],
        y: &[f64],
        t_secs: f64,
        noise_var: &[f64],
    ) -> Result<(), ModelError> {
        let (d, p) = (self.d, self.p);
        check_len("x", x, d)?;
        check_len("y", y, p)?;
        check_len("noise_var", noise_var, p)?;
        let deadline = self.call_deadline();
        let c = self.channel.get_mut();
        c.ready_for_call()?;
        let inputs = c.layout().inputs();
        // SAFETY: d + 2p + 1 ≤ SLOTS input slots.
        unsafe {
            std::ptr::copy_nonoverlapping(x.as_ptr(), inputs, d);
            std::ptr::copy_nonoverlapping(y.as_ptr(), inputs.add(d), p);
            std::ptr::copy_nonoverlapping(noise_var.as_ptr(), inputs.add(d + p), p);
            *inputs.add(d + 2 * p) = t_secs;
        }
        c.call(Op::Update, deadline)
    }

    fn stats(&self) -> ModelStats {
        let layout = self.channel.borrow().layout();
        let h = layout.header();
        ModelStats {
            samples_seen: h.samples_seen.load(Ordering::Relaxed),
            samples_stored: h.samples_stored.load(Ordering::Relaxed),
            experts: h.experts.load(Ordering::Relaxed),
            memory_bytes: h.memory_bytes.load(Ordering::Relaxed),
        }
    }

    fn state_bytes(&self) -> Result<Vec<u8>, ModelError> {
        self.channel.borrow_mut().save_state()
    }

    fn restore_state_bytes(&mut self, bytes: &[u8]) -> Result<(), ModelError> {
        self.channel.get_mut().restore_state(bytes)
    }

    fn plugin_identity(&self) -> Option<(String, String)> {
        Some(self.identity.clone())
    }

    fn readiness(&self, from_prior: &mut [bool]) -> Option<Readiness> {
        let layout = self.channel.borrow().layout();
        let h = layout.header();
        if h.has_readiness.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let flags = layout.outputs();
        for (k, f) in from_prior.iter_mut().enumerate().take(self.p) {
            // SAFETY: 3p ≤ SLOTS output slots (the flags follow mean and var).
            *f = unsafe { *flags.add(2 * self.p + k) } != 0.0;
        }
        Some(Readiness {
            samples_behind: h.samples_behind.load(Ordering::Relaxed),
        })
    }

    fn wait_ready(&mut self, timeout: Duration) -> Result<(), ModelError> {
        let c = self.channel.get_mut();
        c.ready_for_call()?;
        // SAFETY: the first input slot.
        unsafe { *c.layout().inputs() = timeout.as_secs_f64() * 1e6 };
        c.call(Op::WaitReady, timeout + Duration::from_secs(5))
    }
}

impl Channel {
    /// Writes the learned state to the process's stdin for `restore_state_bytes`.
    fn restore_state(&mut self, bytes: &[u8]) -> Result<(), ModelError> {
        self.ready_for_call()?;
        self.post(Op::Restore);
        let sent = self
            .stdin
            .write_all(&(bytes.len() as u64).to_le_bytes())
            .and_then(|()| self.stdin.write_all(bytes))
            .and_then(|()| self.stdin.flush());
        if let Err(e) = sent {
            self.check_alive()?;
            return Err(ModelError::Other(format!("plugin process: {e}")));
        }
        self.wait(Duration::from_secs(600))
    }

    /// The learned state (a plugin's `save`), through the process's stdout. Not real-time.
    fn save_state(&mut self) -> Result<Vec<u8>, ModelError> {
        self.ready_for_call()?;
        self.post(Op::Save);
        let mut len = [0u8; 8];
        let read = self.stdout.read_exact(&mut len).and_then(|()| {
            let len = u64::from_le_bytes(len);
            if len == u64::MAX {
                return Ok(None);
            }
            let mut bytes = vec![0u8; len as usize];
            self.stdout.read_exact(&mut bytes)?;
            Ok(Some(bytes))
        });
        let answered = self.wait(Duration::from_secs(600));
        match read {
            Ok(Some(bytes)) => answered.map(|()| bytes),
            Ok(None) => Err(answered
                .err()
                .unwrap_or_else(|| ModelError::Other("the plugin could not save".into()))),
            Err(e) => {
                self.check_alive()?;
                Err(ModelError::Other(format!("plugin process: {e}")))
            }
        }
    }
}
