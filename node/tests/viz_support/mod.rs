//! Reading a rerun recording back for the tests: `viz_read_rrd.py` (the rerun SDK's own
//! reader) and the check of the layout every recording carries.
#![allow(dead_code)] // each test uses its part

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// The summary `viz_read_rrd.py` prints for `rrd`.
pub fn read_back(python: &Path, rrd: &Path) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/viz_read_rrd.py");
    gpn_test_support::json_stdout(
        Command::new(python).arg(&script).arg(rrd),
        "viz_read_rrd.py",
    )
}

/// The blueprint sent with the recording: one view per question, every joint, each view
/// showing entities the run logged (so no view is empty), the ±η_cal band in the residual
/// views, and the nominal run overlaid where it has the quantity. The layout is the same for
/// every recording; `with_nominal`: the recording also holds a nominal run (`gp-node sim`),
/// whose series must then exist.
pub fn check_layout(
    blueprints: &Value,
    joints: &[String],
    with_nominal: bool,
    logged: &dyn Fn(&str) -> bool,
) {
    let stores = blueprints.as_array().expect("blueprint stores");
    assert_eq!(stores.len(), 1, "one blueprint per recording: {blueprints}");
    let store = stores[0].as_object().expect("blueprint entities");
    let queries_of = |view: &str| -> Vec<String> {
        store
            .get(&format!("{view}/ViewContents"))
            .and_then(|c| c.get("ViewContents:query"))
            .map(|q| match q {
                Value::Array(items) => items
                    .iter()
                    .map(|i| i.as_str().expect("a query").to_owned())
                    .collect(),
                Value::String(one) => vec![one.clone()],
                _ => panic!("{view}: queries {q}"),
            })
            .unwrap_or_default()
    };
    // (class, origin, queries) of every view, by its blueprint path.
    let views: std::collections::BTreeMap<String, (String, String, Vec<String>)> = store
        .iter()
        .filter_map(|(path, c)| {
            let class = c.get("ViewBlueprint:class_identifier")?.as_str()?;
            let origin = c.get("ViewBlueprint:space_origin")?.as_str()?;
            Some((
                path.clone(),
                (class.to_owned(), origin.to_owned(), queries_of(path)),
            ))
        })
        .collect();
    let has_view = |class: &str, origin: &str, queries: &[String]| {
        views
            .values()
            .any(|(c, o, q)| c == class && o == origin && q.as_slice() == queries)
    };
    // The overview's views show their origin's subtree (rerun's default query).
    let subtree = || vec!["$origin/**".to_owned()];
    let mut expected: Vec<(&str, &str, Vec<String>)> = vec![
        ("3D", "/robot", subtree()),
        ("TimeSeries", "/dynamics/coverage", subtree()),
        ("TimeSeries", "/tick", subtree()),
        ("TimeSeries", "/model", subtree()),
        ("TextLog", "/dynamics/events", subtree()),
    ];
    let per_joint = |joint: &str| -> [Vec<String>; 3] {
        [
            vec![
                format!("/joints/{joint}/position/**"),
                format!("/nominal/joints/{joint}/position/q"),
            ],
            vec![format!("/joints/{joint}/residual/**")],
            vec![
                format!("/joints/{joint}/tracking_error"),
                format!("/nominal/joints/{joint}/tracking_error"),
            ],
        ]
    };
    for joint in joints {
        for queries in per_joint(joint) {
            expected.push(("TimeSeries", "/", queries));
        }
        // The views' series exist: q with q_d and the nominal q, the measured residual with
        // μ and both band edges, both runs' tracking errors.
        for rest in [
            "joints/J/position/q",
            "joints/J/position/q_d",
            "nominal/joints/J/position/q",
            "joints/J/residual/measured",
            "joints/J/residual/predicted",
            "joints/J/residual/upper",
            "joints/J/residual/lower",
            "joints/J/tracking_error",
            "nominal/joints/J/tracking_error",
        ] {
            if rest.starts_with("nominal/") && !with_nominal {
                continue;
            }
            let path = format!("/{}", rest.replace('J', joint));
            assert!(logged(&path), "{path} is in a view but was not logged");
        }
    }
    for (class, origin, queries) in &expected {
        assert!(
            has_view(class, origin, queries),
            "no {class} view of {origin} {queries:?}; views: {views:#?}"
        );
    }
    assert_eq!(views.len(), expected.len(), "views: {views:#?}");
    // Three per-joint tabs, each a grid (rerun's ContainerKind 4) whose views are exactly
    // one quantity's, one per joint.
    let mut grids: Vec<Vec<Vec<String>>> = store
        .values()
        .filter(|c| c["ContainerBlueprint:container_kind"] == 4)
        .map(|c| {
            let mut contents: Vec<Vec<String>> = c["ContainerBlueprint:contents"]
                .as_array()
                .expect("a grid's contents")
                .iter()
                .map(|v| views[v.as_str().expect("a view path")].2.clone())
                .collect();
            contents.sort();
            contents
        })
        .collect();
    grids.sort();
    let mut want: Vec<Vec<Vec<String>>> = (0..3)
        .map(|k| {
            let mut v: Vec<Vec<String>> = joints.iter().map(|j| per_joint(j)[k].clone()).collect();
            v.sort();
            v
        })
        .collect();
    want.sort();
    assert_eq!(grids, want, "per-joint grids");
}
