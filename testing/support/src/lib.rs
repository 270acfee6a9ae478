//! Helpers the workspace's tests share (one copy each): whether this is CI, the Python that
//! runs the reference checks, the repository's folders, and running a tool for its JSON.
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
