//! Shared by the DDS tests of `gp-node run`: the Python of the CI venv, a parameter file
//! for a test node, a domain id per test, starting the node and stopping it with SIGINT.
#![allow(dead_code)] // each test file uses a subset

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[allow(unused_imports)] // each test file uses a subset
pub use gpn_test_support::{python, repo_root, ros_python};

/// A DDS domain for one test (different tests and concurrent runs must not meet).
pub fn domain_id(salt: u32) -> u16 {
    (((std::process::id() * 7 + salt * 31) % 200) + 20) as u16
}

/// A scratch directory for `test`.
pub fn scratch(test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(test);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Writes the default parameters (`config/sim_default.yaml`) with `replacements` applied to
/// the text (each must match) and DDS kept on loopback; returns the file.
pub fn params_file(dir: &Path, replacements: &[(&str, &str)]) -> PathBuf {
    // A URDF path relative to the file is resolved against its folder: use the repo's.
    params_file_with_urdf(
        dir,
        replacements,
        Some(&repo_root().join("urdf/panda.urdf")),
    )
}

/// [`params_file`] with `robot.urdf` set to `urdf`, or left empty (the node then reads the
/// `robot_description` topic).
pub fn params_file_with_urdf(
    dir: &Path,
    replacements: &[(&str, &str)],
    urdf: Option<&Path>,
) -> PathBuf {
    let mut text = gp_node::app::DEFAULT_PARAMS_YAML.to_owned();
    for (from, to) in replacements {
        assert!(
            text.contains(from),
            "the default parameters contain {from:?}"
        );
        text = text.replacen(from, to, 1);
    }
    text = text.replacen("localhost_only: false", "localhost_only: true", 1);
    // The test nodes command from the start unless a test says otherwise.
    if !replacements
        .iter()
        .any(|(from, _)| from.contains("active:"))
    {
        text = text.replacen("active: false", "active: true", 1);
    }
    if let Some(urdf) = urdf {
        text = text.replacen(
            "urdf: \"\"",
            &format!("urdf: {:?}", urdf.to_string_lossy()),
            1,
        );
    }
    let path = dir.join("params.yaml");
    std::fs::write(&path, text).expect("write params");
    path
}

/// A Python peer with rclpy (`GPN_ROS_PYTHON`) running `node/tests/<script>` with `args`,
/// discovery kept on loopback as the test nodes keep it.
pub fn rclpy_peer(python: &Path, script: &str, args: &[&str]) -> Command {
    let mut peer = Command::new(python);
    peer.arg(repo_root().join("node/tests").join(script))
        .args(args)
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST");
    peer
}

/// A running `gp-node run`: the process, and a thread collecting its log (stderr) as it is
/// written, so that the node never waits on a full pipe.
pub struct RunningNode {
    child: Option<Child>,
    log: Option<std::thread::JoinHandle<String>>,
}

impl Drop for RunningNode {
    /// A test that panics before it stops its node must not leave the node running on its
    /// DDS domain: a later run's peers on the same domain would talk to it.
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// `gp-node run` with `args`, stdout (its `--json` summary) piped, stderr (its log) read by a
/// thread.
pub fn start_node(args: &[&str]) -> RunningNode {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gp-node"))
        .arg("run")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start gp-node run");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let log = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stderr, &mut bytes);
        String::from_utf8_lossy(&bytes).into_owned()
    });
    RunningNode {
        child: Some(child),
        log: Some(log),
    }
}

/// `gp-node run` on the nominal law with the parameter file `params` on `domain`, `--json`,
/// and `ros_args` after `--ros-args` (none: no `--ros-args`).
pub fn start_nominal_node(params: &Path, domain: &str, ros_args: &[&str]) -> RunningNode {
    let mut args = vec![
        "--params",
        params.to_str().expect("utf-8 path"),
        "--domain-id",
        domain,
        "--nominal",
        "--json",
    ];
    if !ros_args.is_empty() {
        args.push("--ros-args");
        args.extend_from_slice(ros_args);
    }
    start_node(&args)
}

impl RunningNode {
    /// Kills the node with SIGKILL (a crash: nothing of it runs any more); returns its log.
    pub fn kill(mut self) -> String {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let log = self
            .log
            .take()
            .expect("the log reader runs until the node is stopped");
        log.join().expect("log reader")
    }
}

/// Stops the node with SIGINT (as Ctrl-C) and returns its JSON summary; the log goes to
/// the test's stderr.
pub fn stop_node(node: RunningNode) -> serde_json::Value {
    stop_node_with_log(node).0
}

