//! Message definitions as text (`ros2msg`, the form rosbag2 stores in an MCAP schema): the
//! type's fields, then each type it uses, once, after a line of 80 `=` and `MSG: pkg/Type`.
//! Built from the field tables, so a recording's schemas are the types it was written with.
//! Constants are not in the tables and so not in the text; a decoder does not need them.
//! `std_msgs/Empty` is left out: its table holds the member DDS adds, not its `.msg`.

use crate::{Field, RosMessage};

/// Every message type of this crate: its name and its fields (services' parts excluded).
fn registry() -> [(&'static str, &'static [Field]); 15] {
    use crate::{
        builtin_interfaces as b, diagnostic_msgs as d, gp_learning_node_msgs as g,
        sensor_msgs as s, std_msgs as m, trajectory_msgs as t,
    };
    fn entry<T: RosMessage>() -> (&'static str, &'static [Field]) {
        (T::TYPE_NAME, T::FIELDS)
    }
    [
        entry::<b::Time>(),
        entry::<b::Duration>(),
        entry::<d::KeyValue>(),
        entry::<d::DiagnosticStatus>(),
        entry::<d::DiagnosticArray>(),
        entry::<g::ResidualEstimate>(),
        entry::<g::ChangeEvent>(),
        entry::<s::JointState>(),
        entry::<m::Header>(),
        entry::<m::MultiArrayDimension>(),
        entry::<m::MultiArrayLayout>(),
        entry::<m::Float64MultiArray>(),
        entry::<m::StringMessage>(),
        entry::<t::JointTrajectoryPoint>(),
        entry::<t::JointTrajectory>(),
    ]
}

/// The fields of a message type of this crate, by its full name (`std_msgs/msg/Header`) or
/// its `.msg` name (`std_msgs/Header`).
pub fn fields_of(type_name: &str) -> Option<&'static [Field]> {
    let full = full_name(type_name);
    registry()
        .into_iter()
        .find(|(name, _)| *name == full)
        .map(|(_, fields)| fields)
}

/// `pkg/Type` → `pkg/msg/Type`; a full name is returned as it is.
pub fn full_name(type_name: &str) -> String {
    let parts: Vec<&str> = type_name.split('/').collect();
    match parts.as_slice() {
        [pkg, name] => format!("{pkg}/msg/{name}"),
        _ => type_name.to_string(),
    }
}

/// The nested type a field's ROS type names (`std_msgs/Header[]` → `std_msgs/Header`), or
/// None for a primitive.
fn nested(ros_type: &str) -> Option<&str> {
    let base = ros_type.split('[').next().unwrap_or(ros_type);
    base.contains('/').then_some(base)
}

/// The `ros2msg` definition of `T` with the definitions of every type it uses.
pub fn message_definition<T: RosMessage>() -> String {
    let mut text = String::new();
    write_fields(&mut text, T::FIELDS);
    let mut done: Vec<String> = vec![T::TYPE_NAME.to_string()];
    let mut queue: Vec<&'static str> = T::FIELDS
        .iter()
        .filter_map(|f| nested(f.ros_type))
        .collect();
    while !queue.is_empty() {
        let name = queue.remove(0);
        let full = full_name(name);
        if done.contains(&full) {
            continue;
        }
        done.push(full.clone());
        let fields = fields_of(&full).unwrap_or(&[]);
        text.push_str(&"=".repeat(80));
        text.push('\n');
        // rosbag2 names the dependency without `msg/` (`MSG: std_msgs/Header`).
        text.push_str(&format!("MSG: {}\n", full.replacen("/msg/", "/", 1)));
        write_fields(&mut text, fields);
        queue.extend(fields.iter().filter_map(|f| nested(f.ros_type)));
    }
    text
}

fn write_fields(text: &mut String, fields: &[Field]) {
    for f in fields {
        text.push_str(f.ros_type);
        text.push(' ');
        text.push_str(f.name);
        text.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sensor_msgs::JointState;

    #[test]
    fn every_nested_type_of_every_message_is_registered() {
        for (name, fields) in registry() {
            for f in fields {
                if let Some(n) = nested(f.ros_type) {
                    assert!(fields_of(n).is_some(), "{name}.{}: {n}", f.name);
                }
            }
        }
    }

    #[test]
    fn a_definition_lists_each_dependency_once_after_the_type() {
        let text = message_definition::<JointState>();
        assert!(
            text.starts_with("std_msgs/Header header\nstring[] name\n"),
            "{text}"
        );
        assert_eq!(text.matches("MSG: std_msgs/Header\n").count(), 1, "{text}");
        assert_eq!(
            text.matches("MSG: builtin_interfaces/Time\n").count(),
            1,
            "{text}"
        );
        assert!(text.ends_with("int32 sec\nuint32 nanosec\n"), "{text}");
    }
}
