//! The plugin process: `gp-node plugin-server --fd N --library PATH --inputs D --outputs P
//! --config JSON`. Loads the plugin, creates the model and answers the node's calls through
//! the shared region until the node closes its end (or dies: the server gets SIGKILL with it).

use std::io::{Read, Write};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use gpn_online_model::{ModelStats, OnlineModel};

use super::shm::{SharedRegion, futex_wait, futex_wake};
use super::{Layout, MAX_DIMS, Op, REGION_BYTES, STATUS_ERROR, STATUS_OK};
use crate::Plugin;

/// How long the server stays awake for the next request after an answer.
const SPIN_AFTER_ANSWER: Duration = Duration::from_micros(50);

/// What the node asks the server to run.
struct ServerArgs {
    fd: i32,
    library: String,
    inputs: usize,
    outputs: usize,
    config: String,
    priority: Option<i32>,
}

fn parse(args: &[String]) -> Result<ServerArgs, String> {
    let mut fd = None;
    let (mut library, mut config) = (None, None);
    let (mut inputs, mut outputs) = (None, None);
    let mut priority = None;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it
            .next()
            .ok_or_else(|| format!("{flag} needs a value"))?
            .as_str();
        let number = |v: &str| v.parse::<usize>().map_err(|e| format!("{flag} {v}: {e}"));
        match flag.as_str() {
            "--fd" => fd = Some(value.parse::<i32>().map_err(|e| format!("--fd: {e}"))?),
            "--library" => library = Some(value.to_owned()),
            "--inputs" => inputs = Some(number(value)?),
            "--outputs" => outputs = Some(number(value)?),
            "--config" => config = Some(value.to_owned()),
            "--priority" => {
                priority = Some(
                    value
                        .parse::<i32>()
                        .map_err(|e| format!("--priority: {e}"))?,
                )
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    let missing = |what: &str| format!("{what} is required");
    Ok(ServerArgs {
        fd: fd.ok_or_else(|| missing("--fd"))?,
        library: library.ok_or_else(|| missing("--library"))?,
        inputs: inputs.ok_or_else(|| missing("--inputs"))?,
        outputs: outputs.ok_or_else(|| missing("--outputs"))?,
        config: config.ok_or_else(|| missing("--config"))?,
        priority,
    })
}

/// Runs the server with `args` (those after `plugin-server`); returns the exit status.
pub fn serve_main(args: &[String]) -> i32 {
    let args = match parse(args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("gp-node plugin-server: {e}");
            return 2;
        }
    };
    // End with the node, whatever way it ends.
    // SAFETY: prctl with a signal number.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
    }
    if let Some(priority) = args.priority {
        // The node's control thread waits for this process: it runs at the same priority.
        // Threads the plugin starts run normally (reset on fork).
        let param = libc::sched_param {
            sched_priority: priority,
        };
        // SAFETY: a valid policy and parameter for this thread.
        let rc = unsafe {
            libc::sched_setscheduler(0, libc::SCHED_FIFO | libc::SCHED_RESET_ON_FORK, &param)
        };
        if rc != 0 {
            eprintln!(
                "gp-node plugin-server: cannot run at SCHED_FIFO {priority} ({}); running at normal priority",
                std::io::Error::last_os_error()
            );
        }
    }
    // SAFETY: the node passes the region's descriptor to this process alone.
    let region = match unsafe { SharedRegion::from_fd(args.fd, REGION_BYTES) } {
        Ok(r) => r,
        Err(e) => {
            eprintln!("gp-node plugin-server: mapping the shared region: {e}");
            return 2;
        }
    };
    let layout = Layout { base: region.ptr() };
    let created = if args.inputs + args.outputs > MAX_DIMS / 2 {
        Err(format!(
            "{} inputs and {} outputs: the plugin process carries at most {} in all",
            args.inputs,
            args.outputs,
            MAX_DIMS / 2
        ))
    } else {
        Plugin::open(&args.library)
            .and_then(|plugin| {
                let identity = (plugin.info().name.clone(), plugin.info().version.clone());
                plugin
                    .create(&args.config, args.inputs, args.outputs)
                    .map(|m| (m, identity))
            })
            .map_err(|e| e.to_string())
    };
    let mut server = Server {
        layout,
        d: args.inputs,
        p: args.outputs,
        last: 0,
    };
    match created {
        Ok((model, (name, version))) => {
            server.answer_hello(Ok(&format!("{name}\n{version}")), &model);
            server.serve(model);
            0
        }
        Err(e) => {
            server.answer_hello(Err(&e), &NoModel);
            1
        }
    }
}

struct Server {
    layout: Layout,
    d: usize,
    p: usize,
    /// The last request answered.
    last: u32,
}

/// Stands in for the model that could not be created (its counters are zeros).
struct NoModel;

impl Server {
    /// Waits for the next request (the node's sequence number moves on); None when the node
    /// is gone.
    fn next_request(&mut self) -> Option<(u32, Option<Op>)> {
        let h = self.layout.header();
        let answered = Instant::now();
        loop {
            let r = h.request.load(Ordering::Acquire);
            if r != self.last {
                return Some((r, Op::from_u32(h.op.load(Ordering::Relaxed))));
            }
            // The tick's next call (its update after its predict) comes within microseconds:
            // waiting for it awake saves the node a wake-up of this process.
            if answered.elapsed() < SPIN_AFTER_ANSWER {
                std::hint::spin_loop();
                continue;
            }
            futex_wait(&h.request, r, Some(Duration::from_millis(200)));
            // SAFETY: getppid has no preconditions. Reparented: the node is gone.
            if unsafe { libc::getppid() } == 1 {
                return None;
            }
        }
    }

