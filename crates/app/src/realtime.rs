//! The control thread as real-time work, as ros2_control's controller manager makes its
//! own (`thread_priority`, `lock_memory`): `SCHED_FIFO` at `realtime.thread_priority`, so
//! that no thread of normal priority (the learner's worker, DDS, the compiler next door)
//! delays a tick, and the process's memory locked (`realtime.lock_memory`), so that no page
//! is paged out or faulted in on first touch while the loop runs, and what the allocator
//! frees kept for reuse (glibc: no trimming, no mmap per large block). Linux only; both need
//! rights a robot computer gives (an `rtprio` / `memlock` limit in
//! `/etc/security/limits.conf`, or `CAP_SYS_NICE` / `CAP_IPC_LOCK`). Without them the run
//! goes on at normal priority and says so: a tick at normal priority is late more often,
//! never wrong.

/// Real-time settings of `gp-node run` and `gp-node sim --realtime`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RealtimeParams {
    /// `SCHED_FIFO` priority of the control thread, 1–99 (0: normal scheduling). Threads it
    /// starts run at normal priority.
    pub thread_priority: u8,
    /// Lock the process's memory, current and future (`mlockall`).
    pub lock_memory: bool,
}

impl Default for RealtimeParams {
    fn default() -> Self {
        Self {
            // ros2_control's controller manager uses 50 by default.
            thread_priority: 50,
            lock_memory: false,
        }
    }
}

/// What [`enter`] set up, and what it could not.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct RealtimeSetup {
    /// The control thread's `SCHED_FIFO` priority, if it got one.
    pub thread_priority: Option<u8>,
    /// Whether the process's memory is locked.
    pub memory_locked: bool,
    /// What was asked and refused, with the reason and the remedy.
    pub warnings: Vec<String>,
}

/// Makes the calling thread the control thread as `params` ask (memory locking is for the
/// whole process). Call on the thread that runs the loop, before it starts; [`leave`]
/// undoes the thread's part.
pub fn enter(params: &RealtimeParams) -> RealtimeSetup {
    let mut setup = RealtimeSetup::default();
    if params.lock_memory {
        match lock_memory() {
            Ok(()) => setup.memory_locked = true,
            Err(e) => setup.warnings.push(format!(
                "realtime.lock_memory: cannot lock the process's memory ({e}); running \
                 unlocked (raise the memlock limit or grant CAP_IPC_LOCK)"
            )),
        }
    }
    if params.thread_priority > 0 {
        match set_fifo(params.thread_priority) {
            Ok(()) => setup.thread_priority = Some(params.thread_priority),
            Err(e) => setup.warnings.push(format!(
                "realtime.thread_priority: cannot run the control thread at SCHED_FIFO \
                 priority {} ({e}); running at normal priority (give the user an rtprio \
                 limit, e.g. `@realtime - rtprio 99` in /etc/security/limits.conf, or \
                 CAP_SYS_NICE; 0 turns this off)",
                params.thread_priority
            )),
        }
    }
    setup
}

/// Back to normal scheduling for the calling thread, if [`enter`] changed it (the memory
/// stays locked: unlocking is for the process to decide at its end).
pub fn leave(setup: &RealtimeSetup) {
    if setup.thread_priority.is_some() {
        let _ = set_normal();
    }
}

#[cfg(target_os = "linux")]
fn set_fifo(priority: u8) -> std::io::Result<()> {
    let param = libc::sched_param {
        sched_priority: i32::from(priority.min(99)),
    };
    // SCHED_RESET_ON_FORK: threads the control thread starts (a plugin's `create`, say) do
    // not inherit the real-time policy.
    // SAFETY: sets the calling thread's own policy; `param` is a valid sched_param that
    // outlives the call.
    check(unsafe {
        libc::sched_setscheduler(0, libc::SCHED_FIFO | libc::SCHED_RESET_ON_FORK, &param)
    })
}

/// A libc call's return code as a result (0: success; else the OS error it left).
#[cfg(target_os = "linux")]
fn check(rc: i32) -> std::io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(target_os = "linux")]
fn set_normal() -> std::io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: as in `set_fifo`.
    check(unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &param) })
}

#[cfg(target_os = "linux")]
fn lock_memory() -> std::io::Result<()> {
    // The usual recipe of real-time Linux applications: memory freed is kept by the
    // allocator and reused (no trimming, no mmap per large block) rather than returned and
    // mapped (and locked) again on the next allocation — which a plugin may make on the
    // control thread (SkyGP when its pool's background growth is late). The process's
    // memory is then the high-water mark of what it held (docs/results/soak.md: fewer late
    // ticks, and RSS flat after a rise of 15 % in the first minutes of hot swaps).
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt takes two integers; these two parameters exist in every glibc.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, -1);
        libc::mallopt(libc::M_MMAP_MAX, 0);
    }
    // SAFETY: mlockall takes flags only.
    check(unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) })
}

#[cfg(not(target_os = "linux"))]
fn set_fifo(_: u8) -> std::io::Result<()> {
    Err(std::io::Error::other("only on Linux"))
}

#[cfg(not(target_os = "linux"))]
fn set_normal() -> std::io::Result<()> {
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn lock_memory() -> std::io::Result<()> {
    Err(std::io::Error::other("only on Linux"))
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// The calling thread's (policy without flags, priority, reset-on-fork flag).
    fn policy() -> (i32, i32, bool) {
        // SAFETY: reads the calling thread's own scheduling into a valid sched_param.
        unsafe {
            let mut param = libc::sched_param { sched_priority: 0 };
            let policy = libc::sched_getscheduler(0);
            libc::sched_getparam(0, &mut param);
            (
                policy & !libc::SCHED_RESET_ON_FORK,
                param.sched_priority,
                policy & libc::SCHED_RESET_ON_FORK != 0,
            )
        }
    }

    #[test]
    fn the_thread_gets_fifo_or_a_warning_and_its_children_run_normally() {
        std::thread::spawn(|| {
            let setup = enter(&RealtimeParams {
                thread_priority: 10,
                lock_memory: false,
            });
            match setup.thread_priority {
                Some(10) => {
                    assert_eq!(policy(), (libc::SCHED_FIFO, 10, true));
                    let child = std::thread::spawn(policy).join().expect("child");
                    assert_eq!(child, (libc::SCHED_OTHER, 0, false));
                    leave(&setup);
                    assert_eq!(policy(), (libc::SCHED_OTHER, 0, false));
                }
                None => {
                    // Not allowed here: said, and the thread left as it was.
                    assert_eq!(setup.warnings.len(), 1, "{setup:?}");
                    assert!(setup.warnings[0].contains("rtprio"), "{setup:?}");
                    assert_eq!(policy().0, libc::SCHED_OTHER);
                }
                other => panic!("{other:?}"),
            }
        })
        .join()
        .expect("thread");
    }

    #[test]
    fn priority_zero_leaves_the_thread_alone() {
        let setup = enter(&RealtimeParams {
            thread_priority: 0,
            lock_memory: false,
        });
        assert_eq!(setup, RealtimeSetup::default());
    }
}
