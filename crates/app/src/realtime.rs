//! The control thread as real-time work, as ros2_control's controller manager makes its
//! own (`thread_priority`, `lock_memory`): `SCHED_FIFO` at `realtime.thread_priority`, so
//! that no thread of normal priority (the learner's worker, DDS, the compiler next door)
//! delays a tick, and the process's memory locked (`realtime.lock_memory`), so that no page
//! is paged out or faulted in on first touch while the loop runs, and what the allocator
//! frees kept for reuse (glibc: no trimming, no mmap per large block, one arena), with
//! `realtime.heap_reserve_mb` of heap faulted in at start for the run to allocate from — the
//! recipe of ROS 2's real-time demos (`lock_and_prefault_dynamic`). Linux only; both need
//! rights a robot computer gives (an `rtprio` / `memlock` limit in
//! `/etc/security/limits.conf`, or `CAP_SYS_NICE` / `CAP_IPC_LOCK`). Without them the run
//! goes on at normal priority and says so: a tick at normal priority is late more often,
//! never wrong.

use std::sync::OnceLock;

/// Real-time settings of `gp-node run` and `gp-node sim --realtime`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RealtimeParams {
    /// `SCHED_FIFO` priority of the control thread, 1–99 (0: normal scheduling). Threads it
    /// starts run at normal priority.
    pub thread_priority: u8,
    /// Lock the process's memory, current and future (`mlockall`).
    pub lock_memory: bool,
    /// With `lock_memory`: MiB of heap faulted in (and locked) at start and kept by the
    /// allocator, so that the run's allocations up to that size never ask the kernel for
    /// memory. The summary's `heap` says what the run used (size it above `system_mb`).
    pub heap_reserve_mb: u32,
}

impl Default for RealtimeParams {
    fn default() -> Self {
        Self {
            // ros2_control's controller manager uses 50 by default.
            thread_priority: 50,
            lock_memory: false,
            // Twice the heap of the soak's two SkyGP models on the Panda (docs/results/soak.md).
            heap_reserve_mb: 128,
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
    /// MiB of heap faulted in at start (0: none).
    pub heap_reserved_mb: u32,
    /// The heap at the end of the run ([`heap_usage`]), where the allocator tells.
    pub heap: Option<HeapUsage>,
    /// What was asked and refused, with the reason and the remedy.
    pub warnings: Vec<String>,
}

/// The process's part of [`RealtimeSetup`], made once.
#[derive(Debug, Clone, Default)]
struct MemorySetup {
    locked: bool,
    reserved_mb: u32,
    warnings: Vec<String>,
}

static MEMORY: OnceLock<MemorySetup> = OnceLock::new();

/// Locks the process's memory and reserves its heap as `params` ask, once per process (later
/// calls keep the first's result). Call it first, before the process starts threads: a thread
/// that allocated before takes an arena of its own, outside the reserve. [`enter`] calls it
/// too, for a process that did not.
pub fn prepare_memory(params: &RealtimeParams) {
    MEMORY.get_or_init(|| {
        let mut setup = MemorySetup::default();
        if !params.lock_memory {
            return setup;
        }
        match lock_memory() {
            Ok(()) => setup.locked = true,
            Err(e) => setup.warnings.push(format!(
                "realtime.lock_memory: cannot lock the process's memory ({e}); running \
                 unlocked (raise the memlock limit or grant CAP_IPC_LOCK)"
            )),
        }
        if setup.locked && params.heap_reserve_mb > 0 {
            match reserve_heap(params.heap_reserve_mb) {
                Ok(()) => setup.reserved_mb = params.heap_reserve_mb,
                Err(e) => setup.warnings.push(format!(
                    "realtime.heap_reserve_mb: cannot reserve {} MiB of heap ({e}); running \
                     without a reserve",
                    params.heap_reserve_mb
                )),
            }
        }
        setup
    });
}

/// Makes the calling thread the control thread as `params` ask (memory locking is for the
/// whole process, [`prepare_memory`]). Call on the thread that runs the loop, before it
/// starts; [`leave`] undoes the thread's part.
pub fn enter(params: &RealtimeParams) -> RealtimeSetup {
    prepare_memory(params);
    let memory = MEMORY.get().cloned().unwrap_or_default();
    let mut setup = RealtimeSetup {
        memory_locked: memory.locked,
        heap_reserved_mb: memory.reserved_mb,
        warnings: memory.warnings,
        ..RealtimeSetup::default()
    };
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
    // control thread (SkyGP when its pool's background growth is late). One arena: the
    // threads' own arenas would each keep their own high-water mark outside the reserve
    // (docs/results/soak.md: RSS rose 15 % over 4.5 minutes of hot swaps with them).
    #[cfg(target_env = "gnu")]
    // SAFETY: mallopt takes two integers; these three parameters exist in every glibc.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, -1);
        libc::mallopt(libc::M_MMAP_MAX, 0);
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
    // SAFETY: mlockall takes flags only.
    check(unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) })
}

