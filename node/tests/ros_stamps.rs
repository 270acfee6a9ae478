//! Issue 16 over real DDS: a Cyclone DDS peer (`ros_stamp_peer.py`) drives `gp-node run` in
//! lock-step with the stamps that used to latch the ordering: a first unstamped state, a
//! far-future stamp (sec = 2³¹−1) among epoch stamps, and zero stamps among them. Every
//! valid state is answered, the far-future one is refused and counted, the watchdog never
//! trips and the stamp clock never has to re-synchronise.
#![cfg(feature = "ros")] // `gp-node run` joins the graph only when built with ROS 2

mod ros_support;

use ros_support::nominal_node_with_peer;

#[test]
fn odd_stamps_from_a_cyclone_peer_never_stop_the_loop() {
    let Some((r, summary)) = nominal_node_with_peer(
        "ros_stamps",
        7,
        &[("watchdog_timeout_s: 0.1", "watchdog_timeout_s: 1.0")],
        "ros_stamp_peer.py",
    ) else {
        return;
    };

    assert_eq!(r["first_unstamped_answered"], true);
    assert_eq!(
        r["epoch_answered"], r["epoch_sent"],
        "epoch stamps after an unstamped first state"
    );
    assert_eq!(
        r["far_future_answered"], false,
        "the far-future state was answered"
    );
    assert_eq!(
        r["after_far_future_answered"], r["after_far_future_sent"],
        "states after the far-future one"
    );
    assert_eq!(
        r["mixed_answered"], r["mixed_sent"],
        "zero stamps among epoch stamps"
    );

    for (counter, want) in [
        ("implausible_stamps", 1),
        ("out_of_order", 0),
        ("stamp_resyncs", 0),
        ("watchdog_trips", 0),
        ("ticks", 3001),
    ] {
        assert_eq!(summary[counter], want, "{counter}: {summary}");
    }
}
