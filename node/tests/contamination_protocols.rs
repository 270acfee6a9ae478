//! The command behind `docs/results/contamination-protocols.md`
//! (`testing/measure/contamination_protocols.py`, issue 25 item 3) in a short form: the RCaGP
//! paper's protocols at 5/10/20 % on the first rows of the shuffled benchmark streams; the
//! script exits 1 unless every cell is a finite number, and every protocol and rate has its
//! row for every stream.

use std::ffi::OsStr;

#[test]
fn every_protocol_and_rate_is_reported_for_every_stream() {
    let Some(python) = gpn_test_support::python("contamination_protocols") else {
        return;
    };
    let Some(shared) = gpn_test_support::shared("contamination_protocols") else {
        return;
    };
    let data = shared.join("data");
    let args = ["--rows", "200", "--plugins", "skygp,rcagp", "--bin"].map(OsStr::new);
    let rest = [
        OsStr::new(env!("CARGO_BIN_EXE_gp-node")),
        OsStr::new("--data"),
        data.as_os_str(),
    ];
    let table = gpn_test_support::measure_table(
        &python,
        "contamination_protocols.py",
        &[&args[..], &rest].concat(),
    );
    for protocol in ["asymmetric", "uniform", "focused"] {
        for rate in ["5 %", "10 %", "20 %"] {
            let label = format!("| {protocol} {rate} |");
            let rows = table.lines().filter(|l| l.starts_with(&label)).count();
            assert_eq!(rows, 3, "{label}: one row per stream in:\n{table}");
        }
    }
}
