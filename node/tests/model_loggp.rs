//! LoG-GP as a plugin (`libgpn_loggp.so`, found by the name `loggp` and loaded through the
//! host) against LoG-GP linked in-process (`gpn_loggp` as a crate): the same predictions
//! bit for bit through growth, splits and oldest-point replacements, the same saved state,
//! `describe` through the ABI, and `gp-node eval --plugin loggp` from the command line.

mod model_support;

use gp_node::plugin_host::{Plugin, SearchPath};
use gpn_gp_core::model::OnlineModel;
use gpn_loggp::LogGp;
use model_support::{eval_json_command, lockstep};
use serde_json::json;

fn config(leaf_capacity: usize) -> serde_json::Value {
    json!({
        "hyper": [
            {"sigma_f": 1.0, "sigma_n": 0.1, "lengthscales": [0.6, 0.8]},
            {"sigma_f": 0.7, "sigma_n": 0.2, "lengthscales": [0.9, 0.5]}
        ],
        "leaf_capacity": leaf_capacity, "max_leaves": 8, "seed": 3,
    })
}

fn sample(k: usize) -> ([f64; 2], [f64; 2]) {
    let t = k as f64 * 0.05;
    let x = [(1.3 * t).sin() * 2.0, (0.7 * t).cos() * 1.5];
    (x, [x[0].sin() * x[1], (x[0] - x[1]).cos()])
}

const NOISE: [f64; 2] = [0.01, 0.04];

#[test]
fn the_plugin_predicts_exactly_what_the_crate_does_and_saves_the_same_state() {
    let plugin =
        Plugin::find("loggp", &SearchPath::standard(Vec::<&str>::new())).expect("loggp plugin");
    assert_eq!(plugin.info().name, "loggp");
    let cfg = config(12);
    let mut through_abi = plugin.create_json(&cfg, 2, 2).expect("create");
    let mut in_process = LogGp::from_json(&cfg, 2, 2).expect("create");
    // lockstep stamps samples 10 ms apart: every one is admitted.
    lockstep(&mut through_abi, &mut in_process, 0..400, sample, &NOISE);
    let c = in_process.counters();
    assert!(c.splits == 7 && c.replaced > 0, "grew and replaced: {c:?}");
    assert_eq!(through_abi.stats(), in_process.stats());
    let described = through_abi
        .describe()
        .expect("describe")
        .expect("loggp describes");
    assert_eq!(described["leaves"], 8);
    assert_eq!(described["replaced"], c.replaced);
    let state = through_abi.save_state().expect("save");
    assert_eq!(state, in_process.state_bytes().expect("crate save"));
    let mut b = plugin.create_json(&cfg, 2, 2).expect("create");
    b.load_state(&state).expect("load");
    lockstep(&mut b, &mut in_process, 400..500, sample, &NOISE);
    let mut other = plugin.create_json(&config(13), 2, 2).expect("create");
    let err = other.load_state(&state).expect_err("other config");
    assert!(err.to_string().contains("different configuration"), "{err}");
}

#[test]
fn gp_node_eval_runs_loggp_and_beats_the_prior() {
    let dir = model_support::scratch_dir("eval_loggp");
    let data = dir.join("stream.csv");
    let mut csv = String::from("x1,x2,y\n");
    for k in 0..1500 {
        let (x, y) = sample(k * 7);
        csv += &format!(
            "{},{},{}\n",
            x[0],
            x[1],
            y[0] + 0.03 * (k as f64 * 3.7).sin()
        );
    }
    std::fs::write(&data, csv).expect("write csv");
    let mut eval = eval_json_command("loggp", &data);
    eval.args(["--inputs", "x1,x2", "--targets", "y"]).args([
        "--set",
        r#"hyper={"sigma_f": 1.0, "sigma_n": 0.05, "lengthscales": [0.7, 0.9]}"#,
        "--set",
        "leaf_capacity=50",
    ]);
    let report = gpn_test_support::json_stdout(&mut eval, "gp-node eval --plugin loggp");
    let smse = report["smse_curve_mean"][0].as_f64().expect("smse");
    // Prequential SMSE (mean over the curve) of a smooth function: far below the prior's 1.
    assert!(smse < 0.05, "SMSE {smse}: {report}");
    assert!(
        report["experts"].as_u64().expect("experts") > 10,
        "{report}"
    );
}
