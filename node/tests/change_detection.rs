//! The command behind `docs/results/change-detection.md`
//! (`testing/measure/change_detection.py`, issue 25 item 2) in a short form: every shipped
//! plugin on one payload step and a short stationary run; the script exits 1 unless every
//! run gave a report, and the table has one row per plugin.

use std::ffi::OsStr;

#[test]
fn the_detector_is_measured_for_every_plugin() {
    let Some(python) = gpn_test_support::python("change_detection") else {
        return;
    };
    let args = ["--seeds", "1", "--stationary-s", "20", "--bin"].map(OsStr::new);
    let bin = OsStr::new(env!("CARGO_BIN_EXE_gp-node"));
    let table = gpn_test_support::measure_table(
        &python,
        "change_detection.py",
        &[&args[..], &[bin]].concat(),
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
}
