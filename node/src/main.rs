//! `gp-node`: the command-line front end of gp-learning-node (`gp_node::cli`).

fn main() -> std::process::ExitCode {
    gp_node::cli::main("gp-node")
}
