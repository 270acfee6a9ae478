//! The command behind `docs/results/change-detection.md`
//! (`testing/measure/change_detection.py`, issue 25 item 2) in a short form: every shipped
//! plugin on one payload step and a short stationary run; the script exits 1 unless every
//! run gave a report, and the table has one row per plugin.

use std::process::Command;

#[test]
fn the_detector_is_measured_for_every_plugin() {
    let Some(python) = gpn_test_support::python("change_detection") else {
        return;
    };
    let work = std::env::temp_dir().join(format!("gpn_change_detection_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let out = work.join("change.md");
    let run = Command::new(python)
        .arg(gpn_test_support::repo_root().join("testing/measure/change_detection.py"))
        .args(["--seeds", "1", "--stationary-s", "20"])
        .args(["--bin", env!("CARGO_BIN_EXE_gp-node")])
        .arg("--work")
        .arg(&work)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("run change_detection.py");
    let table = std::fs::read_to_string(&out).unwrap_or_default();
    assert!(
        run.status.success(),
        "change_detection.py failed:\n{}\n{table}",
        String::from_utf8_lossy(&run.stderr)
    );
    for plugin in ["skygp", "rcagp", "vbks", "loggp"] {
        let row = table
            .lines()
            .find(|l| l.starts_with(&format!("| {plugin} |")))
            .unwrap_or_else(|| panic!("no row for {plugin} in:\n{table}"));
        assert!(
            row.ends_with("| met |") || row.ends_with("| not met |"),
            "{row}"
        );
    }
    let _ = std::fs::remove_dir_all(&work);
}
