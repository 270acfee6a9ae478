//! Helpers the workspace's tests share (one copy each): whether this is CI, the Python that
//! runs the reference checks, the repository's folders, running a tool for its JSON or a
//! measurement script for its table, seeded random numbers for synthetic data, and the random
//! stream of the models' allocation tests.
//!
//! A test whose reference is missing (no Python, no `../shared`) says so and passes on a
//! developer's machine, and fails in CI (`CI=true`): there the reference must be present.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Whether the tests run in CI (`CI=true`, as `.ci/run` and CI services set it).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// `$GPN_PYTHON`, the Python with the packages of `ci/requirements.txt`. Without it: a
/// panic in CI; elsewhere `None` after a line on stderr naming `test` (the caller returns).
pub fn python(test: &str) -> Option<PathBuf> {
    match std::env::var_os("GPN_PYTHON") {
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ if in_ci() => {
            panic!("GPN_PYTHON is not set in CI: .ci/run creates it from ci/requirements.txt")
        }
        _ => {
            // Straight to stderr: the test harness captures `eprintln!` of passing tests.
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED {test}: set GPN_PYTHON to a python with the packages of \
                 ci/requirements.txt (python3 -m venv .venv && \
                 .venv/bin/pip install -r ci/requirements.txt -c ci/constraints.txt)"
            );
            None
        }
    }
}

/// `$GPN_ROS_PYTHON`, the Python of the ROS 2 Jazzy environment (rclpy, the message
/// packages, this repository's `gp_learning_node_msgs`) that `ci/ros2_jazzy/setup.sh --msgs`
/// makes and `.venv-jazzy/gpn/env.sh` exports. Without it: a panic in CI; elsewhere `None`
/// after a line on stderr naming `test`.
pub fn ros_python(test: &str) -> Option<PathBuf> {
    match std::env::var_os("GPN_ROS_PYTHON") {
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ if in_ci() => panic!(
            "GPN_ROS_PYTHON is not set in CI: .ci/run sources .venv-jazzy/gpn/env.sh, which \
             ci/ros2_jazzy/setup.sh --msgs writes"
        ),
        _ => {
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED {test}: no rclpy peer: run `bash ci/ros2_jazzy/setup.sh --msgs` and \
                 `source .venv-jazzy/gpn/env.sh`"
            );
            None
        }
    }
}

/// The repository's root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository's root exists")
}

/// `../shared` beside the repository (specs, fixtures, data); a panic in CI if it is
/// missing, else `None` after a line on stderr naming `test`.
pub fn shared(test: &str) -> Option<PathBuf> {
    let dir = repo_root().join("../shared");
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(!in_ci(), "{} is missing in CI", dir.display());
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED {test}: no ../shared beside the repository"
    );
    None
}

/// Runs `cmd` and reads its standard output as JSON. Panics, naming `what`, if it cannot
/// start, or as [`json_output`] does.
pub fn json_stdout(cmd: &mut Command, what: &str) -> serde_json::Value {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what}: {e}"));
    json_output(&out, what)
}

