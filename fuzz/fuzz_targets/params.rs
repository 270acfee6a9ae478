//! A parameter file (ROS 2 parameter YAML) → the node's parameters and their range check:
//! any text gets a value or an error, never a panic.
#![no_main]

use gpn_app::NodeParams;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(params) = NodeParams::from_yaml(text) {
        let _ = params.check_ranges();
        let _ = params.ros.check();
    }
});
