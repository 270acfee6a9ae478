//! The ROS 2 managed-node state machine (`lifecycle_msgs`, rcl_lifecycle's default machine)
//! mapped onto the command decision: the node commands the robot in `active` only.
//!
//! | state | the node |
//! |---|---|
//! | `unconfigured` (start without `--autostart`) | reads states, learns, publishes diagnostics, commands nothing |
//! | `inactive` | the same (configure has nothing to load: the node is configured at start) |
//! | `active` (start with `--autostart`) | commands; activation holds the current pose, bumpless |
//! | `finalized` | commands nothing, for good (no transition leaves it) |
//!
//! Deactivation (and a shutdown from `active`) ends with the configured safe output
//! (`ros.watchdog_action`, rate-limited) and then commands nothing. The parameter
//! `ros.active` and the lifecycle are one switch: setting it true takes the node to `active`
//! (through `configure` from `unconfigured`), false to `inactive`; transitions set it.
//! Transitions never fail here: each goes start → transition state → goal, with the two
//! transition events rcl_lifecycle publishes. Plain Rust: the ROS side is `services`.

/// A primary state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Primary {
    /// Not commanding; not configured.
    Unconfigured,
    /// Not commanding.
    Inactive,
    /// Commanding.
    Active,
    /// Not commanding, for good.
    Finalized,
}

/// A state as `lifecycle_msgs/msg/State` carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateId {
    /// `lifecycle_msgs/msg/State` id.
    pub id: u8,
    /// Its label.
    pub label: &'static str,
}

impl Primary {
    /// Id and label.
    pub fn id(self) -> StateId {
        let (id, label) = match self {
            Primary::Unconfigured => (1, "unconfigured"),
            Primary::Inactive => (2, "inactive"),
            Primary::Active => (3, "active"),
            Primary::Finalized => (4, "finalized"),
        };
        StateId { id, label }
    }

    /// Every primary state.
    pub const ALL: [Primary; 4] = [
        Primary::Unconfigured,
        Primary::Inactive,
        Primary::Active,
        Primary::Finalized,
    ];
}

/// A transition as `lifecycle_msgs/msg/Transition` carries it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransitionId {
    /// `lifecycle_msgs/msg/Transition` id.
    pub id: u8,
    /// Its label.
    pub label: &'static str,
}

/// One transition of the default state machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transition {
    /// The transition requested.
    pub id: TransitionId,
    /// From.
    pub start: Primary,
    /// The transition state passed through.
    pub via: StateId,
    /// The transition from `via` to `goal` on success.
    pub success: TransitionId,
    /// To.
    pub goal: Primary,
}

const fn t(id: u8, label: &'static str) -> TransitionId {
    TransitionId { id, label }
}

const fn s(id: u8, label: &'static str) -> StateId {
    StateId { id, label }
}

const SUCCESS: &str = "transition_success";

/// The transitions of rcl_lifecycle's default state machine that a client can request.
pub const TRANSITIONS: [Transition; 7] = [
    Transition {
        id: t(1, "configure"),
        start: Primary::Unconfigured,
        via: s(10, "configuring"),
        success: t(10, SUCCESS),
        goal: Primary::Inactive,
    },
    Transition {
        id: t(2, "cleanup"),
        start: Primary::Inactive,
        via: s(11, "cleaningup"),
        success: t(20, SUCCESS),
        goal: Primary::Unconfigured,
    },
    Transition {
        id: t(3, "activate"),
        start: Primary::Inactive,
        via: s(13, "activating"),
        success: t(30, SUCCESS),
        goal: Primary::Active,
    },
    Transition {
        id: t(4, "deactivate"),
        start: Primary::Active,
        via: s(14, "deactivating"),
        success: t(40, SUCCESS),
        goal: Primary::Inactive,
    },
    Transition {
        id: t(5, "shutdown"),
        start: Primary::Unconfigured,
        via: s(12, "shuttingdown"),
        success: t(50, SUCCESS),
        goal: Primary::Finalized,
    },
    Transition {
        id: t(6, "shutdown"),
        start: Primary::Inactive,
        via: s(12, "shuttingdown"),
        success: t(50, SUCCESS),
        goal: Primary::Finalized,
    },
    Transition {
        id: t(7, "shutdown"),
        start: Primary::Active,
        via: s(12, "shuttingdown"),
        success: t(50, SUCCESS),
        goal: Primary::Finalized,
    },
];

/// The transition states, for `get_available_states`.
pub const TRANSITION_STATES: [StateId; 6] = [
    s(10, "configuring"),
    s(11, "cleaningup"),
    s(12, "shuttingdown"),
    s(13, "activating"),
    s(14, "deactivating"),
    s(15, "errorprocessing"),
];

