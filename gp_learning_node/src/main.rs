//! `gp_learning_node`: the executable of the ROS 2 package (`ros2 run gp_learning_node
//! gp_learning_node run …`), the `gp-node` command line built with the ROS 2 node.

fn main() -> std::process::ExitCode {
    gp_node::cli::main("gp_learning_node")
}
