//! Shared by `node/tests/model_*.rs`: locating (or building) the failure-double cdylibs,
//! compiling the C example plugin, giving each test its own copy of a library, asking the
//! process whether a library is still mapped, running a plugin against its crate, and
//! checking the host's errors.
#![allow(dead_code)] // each test file uses a subset

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, Once};

use std::env::consts::{DLL_PREFIX, DLL_SUFFIX};

use gp_node::eval::dataset::Dataset;
use gp_node::eval::plugins;
use gp_node::eval::report::EvalReport;
use gp_node::eval::runner::{RunOptions, run_stream};
use gp_node::plugin_host::{HostError, Plugin};
use gpn_gp_core::model::OnlineModel;

/// `target/<profile>/`: this test binary lives in `target/<profile>/deps/`.
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let deps = exe.parent().expect("test binary has a directory");
    deps.parent().expect("deps/ has a parent").to_path_buf()
}

static BUILD_LOCK: Mutex<()> = Mutex::new(());

/// The cdylib of workspace crate `crate_name` (e.g. `gpn_double_slow`).
///
/// `cargo test -p gp_node` builds the doubles (they are dev-dependencies, so they land in
/// `target/<profile>/deps/`); `cargo build`/`test --workspace` also uplifts them to
/// `target/<profile>/`. Cargo names cdylibs without a hash, so builds with different
/// feature sets overwrite each other's file and the top-level copy can be older than the
/// sources: take the newer of the two. If neither exists (a test binary run by hand after a
/// partial build), build it with `cargo build -p` into the same target directory and
/// profile.
pub fn cdylib(crate_name: &str) -> PathBuf {
    let file = format!("{DLL_PREFIX}{crate_name}{DLL_SUFFIX}");
    let profile_dir = profile_dir();
    let find = || {
        [
            profile_dir.join("deps").join(&file),
            profile_dir.join(&file),
        ]
        .into_iter()
        .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
        .max_by_key(|(modified, _)| *modified)
        .map(|(_, p)| p)
    };
    if let Some(path) = find() {
        return path;
    }
    let _guard = BUILD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(path) = find() {
        return path;
    }
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") | None => "dev".to_string(),
        Some(other) => other.to_string(),
    };
    let target_dir = profile_dir.parent().expect("target dir");
    let out = Command::new(env!("CARGO"))
        .args([
            "build",
            "-p",
            crate_name,
            "--profile",
            &profile,
            "--target-dir",
        ])
        .arg(target_dir)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo build");
    assert!(
        out.status.success(),
        "cargo build -p {crate_name} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    find().unwrap_or_else(|| {
        panic!(
            "{file} not found in {} after building it",
            profile_dir.display()
        )
    })
}

static CLEAN_STALE: Once = Once::new();

