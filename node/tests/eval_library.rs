//! The evaluation library with a test-double model: protocol (step 0 unpredicted), metrics
//! against a naive recomputation, JSON keys, truth RMSE and bound coverage, column
//! selections, centring, config assembly and the error messages.

#![allow(clippy::unwrap_used)] // Tests: a panic is the failure report.

mod eval_support;

use eval_support::{CallLog, assert_report_keys, temp_file};
use gp_node::eval::{
    EvalError, columns, config,
    dataset::{Centering, ColumnSelection, Dataset},
    plugins,
    runner::{RunOptions, run_stream},
};
use gpn_gp_core::model::{ModelError, ModelStats, OnlineModel};
use serde_json::json;

/// Predicts each output as the running mean of the targets learned so far (0 before any),
/// with latent variance 1/(1 + count); logs the calls.
struct RunningMean {
    d: usize,
    sum: Vec<f64>,
    count: u64,
    calls: Vec<(char, usize)>,
    noise_seen: Vec<f64>,
}

impl RunningMean {
    fn new(d: usize, p: usize) -> Self {
        Self {
            d,
            sum: vec![0.0; p],
            count: 0,
            calls: Vec::new(),
            noise_seen: Vec::new(),
        }
    }
}

impl OnlineModel for RunningMean {
    fn input_dim(&self) -> usize {
        self.d
    }
    fn output_dim(&self) -> usize {
        self.sum.len()
    }
    fn predict(&mut self, _x: &[f64], mean: &mut [f64], var: &mut [f64]) -> Result<(), ModelError> {
        self.calls.push(('p', self.count as usize));
        for t in 0..self.sum.len() {
            mean[t] = if self.count == 0 {
                0.0
            } else {
                self.sum[t] / self.count as f64
            };
            var[t] = 1.0 / (1.0 + self.count as f64);
        }
        Ok(())
    }
    fn update(
        &mut self,
        _x: &[f64],
        y: &[f64],
        _t: f64,
        noise_var: &[f64],
    ) -> Result<(), ModelError> {
        self.calls.push(('u', self.count as usize));
        self.noise_seen = noise_var.to_vec();
        for (s, v) in self.sum.iter_mut().zip(y) {
            *s += v;
        }
        self.count += 1;
        Ok(())
    }
    fn stats(&self) -> ModelStats {
        ModelStats {
            samples_seen: self.count,
            samples_stored: self.count,
            experts: 1,
            memory_bytes: 8 * self.sum.len() as u64,
        }
    }
}

/// n rows: t, a, b (inputs), y1, y2 (targets), f1, f2 (truth).
fn csv_text(n: usize) -> String {
    let mut s = String::from("t, a ,b,y1,y2,f1,f2\n");
    for i in 0..n {
        let t = i as f64;
        let f1 = (0.3 * t).sin();
        let f2 = 2.0 + 0.01 * t;
        let e1 = 0.1 * (1.7 * t).cos();
        let e2 = 0.05 * (2.3 * t).sin();
        s += &format!("{t},{},{},{},{},{f1},{f2}\n", t * 0.5, -t, f1 + e1, f2 + e2);
    }
    s
}

