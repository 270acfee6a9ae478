//! Each own type's field table equals its `.msg`/`.srv` definition in `msg/` and `srv/`
//! (parsed here, independently of the tables), and every type's names are consistent.

use std::path::Path;

use gpn_msgs::gp_learning_node_msgs::*;
use gpn_msgs::{Field, RosMessage, RosService};

/// `(name, type)` of each field line of a .msg text (comments, blank lines and constants
/// skipped).
fn parse_fields(text: &str) -> Vec<(String, String)> {
    text.lines()
        .map(|line| line.split('#').next().unwrap_or("").trim())
        .filter(|line| !line.is_empty() && !line.contains('='))
        .map(|line| {
            let mut parts = line.split_whitespace();
            let ty = parts.next().expect("type").to_owned();
            let name = parts.next().expect("name").to_owned();
            (name, ty)
        })
        .collect()
}

fn table(fields: &[Field]) -> Vec<(String, String)> {
    fields
        .iter()
        .map(|f| (f.name.to_owned(), f.ros_type.to_owned()))
        .collect()
}

fn package_file(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn own_messages_match_their_msg_files() {
    let text = package_file("msg/ResidualEstimate.msg");
    assert_eq!(table(ResidualEstimate::FIELDS), parse_fields(&text));
    let text = package_file("msg/ChangeEvent.msg");
    assert_eq!(table(ChangeEvent::FIELDS), parse_fields(&text));
}

fn check_service<S: RosService>(file: &str) {
    let text = package_file(file);
    let (request, response) = text.split_once("\n---\n").expect("a --- separator");
    assert_eq!(
        table(S::Request::FIELDS),
        parse_fields(request),
        "{file} request"
    );
    assert_eq!(
        table(S::Response::FIELDS),
        parse_fields(response),
        "{file} response"
    );
    assert_eq!(S::Request::TYPE_NAME, format!("{}_Request", S::TYPE_NAME));
    assert_eq!(S::Response::TYPE_NAME, format!("{}_Response", S::TYPE_NAME));
}

#[test]
fn services_match_their_srv_files() {
    check_service::<SwapModel>("srv/SwapModel.srv");
    check_service::<SaveModel>("srv/SaveModel.srv");
    check_service::<LoadModel>("srv/LoadModel.srv");
    check_service::<ResetLearning>("srv/ResetLearning.srv");
    check_service::<AnnounceChange>("srv/AnnounceChange.srv");
}

#[test]
fn every_msg_and_srv_file_is_in_the_cmake_list() {
    let cmake = package_file("CMakeLists.txt");
    for dir in ["msg", "srv"] {
        let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
        for entry in std::fs::read_dir(folder).expect("folder") {
            let name = entry.expect("entry").file_name();
            let rel = format!("\"{dir}/{}\"", name.to_string_lossy());
            assert!(cmake.contains(&rel), "{rel} is not in CMakeLists.txt");
        }
    }
}

#[test]
fn dds_names_follow_ros2_conventions() {
    assert_eq!(
        ResidualEstimate::dds_type_name(),
        "gp_learning_node_msgs::msg::dds_::ResidualEstimate_"
    );
    assert_eq!(ResidualEstimate::package(), "gp_learning_node_msgs");
    assert_eq!(ResidualEstimate::type_name(), "ResidualEstimate");
    assert_eq!(
        SwapModelRequest::dds_type_name(),
        "gp_learning_node_msgs::srv::dds_::SwapModel_Request_"
    );
}
