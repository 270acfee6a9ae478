//! The streaming form of RCaGP (spec §6): the block-FIFO window, the block path (engine),
//! the slow path (refit), the immutable snapshot the real-time path reads, the lock-free
//! hand-overs between them and the worker threads.

pub(crate) mod engine;
pub(crate) mod exchange;
pub(crate) mod refit;
pub mod snapshot;
pub(crate) mod tri;
pub(crate) mod window;
pub mod worker;