/// [`stop_node`], also returning the node's log.
pub fn stop_node_with_log(node: RunningNode) -> (serde_json::Value, String) {
    let mut running = node;
    let (Some(mut node), Some(log)) = (running.child.take(), running.log.take()) else {
        unreachable!("only stopping or killing takes the child, and both consume the node");
    };
    drop(running);
    let _ = Command::new("kill")
        .args(["-INT", &node.id().to_string()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if node.try_wait().expect("wait").is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    if node.try_wait().expect("wait").is_none() {
        let _ = node.kill();
        panic!("gp-node run did not stop within 20 s of SIGINT");
    }
    let out = node.wait_with_output().expect("node output");
    let log = log.join().expect("log reader");
    eprint!("{log}");
    assert!(
        out.status.success(),
        "gp-node run exited with {}",
        out.status
    );
    let summary = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "node summary is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    (summary, log)
}

/// The MuJoCo driver (`mujoco_driver/mujoco_driver.py`) for the node of parameter file `params` on
/// DDS domain `domain`: it runs `duration_s` of simulated time, publishes the reference
/// (transient-local), stays on loopback and writes its result to `result` (removed here first).
pub fn mujoco_driver(
    python: &Path,
    params: &str,
    domain: &str,
    duration_s: &str,
    result: &Path,
) -> Command {
    mujoco_driver_with_reference(
        python,
        params,
        domain,
        duration_s,
        result,
        "transient_local",
    )
}

/// The MuJoCo driver on loopback, lock-step in real time, for `duration_s` of simulated time,
/// its result to `result` (removed here first); the caller adds the rest.
fn driver_command(
    python: &Path,
    params: &str,
    domain: &str,
    duration_s: &str,
    result: &Path,
) -> Command {
    let _ = std::fs::remove_file(result);
    let mut driver = Command::new(python);
    driver
        // This build's node resolves the values the parameter file derives from the robot.
        .env("GPN_NODE", env!("CARGO_BIN_EXE_gp-node"))
        .arg(repo_root().join("mujoco_driver/mujoco_driver.py"))
        .args(["--params", params, "--domain-id", domain])
        .args(["--duration-s", duration_s, "--localhost-only"])
        // As on a robot: the node's background work (the hyperparameter fit) must land at the
        // simulated time it would in real time, not later because the lock-step ran ahead.
        .arg("--realtime")
        .arg("--result")
        .arg(result);
    driver
}

/// [`mujoco_driver`] with the reference writer's durability: `"transient_local"` or
/// `"volatile"` (ROS 2's default QoS; the driver then waits for a reference reader to match
/// before the run and stops without one).
pub fn mujoco_driver_with_reference(
    python: &Path,
    params: &str,
    domain: &str,
    duration_s: &str,
    result: &Path,
    reference_durability: &str,
) -> Command {
    let mut driver = driver_command(python, params, domain, duration_s, result);
    driver
        .arg("--publish-reference")
        .args(["--reference-durability", reference_durability])
        .args(["--command-timeout-s", "10"]);
    driver
}

/// The MuJoCo driver as a robot that takes no reference from the test (the node's other
/// inputs, e.g. an action goal, move it); `on_silence`: `None` stops after 10 s without a
/// command, `Some(s)` holds the arm itself (gravity and damping, real time) after `s`
/// seconds without one, as a robot's driver does, until commands resume.
pub fn mujoco_robot(
    python: &Path,
    params: &str,
    domain: &str,
    duration_s: &str,
    result: &Path,
    on_silence: Option<&str>,
) -> Command {
    let mut driver = driver_command(python, params, domain, duration_s, result);
    match on_silence {
        None => driver.args(["--command-timeout-s", "10"]),
        Some(s) => driver.args(["--command-timeout-s", s, "--on-command-timeout", "hold"]),
    };
    driver
}

/// One closed-loop run of the default scenario on the MuJoCo Panda (`extra` driver
/// arguments; the reference writer of `durability`): the node (nominal or learned) and the
/// driver for 30 s; returns (driver result, node summary), the run checked complete.
pub fn closed_loop(
    python: &Path,
    tag: &str,
    nominal: bool,
    salt: u32,
    durability: &str,
    extra: &[&str],
) -> (serde_json::Value, serde_json::Value) {
    closed_loop_with(
        python,
        tag,
        salt,
        durability,
        &LoopExtras {
            nominal,
            driver: extra,
            ..LoopExtras::default()
        },
    )
}

/// What a [`closed_loop_with`] run adds to the default one.
pub struct LoopExtras<'a> {
    /// The node on the nominal law (`--nominal`).
    pub nominal: bool,
    /// Driver arguments.
    pub driver: &'a [&'a str],
    /// `gp-node run` arguments.
    pub node: &'a [&'a str],
    /// Simulated seconds.
    pub duration_s: &'a str,
    /// Replacements in the parameter file's text, after the default ones.
    pub params: &'a [(&'a str, &'a str)],
}

impl Default for LoopExtras<'_> {
    fn default() -> Self {
        Self {
            nominal: false,
            driver: &[],
            node: &[],
            duration_s: "30",
            params: &[],
        }
    }
}

