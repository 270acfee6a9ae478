//! The command behind `docs/results/contamination-protocols.md`
//! (`testing/measure/contamination_protocols.py`, issue 25 item 3) in a short form: the RCaGP
//! paper's protocols at 5/10/20 % on the first rows of the shuffled benchmark streams; the
//! script exits 1 unless every cell is a finite number, and every protocol and rate has its
//! row for every stream.

use std::process::Command;

#[test]
fn every_protocol_and_rate_is_reported_for_every_stream() {
    let Some(python) = gpn_test_support::python("contamination_protocols") else {
        return;
    };
    let Some(shared) = gpn_test_support::shared("contamination_protocols") else {
        return;
    };
    let work = std::env::temp_dir().join(format!("gpn_protocols_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let out = work.join("protocols.md");
    let run = Command::new(python)
        .arg(gpn_test_support::repo_root().join("testing/measure/contamination_protocols.py"))
        .args(["--rows", "200", "--plugins", "skygp,rcagp"])
        .args(["--bin", env!("CARGO_BIN_EXE_gp-node")])
        .arg("--data")
        .arg(shared.join("data"))
        .arg("--work")
        .arg(&work)
        .arg("--out")
        .arg(&out)
        .output()
        .expect("run contamination_protocols.py");
    let table = std::fs::read_to_string(&out).unwrap_or_default();
    assert!(
        run.status.success(),
        "contamination_protocols.py failed:\n{}\n{table}",
        String::from_utf8_lossy(&run.stderr)
    );
    for protocol in ["asymmetric", "uniform", "focused"] {
        for rate in ["5 %", "10 %", "20 %"] {
            let label = format!("| {protocol} {rate} |");
            let rows = table.lines().filter(|l| l.starts_with(&label)).count();
            assert_eq!(rows, 3, "{label}: one row per stream in:\n{table}");
        }
    }
    let _ = std::fs::remove_dir_all(&work);
}
