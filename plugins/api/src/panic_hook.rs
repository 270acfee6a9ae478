//! The plugin's panic hook: inside an export shim, a panic's location and message go to
//! `last_error` instead of stderr.
//!
//! Why not the default hook: in a cdylib, std is the plugin's own copy, and its default
//! hook looks up the current thread (to print its name), which registers a thread-local
//! destructor from the plugin on the host's thread; glibc then refuses to unload the
//! library until that thread exits, so one panic on the control thread would pin the
//! plugin forever. The hook installed here touches no such state. It chains: panics outside
//! a shim (the plugin's own threads, or a test binary linking the model in-process) go to
//! the previous hook as before.

use std::any::Any;
use std::cell::Cell;
use std::sync::Once;

use crate::last_error;

thread_local! {
    static IN_SHIM: Cell<bool> = const { Cell::new(false) };
    static RECORDED: Cell<bool> = const { Cell::new(false) };
}

static INSTALL: Once = Once::new();

/// The text of a panic payload (`&str` or `String`; anything else is unnamed).
pub(crate) fn payload_text(payload: &(dyn Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "non-string panic payload"
    }
}

/// Install the hook (once per library; later calls are one atomic load).
pub(crate) fn install() {
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_SHIM.with(Cell::get) {
                let location = info
                    .location()
                    .map(|l| format!(" at {}:{}:{}", l.file(), l.line(), l.column()))
                    .unwrap_or_default();
                last_error::set(&format!(
                    "model panicked{location}: {}",
                    payload_text(info.payload())
                ));
                RECORDED.with(|r| r.set(true));
            } else {
                previous(info);
            }
        }));
    });
}

/// Run `body` (which must not unwind: wrap it in `catch_unwind`) marked as inside a shim;
/// also return whether the hook recorded a panic message into `last_error`.
pub(crate) fn run_in_shim<R>(body: impl FnOnce() -> R) -> (R, bool) {
    IN_SHIM.with(|f| f.set(true));
    RECORDED.with(|r| r.set(false));
    let result = body();
    IN_SHIM.with(|f| f.set(false));
    (result, RECORDED.with(Cell::get))
}