/// [`closed_loop`] with node arguments and a duration.
pub fn closed_loop_with(
    python: &Path,
    tag: &str,
    salt: u32,
    durability: &str,
    extras: &LoopExtras<'_>,
) -> (serde_json::Value, serde_json::Value) {
    let dir = scratch(&format!("closed_loop_{tag}"));
    // `hyper_sharing: tied`: one factorisation per expert. The tests run the debug build,
    // whose model costs ~2.5× more per extra noise group than release (Panda, 2 groups: tick
    // p50 290 µs against 115 µs tied; release 49 µs): next to MuJoCo and DDS on two cores the
    // grouped model overran the 500 µs budget and was quarantined most of the run.
    let mut replacements = vec![
        ("watchdog_timeout_s: 0.1", "watchdog_timeout_s: 0.5"),
        ("hyper_sharing: grouped", "hyper_sharing: tied   "),
    ];
    replacements.extend_from_slice(extras.params);
    let params = params_file(&dir, &replacements);
    let params = params.to_str().expect("utf-8 path");
    let domain = domain_id(salt).to_string();
    let mut args = vec!["--params", params, "--domain-id", &domain, "--json"];
    if extras.nominal {
        args.push("--nominal");
    }
    args.extend_from_slice(extras.node);
    let node = start_node(&args);
    let result_path = dir.join("result.json");
    let driver = mujoco_driver_with_reference(
        python,
        params,
        &domain,
        extras.duration_s,
        &result_path,
        durability,
    )
    .args(extras.driver)
    .output()
    .expect("run the MuJoCo driver");
    let summary = stop_node(node);
    let result = driver_result(&result_path, &driver.stderr);
    assert!(
        driver.status.success() && result["completed"] == true,
        "the {tag} run did not complete: {}\n{}",
        result["error"],
        String::from_utf8_lossy(&driver.stderr)
    );
    assert_eq!(
        result["reference_durability"], durability,
        "{tag}: {result}"
    );
    assert_eq!(result["realtime"], true, "{tag}: {result}");
    eprintln!("{tag}: driver {result}\n{tag}: node {summary}");
    (result, summary)
}

/// The numbers of a per-joint JSON array.
pub fn per_joint(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .expect("per-joint array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}

/// `gp-node run --nominal` (the default parameters with `replacements`) commanding the MuJoCo
/// robot ([`mujoco_robot`], `on_silence`) while the rclpy script `node/tests/<peer>` (given
/// the domain id, printing one JSON object) runs; the driver is stopped when the peer ends.
/// Returns the peer's object (checked for an `error` key) and the node's summary; None when
/// a Python is missing outside CI.
pub fn peer_with_mujoco_robot(
    test: &str,
    salt: u32,
    replacements: &[(&str, &str)],
    on_silence: Option<&str>,
    peer: &str,
) -> Option<(serde_json::Value, serde_json::Value)> {
    let ros_python = ros_python(test)?;
    let python = python(test)?;
    let dir = scratch(test);
    let params = params_file(&dir, replacements);
    let params = params.to_str().expect("utf-8 path");
    let domain = domain_id(salt).to_string();
    let node = start_node(&[
        "--params",
        params,
        "--domain-id",
        &domain,
        "--nominal",
        "--json",
    ]);
    let mut driver = mujoco_robot(
        &python,
        params,
        &domain,
        "90",
        &dir.join("driver.json"),
        on_silence,
    )
    .stderr(Stdio::piped())
    .spawn()
    .expect("start the MuJoCo driver");
    let out = rclpy_peer(&ros_python, peer, &[&domain])
        .output()
        .unwrap_or_else(|e| panic!("run {peer}: {e}"));
    let _ = driver.kill();
    let driver_out = driver.wait_with_output().expect("driver output");
    let summary = stop_node(node);
    let r = gpn_test_support::json_output(&out, peer);
    eprintln!(
        "peer: {r}\nnode: {summary}\ndriver stderr: {}",
        String::from_utf8_lossy(&driver_out.stderr)
    );
    assert!(r.get("error").is_none(), "{r}");
    Some((r, summary))
}

/// The result the MuJoCo driver wrote to `path`; if there is none, panics with the driver's
/// `stderr`.
pub fn driver_result(path: &Path, stderr: &[u8]) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap_or_default()).unwrap_or_else(|e| {
        panic!(
            "no driver result ({e}); driver stderr:\n{}",
            String::from_utf8_lossy(stderr)
        )
    })
}

/// Runs `gp-node run --nominal --json` (the default parameters with `replacements`, DDS on
/// loopback) against the peer script `node/tests/<peer>`, which takes the domain id and
/// prints one JSON object; returns the peer's object (checked for an `error` key) and the
/// node's summary. None when Python is missing outside CI.
pub fn nominal_node_with_peer(
    test: &str,
    salt: u32,
    replacements: &[(&str, &str)],
    peer: &str,
) -> Option<(serde_json::Value, serde_json::Value)> {
    let python = python(test)?;
    let params = params_file(&scratch(test), replacements);
    let domain = domain_id(salt).to_string();
    let node = start_nominal_node(&params, &domain, &[]);
    let out = Command::new(&python)
        .arg(repo_root().join("node/tests").join(peer))
        .arg(&domain)
        .output()
        .unwrap_or_else(|e| panic!("run {peer}: {e}"));
    let summary = stop_node(node);
    let r = gpn_test_support::json_output(&out, peer);
    eprintln!("peer: {r}\nnode: {summary}");
    assert!(r.get("error").is_none(), "{r}");
    Some((r, summary))
}
