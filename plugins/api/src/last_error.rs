//! The per-thread "last error" message behind `last_error`, and the bounded UTF-8 copy both
//! sides use.
//!
//! The buffer is a fixed array in a `const`-initialised thread local with no destructor:
//! a thread-local destructor registered from a shared library keeps glibc from unloading it
//! (`dlclose` becomes a no-op while any thread that touched it lives), so nothing here may
//! need dropping.

use std::cell::RefCell;

/// Longest message kept, in bytes; longer ones are truncated at a character boundary.
pub const MESSAGE_CAPACITY: usize = 1024;

struct Slot {
    bytes: [u8; MESSAGE_CAPACITY],
    len: usize,
}

thread_local! {
    static LAST: RefCell<Slot> = const { RefCell::new(Slot { bytes: [0; MESSAGE_CAPACITY], len: 0 }) };
}

/// The longest prefix of `s` that fits in `cap` bytes and ends on a character boundary.
pub fn truncate_to_boundary(s: &str, cap: usize) -> &str {
    if s.len() <= cap {
        return s;
    }
    let mut end = cap;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Record `message` as this thread's last error (truncated to [`MESSAGE_CAPACITY`]).
pub fn set(message: &str) {
    let kept = truncate_to_boundary(message, MESSAGE_CAPACITY);
    LAST.with(|slot| {
        let mut slot = slot.borrow_mut();
        slot.bytes[..kept.len()].copy_from_slice(kept.as_bytes());
        slot.len = kept.len();
    });
}

/// Forget this thread's last error.
pub fn clear() {
    LAST.with(|slot| slot.borrow_mut().len = 0);
}

/// This thread's last error as an owned string (empty when there is none).
pub fn get() -> String {
    let mut buf = [0u8; MESSAGE_CAPACITY];
    let n = copy_into(&mut buf);
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// Copy this thread's last error into `out` (truncated at a character boundary) and return
/// the number of bytes written.
pub fn copy_into(out: &mut [u8]) -> usize {
    LAST.with(|slot| {
        let slot = slot.borrow();
        // The slot only ever holds a whole `&str` prefix, so this cannot fail; an empty
        // message is the safe answer if it somehow did.
        let text = std::str::from_utf8(&slot.bytes[..slot.len]).unwrap_or("");
        let kept = truncate_to_boundary(text, out.len());
        out[..kept.len()].copy_from_slice(kept.as_bytes());
        kept.len()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_keeps_whole_characters() {
        // "é" is two bytes, "€" three.
        assert_eq!(truncate_to_boundary("aé€", 0), "");
        assert_eq!(truncate_to_boundary("aé€", 1), "a");
        assert_eq!(truncate_to_boundary("aé€", 2), "a");
        assert_eq!(truncate_to_boundary("aé€", 3), "aé");
        assert_eq!(truncate_to_boundary("aé€", 5), "aé");
        assert_eq!(truncate_to_boundary("aé€", 6), "aé€");
        assert_eq!(truncate_to_boundary("aé€", 100), "aé€");
    }

    #[test]
    fn set_copy_clear_round_trip() {
        set("model exploded: ∞");
        let mut buf = [0u8; 64];
        let n = copy_into(&mut buf);
        assert_eq!(
            std::str::from_utf8(&buf[..n]).expect("utf-8"),
            "model exploded: ∞"
        );
        let mut small = [0u8; 17];
        let n = copy_into(&mut small);
        assert_eq!(
            std::str::from_utf8(&small[..n]).expect("utf-8"),
            "model exploded: "
        );
        clear();
        assert_eq!(copy_into(&mut buf), 0);
    }

    #[test]
    fn long_messages_are_capped() {
        let long = "ü".repeat(MESSAGE_CAPACITY);
        set(&long);
        let mut buf = vec![0u8; 4 * MESSAGE_CAPACITY];
        let n = copy_into(&mut buf);
        assert!((MESSAGE_CAPACITY - 1..=MESSAGE_CAPACITY).contains(&n));
        assert!(std::str::from_utf8(&buf[..n]).is_ok());
    }

    #[test]
    fn messages_are_per_thread() {
        set("main thread");
        std::thread::spawn(|| {
            let mut buf = [0u8; 32];
            assert_eq!(copy_into(&mut buf), 0);
        })
        .join()
        .expect("thread");
        let mut buf = [0u8; 32];
        assert_eq!(copy_into(&mut buf), "main thread".len());
    }
}