/// Naive SMSE/MSLL curves of one target (anchors §1.4), O(N²).
fn naive(y: &[f64], mu: &[f64], var: &[f64], nv: f64) -> (f64, f64, f64, f64) {
    let n = y.len();
    let m = y.iter().sum::<f64>() / n as f64;
    let v = y.iter().map(|a| (a - m).powi(2)).sum::<f64>() / n as f64;
    let mut smse = vec![1.0; n];
    let mut msll = vec![0.0; n];
    let mut acc = 0.0;
    for i in 0..n {
        if i > 0 {
            let pm = y[..=i].iter().sum::<f64>() / (i + 1) as f64;
            let pv = y[..=i].iter().map(|a| (a - pm).powi(2)).sum::<f64>() / (i + 1) as f64;
            smse[i] = (1..=i).map(|j| (y[j] - mu[j]).powi(2)).sum::<f64>() / (i as f64 * pv);
        }
        let nll = if i == 0 {
            0.0
        } else {
            let s2 = var[i].max(1e-3) + nv;
            0.5 * (2.0 * std::f64::consts::PI * s2).ln() + (y[i] - mu[i]).powi(2) / (2.0 * s2)
        };
        let nll0 = 0.5 * (2.0 * std::f64::consts::PI * v).ln() + (y[i] - m).powi(2) / (2.0 * v);
        acc += nll - nll0;
        msll[i] = acc / (i + 1) as f64;
    }
    let mean = |c: &[f64]| c.iter().sum::<f64>() / n as f64;
    (smse[n - 1], mean(&smse), msll[n - 1], mean(&msll))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + b.abs())
}