    fn answer_hello(&mut self, result: Result<&str, &str>, model: &dyn Counters) {
        if self.next_request().is_none() {
            return;
        }
        let h = self.layout.header();
        let r = h.request.load(Ordering::Acquire);
        match result {
            Ok(identity) => {
                self.layout.write_text(identity);
                self.finish(r, STATUS_OK, model);
            }
            Err(e) => {
                self.layout.write_text(e);
                self.finish(r, STATUS_ERROR, model);
            }
        }
    }

    /// Publishes the answer to request `r`.
    fn finish(&mut self, r: u32, status: u32, model: &dyn Counters) {
        let h = self.layout.header();
        model.publish(&self.layout, self.p);
        h.status.store(status, Ordering::Relaxed);
        h.response.store(r, Ordering::Release);
        futex_wake(&h.response);
        self.last = r;
    }

    fn serve(&mut self, mut model: crate::PluginModel) {
        let (d, p) = (self.d, self.p);
        let mut x = vec![0.0; d];
        let mut y = vec![0.0; p];
        let mut noise = vec![0.0; p];
        let mut mean = vec![0.0; p];
        let mut var = vec![0.0; p];
        let mut stdin = std::io::stdin().lock();
        let mut stdout = std::io::stdout().lock();
        while let Some((r, op)) = self.next_request() {
            let inputs = self.layout.inputs();
            let outputs = self.layout.outputs();
            let result = match op {
                Some(Op::Predict) => {
                    // SAFETY: the node wrote d inputs before publishing the request.
                    unsafe { std::ptr::copy_nonoverlapping(inputs, x.as_mut_ptr(), d) };
                    let result = model.predict(&x, &mut mean, &mut var);
                    // SAFETY: 2p ≤ SLOTS outputs, read by the node after the answer.
                    unsafe {
                        std::ptr::copy_nonoverlapping(mean.as_ptr(), outputs, p);
                        std::ptr::copy_nonoverlapping(var.as_ptr(), outputs.add(p), p);
                    }
                    result.map_err(|e| e.to_string())
                }
                Some(Op::Update) => {
                    // SAFETY: the node wrote x, y, noise and t (d + 2p + 1 slots).
                    let t = unsafe {
                        std::ptr::copy_nonoverlapping(inputs, x.as_mut_ptr(), d);
                        std::ptr::copy_nonoverlapping(inputs.add(d), y.as_mut_ptr(), p);
                        std::ptr::copy_nonoverlapping(inputs.add(d + p), noise.as_mut_ptr(), p);
                        *inputs.add(d + 2 * p)
                    };
                    model.update(&x, &y, t, &noise).map_err(|e| e.to_string())
                }
                Some(Op::Save) => {
                    let result = model.state_bytes().map_err(|e| e.to_string());
                    let written = match &result {
                        Ok(bytes) => stdout
                            .write_all(&(bytes.len() as u64).to_le_bytes())
                            .and_then(|()| stdout.write_all(bytes)),
                        Err(_) => stdout.write_all(&u64::MAX.to_le_bytes()),
                    };
                    let _ = stdout.flush();
                    result.and(written.map_err(|e| e.to_string())).map(|_| ())
                }
                Some(Op::Restore) => {
                    let mut len = [0u8; 8];
                    stdin
                        .read_exact(&mut len)
                        .map_err(|e| e.to_string())
                        .and_then(|()| {
                            let mut bytes = vec![0u8; u64::from_le_bytes(len) as usize];
                            stdin.read_exact(&mut bytes).map_err(|e| e.to_string())?;
                            model.restore_state_bytes(&bytes).map_err(|e| e.to_string())
                        })
                }
                Some(Op::WaitReady) => {
                    // SAFETY: the node wrote the timeout (µs) in the first slot.
                    let micros = unsafe { *inputs };
                    let timeout = Duration::from_secs_f64((micros.max(0.0)) * 1e-6);
                    model.wait_ready(timeout).map_err(|e| e.to_string())
                }
                Some(Op::Hello) | None => Err("unknown request".to_owned()),
            };
            match result {
                Ok(()) => self.finish(r, STATUS_OK, &model),
                Err(e) => {
                    self.layout.write_text(&e);
                    self.finish(r, STATUS_ERROR, &model);
                }
            }
        }
    }
}

/// What every answer refreshes: the model's counters and readiness.
trait Counters {
    fn publish(&self, layout: &Layout, p: usize);
}

impl Counters for NoModel {
    fn publish(&self, _: &Layout, _: usize) {}
}

impl Counters for crate::PluginModel {
    fn publish(&self, layout: &Layout, p: usize) {
        let h = layout.header();
        let ModelStats {
            samples_seen,
            samples_stored,
            experts,
            memory_bytes,
        } = self.stats();
        h.samples_seen.store(samples_seen, Ordering::Relaxed);
        h.samples_stored.store(samples_stored, Ordering::Relaxed);
        h.experts.store(experts, Ordering::Relaxed);
        h.memory_bytes.store(memory_bytes, Ordering::Relaxed);
        let mut from_prior = [false; MAX_DIMS];
        match self.readiness(&mut from_prior[..p]) {
            Some(r) => {
                // The flags after mean and var in the outputs.
                // SAFETY: 3p ≤ SLOTS output slots.
                unsafe {
                    let flags = layout.outputs().add(2 * p);
                    for (k, f) in from_prior[..p].iter().enumerate() {
                        *flags.add(k) = if *f { 1.0 } else { 0.0 };
                    }
                }
                h.samples_behind.store(r.samples_behind, Ordering::Relaxed);
                h.has_readiness.store(1, Ordering::Relaxed);
            }
            None => h.has_readiness.store(0, Ordering::Relaxed),
        }
    }
}
