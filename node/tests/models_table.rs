//! The one command behind `docs/results/models.md` (`testing/measure/models_table.py`, issue
//! 25 item 6) in its short form: every installed plugin on the first rows of the benchmark
//! streams, a short robot recording (CSV) and a short rosbag2 recording (`--bag`), clean,
//! contaminated and, the CSV, with a robot's faults, and in
//! short simulations of the three scenarios; the script exits 1 unless every cell is a finite
//! number. Here the table must also name every shipped plugin in each of its parts.

use std::ffi::OsStr;

#[test]
fn the_models_table_is_made_for_every_plugin() {
    let Some(python) = gpn_test_support::python("models_table") else {
        return;
    };
    let Some(shared) = gpn_test_support::shared("models_table") else {
        return;
    };
    let data = shared.join("data");
    // A short rosbag2 recording, scored as one more stream (`gp-node eval --bag`).
    let bag = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("models_table_recording");
    let _ = std::fs::remove_dir_all(&bag);
    let sim = std::process::Command::new(env!("CARGO_BIN_EXE_gp-node"))
        .args([
            "sim",
            "--learned-only",
            "--no-viz",
            "--seed",
            "2",
            "--duration",
            "0.3",
        ])
        .arg("--record")
        .arg(&bag)
        .output()
        .expect("gp-node sim");
    assert!(
        sim.status.success(),
        "{}",
        String::from_utf8_lossy(&sim.stderr)
    );
    let args = [
        OsStr::new("--quick"),
        OsStr::new("--bin"),
        OsStr::new(env!("CARGO_BIN_EXE_gp-node")),
        OsStr::new("--data"),
        data.as_os_str(),
        OsStr::new("--bag"),
        bag.as_os_str(),
    ];
    let table = gpn_test_support::measure_table(&python, "models_table.py", &args);
    for plugin in ["skygp", "rcagp", "vbks", "loggp"] {
        let rows = table
            .lines()
            // (The fault table's header names the plugins as columns.)
            .filter(|l| !l.starts_with("| what update receives |"))
            .filter(|l| l.split('|').nth(2).map(str::trim) == Some(plugin))
            .count();
        // 4 streams, the recording and 3 scenarios.
        assert_eq!(rows, 8, "{plugin} has {rows} rows in:\n{table}");
        assert!(
            table.contains(&format!("| recording models_table_recording | {plugin} |")),
            "{table}"
        );
    }
    // The robot stream with faults in what the model learns from: one row per fault, a
    // number for every plugin.
    for fault in [
        "clean",
        "asymmetric:0.1",
        "torque-spike:0.1",
        "encoder-spike:0.1",
        "drop:0.1",
        "duplicate:0.1",
    ] {
        let row = table
            .lines()
            .find(|l| l.starts_with(&format!("| {fault} |")))
            .unwrap_or_else(|| panic!("no row for {fault} in:\n{table}"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert_eq!(cells.len(), 7, "{row}");
        for cell in &cells[2..6] {
            let rmse: f64 = cell.split(' ').next().unwrap().parse().unwrap();
            assert!(rmse.is_finite() && rmse > 0.0, "{row}");
        }
    }
}
