//! `gp-node sim --record`: the columns a recorded stream is evaluated on. With perfect
//! velocity sensing and no encoder noise, the clean sample (`x_clean`, from the true state)
//! equals the learning sample (`x`, from the measured one) except on encoder spikes, where
//! exactly one joint angle is off by the spike; the truth columns follow their inputs.

#![allow(clippy::unwrap_used)] // Tests: a panic is the failure report.

use std::path::Path;
use std::process::Command;

const NV: usize = 7;

fn column(header: &csv::StringRecord, name: &str) -> usize {
    header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name}"))
}

#[test]
fn clean_samples_differ_from_the_learning_samples_only_by_encoder_spikes() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let params = std::fs::read_to_string(root.join("config/sim_gating_limits_only.yaml"))
        .unwrap()
        .replacen(
            "encoder_noise_std_rad: 0.00001",
            "encoder_noise_std_rad: 0.0",
            1,
        );
    assert!(params.contains("encoder_noise_std_rad: 0.0\n"));
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sim_record");
    std::fs::create_dir_all(&dir).unwrap();
    let params_path = dir.join("params.yaml");
    std::fs::write(&params_path, params).unwrap();
    let csv_path = dir.join("glitches.csv");
    let out = Command::new(env!("CARGO_BIN_EXE_gp-node"))
        .arg("sim")
        .arg("--params")
        .arg(&params_path)
        .args(["--scenario", "glitches", "--duration", "4", "--seed", "3"])
        .args(["--learned-only", "--no-viz", "--record"])
        .arg(&csv_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let mut reader = csv::Reader::from_path(&csv_path).unwrap();
    let header = reader.headers().unwrap().clone();
    let cols = |prefix: &str, n: usize| -> Vec<usize> {
        (0..n)
            .map(|k| column(&header, &format!("{prefix}_{k}")))
            .collect()
    };
    let (x, x_clean) = (cols("x", 3 * NV), cols("x_clean", 3 * NV));
    let (y_true, y_true_clean) = (cols("y_true", NV), cols("y_true_clean", NV));
    let (mut samples, mut spikes, mut moved) = (0, 0, 0);
    for record in reader.records() {
        let record = record.unwrap();
        let read = |idx: &[usize]| -> Vec<f64> {
            idx.iter()
                .map(|&i| record[i].parse::<f64>().unwrap())
                .collect()
        };
        let (xs, xc) = (read(&x), read(&x_clean));
        assert_eq!(
            xs[0].is_nan(),
            xc[0].is_nan(),
            "a clean sample exactly where there is a learning sample"
        );
        if xs[0].is_nan() {
            continue;
        }
        samples += 1;
        // q̇ and the filtered q̈ come from the (perfect) velocity channel: identical.
        assert_eq!(xs[NV..], xc[NV..]);
        let off: Vec<f64> = (0..NV).map(|j| xs[j] - xc[j]).collect();
        let (yt, ytc) = (read(&y_true), read(&y_true_clean));
        match off.iter().filter(|d| **d != 0.0).count() {
            0 => assert_eq!(yt, ytc, "the same input, the same truth"),
            1 => {
                let d = off.iter().find(|d| **d != 0.0).unwrap();
                assert!((d.abs() - 0.05).abs() < 1e-9, "an encoder spike: {off:?}");
                assert!(ytc.iter().all(|v| v.is_finite()));
                spikes += 1;
                // (Not on every spike: a base-joint angle does not change the residual.)
                moved += usize::from(yt != ytc);
            }
            _ => panic!("more than one joint off: {off:?}"),
        }
    }
    eprintln!("{samples} samples, {spikes} encoder spikes, the truth moved on {moved}");
    assert!(samples > 3900, "{samples} learning samples in 4 s at 1 kHz");
    // 4000 samples × 7 joints × 1e-3, half of them encoder spikes: ~14 expected.
    assert!(spikes >= 3, "{spikes} encoder spikes");
    assert!(moved >= 1, "the truth moves with its input on some spike");
}