/// The standard output of a finished process as JSON. Panics, naming `what`, if the
/// process failed (with its stderr) or printed something else (with that).
pub fn json_output(out: &Output, what: &str) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{what} printed no JSON ({e}):\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// Runs the measurement script `testing/measure/<script>` with `python` and `args`, plus
/// `--work DIR --out FILE` in a fresh temporary folder, and returns the Markdown table it
/// wrote. Panics with the script's stderr and the table if it exits with an error.
pub fn measure_table(python: &Path, script: &str, args: &[&std::ffi::OsStr]) -> String {
    let stem = script.trim_end_matches(".py");
    let work = std::env::temp_dir().join(format!("gpn_{stem}_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let out = work.join("table.md");
    let run = Command::new(python)
        .arg(repo_root().join("testing/measure").join(script))
        .args(args)
        .arg("--work")
        .arg(&work)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {script}: {e}"));
    let table = std::fs::read_to_string(&out).unwrap_or_default();
    assert!(
        run.status.success(),
        "{script} failed:\n{}\n{table}",
        String::from_utf8_lossy(&run.stderr)
    );
    let _ = std::fs::remove_dir_all(&work);
    table
}

/// Deterministic uniform numbers in [−1, 1) (xorshift64). No allocation, so the allocation
/// tests can draw inside their counted sections.
#[derive(Debug, Clone)]
pub struct Xorshift(pub u64);

impl Xorshift {
    /// The next number, uniform in [−1, 1).
    pub fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

/// Deterministic uniform and normal numbers (xorshift64*; Box–Muller), for the tests'
/// synthetic data.
#[derive(Debug, Clone)]
pub struct XorshiftStar(pub u64);

impl XorshiftStar {
    /// The next number, uniform in [0, 1).
    pub fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A standard normal number (from two uniform ones).
    pub fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform();
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// The synthetic stream of the models' allocation tests, in buffers allocated once so that
/// drawing a sample allocates nothing: `d` random inputs and `p` targets
/// sin((o + 1)·x₀) + x₁·x₂ (o the output; `d` ≥ 3), with room for a prediction.
#[derive(Debug, Clone)]
pub struct AllocStream {
    rng: Xorshift,
    /// Inputs of the current sample.
    pub x: Vec<f64>,
    /// Targets of the current sample.
    pub y: Vec<f64>,
    /// Noise variance of each target (fixed).
    pub noise_var: Vec<f64>,
    /// Room for a predicted mean.
    pub mean: Vec<f64>,
    /// Room for a predicted variance.
    pub var: Vec<f64>,
}

impl AllocStream {
    /// A stream of `d` inputs and `p` targets with noise variance `noise_var`, always from
    /// the same seed.
    pub fn new(d: usize, p: usize, noise_var: f64) -> AllocStream {
        assert!(d >= 3, "the targets read three inputs");
        AllocStream {
            rng: Xorshift(0x9e37_79b9_7f4a_7c15),
            x: vec![0.0; d],
            y: vec![0.0; p],
            noise_var: vec![noise_var; p],
            mean: vec![0.0; p],
            var: vec![0.0; p],
        }
    }

    /// Draws the next sample: each input is `scale·u + shift` for a fresh uniform u in
    /// [−1, 1).
    pub fn draw(&mut self, scale: f64, shift: f64) {
        for v in self.x.iter_mut() {
            *v = scale * self.rng.uniform() + shift;
        }
        let x = &self.x;
        for (o, v) in self.y.iter_mut().enumerate() {
            *v = (x[0] * (o + 1) as f64).sin() + x[1] * x[2];
        }
    }
}

/// URDF text for the tests that build small robots: links of one fixed inertia, joints, and
/// the robot element around them.
pub mod urdf {
    /// A link with a 1 kg inertial 0.1 m along its z axis.
    pub fn link(name: &str) -> String {
        format!(
            r#"<link name="{name}"><inertial><origin xyz="0 0 0.1" rpy="0 0 0"/><mass value="1"/>
  <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.01"/></inertial></link>"#
        )
    }

    /// A joint 0.2 m above its parent's origin, turning about (or sliding along) `axis`
    /// (e.g. `"0 0 1"`), followed by `extra` elements (a `<limit>`, or nothing).
    pub fn joint(
        name: &str,
        kind: &str,
        parent: &str,
        child: &str,
        axis: &str,
        extra: &str,
    ) -> String {
        format!(
            r#"<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>
           <origin xyz="0 0 0.2" rpy="0 0 0"/><axis xyz="{axis}"/>{extra}</joint>"#
        )
    }

    /// The robot `name` made of `elements`, in order.
    pub fn robot(name: &str, elements: &[String]) -> String {
        format!(
            r#"<?xml version="1.0"?><robot name="{name}">{}</robot>"#,
            elements.concat()
        )
    }
}
