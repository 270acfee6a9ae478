//! The ROS plant's first wait for a state allocates nothing, however late it comes: std's
//! channels allocate at a thread's first wait and a channel's first waiter, which a robot
//! that streams before the node is up can put at any tick (a CI run of `loop_alloc` once
//! counted exactly those two allocations in its counted ticks).

use std::time::Duration;

use gpn_control::control_loop::{Plant, Read, StateFrame};
use gpn_ros_io::plant::channels;

#[global_allocator]
static GLOBAL: gpn_alloc_count::Counting = gpn_alloc_count::Counting;

#[test]
fn the_first_wait_for_a_state_allocates_nothing_when_states_were_queued_before() {
    let nv = 7;
    let (mut plant, _queue, receive, _publish) = channels(nv, 4, true);
    let mut frame = StateFrame::new(nv);
    // A state queued before the loop's first read: that read does not wait.
    let queued = receive.free_states.try_recv().expect("a free frame");
    receive.states.try_send(queued).expect("room for a state");
    assert!(matches!(
        plant.read(&mut frame, Duration::from_millis(5)),
        Ok(Read::State { more_queued: false })
    ));
    // The robot is late: this read waits, for the first time on this thread and channel.
    let mut read = None;
    let allocations = gpn_alloc_count::count_allocations(|| {
        read = Some(plant.read(&mut frame, Duration::from_millis(5)));
    });
    assert!(matches!(read, Some(Ok(Read::Silent))), "{read:?}");
    assert_eq!(allocations, 0, "allocations in the first wait for a state");
}
