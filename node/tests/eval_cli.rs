//! `gp-node eval` as a command: JSON output on a small file, and one clear error line with
//! exit code 2 for each user mistake.

#![allow(clippy::unwrap_used)] // Tests: a panic is the failure report.

mod eval_support;

use std::path::Path;
use std::process::{Command, Output};

use eval_support::{assert_report_keys, temp_file};

fn eval(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gp-node"))
        .arg("eval")
        .args(args)
        .output()
        .unwrap()
}

fn small_csv() -> String {
    let mut s = String::from("x1,x2,y,f\n");
    for i in 0..120 {
        let (a, b) = ((i as f64 * 0.37).sin(), (i as f64 * 0.21).cos());
        let f = (2.0 * a).sin() + b;
        s += &format!("{a},{b},{},{f}\n", f + 0.05 * (i as f64 * 5.3).sin());
    }
    s
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn fails_with(o: &Output, needles: &[&str]) {
    assert_eq!(o.status.code(), Some(2), "stderr: {}", stderr(o));
    let e = stderr(o);
    for n in needles {
        assert!(e.contains(n), "expected {n:?} in: {e}");
    }
}

/// SkyGP-Dense on `small_csv` with its truth column and the hyperparameters in `hyper`.
fn dense_with_truth<'a>(data: &'a Path, hyper: &'a Path) -> Vec<&'a str> {
    vec![
        "--plugin",
        "skygp",
        "--set",
        "variant=dense",
        "--data",
        data.to_str().unwrap(),
        "--inputs",
        "x1..x2",
        "--targets",
        "y",
        "--truth",
        "f",
        "--hyper",
        hyper.to_str().unwrap(),
    ]
}

/// `--predictions`: one row per predicted step in the data's units, from which the reported
/// truth RMSE is recomputed.
fn predictions_file_agrees_with_the_report(data: &Path, hyper: &Path, report: &serde_json::Value) {
    let out = temp_file("predictions.csv", "");
    let mut args = dense_with_truth(data, hyper);
    args.extend(["--predictions", out.to_str().unwrap()]);
    let o = eval(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(&out).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("step,mu_y,sigma_y,y,f"));
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 119, "every step but the first is predicted");
    let source: Vec<Vec<f64>> = small_csv()
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    let mut sq = 0.0;
    for (k, row) in rows.iter().enumerate() {
        assert_eq!(row[0], (k + 1) as f64);
        let line = &source[k + 1];
        assert!(
            (row[3] - line[2]).abs() < 1e-9,
            "target in the file's units"
        );
        assert!((row[4] - line[3]).abs() < 1e-9, "truth in the file's units");
        assert!(row[2] >= 0.0);
        sq += (row[4] - row[1]).powi(2);
    }
    let rmse = (sq / 119.0).sqrt();
    let reported = report["truth_rmse"][0].as_f64().unwrap();
    assert!(
        (rmse - reported).abs() <= 1e-9 * reported.max(1.0),
        "{rmse} vs {reported}"
    );
    std::fs::remove_file(out).unwrap();

    let o = eval(&[
        "--data",
        data.to_str().unwrap(),
        "--predictions",
        "/nonexistent-dir/p.csv",
    ]);
    fails_with(&o, &["cannot write predictions", "/nonexistent-dir/p.csv"]);
}

