//! Operations issue: the parameter schema is declared once and agrees with the parameter
//! YAML (every declared name is a key of `config/sim_default.yaml` and has a value in the
//! parameter structs) and with the README's table (printed by `gp-node run --list-params`);
//! validation refuses wrong types, ranges and lengths with the reason; a set round-trips
//! through the parameter structs.

use gp_node::app::param_schema::{self, Apply, ParamValue, SCHEMA};
use gp_node::app::{DEFAULT_PARAMS_YAML, NodeParams};

fn yaml_has(path: &str) -> bool {
    let root: serde_json::Value =
        serde_norway::from_str(DEFAULT_PARAMS_YAML).expect("the default parameters are YAML");
    let mut node = &root["gp_learning_node"]["ros__parameters"];
    for key in path.split('.') {
        match node.get(key) {
            Some(next) => node = next,
            None => return false,
        }
    }
    true
}

#[test]
fn every_declared_parameter_is_in_the_yaml_and_has_a_value() {
    let params = NodeParams::from_yaml(DEFAULT_PARAMS_YAML).expect("parameters");
    for spec in SCHEMA {
        assert!(
            yaml_has(spec.name),
            "{} is not a key of config/sim_default.yaml",
            spec.name
        );
        let value = param_schema::value_of(&params, spec)
            .unwrap_or_else(|| panic!("{} has no value of its declared type", spec.name));
        param_schema::validate(spec, &value, 7)
            .unwrap_or_else(|e| panic!("the default of {} is invalid: {e}", spec.name));
        let back = param_schema::with_value(&params, spec, &value).expect("set the default");
        assert_eq!(
            back, params,
            "setting {} to its default changes nothing",
            spec.name
        );
    }
    let mut names: Vec<_> = SCHEMA.iter().map(|s| s.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), SCHEMA.len(), "each parameter is declared once");
}

#[test]
fn the_readme_table_is_the_schema() {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README.md");
    assert!(
        readme.contains(&param_schema::markdown_table()),
        "README.md's parameter table differs from the schema: paste the output of \
         `gp-node run --list-params`"
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gp-node"))
        .args(["run", "--list-params"])
        .output()
        .expect("gp-node run --list-params");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        param_schema::markdown_table()
    );
}

#[test]
fn invalid_values_are_refused_with_the_reason() {
    let find = |n| param_schema::find(n).expect("declared");
    let kp = find("control.kp_per_s2");
    assert!(param_schema::validate(kp, &ParamValue::DoubleArray(vec![50.0]), 7).is_ok());
    assert!(param_schema::validate(kp, &ParamValue::DoubleArray(vec![50.0; 7]), 7).is_ok());
    let err = param_schema::validate(kp, &ParamValue::DoubleArray(vec![50.0; 3]), 7).unwrap_err();
    assert!(err.contains("one value or 7"), "{err}");
    let err = param_schema::validate(kp, &ParamValue::DoubleArray(vec![-1.0]), 7).unwrap_err();
    assert!(err.contains("> 0"), "{err}");
    let err = param_schema::validate(kp, &ParamValue::String("fast".into()), 7).unwrap_err();
    assert!(err.contains("double[]"), "{err}");
    let frac = find("control.effort_limit_fraction");
    assert!(param_schema::validate(frac, &ParamValue::Double(1.0), 7).is_ok());
    assert!(param_schema::validate(frac, &ParamValue::Double(1.5), 7).is_err());
    assert!(param_schema::validate(frac, &ParamValue::Double(f64::NAN), 7).is_err());
    let config = find("model.config");
    assert!(
        param_schema::validate(
            config,
            &ParamValue::String(r#"{"variant":"fast"}"#.into()),
            7
        )
        .is_ok()
    );
    assert!(param_schema::validate(config, &ParamValue::String("[1, 2]".into()), 7).is_err());
    assert!(param_schema::validate(config, &ParamValue::String("{variant".into()), 7).is_err());
    let action = find("ros.watchdog_action");
    assert!(param_schema::validate(action, &ParamValue::String("explode".into()), 7).is_err());
    assert_eq!(find("ros.topics.joint_states").apply, Apply::ReadOnly);
}

#[test]
fn a_set_changes_exactly_its_field() {
    let params = NodeParams::from_yaml(DEFAULT_PARAMS_YAML).expect("parameters");
    let kd = param_schema::find("control.kd_per_s").expect("declared");
    let changed =
        param_schema::with_value(&params, kd, &ParamValue::DoubleArray(vec![1.0; 7])).expect("set");
    assert_eq!(
        changed.control.kd_per_s,
        gp_node::embedded_sim::JointValues::Each(vec![1.0; 7])
    );
    let mut expected = params.clone();
    expected.control.kd_per_s = changed.control.kd_per_s.clone();
    assert_eq!(changed, expected);
    let config = param_schema::find("model.config").expect("declared");
    let changed = param_schema::with_value(
        &params,
        config,
        &ParamValue::String(r#"{"variant":"fast"}"#.into()),
    )
    .expect("set");
    assert_eq!(changed.model.config, serde_json::json!({"variant": "fast"}));
}