/// The node's lifecycle state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lifecycle {
    state: Primary,
}

impl Lifecycle {
    /// At start: `active` (`ros.active`, `--autostart`) or `unconfigured`.
    pub fn new(active: bool) -> Self {
        Self {
            state: if active {
                Primary::Active
            } else {
                Primary::Unconfigured
            },
        }
    }

    /// The state.
    pub fn state(&self) -> Primary {
        self.state
    }

    /// The transitions that start from the current state.
    pub fn available(&self) -> impl Iterator<Item = &'static Transition> + '_ {
        TRANSITIONS.iter().filter(move |t| t.start == self.state)
    }

    /// The transition a `ChangeState` request names (by id; by label when the id is 0 and a
    /// label is given, as rclcpp does), if it starts from the current state.
    pub fn find(&self, id: u8, label: &str) -> Result<&'static Transition, String> {
        let by_label = id == 0 && !label.is_empty();
        self.available()
            .find(|t| {
                if by_label {
                    t.id.label == label
                } else {
                    t.id.id == id
                }
            })
            .ok_or_else(|| {
                let asked = if by_label {
                    format!("{label:?}")
                } else {
                    format!("id {id}")
                };
                let possible: Vec<String> = self
                    .available()
                    .map(|t| format!("{} ({})", t.id.label, t.id.id))
                    .collect();
                format!(
                    "transition {asked} does not start from state {}; possible: {}",
                    self.state.id().label,
                    if possible.is_empty() {
                        "none".into()
                    } else {
                        possible.join(", ")
                    }
                )
            })
    }

    /// Completes `transition` (found by [`Lifecycle::find`]).
    pub fn complete(&mut self, transition: &Transition) {
        self.state = transition.goal;
    }

    /// The transitions that bring the state in line with `ros.active` set to `active`
    /// (none if it already is, or from `finalized`), completed.
    pub fn follow_active(&mut self, active: bool) -> Vec<&'static Transition> {
        let mut taken = Vec::new();
        let mut take = |lc: &mut Self, label: &str| {
            if let Ok(t) = lc.find(0, label) {
                lc.complete(t);
                taken.push(t);
            }
        };
        match (active, self.state) {
            (true, Primary::Unconfigured) => {
                take(self, "configure");
                take(self, "activate");
            }
            (true, Primary::Inactive) => take(self, "activate"),
            (false, Primary::Active) => take(self, "deactivate"),
            _ => {}
        }
        taken
    }

    /// Whether the node commands the robot in this state.
    pub fn commands(&self) -> bool {
        self.state == Primary::Active
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requested_transitions_follow_the_default_state_machine() {
        let mut lc = Lifecycle::new(false);
        assert_eq!(lc.state(), Primary::Unconfigured);
        let labels = |lc: &Lifecycle| lc.available().map(|t| t.id.label).collect::<Vec<_>>();
        assert_eq!(labels(&lc), ["configure", "shutdown"]);
        assert!(
            lc.find(3, "")
                .unwrap_err()
                .contains("possible: configure (1), shutdown (5)")
        );
        let configure = lc.find(0, "configure").unwrap();
        lc.complete(configure);
        assert_eq!(lc.state(), Primary::Inactive);
        let activate = lc.find(3, "ignored when the id is given").unwrap();
        assert_eq!((activate.via.id, activate.success.id), (13, 30));
        lc.complete(activate);
        assert!(lc.commands());
        lc.complete(lc.find(7, "").unwrap());
        assert_eq!(lc.state(), Primary::Finalized);
        assert_eq!(labels(&lc), Vec::<&str>::new());
        assert!(
            lc.find(0, "activate")
                .unwrap_err()
                .contains("possible: none")
        );
    }

    #[test]
    fn the_active_parameter_and_the_lifecycle_are_one_switch() {
        let mut lc = Lifecycle::new(false);
        let ids = |ts: Vec<&Transition>| ts.iter().map(|t| t.id.id).collect::<Vec<_>>();
        assert_eq!(ids(lc.follow_active(true)), [1, 3]);
        assert_eq!(ids(lc.follow_active(true)), Vec::<u8>::new());
        assert_eq!(ids(lc.follow_active(false)), [4]);
        assert_eq!(lc.state(), Primary::Inactive);
        lc.complete(lc.find(0, "shutdown").unwrap());
        assert_eq!(ids(lc.follow_active(true)), Vec::<u8>::new());
        assert!(!lc.commands());
        assert!(Lifecycle::new(true).commands());
    }
}
