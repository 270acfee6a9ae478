//! The one control loop is real-time code: driven over the ROS node's plant (state frames
//! from a feeding thread, commands and outputs to a publishing thread, as in `gp-node run`),
//! once warm it allocates nothing on the control thread — reading, the reference, the tick
//! with SkyGP-Dense learning, the command decision, writing, the listeners. Counted with a
//! global allocator on the control thread only.

use std::sync::atomic::AtomicBool;
use std::thread;

use gp_node::control::{Tick, TickResult};
use gp_node::control_loop::{
    Clock, CommandDecision, ControlLoop, LoopOutput, NoOperations, OutKind, OutputListener,
    SimulatedClock, TorqueOrigin, Watchdog, WatchdogAction,
};
use gp_node::ros::TopicReference;
use gp_node::ros::plant::{Outgoing, channels};

mod alloc_support;

#[global_allocator]
static GLOBAL: alloc_support::Counting = alloc_support::Counting;

const HOME: [f64; 7] = [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785];

/// Arms the counter at tick `warm`; counts the counted ticks that learned.
struct ArmAt {
    warm: u64,
    learned: u64,
    counted: u64,
}

impl OutputListener for ArmAt {
    fn on_output(&mut self, out: &LoopOutput) {
        if out.kind != OutKind::Tick {
            return;
        }
        if out.tick == self.warm {
            alloc_support::reset();
            alloc_support::arm(true);
        }
        if out.tick >= self.warm {
            self.counted += 1;
            if out.status.is_some_and(|s| s.result == TickResult::Learned) {
                self.learned += 1;
            }
        }
    }
}

#[test]
fn the_loop_over_the_ros_plant_allocates_nothing_once_warm() {
    let (warm, counted) = (3000u64, 2000u64);
    // The states are a script, not the robot's answer to the commands: the learned law would
    // look worse than the nominal one and fall back (`command_decision.rs` tests that); here
    // it must keep running, so the monitor's thresholds are out of reach.
    let (params, robot, learner) = alloc_support::fixed_hyper_setup(|p| {
        p.control.fallback.tracking_ratio = 1e3;
        p.control.fallback.saturation_ticks = u32::MAX;
        p.control.fallback.velocity_fraction = 10.0;
        p.control.fallback.mu_effort_fraction = 10.0;
    });
    let nv = robot.nv();
    // Simulated time: the loop waits for the model's fits, so it is active when counting.
    let mut clock = SimulatedClock;
    let tick = Tick::new(&robot, &params.control, clock.budget()).expect("tick");
    let decision = CommandDecision::new(&robot, &params.control)
        .expect("decision")
        .with_watchdog(
            Watchdog::new(
                std::time::Duration::from_secs(3600),
                std::time::Instant::now(),
            ),
            WatchdogAction::HoldGravity,
        );
    let mut control = ControlLoop::new(tick, learner, TopicReference::new(nv), decision, true);
    let (mut plant, mut queue, receive, publish) = channels(nv, 16, true);

    // The robot: a slow motion around HOME, one state per free frame, then it hangs up.
    let total = warm + counted;
    let feeder = thread::spawn(move || {
        for k in 0..total {
            // Now and then the robot is late, so the loop's read waits for a state, as on
            // a robot: waiting must not allocate either.
            if k > warm && k % 500 == 0 {
                thread::sleep(std::time::Duration::from_millis(5));
            }
            let Ok(mut frame) = receive.free_states.recv() else {
                return;
            };
            let t = k as f64 * 1e-3;
            frame.t_secs = t;
            frame.stamp_secs = t;
            frame.received = std::time::Instant::now();
            for (j, home) in HOME.iter().enumerate() {
                frame.q[j] = home + 0.2 * (t + j as f64).sin();
                frame.v[j] = 0.2 * (t + j as f64).cos();
            }
            frame.tau_origin = TorqueOrigin::OwnCommand;
            if receive.states.send(frame).is_err() {
                return;
            }
        }
    });
    let publisher = thread::spawn(move || {
        let mut commands = 0u64;
        while let Ok(message) = publish.outgoing.recv() {
            if let Outgoing::Command(frame) = &message {
                assert!(frame.u.iter().all(|u| u.is_finite()));
                commands += 1;
            }
            publish.recycle(message);
        }
        commands
    });

    let mut arm = ArmAt {
        warm,
        learned: 0,
        counted: 0,
    };
    let mut listeners: [&mut dyn OutputListener; 2] = [&mut queue, &mut arm];
    let result = control.run(
        &mut plant,
        &mut clock,
        &mut NoOperations,
        &mut listeners,
        &AtomicBool::new(false),
    );
    alloc_support::arm(false);
    let allocations = alloc_support::allocations();
    let Ok(()) = result;
    feeder.join().expect("feeder");
    drop((plant, queue));
    let commands = publisher.join().expect("publisher");

    assert_eq!(arm.counted, counted, "every state was ticked");
    assert!(
        arm.learned > counted * 9 / 10,
        "the model ran in the counted ticks ({})",
        arm.learned
    );
    assert!(commands >= 1 && commands <= total, "{commands} commands");
    assert_eq!(
        allocations, 0,
        "allocations on the control thread in {counted} warm iterations"
    );
}