#[test]
fn test_double_stream_metrics_and_json() {
    let n = 60;
    let path = temp_file("double.csv", &csv_text(n));
    let sel = ColumnSelection {
        inputs: Some("t..b".into()),
        targets: Some("y1,4".into()),
        truth: Some("f1..f2".into()),
        predict_inputs: None,
    };
    let mut data = Dataset::from_path(&path, &sel).unwrap();
    assert_eq!(data.input_names, ["t", "a", "b"]);
    assert_eq!(data.target_names, ["y1", "y2"]);
    data.center(Centering::None);
    let noise = vec![0.01, 0.0025];
    let mut model = RunningMean::new(3, 2);
    let mut progress = Vec::new();
    let report = run_stream(
        "double",
        &mut model,
        &data,
        &RunOptions::new(noise.clone()),
        &mut |k| progress.push(k),
    )
    .unwrap();

    // Protocol: update 0, then predict/update pairs; noise passed through.
    assert_eq!(model.calls[0], ('u', 0));
    assert_eq!(model.calls[1], ('p', 1));
    assert_eq!(model.calls[2], ('u', 1));
    assert_eq!(model.calls.len(), 2 * n - 1);
    assert_eq!(model.noise_seen, noise);
    assert_eq!(progress.last(), Some(&n));

    // Metrics against a naive recomputation with the double's predictions.
    for (t, &nv) in noise.iter().enumerate() {
        let y: Vec<f64> = (0..n).map(|i| data.y_row(i)[t]).collect();
        let mu: Vec<f64> = (0..n)
            .map(|i| {
                if i == 0 {
                    0.0
                } else {
                    y[..i].iter().sum::<f64>() / i as f64
                }
            })
            .collect();
        let var: Vec<f64> = (0..n).map(|i| 1.0 / (1.0 + i as f64)).collect();
        let (sf, sm, mf, mm) = naive(&y, &mu, &var, nv);
        let m = report.metrics[t];
        assert!(
            close(m.smse_final, sf) && close(m.smse_curve_mean, sm),
            "target {t} smse"
        );
        assert!(
            close(m.msll_final, mf) && close(m.msll_curve_mean, mm),
            "target {t} msll"
        );
        // Truth RMSE over the predicted steps.
        let f: Vec<f64> = (0..n).map(|i| data.truth_row(i).unwrap()[t]).collect();
        let rmse = ((1..n).map(|i| (f[i] - mu[i]).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
        assert!(close(report.truth.as_ref().unwrap().rmse[t], rmse));
    }
    let truth = report.truth.as_ref().unwrap();
    assert_eq!(truth.n_tested, n - n / 2);
    assert!(truth.coverage.iter().all(|c| (0.0..=1.0).contains(c)));
    assert_eq!(report.predict.count, n - 1);
    assert_eq!(report.update.count, n);

    let j = report.to_json();
    assert_report_keys(&j);
    assert_eq!(j["plugin"], "double");
    assert_eq!(j["n_samples"], n);
    assert_eq!(j["targets"], json!(["y1", "y2"]));
    assert_eq!(j["smse_final"].as_array().unwrap().len(), 2);
    assert_eq!(j["experts"], 1);
    assert!(report.to_table().contains("y2"));
    std::fs::remove_file(path).unwrap();
}

#[test]
fn coverage_with_a_perfect_bound() {
    // Truth = target and the double's σ large: every second-half error is within β_cal·σ
    // when calibrating on a ratio set whose 95 % quantile bounds the rest.
    let mut s = String::from("x,y,f\n");
    for i in 0..200 {
        s += &format!("{i},1.0,1.0\n");
    }
    s.replace_range(s.len() - 8.., "2.0,2.0\n");
    let data = Dataset::from_reader(
        s.as_bytes(),
        "mem",
        &ColumnSelection {
            truth: Some("f".into()),
            targets: Some("y".into()),
            ..Default::default()
        },
    )
    .unwrap();
    let mut model = RunningMean::new(1, 1);
    let r = run_stream(
        "double",
        &mut model,
        &data,
        &RunOptions::new(vec![0.01]),
        &mut |_| {},
    )
    .unwrap();
    let t = r.truth.unwrap();
    // Errors are 0 in the first half → β_cal = 0; second half: 99 of 100 errors are 0, the
    // last one is not.
    assert_eq!(t.beta_cal[0], 0.0);
    assert!((t.coverage[0] - 0.99).abs() < 1e-12, "{}", t.coverage[0]);
}

#[test]
fn columns_grammar() {
    let h: Vec<String> = ["x1", "x2", "x3", "y", "7"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(
        columns::resolve("x1..x3", &h, "--inputs").unwrap(),
        [0, 1, 2]
    );
    assert_eq!(
        columns::resolve("0..2, y", &h, "--inputs").unwrap(),
        [0, 1, 2, 3]
    );
    assert_eq!(columns::resolve("x2,0", &h, "--inputs").unwrap(), [1, 0]);
    // A header name wins over an index.
    assert_eq!(columns::resolve("7", &h, "--inputs").unwrap(), [4]);
    let e = columns::resolve("x9", &h, "--inputs")
        .unwrap_err()
        .to_string();
    assert!(e.contains("x9") && e.contains("x1, x2, x3, y, 7"), "{e}");
    assert!(columns::resolve("x3..x1", &h, "--inputs").is_err());
    assert!(columns::resolve("x1,x1", &h, "--inputs").is_err());
    assert!(columns::resolve("x1,,y", &h, "--inputs").is_err());
    assert!(columns::resolve("9", &h, "--inputs").is_err());
}

#[test]
fn dataset_defaults_centring_and_errors() {
    let text = "a,b,y\n1,10,2\n3,20,4\n";
    let mut d = Dataset::from_reader(text.as_bytes(), "mem", &ColumnSelection::default()).unwrap();
    assert_eq!(d.input_names, ["a", "b"]);
    assert_eq!(d.target_names, ["y"]);
    d.center(Centering::WholeFile);
    assert_eq!(d.x, [-1.0, -5.0, 1.0, 5.0]);
    assert_eq!(d.y, [-1.0, 1.0]);
    assert_eq!(d.target_offsets, [3.0]);

    let err = |text: &str, sel: ColumnSelection| {
        Dataset::from_reader(text.as_bytes(), "f.csv", &sel).unwrap_err()
    };
    assert!(matches!(
        err("", ColumnSelection::default()),
        EvalError::EmptyFile { .. }
    ));
    assert!(matches!(
        err("a,y\n", ColumnSelection::default()),
        EvalError::NoRows { .. }
    ));
    let e = err("a,y\n1,2\n3,oops\n", ColumnSelection::default());
    let msg = e.to_string();
    assert!(
        msg.contains("line 3")
            && msg.contains("\"y\"")
            && msg.contains("oops")
            && msg.ends_with("f.csv"),
        "{msg}"
    );
    let msg = err(
        "a,y\n1,2\n",
        ColumnSelection {
            targets: Some("z".into()),
            ..Default::default()
        },
    )
    .to_string();
    assert!(msg.contains("\"z\"") && msg.contains("a, y"), "{msg}");
    let msg = err(
        "a,y\n1,2\n",
        ColumnSelection {
            inputs: Some("a,y".into()),
            ..Default::default()
        },
    )
    .to_string();
    assert!(msg.contains("both"), "{msg}");
    let msg = err(
        "a,y,f\n1,2,3\n",
        ColumnSelection {
            truth: Some("a,f".into()),
            targets: Some("y".into()),
            inputs: Some("a".into()),
            predict_inputs: None,
        },
    )
    .to_string();
    assert!(
        msg.contains("one truth column per target") || msg.contains("both"),
        "{msg}"
    );
    assert!(matches!(
        err("a,y\n1,2\n3\n", ColumnSelection::default()),
        EvalError::Csv { .. }
    ));
    let missing = Dataset::from_path(
        "/nonexistent/gpn/data.csv".as_ref(),
        &ColumnSelection::default(),
    )
    .unwrap_err();
    assert!(
        matches!(missing, EvalError::Io { .. })
            && missing.to_string().ends_with("/nonexistent/gpn/data.csv")
    );
}

#[test]
fn config_assembly() {
    let hyper_path = temp_file(
        "hyper.json",
        r#"{"datasets": {"a": {"sigma_f": 2.0, "sigma_n": 0.5, "lengthscales": [1.0], "x_dim": 1},
                         "b": {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [3.0]}}}"#,
    );
    let mut cfg = json!({"variant": "fast", "hyper": {"kernel": "se", "sigma_n": 9.0}});
    config::merge_hyper(
        &mut cfg,
        config::load_hyper_file(&hyper_path, Some("a")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        cfg["hyper"],
        json!({"kernel": "se", "sigma_f": 2.0, "sigma_n": 0.5, "lengthscales": [1.0]})
    );
    assert_eq!(config::noise_vars(&cfg, 2).unwrap(), [0.25, 0.25]);
    let e = config::load_hyper_file(&hyper_path, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("--hyper-key") && e.contains("a, b"), "{e}");
    assert!(
        config::load_hyper_file(&hyper_path, Some("c"))
            .unwrap_err()
            .to_string()
            .contains("available: a, b")
    );

    config::apply_set(&mut cfg, "variant=dense").unwrap();
    config::apply_set(&mut cfg, "n_cal=2").unwrap();
    config::apply_set(&mut cfg, "hyper.sigma_n=0.2").unwrap();
    config::apply_set(&mut cfg, "nested.deep.flag=true").unwrap();
    assert_eq!(cfg["variant"], "dense");
    assert_eq!(cfg["n_cal"], 2);
    assert_eq!(cfg["nested"]["deep"]["flag"], true);
    assert!((config::noise_vars(&cfg, 1).unwrap()[0] - 0.04).abs() < 1e-15);
    assert!(config::apply_set(&mut cfg, "novalue").is_err());
    assert!(config::apply_set(&mut cfg, "variant.x=1").is_err());

    let per = json!({"hyper": [{"sigma_n": 0.1}, {"sigma_n": 0.2}]});
    assert_eq!(config::noise_vars(&per, 2).unwrap().len(), 2);
    assert!(config::noise_vars(&per, 3).is_err());
    assert!(config::noise_vars(&json!({}), 1).is_err());

    let e = plugins::create_model("nope", &cfg, 1, 1)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("nope") && e.contains("skygp"), "{e}");
    std::fs::remove_file(hyper_path).unwrap();
}

#[test]
fn fitted_hyper_feeds_skygp() {
    let n = 300;
    let mut s = String::from("x1,x2,y\n");
    for i in 0..n {
        let (a, b) = ((i as f64 * 0.37).sin() * 2.0, (i as f64 * 0.11).cos() * 2.0);
        s += &format!(
            "{a},{b},{}\n",
            (a * 1.3).sin() * b + 0.05 * (i as f64 * 7.1).sin()
        );
    }
    let mut data = Dataset::from_reader(s.as_bytes(), "mem", &ColumnSelection::default()).unwrap();
    data.center(Centering::WholeFile);
    let (hyper, fit) = config::fit_hyper(
        &data,
        gpn_gp_core::kernel::KernelKind::SquaredExponential,
        200,
        config::FitMode::SharedLengthscales,
        None,
    )
    .unwrap();
    assert!(fit.nlml < fit.nlml_init);
    assert_eq!(fit.n_used, 200);
    let mut cfg = json!({"variant": "fast"});
    config::merge_hyper(&mut cfg, hyper).unwrap();
    let noise = config::noise_vars(&cfg, 1).unwrap();
    let mut model = plugins::create_model("skygp", &cfg, 2, 1).unwrap();
    let r = run_stream(
        "skygp",
        model.as_mut(),
        &data,
        &RunOptions::new(noise),
        &mut |_| {},
    )
    .unwrap();
    assert!(r.metrics[0].smse_final < 0.5, "{:?}", r.metrics[0]);
}

/// A `nan` cell marks a missing value (e.g. a recorded tick without a learning sample): the
/// row is left out and counted; an infinite value is still an error.
#[test]
fn rows_with_missing_values_are_left_out() {
    let csv = "a,b,y\n1,2,3\nnan,2,3\n4,5,nan\n6,7,8\n";
    let data = Dataset::from_reader(csv.as_bytes(), "test", &ColumnSelection::default()).unwrap();
    assert_eq!((data.len(), data.skipped_rows), (2, 2));
    assert_eq!(data.x, vec![1.0, 2.0, 6.0, 7.0]);
    assert_eq!(data.y, vec![3.0, 8.0]);
    let bad = "a,y\ninf,1\n";
    assert!(Dataset::from_reader(bad.as_bytes(), "test", &ColumnSelection::default()).is_err());
}

#[test]
fn predict_inputs_are_where_the_model_is_asked_and_the_inputs_what_it_learns() {
    // The third row's prediction input is missing: the row is left out.
    let text =
        "a,b,pa,pb,y\n1,10,100,1000,0.5\n2,20,200,2000,0.6\n3,30,nan,3000,0.7\n4,40,400,4000,0.8\n";
    let sel = ColumnSelection {
        inputs: Some("a,b".into()),
        targets: Some("y".into()),
        predict_inputs: Some("pa,pb".into()),
        ..Default::default()
    };
    let data = Dataset::from_reader(text.as_bytes(), "mem", &sel).unwrap();
    assert_eq!((data.len(), data.skipped_rows), (3, 1));
    assert_eq!(data.input_names, ["a", "b"]);
    let mut model = CallLog::default();
    run_stream(
        "log",
        &mut model,
        &data,
        &RunOptions::new(vec![0.01]),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(
        model.predicted_at,
        [[200.0, 2000.0], [400.0, 4000.0]],
        "step 0 is not predicted"
    );
    let learned_at: Vec<&[f64]> = model.updated_with.iter().map(|(x, _)| &x[..]).collect();
    assert_eq!(learned_at, [[1.0, 10.0], [2.0, 20.0], [4.0, 40.0]]);

    // One prediction column per input, none shared with a target.
    let err = |predict: &str| {
        let sel = ColumnSelection {
            predict_inputs: Some(predict.into()),
            ..sel.clone()
        };
        Dataset::from_reader(text.as_bytes(), "mem", &sel)
            .unwrap_err()
            .to_string()
    };
    assert!(
        err("pa").contains("1 columns but there are 2 inputs"),
        "{}",
        err("pa")
    );
    assert!(err("pa,y").contains("both"), "{}", err("pa,y"));
    assert!(err("pa,zz").contains("\"zz\""), "{}", err("pa,zz"));
}