/// Faults in `mb` MiB of heap and hands it back to the allocator, which keeps it (no trim):
/// later allocations up to that size reuse locked pages instead of growing the heap.
#[cfg(target_os = "linux")]
fn reserve_heap(mb: u32) -> std::io::Result<()> {
    let bytes = usize::try_from(mb)
        .unwrap_or(usize::MAX)
        .saturating_mul(1 << 20);
    let mut block: Vec<u8> = Vec::new();
    block
        .try_reserve_exact(bytes)
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    // Every page written once (MCL_FUTURE has populated them already where it applies).
    block.resize(bytes, 0);
    std::hint::black_box(&block);
    Ok(())
}

/// What the calling thread has had of the CPU so far ([`thread_usage`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ThreadUsage {
    /// CPU time used (user + system), µs.
    pub cpu_us: f64,
    /// Times it gave the CPU up (a sleep, a lock, a fault waiting for I/O).
    pub voluntary_switches: u64,
    /// Times another thread took the CPU from it.
    pub involuntary_switches: u64,
}

/// The calling thread's CPU time and context switches (Linux; None elsewhere). Two system
/// calls: beside a late tick's wall time they say whether the thread computed, waited, was
/// preempted, or did not run at all although nothing in the system took its CPU (a paused
/// virtual machine).
pub fn thread_usage() -> Option<ThreadUsage> {
    #[cfg(target_os = "linux")]
    {
        // The CPU clock (exact); rusage's CPU times are tick-sampled and rescaled, too coarse
        // for a millisecond, but its switch counts are exact.
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: writes the calling thread's CPU clock into a valid timespec.
        let clock = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
        // SAFETY: an all-zero rusage is a valid value of the plain C struct.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: writes the calling thread's usage into a valid rusage.
        let usage = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
        (clock == 0 && usage == 0).then(|| ThreadUsage {
            cpu_us: t.tv_sec as f64 * 1e6 + t.tv_nsec as f64 * 1e-3,
            voluntary_switches: u64::try_from(u.ru_nvcsw).unwrap_or(0),
            involuntary_switches: u64::try_from(u.ru_nivcsw).unwrap_or(0),
        })
    }
    #[cfg(not(target_os = "linux"))]
    None
}

/// The heap as the allocator sees it: what it took from the kernel and what is in use.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct HeapUsage {
    /// MiB the allocator holds (in use, free and reserved).
    pub system_mb: f64,
    /// MiB of allocated blocks.
    pub in_use_mb: f64,
}

/// The allocator's view of the heap (glibc); None elsewhere. Walks the allocator's free
/// lists under its lock: not for the control thread.
pub fn heap_usage() -> Option<HeapUsage> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallinfo2 takes no arguments and returns a plain struct.
        let info = unsafe { libc::mallinfo2() };
        let mb = |b: usize| b as f64 / f64::from(1u32 << 20);
        Some(HeapUsage {
            system_mb: mb(info.arena + info.hblkhd),
            in_use_mb: mb(info.uordblks + info.hblkhd),
        })
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    None
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

#[cfg(not(target_os = "linux"))]
fn reserve_heap(_: u32) -> std::io::Result<()> {
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
                ..RealtimeParams::default()
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
    fn the_heap_usage_counts_a_live_block() {
        // The figures are the whole process's, and the other tests of this binary allocate
        // and free beside this one: a difference of two readings is not this block's
        // size, but a reading taken while the block lives holds at least the block.
        let block = std::hint::black_box(vec![1u8; 64 << 20]);
        let during = heap_usage().expect("glibc tells");
        assert!(during.in_use_mb >= 64.0, "{during:?}");
        assert!(during.system_mb >= during.in_use_mb, "{during:?}");
        drop(block);
    }

    #[test]
    fn priority_zero_leaves_the_thread_alone() {
        let setup = enter(&RealtimeParams {
            thread_priority: 0,
            ..RealtimeParams::default()
        });
        assert_eq!(setup, RealtimeSetup::default());
    }
}
