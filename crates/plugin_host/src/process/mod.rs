//! Plugins in a process of their own (`model.isolation: process`): a plugin that crashes
//! (a segfault, an abort) ends its process, not the node; the node's model calls fail, the
//! supervisor falls back to the nominal law, and the node goes on.
//!
//! The node starts `gp-node plugin-server` ([`serve_main`]) with a shared memory region
//! ([`shm`]) and keeps a [`ProcessModel`], an [`OnlineModel`](gpn_online_model::OnlineModel)
//! whose calls go through that region: the inputs are written, a sequence number is
//! published and the server woken (futex); the control thread spins briefly, then sleeps on
//! the answer's sequence number until a deadline. A call that misses its deadline returns an
//! error (the supervisor judges it as a model error) and the next calls are refused until the
//! late answer has come, so requests never overlap. Saving and restoring the learned state
//! (megabytes, never on the control thread) go through the server's stdin and stdout.
//!
//! The region's layout ([`Header`], then the numbers): request and answer sequence numbers,
//! the operation, its status, a text (errors, the plugin's identity), and `f64` slots for the
//! inputs, the outputs, the model's counters and readiness (refreshed with every answer, so
//! that `stats` and `readiness` cost no round trip).

mod proxy;
mod server;
pub mod shm;

use std::sync::atomic::{AtomicU32, AtomicU64};

pub use proxy::{ProcessModel, ProcessOptions};

/// The hidden subcommand of `gp-node` that runs [`serve_main`].
pub const SUBCOMMAND: &str = "plugin-server";
pub use server::serve_main;

/// The operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
enum Op {
    /// The first request: the server answers once the model is created (or failed).
    Hello = 1,
    Predict = 2,
    Update = 3,
    /// The state to the server's stdout: `[u64 length][bytes]` (length `u64::MAX`: an error).
    Save = 4,
    /// The state from the server's stdin, `[u64 length][bytes]`.
    Restore = 5,
    /// `wait_ready` with the timeout in µs in the first input slot.
    WaitReady = 6,
}

impl Op {
    fn from_u32(v: u32) -> Option<Op> {
        Some(match v {
            1 => Op::Hello,
            2 => Op::Predict,
            3 => Op::Update,
            4 => Op::Save,
            5 => Op::Restore,
            6 => Op::WaitReady,
            _ => return None,
        })
    }
}

/// Status of an answer.
const STATUS_OK: u32 = 0;
const STATUS_ERROR: u32 = 1;

/// Bytes of the text area (an error message or the identity, UTF-8, truncated to fit).
const TEXT_BYTES: usize = 4096;
/// `f64` slots for the inputs (x, y, noise, t) and for the outputs (mean, var, readiness).
const SLOTS: usize = 4096;
/// Largest input plus output dimension the region carries.
pub const MAX_DIMS: usize = 1024;
/// The region's size.
pub const REGION_BYTES: usize = std::mem::size_of::<Header>() + TEXT_BYTES + 2 * SLOTS * 8;

/// The start of the region. Sequence numbers hand the rest over: the node writes the
/// inputs and `op`, then `request` (release); the server reads `request` (acquire), answers
/// into the outputs, `status`, `text_len` and the counters, then `response` (release).
#[repr(C, align(64))]
struct Header {
    request: AtomicU32,
    response: AtomicU32,
    op: AtomicU32,
    status: AtomicU32,
    text_len: AtomicU32,
    /// Readiness answered (1) or not (0).
    has_readiness: AtomicU32,
    samples_behind: AtomicU64,
    samples_seen: AtomicU64,
    samples_stored: AtomicU64,
    experts: AtomicU64,
    memory_bytes: AtomicU64,
}

/// Typed views of a region's parts.
struct Layout {
    base: *mut u8,
}

impl Layout {
    fn header(&self) -> &Header {
        // SAFETY: the region starts with a Header (zeroed memory is a valid one), aligned
        // (mmap returns page-aligned memory) and lives as long as `self`'s region.
        unsafe { &*(self.base as *const Header) }
    }

    fn text(&self) -> *mut u8 {
        // SAFETY: within the region (see REGION_BYTES).
        unsafe { self.base.add(std::mem::size_of::<Header>()) }
    }

    /// Input slots (written by the node).
    fn inputs(&self) -> *mut f64 {
        // SAFETY: within the region, 8-byte aligned (the header is 64-byte aligned and
        // TEXT_BYTES a multiple of 8).
        unsafe { self.text().add(TEXT_BYTES).cast() }
    }

    /// Output slots (written by the server).
    fn outputs(&self) -> *mut f64 {
        // SAFETY: as `inputs`.
        unsafe { self.inputs().add(SLOTS) }
    }

    fn write_text(&self, text: &str) {
        let mut n = text.len().min(TEXT_BYTES);
        while !text.is_char_boundary(n) {
            n -= 1;
        }
        // SAFETY: n ≤ TEXT_BYTES bytes into the text area.
        unsafe { std::ptr::copy_nonoverlapping(text.as_ptr(), self.text(), n) };
        self.header()
            .text_len
            .store(n as u32, std::sync::atomic::Ordering::Relaxed);
    }

    fn read_text(&self) -> String {
        let n = (self
            .header()
            .text_len
            .load(std::sync::atomic::Ordering::Relaxed) as usize)
            .min(TEXT_BYTES);
        // SAFETY: n ≤ TEXT_BYTES bytes of the text area, written before the answer.
        let bytes = unsafe { std::slice::from_raw_parts(self.text(), n) };
        String::from_utf8_lossy(bytes).into_owned()
    }
}
