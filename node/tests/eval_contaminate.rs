//! `--contaminate` in the evaluation loop: `update` receives the contaminated inputs and
//! targets, `predict` the clean inputs, the metrics and the truth RMSE use the clean values,
//! and the JSON names the contamination.
#![allow(clippy::unwrap_used)] // Tests: a panic is the failure report.

mod eval_support;

use eval_support::CallLog;
use gp_node::eval::contaminate::Contamination;
use gp_node::eval::dataset::{Centering, ColumnSelection, Dataset};
use gp_node::eval::runner::{RunOptions, run_stream};

fn data() -> Dataset {
    let mut s = String::from("a,b,y,f\n");
    for i in 0..200 {
        let (a, b) = ((i as f64 * 0.37).sin(), (i as f64 * 0.11).cos());
        s += &format!("{a},{b},{},{}\n", a + b + 0.01 * (i as f64).sin(), a + b);
    }
    let sel = ColumnSelection {
        inputs: Some("a,b".into()),
        targets: Some("y".into()),
        truth: Some("f".into()),
        predict_inputs: None,
    };
    let mut d = Dataset::from_reader(s.as_bytes(), "mem", &sel).unwrap();
    d.center(Centering::WholeFile);
    d
}

#[test]
fn update_sees_the_contamination_predict_and_metrics_do_not() {
    for spec in ["asymmetric:0.1", "uniform:0.2", "focused:0.05"] {
        let clean = data();
        let mut dirty = data();
        let summary = Contamination::parse(spec, 11)
            .unwrap()
            .apply(&mut dirty, None)
            .unwrap();
        let opts = RunOptions::new(vec![0.01]);
        let (mut a, mut b) = (CallLog::default(), CallLog::default());
        let ra = run_stream("log", &mut a, &clean, &opts, &mut |_| {}).unwrap();
        let rb = run_stream("log", &mut b, &dirty, &opts, &mut |_| {}).unwrap();
        // Same prediction points and the same scores: the clean reference is used.
        assert_eq!(a.predicted_at, b.predicted_at, "{spec}");
        assert_eq!(ra.metrics, rb.metrics, "{spec}");
        assert_eq!(
            ra.truth.as_ref().unwrap().rmse,
            rb.truth.as_ref().unwrap().rmse,
            "{spec}"
        );
        // update got exactly the contaminated copy.
        let changed = a
            .updated_with
            .iter()
            .zip(&b.updated_with)
            .filter(|(u, v)| u != v)
            .count();
        assert_eq!(changed, summary.count, "{spec}");
        for (i, (x, y)) in b.updated_with.iter().enumerate() {
            assert_eq!(x.as_slice(), dirty.x_update_row(i));
            assert_eq!(y.as_slice(), dirty.y_update_row(i));
        }
        let json = rb.to_json();
        assert_eq!(json["contamination"]["count"], summary.count);
        assert!(ra.to_json().get("contamination").is_none());
    }
}

#[test]
fn centring_after_contamination_moves_the_streamed_copy_with_the_clean_means() {
    let sel = ColumnSelection {
        inputs: Some("a,b".into()),
        targets: Some("y".into()),
        truth: None,
        predict_inputs: None,
    };
    let text = "a,b,y\n1,2,3\n2,3,5\n3,4,8\n4,5,9\n";
    let mut d = Dataset::from_reader(text.as_bytes(), "mem", &sel).unwrap();
    Contamination::parse("asymmetric:0.5", 1)
        .unwrap()
        .apply(&mut d, None)
        .unwrap();
    let before: Vec<f64> = (0..4)
        .map(|i| d.y_update_row(i)[0] - d.y_row(i)[0])
        .collect();
    d.center(Centering::WholeFile);
    let after: Vec<f64> = (0..4)
        .map(|i| d.y_update_row(i)[0] - d.y_row(i)[0])
        .collect();
    for (u, v) in before.iter().zip(&after) {
        assert!((u - v).abs() < 1e-12, "the shifts survive centring");
    }
    assert!(
        d.y.iter().sum::<f64>().abs() < 1e-12,
        "clean targets are centred with clean means"
    );
}

#[test]
fn dropped_samples_never_reach_update_and_duplicated_ones_arrive_twice_in_a_row() {
    for (spec, times) in [("drop:0.15", 0usize), ("duplicate:0.15", 2)] {
        let clean = data();
        let mut dirty = data();
        let summary = Contamination::parse(spec, 4)
            .unwrap()
            .apply(&mut dirty, None)
            .unwrap();
        assert_eq!(summary.count, 30, "{spec}");
        let opts = RunOptions::new(vec![0.01]);
        let (mut a, mut b) = (CallLog::default(), CallLog::default());
        let ra = run_stream("log", &mut a, &clean, &opts, &mut |_| {}).unwrap();
        let rb = run_stream("log", &mut b, &dirty, &opts, &mut |_| {}).unwrap();
        assert_eq!(
            a.predicted_at, b.predicted_at,
            "every sample is still predicted"
        );
        assert_eq!(ra.metrics, rb.metrics, "{spec}: scored on the clean stream");
        // The updates are the clean ones, each repeated as the contamination says.
        let expected: Vec<_> = (0..clean.len())
            .flat_map(|i| std::iter::repeat_n(i, dirty.update_count(i)))
            .map(|i| (clean.x_row(i).to_vec(), clean.y_row(i).to_vec()))
            .collect();
        assert_eq!(b.updated_with, expected, "{spec}");
        assert_eq!(b.updated_with.len(), 200 - 30 + 30 * times, "{spec}");
        assert_eq!(
            rb.to_json()["contamination"]["kind"],
            spec.split(':').next().unwrap()
        );
    }
}