/// A fresh directory under cargo's test scratch dir, unique to this process and `name`.
///
/// The first call also removes the scratch dirs of test processes that are no longer
/// running (each run copies several megabytes of libraries), so they do not pile up.
pub fn scratch_dir(name: &str) -> PathBuf {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
    CLEAN_STALE.call_once(|| {
        let Ok(entries) = std::fs::read_dir(base) else {
            return;
        };
        for entry in entries.flatten() {
            let file_name = entry.file_name();
            let Some(pid) = file_name
                .to_str()
                .and_then(|n| n.strip_prefix("model-tests-"))
            else {
                continue;
            };
            if pid != std::process::id().to_string() && !Path::new("/proc").join(pid).exists() {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    });
    let dir = base
        .join(format!("model-tests-{}", std::process::id()))
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// Copy `library` into a fresh scratch dir as `file_name`: the copy is a distinct file,
/// so the dynamic loader maps it separately from other tests' copies and a test can check
/// that *its* copy is unloaded. (A hard or symbolic link would not do: glibc recognises an
/// already loaded library by device and inode.)
pub fn private_copy(library: &Path, test: &str, file_name: &str) -> PathBuf {
    let dir = scratch_dir(test);
    let path = dir.join(file_name);
    std::fs::copy(library, &path).expect("copy library");
    path
}

/// A private copy of double `crate_name` for `test`, named `lib<crate_name>.so`.
pub fn double(crate_name: &str, test: &str) -> PathBuf {
    private_copy(
        &cdylib(crate_name),
        test,
        &format!("{DLL_PREFIX}{crate_name}{DLL_SUFFIX}"),
    )
}

/// Whether `path` is mapped into this process (Linux: `/proc/self/maps`).
pub fn is_mapped(path: &Path) -> bool {
    let canonical = std::fs::canonicalize(path).expect("canonicalize");
    let maps = std::fs::read_to_string("/proc/self/maps").expect("read /proc/self/maps");
    let needle = canonical.to_string_lossy();
    maps.lines().any(|line| line.ends_with(needle.as_ref()))
}

/// Call a double's test-only counter (`gpn_double_live_models` / `_threads`) through a
/// separate handle on the same (already loaded) library, closed again before returning.
pub fn counter(path: &Path, symbol: &str) -> u64 {
    // SAFETY: test-only: the doubles export these symbols as `extern "C" fn() -> u64`.
    unsafe {
        let lib = libloading::Library::new(path).expect("open double");
        let f = lib
            .get::<unsafe extern "C" fn() -> u64>(format!("{symbol}\0").as_bytes())
            .expect("counter symbol");
        f()
    }
}

/// Build the C example plugin (`plugins/c_example/blr.c`) with the system C compiler into
/// a fresh scratch dir for `test`; returns the path of `libblr_c.so`.
pub fn c_example(test: &str) -> PathBuf {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repo root");
    let dir = scratch_dir(test);
    let out = dir.join(format!("{DLL_PREFIX}blr_c{DLL_SUFFIX}"));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = Command::new(&cc)
        .args([
            "-std=c11",
            "-O2",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-fPIC",
            "-shared",
        ])
        .arg("-fvisibility=hidden")
        .arg("-I")
        .arg(repo.join("plugins/api/include"))
        .arg(repo.join("plugins/c_example/blr.c"))
        .arg("-o")
        .arg(&out)
        .arg("-lm")
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{cc}`: {e}"));
    assert!(
        status.status.success(),
        "{cc} failed on blr.c:\n{}",
        String::from_utf8_lossy(&status.stderr)
    );
    out
}

/// A sample of the plugin-against-crate tests: two inputs, two targets.
pub type Sample = ([f64; 2], [f64; 2]);

/// The bits of each value, so that `assert_eq!` compares floats exactly (NaNs included).
pub fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Streams samples `range` of `sample` through a model loaded as a plugin and the same
/// model linked in-process, asserting bitwise-equal predictions before each update (with
/// noise variances `noise`, stamps 10 ms apart).
pub fn lockstep(
    through_abi: &mut dyn OnlineModel,
    in_process: &mut dyn OnlineModel,
    range: std::ops::Range<usize>,
    sample: fn(usize) -> Sample,
    noise: &[f64; 2],
) {
    let (mut m1, mut v1, mut m2, mut v2) = ([0.0; 2], [0.0; 2], [0.0; 2], [0.0; 2]);
    for k in range {
        let (x, y) = sample(k);
        through_abi
            .predict(&x, &mut m1, &mut v1)
            .expect("plugin predict");
        in_process
            .predict(&x, &mut m2, &mut v2)
            .expect("crate predict");
        assert_eq!(bits(&m1), bits(&m2), "mean at step {k}");
        assert_eq!(bits(&v1), bits(&v2), "variance at step {k}");
        let t = k as f64 * 0.01;
        through_abi.update(&x, &y, t, noise).expect("plugin update");
        in_process.update(&x, &y, t, noise).expect("crate update");
    }
}

/// `gp-node eval --plugin <plugin> --json --data <data>`, for the caller to add to.
pub fn eval_json_command(plugin: &str, data: &Path) -> Command {
    let mut eval = Command::new(env!("CARGO_BIN_EXE_gp-node"));
    eval.args(["eval", "--plugin", plugin, "--json", "--data"])
        .arg(data);
    eval
}

/// Asserts that creating a one-input, one-output model of `plugin` from `config` fails in
/// the plugin's `create` with `status`, and that the error's text contains `text`.
pub fn assert_create_fails(plugin: &Plugin, config: &str, status: &str, text: &str) {
    let err = plugin
        .create(config, 1, 1)
        .expect_err("the config is refused");
    assert_call_failed(&err, "create", status, text);
}

/// Asserts that `err` reports a failed call of the plugin's `function` with `status`, and
/// that its text contains `text`.
pub fn assert_call_failed(err: &HostError, function: &str, status: &str, text: &str) {
    assert!(
        matches!(err, HostError::Call { function: f, status: s, .. } if *f == function && *s == status),
        "expected {function} to fail with {status}: {err:?}"
    );
    assert!(err.to_string().contains(text), "{err}");
}

/// Evaluates `data` (one target, noise variance 0.01) with plugin `plugin` created from
/// `config` through the host and with `in_process`, the same model linked in; asserts the
/// two give the same metrics, stats and truth scores, and returns the host's report.
pub fn same_eval_via_host_and_in_process(
    plugin: &str,
    config: &serde_json::Value,
    mut in_process: Box<dyn OnlineModel>,
    data: &Dataset,
) -> EvalReport {
    let opts = RunOptions::new(vec![0.01]);
    let d = in_process.input_dim();
    let mut via_host = plugins::create_model(plugin, config, d, 1).expect("plugin model");
    let a = run_stream(plugin, via_host.as_mut(), data, &opts, &mut |_| {}).expect("run");
    let b = run_stream(plugin, in_process.as_mut(), data, &opts, &mut |_| {}).expect("run");
    assert_eq!(a.metrics, b.metrics);
    assert_eq!(a.stats, b.stats);
    assert_eq!(a.truth, b.truth);
    a
}