#[test]
fn json_output_with_truth_and_hyper() {
    let data = temp_file("ok.csv", &small_csv());
    let hyper = temp_file(
        "hyper.json",
        r#"{"sigma_f": 1.0, "sigma_n": 0.05, "lengthscales": [0.7, 0.7]}"#,
    );
    let mut args = dense_with_truth(&data, &hyper);
    args.push("--json");
    let o = eval(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_report_keys(&j);
    assert_eq!(j["n_samples"], 120);
    assert_eq!(j["targets"][0], "y");
    let cov = j["bound_coverage"][0].as_f64().unwrap();
    assert!((0.0..=1.0).contains(&cov));
    predictions_file_agrees_with_the_report(&data, &hyper, &j);

    // Table output and the hyperparameter fit when none are given.
    let o = eval(&[
        "--data",
        data.to_str().unwrap(),
        "--inputs",
        "0,1",
        "--targets",
        "2",
        "--fit-samples",
        "80",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("fitting them by marginal likelihood on the first 80 samples"));
    assert!(String::from_utf8_lossy(&o.stdout).contains("SMSE"));
    for p in [data, hyper] {
        std::fs::remove_file(p).unwrap();
    }
}

#[test]
fn user_errors_are_one_clear_line() {
    let ok = temp_file("e_ok.csv", &small_csv());
    let ok = ok.to_str().unwrap();
    let hyper = temp_file(
        "e_hyper.json",
        r#"{"sigma_f": 1.0, "sigma_n": 0.05, "lengthscales": [0.7, 0.7]}"#,
    );
    let h = hyper.to_str().unwrap();

    fails_with(
        &eval(&["--data", "/nonexistent/gpn.csv", "--hyper", h]),
        &["cannot open data file", "/nonexistent/gpn.csv"],
    );
    fails_with(
        &eval(&[
            "--data",
            ok,
            "--inputs",
            "x1,x9",
            "--targets",
            "y",
            "--hyper",
            h,
        ]),
        &["\"x9\"", "x1, x2, y, f"],
    );
    let bad = temp_file("e_bad.csv", "x1,x2,y\n1,2,3\n4,five,6\n");
    fails_with(
        &eval(&["--data", bad.to_str().unwrap(), "--hyper", h]),
        &["line 3", "\"x2\"", "five"],
    );
    let empty = temp_file("e_empty.csv", "");
    fails_with(
        &eval(&["--data", empty.to_str().unwrap(), "--hyper", h]),
        &["empty"],
    );
    let header_only = temp_file("e_header.csv", "x1,x2,y\n");
    fails_with(
        &eval(&["--data", header_only.to_str().unwrap(), "--hyper", h]),
        &["no data rows"],
    );
    fails_with(
        &eval(&[
            "--data",
            ok,
            "--targets",
            "y",
            "--inputs",
            "x1..x2",
            "--plugin",
            "nope",
            "--hyper",
            h,
        ]),
        &["nope", "available:", "skygp ("],
    );
    fails_with(
        &eval(&[
            "--data",
            ok,
            "--targets",
            "y",
            "--inputs",
            "x1..x2",
            "--hyper",
            "/nonexistent/h.json",
        ]),
        &["hyperparameter file"],
    );
    fails_with(
        &eval(&[
            "--data",
            ok,
            "--targets",
            "y",
            "--inputs",
            "x1..x2",
            "--hyper",
            h,
            "--set",
            "variant=sideways",
        ]),
        &["skygp"],
    );
    for p in [hyper, bad, empty, header_only] {
        std::fs::remove_file(p).unwrap();
    }
}

/// Fitted hyperparameters refitted as the stream grows: the JSON lists each refit (due
/// step, the step it took over, points), the table says so, and with given
/// hyperparameters there is nothing to refit.
#[test]
fn refits_are_reported() {
    let data = temp_file("refit.csv", &small_csv());
    let data = data.to_str().unwrap();
    let args = [
        "--data",
        data,
        "--inputs",
        "x1..x2",
        "--targets",
        "y",
        "--fit-samples",
        "25",
        "--max-refits",
        "3",
    ];
    let o = eval(&[&args[..], &["--json"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let refits = j["refits"].as_array().unwrap();
    // Due after 50 and 100 samples; the third (200) is past the 120-sample stream.
    assert_eq!(refits.len(), 2, "{refits:?}");
    let mut in_use = None;
    for (r, due) in refits.iter().zip([50, 100]) {
        assert_eq!(r["due"], due);
        assert_eq!(r["points"], 25);
        assert!(
            r["error"].is_null() && r["hyper"]["sigma_n"].is_number(),
            "{r}"
        );
        // Taken over at its due step exactly when it predicts the held-out samples better.
        let nlpd = &r["held_out_nlpd"];
        let better = nlpd["refit"].as_f64().unwrap() < nlpd["in_use"].as_f64().unwrap();
        assert_eq!(r["adopted"] == due, better, "{r}");
        assert_eq!(r["adopted"].is_null(), !better, "{r}");
        if better {
            in_use = Some(r["hyper"].clone());
        }
    }
    if let Some(h) = in_use {
        assert_eq!(
            j["hyper"][0], h,
            "the last adopted refit's values are reported"
        );
    }
    let table = eval(&args);
    let out = String::from_utf8_lossy(&table.stdout);
    assert!(
        out.contains("refitted on 25 of the first 50 samples")
            || out.contains("refit on 25 of the first 50 samples kept the values in use"),
        "{out}"
    );
    let given = temp_file(
        "refit_hyper.json",
        r#"{"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [1.0, 1.0]}"#,
    );
    let o = eval(&[&args[..], &["--json", "--hyper", given.to_str().unwrap()]].concat());
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(j.get("refits").is_none() && j.get("fit").is_none(), "{j}");
}

/// A 7-joint robot stream in the layout `gp-node sim --record` writes (x = [q, q̇, q̈],
/// one residual target per joint), smooth enough for a fit-free run.
fn robot_csv() -> String {
    let mut s = (0..21)
        .map(|k| format!("x_{k}"))
        .chain((0..7).map(|j| format!("y_{j}")))
        .collect::<Vec<_>>()
        .join(",");
    s.push('\n');
    for i in 0..150 {
        let t = i as f64 * 0.01;
        let row: Vec<String> = (0..21)
            .map(|k| (0.3 * (t + 0.4 * k as f64).sin()).to_string())
            .chain((0..7).map(|j| (0.5 * (2.0 * t + j as f64).cos()).to_string()))
            .collect();
        s += &row.join(",");
        s.push('\n');
    }
    s
}

/// The robot's sensor faults from the command line: an encoder spike needs the robot
/// (`--urdf`) and a stream of its shape; with both it runs and the report names it.
#[test]
fn sensor_faults_on_a_robot_stream() {
    let data = temp_file("e_robot.csv", &robot_csv());
    let hyper = temp_file(
        "e_robot_hyper.json",
        &format!(
            r#"{{"sigma_f": 1.0, "sigma_n": 0.05, "lengthscales": {:?}}}"#,
            [1.0; 21]
        ),
    );
    let urdf = Path::new(env!("CARGO_MANIFEST_DIR")).join("../urdf/panda.urdf");
    let (d, h, u) = (
        data.to_str().unwrap(),
        hyper.to_str().unwrap(),
        urdf.to_str().unwrap(),
    );
    let base = [
        "--data",
        d,
        "--inputs",
        "x_0..x_20",
        "--targets",
        "y_0..y_6",
        "--hyper",
        h,
        "--json",
    ];
    let with = |extra: &[&str]| eval(&[&base[..], extra].concat());
    fails_with(&with(&["--contaminate", "encoder-spike:0.1"]), &["--urdf"]);
    fails_with(
        &with(&[
            "--contaminate",
            "encoder-spike:0.1",
            "--urdf",
            "/nonexistent/r.urdf",
        ]),
        &["cannot load the robot", "/nonexistent/r.urdf"],
    );
    fails_with(
        &with(&[
            "--contaminate",
            "encoder-spike:0.1",
            "--urdf",
            u,
            "--joints",
            "panda_joint1,panda_joint2",
        ]),
        &["nv = 2", "21 inputs"],
    );
    for (spec, kind, count) in [
        ("encoder-spike:0.1:0.02", "encoder-spike", 15),
        ("torque-spike:0.1", "torque-spike", 105),
        ("drop:0.2", "drop", 30),
        ("duplicate:0.2", "duplicate", 30),
    ] {
        let out = with(&["--contaminate", spec, "--urdf", u]);
        assert!(out.status.success(), "{spec}: {}", stderr(&out));
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["contamination"]["kind"], kind, "{spec}");
        assert_eq!(report["contamination"]["count"], count, "{spec}");
        let smse = report["smse_final"].as_array().unwrap();
        assert_eq!(smse.len(), 7, "{spec}");
        assert!(
            smse.iter().all(|v| v.as_f64().unwrap().is_finite()),
            "{spec}: {report}"
        );
    }
    for p in [data, hyper] {
        std::fs::remove_file(p).unwrap();
    }
}
