//! placeholder until the streaming model exists
fn main() {}
