//! The counting allocator of the allocation tests (`testing/alloc_count`), under the name
//! these tests use. Each test crate installs it:
//!
//! ```ignore
//! #[global_allocator]
//! static GLOBAL: alloc_support::Counting = alloc_support::Counting;
//! ```

#![allow(unused_imports)] // each test uses part of it

pub use gpn_alloc_count::*;
