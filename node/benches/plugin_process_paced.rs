//! The cost of a plugin in a process of its own, as the control tick pays it: one predict +
//! update of SkyGP-Fast (21 inputs, 7 outputs, warmed on 2,000 samples) every millisecond
//! for `GPN_PACED_SECS` (default 5) seconds, through the plugin ABI in-process and in a
//! plugin process, on an idle machine and with two busy threads per core (normal priority:
//! the builds and tools of a busy robot PC), the calling thread at normal priority and at
//! SCHED_FIFO 50 (the node's default; the plugin process then runs at FIFO 50 too).
//! Prints the call time's quantiles and the calls over 500 µs (the default model budget)
//! per configuration.
//!
//! Run: `cargo bench -p gp_node --bench plugin_process_paced` (FIFO needs root or
//! CAP_SYS_NICE / an rtprio limit; without it those rows say so).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use gp_node::plugin_host::process::{ProcessModel, ProcessOptions};
use gp_node::plugin_host::{Plugin, SearchPath};
use gpn_control::latency::LatencyHistogram;
use gpn_gp_core::model::OnlineModel;

const D: usize = 21;
const P: usize = 7;
const PERIOD: Duration = Duration::from_millis(1);
const BUDGET_MICROS: f64 = 500.0;

fn sample(k: usize) -> ([f64; D], [f64; P]) {
    let t = k as f64 * 0.002;
    let x = std::array::from_fn(|i| ((0.5 + 0.13 * i as f64) * t * 50.0 + i as f64).sin());
    let y = std::array::from_fn(|j| 0.3 * x[j].sin() * x[j + P] + 0.1 * x[j + 2 * P]);
    (x, y)
}

fn config() -> String {
    serde_json::json!({
        "variant": "fast",
        "hyper": {"sigma_f": 1.0, "sigma_n": 0.05, "lengthscales": vec![1.5; D]}
    })
    .to_string()
}

fn cycle(model: &mut dyn OnlineModel, k: usize) {
    let (x, y) = sample(k);
    let (mut mean, mut var) = ([0.0; P], [0.0; P]);
    model.predict(&x, &mut mean, &mut var).expect("predict");
    model
        .update(&x, &y, k as f64 * 0.002, &[0.0025; P])
        .expect("update");
}

/// SCHED_FIFO `priority` for the calling thread (0: normal); whether it took.
fn set_priority(priority: i32) -> bool {
    let (policy, priority) = if priority > 0 {
        (libc::SCHED_FIFO | libc::SCHED_RESET_ON_FORK, priority)
    } else {
        (libc::SCHED_OTHER, 0)
    };
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: a valid policy and parameter for this thread.
    unsafe { libc::pthread_setschedparam(libc::pthread_self(), policy, &param) == 0 }
}

/// Runs the paced loop on `model` for `secs`; the call-time histogram and the calls over
/// the budget.
fn paced(model: &mut dyn OnlineModel, secs: f64) -> (LatencyHistogram, u64) {
    let mut hist = LatencyHistogram::new();
    let mut over = 0;
    let ticks = (secs / PERIOD.as_secs_f64()) as usize;
    let mut next = Instant::now() + PERIOD;
    for k in 0..ticks {
        let start = Instant::now();
        cycle(model, 2000 + k % 5000);
        let micros = start.elapsed().as_secs_f64() * 1e6;
        hist.record(micros);
        over += u64::from(micros > BUDGET_MICROS);
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        }
        next += PERIOD;
        if next < Instant::now() {
            next = Instant::now() + PERIOD;
        }
    }
    (hist, over)
}

fn main() {
    let secs: f64 = std::env::var("GPN_PACED_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5.0);
    let library = SearchPath::standard(Vec::<&str>::new())
        .find("skygp")
        .expect("libgpn_skygp.so beside the bench binary");
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    println!(
        "SkyGP-Fast 21x7, predict + update every 1 ms for {secs} s; {cores} cores; budget {BUDGET_MICROS} µs"
    );
    println!(
        "| plugin | machine | caller | p50 µs | p99 µs | p99.9 µs | max µs | calls > budget |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for busy in [false, true] {
        let stop = Arc::new(AtomicBool::new(false));
        let hogs: Vec<_> = (0..if busy { 2 * cores } else { 0 })
            .map(|_| {
                let stop = stop.clone();
                std::thread::spawn(move || {
                    let mut x = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        x = std::hint::black_box(
                            x.wrapping_mul(6364136223846793005).wrapping_add(1),
                        );
                    }
                })
            })
            .collect();
        for priority in [0, 50] {
            let fifo = set_priority(priority);
            if priority > 0 && !fifo {
                println!("| - | - | FIFO {priority} refused (no rtprio): rows skipped | | | | | |");
                continue;
            }
            let abi = Plugin::open(&library)
                .expect("open")
                .create(&config(), D, P)
                .expect("create");
            let options = ProcessOptions {
                server: env!("CARGO_BIN_EXE_gp-node").into(),
                call_timeout: Duration::from_secs(1),
                create_timeout: Duration::from_secs(30),
                priority: (priority > 0).then_some(priority as u8),
            };
            let process = ProcessModel::spawn(&options, &library, &config(), D, P).expect("spawn");
            let mut models: [(&str, Box<dyn OnlineModel>); 2] = [
                ("in-process (ABI)", Box::new(abi)),
                ("process", Box::new(process)),
            ];
            for (name, model) in &mut models {
                for k in 0..2000 {
                    cycle(model.as_mut(), k);
                }
                let (hist, over) = paced(model.as_mut(), secs);
                println!(
                    "| {name} | {} | {} | {:.0} | {:.0} | {:.0} | {:.0} | {over} of {} |",
                    if busy { "busy" } else { "idle" },
                    if priority > 0 { "FIFO 50" } else { "normal" },
                    hist.quantile(0.5),
                    hist.quantile(0.99),
                    hist.quantile(0.999),
                    hist.max(),
                    hist.count()
                );
            }
            set_priority(0);
        }
        stop.store(true, Ordering::Relaxed);
        for h in hogs {
            let _ = h.join();
        }
    }
}
