//! The memory the node and a plugin process share (an anonymous `memfd`, mapped by both) and
//! the futex words in it that each side sleeps on. Linux only: `memfd_create` and `futex`.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// A shared, mapped region of `len` bytes.
pub struct SharedRegion {
    ptr: *mut u8,
    len: usize,
    fd: OwnedFd,
}

// SAFETY: the region is plain shared memory; every access from the two processes goes
// through the protocol (atomics with acquire/release ordering hand each field over).
unsafe impl Send for SharedRegion {}

impl SharedRegion {
    /// A new zeroed region (close-on-exec: the child gets it only as the descriptor it is
    /// given explicitly).
    pub fn create(len: usize) -> io::Result<Self> {
        // SAFETY: a NUL-terminated name; flags are valid.
        let fd = unsafe { libc::memfd_create(c"gpn-plugin-process".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a descriptor we just opened and own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let size = libc::off_t::try_from(len).map_err(|_| io::ErrorKind::InvalidInput)?;
        // SAFETY: a valid descriptor.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), size) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Self::map(fd, len)
    }

    /// The region of descriptor `fd` (inherited from the node), `len` bytes.
    ///
    /// # Safety
    /// `fd` must be an open descriptor this process owns (it is closed with the region).
    pub unsafe fn from_fd(fd: RawFd, len: usize) -> io::Result<Self> {
        // SAFETY: the caller's promise.
        Self::map(unsafe { OwnedFd::from_raw_fd(fd) }, len)
    }

    fn map(fd: OwnedFd, len: usize) -> io::Result<Self> {
        // SAFETY: mapping a descriptor of at least `len` bytes, shared, read-write.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Self {
            ptr: ptr.cast(),
            len,
            fd,
        })
    }

    /// The descriptor (for the child's command line).
    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// The start of the region.
    pub fn ptr(&self) -> *mut u8 {
        self.ptr
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it is empty (never, for a region in use).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for SharedRegion {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, unmapped once.
        unsafe {
            libc::munmap(self.ptr.cast(), self.len);
        }
    }
}

/// Sleeps while `word` holds `expected`, at most `timeout` (None: until woken). Returns at
/// once if it holds something else; spurious wake-ups are the caller's to loop over.
pub fn futex_wait(word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
    let ts = timeout.map(|t| libc::timespec {
        tv_sec: t.as_secs().min(i64::MAX as u64) as libc::time_t,
        tv_nsec: t.subsec_nanos() as libc::c_long,
    });
    let ts_ptr = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: FUTEX_WAIT (shared between processes: not the private variant) on a 4-byte
    // aligned word of mapped memory; the timeout is relative.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            ts_ptr,
            std::ptr::null::<u32>(),
            0,
        );
    }
}

/// Wakes the sleeper on `word`, if any.
pub fn futex_wake(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE of at most one waiter on a word of mapped memory.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE,
            1,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0,
        );
    }
}
