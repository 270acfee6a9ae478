//! Plugins in a process of their own (`plugin_host::process`): the same answers as the
//! plugin in-process (bit for bit: the same code on the same inputs), the learned state saved
//! and restored through the process, a call from a control thread that misses its deadline
//! refused without overlapping the next, and a process that crashes turning every call into an error while
//! the caller goes on.

mod model_support;

use std::time::{Duration, Instant};

use gp_node::plugin_host::process::{ProcessModel, ProcessOptions};
use gp_node::plugin_host::{Plugin, SearchPath};
use gpn_gp_core::model::OnlineModel;
use model_support::cdylib;

const D: usize = 21;
const P: usize = 7;

fn options(call_timeout: Duration) -> ProcessOptions {
    ProcessOptions {
        server: env!("CARGO_BIN_EXE_gp-node").into(),
        call_timeout,
        create_timeout: Duration::from_secs(30),
        priority: None,
    }
}

fn sample(k: usize) -> ([f64; D], [f64; P]) {
    let t = k as f64 * 0.002;
    let x = std::array::from_fn(|i| ((0.5 + 0.13 * i as f64) * t * 50.0 + i as f64).sin());
    let y = std::array::from_fn(|j| 0.3 * x[j].sin() * x[j + P] + 0.1 * x[j + 2 * P]);
    (x, y)
}

fn skygp_config() -> String {
    serde_json::json!({
        "variant": "fast",
        "hyper": {"sigma_f": 1.0, "sigma_n": 0.05, "lengthscales": vec![1.5; D]}
    })
    .to_string()
}

fn skygp_library() -> std::path::PathBuf {
    SearchPath::standard(Vec::<&str>::new())
        .find("skygp")
        .expect("libgpn_skygp.so beside the test binary")
}

/// Predicts at every sample, then learns it; returns the predictions.
fn run(model: &mut dyn OnlineModel, from: usize, to: usize) -> Vec<f64> {
    let (mut mean, mut var) = ([0.0; P], [0.0; P]);
    let mut out = Vec::new();
    for k in from..to {
        let (x, y) = sample(k);
        model.predict(&x, &mut mean, &mut var).expect("predict");
        out.extend_from_slice(&mean);
        out.extend_from_slice(&var);
        model
            .update(&x, &y, k as f64 * 0.002, &[0.0025; P])
            .expect("update");
    }
    model.wait_ready(Duration::from_secs(30)).expect("ready");
    out
}

#[test]
fn a_plugin_process_answers_as_the_plugin_in_process_and_saves_and_restores() {
    let library = skygp_library();
    let mut local = Plugin::open(&library)
        .expect("open skygp")
        .create(&skygp_config(), D, P)
        .expect("create");
    let mut remote = ProcessModel::spawn(
        &options(Duration::from_secs(5)),
        &library,
        &skygp_config(),
        D,
        P,
    )
    .expect("spawn");
    assert_eq!(
        remote.plugin_identity().map(|(name, _)| name),
        Some("skygp".to_owned())
    );
    let a = run(&mut local, 0, 600);
    let b = run(&mut remote, 0, 600);
    assert_eq!(a, b, "the same predictions, bit for bit");
    assert_eq!(local.stats(), remote.stats());
    let mut flags = [false; P];
    assert_eq!(local.readiness(&mut flags), remote.readiness(&mut flags));

    // Saved from the process, restored into another: it goes on as the original.
    let state = remote.state_bytes().expect("save");
    assert_eq!(state, local.state_bytes().expect("save in-process"));
    let mut restored = ProcessModel::spawn(
        &options(Duration::from_secs(5)),
        &library,
        &skygp_config(),
        D,
        P,
    )
    .expect("spawn");
    restored.restore_state_bytes(&state).expect("restore");
    assert_eq!(run(&mut restored, 600, 700), run(&mut local, 600, 700));
}

#[test]
fn a_late_answer_is_an_error_and_the_next_call_waits_for_it() {
    // The deadline holds on a control thread; a worker would wait for the answer.
    gpn_gp_core::model::mark_control_thread();
    let slow = cdylib("gpn_double_slow");
    let mut model = ProcessModel::spawn(
        &options(Duration::from_millis(2)),
        &slow,
        r#"{"predict_sleep_ms": 30}"#,
        2,
        1,
    )
    .expect("spawn");
    let (mut mean, mut var) = ([0.0], [0.0]);
    let start = Instant::now();
    let late = model.predict(&[0.1, 0.2], &mut mean, &mut var);
    let waited = start.elapsed();
    let err = late.expect_err("30 ms against a 2 ms deadline");
    assert!(
        err.to_string().contains("no answer within 2000 µs"),
        "{err}"
    );
    assert!(waited < Duration::from_millis(25), "{waited:?}");
    // While the late answer is outstanding, calls are refused at once (never overlapped).
    let busy = model
        .update(&[0.1, 0.2], &[1.0], 0.0, &[0.01])
        .expect_err("busy");
    assert!(busy.to_string().contains("still busy"), "{busy}");
    std::thread::sleep(Duration::from_millis(40));
    model
        .update(&[0.1, 0.2], &[1.0], 0.0, &[0.01])
        .expect("the late answer came: calls go through again");
    assert_eq!(model.stats().samples_seen, 1);
}

#[test]
fn a_crashed_plugin_process_turns_calls_into_errors_and_the_caller_goes_on() {
    let library = skygp_library();
    let mut model = ProcessModel::spawn(
        &options(Duration::from_millis(50)),
        &library,
        &skygp_config(),
        D,
        P,
    )
    .expect("spawn");
    run(&mut model, 0, 50);
    // The process ends on a signal, as it would on a segfault in the plugin. (SIGKILL: a
    // SIGSEGV sent by kill(2) is not a fault, and Rust's own SIGSEGV handler survives one.)
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &model.pid().to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    std::thread::sleep(Duration::from_millis(200));
    let (x, _) = sample(50);
    let (mut mean, mut var) = ([0.0; P], [0.0; P]);
    let first = model
        .predict(&x, &mut mean, &mut var)
        .expect_err("the process is gone");
    let start = Instant::now();
    let second = model
        .predict(&x, &mut mean, &mut var)
        .expect_err("still gone");
    assert!(
        start.elapsed() < Duration::from_millis(5),
        "known dead: no wait"
    );
    for err in [first, second] {
        assert!(
            err.to_string().contains("ended") && err.to_string().contains("SIGKILL"),
            "{err}"
        );
    }
}
