//! The robot from the `robot_description` topic (std_msgs/String, reliable, transient local:
//! robot_state_publisher's offer) when no URDF file is given. Read once at start-up, before
//! the loop is built; a later description takes a restart (the loop's sizes come from it).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use futures::{FutureExt as _, StreamExt as _};
use gpn_app::{NodeParams, load_robot_description};
use gpn_dynamics::Model;

use super::node_log::NodeLog;
use super::transport::{RosError, Transport};

/// The topic, relative: it resolves in the node's namespace and can be remapped
/// (`-r robot_description:=/other`).
pub(crate) const TOPIC: &str = "robot_description";

/// How often a still-waiting node says so again.
const REMIND_EVERY: Duration = Duration::from_secs(10);

/// Waits for the robot description and loads it; returns the robot and its URDF. A description that does not load (not a
/// URDF, a joint without effort limit, …) is logged and the node keeps waiting for the next
/// one. Gives up (`Ok(None)`) when `stop` is raised or at `deadline`.
pub(crate) fn wait_for_robot(
    transport: &mut Transport,
    params: &NodeParams,
    log: &NodeLog,
    stop: &AtomicBool,
    deadline: Option<Instant>,
) -> Result<Option<(Model, String)>, RosError> {
    let topic = resolved_name(&params.ros.namespace);
    let mut descriptions = transport.robot_descriptions(TOPIC)?;
    let waiting = format!(
        "waiting for the robot description on {topic} (std_msgs/String, reliable, transient \
         local, as robot_state_publisher offers it; robot.urdf names a file instead)"
    );
    log.info(&waiting);
    let start = Instant::now();
    let mut reminded = start;
    while !stop.load(Ordering::SeqCst) && deadline.is_none_or(|d| Instant::now() < d) {
        transport.node_mut().spin_once(Duration::from_millis(50));
        while let Some(Some(urdf)) = descriptions.next().now_or_never() {
            match load_robot_description(params, &urdf, &format!("the {topic} topic")) {
                Ok(robot) => {
                    log.info(&format!(
                        "robot description received on {topic} after {:.1} s: {} ({} joints)",
                        start.elapsed().as_secs_f64(),
                        robot.name(),
                        robot.nv()
                    ));
                    return Ok(Some((robot, urdf)));
                }
                Err(e) => log.error(&format!(
                    "refused the robot description on {topic}: {e}; waiting for another"
                )),
            }
        }
        if reminded.elapsed() >= REMIND_EVERY {
            reminded = Instant::now();
            log.warn(&format!(
                "still {waiting} ({:.0} s)",
                start.elapsed().as_secs_f64()
            ));
        }
    }
    Ok(None)
}

/// The topic's name in the node's namespace (what rcl resolves it to without a remap).
fn resolved_name(namespace: &str) -> String {
    let ns = namespace.trim_end_matches('/');
    if ns.is_empty() {
        format!("/{TOPIC}")
    } else if ns.starts_with('/') {
        format!("{ns}/{TOPIC}")
    } else {
        format!("/{ns}/{TOPIC}")
    }
}

#[cfg(test)]
mod tests {
    use super::resolved_name;

    #[test]
    fn the_topic_resolves_in_the_namespace() {
        assert_eq!(resolved_name(""), "/robot_description");
        assert_eq!(resolved_name("/"), "/robot_description");
        assert_eq!(resolved_name("/robot1"), "/robot1/robot_description");
        assert_eq!(resolved_name("robot1/"), "/robot1/robot_description");
    }
}
