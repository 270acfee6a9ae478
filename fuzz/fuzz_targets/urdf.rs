//! URDF text → the robot model, then its dynamics at rest: a URDF the loader accepts must
//! never make forward kinematics or inverse dynamics panic.
#![no_main]

use gpn_dynamics::{Data, Model, forward_kinematics, rnea};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(xml) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(model) = Model::from_urdf_str(xml, "fuzz.urdf") else {
        return;
    };
    let nv = model.nv();
    let mut state = Data::new(&model);
    let zeros = vec![0.0; nv];
    let _ = forward_kinematics(&model, &mut state, &zeros);
    let _ = rnea(&model, &mut state, &zeros, &zeros, &zeros);
});
