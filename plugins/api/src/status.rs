//! Status codes: every table function that can fail returns one (`uint32_t` in C). `OK` is
//! zero; any other value comes with a message from `last_error`. Codes are categories for
//! the caller to act on (retry, reconfigure, drop the model); the message says what happened.

use gpn_online_model::ModelError;

/// A status code as it crosses the ABI.
pub type StatusCode = u32;

/// Success.
pub const OK: StatusCode = 0;
/// A null pointer, a zero dimension, a config that is not UTF-8, or a bad handle.
pub const INVALID_ARGUMENT: StatusCode = 1;
/// The configuration was rejected (unknown key, value out of range, not JSON).
pub const INVALID_CONFIG: StatusCode = 2;
/// A slice or dimension did not match what the model was created with.
pub const DIMENSION_MISMATCH: StatusCode = 3;
/// An input, target or noise variance was NaN or infinite.
pub const NON_FINITE: StatusCode = 4;
/// The model does not implement this function (e.g. save/load).
pub const UNSUPPORTED: StatusCode = 5;
/// `load` got bytes it cannot use (corrupt, other plugin, other config or dims).
pub const INVALID_STATE: StatusCode = 6;
/// The plugin panicked (or, in C++, threw); the model must not be used again except to
/// destroy it.
pub const PANIC: StatusCode = 7;
/// Any other failure inside the model.
pub const INTERNAL: StatusCode = 8;

/// Every status code with its name as in the C header (`GPN_STATUS_<NAME>`).
pub const ALL: [(&str, StatusCode); 9] = [
    ("OK", OK),
    ("INVALID_ARGUMENT", INVALID_ARGUMENT),
    ("INVALID_CONFIG", INVALID_CONFIG),
    ("DIMENSION_MISMATCH", DIMENSION_MISMATCH),
    ("NON_FINITE", NON_FINITE),
    ("UNSUPPORTED", UNSUPPORTED),
    ("INVALID_STATE", INVALID_STATE),
    ("PANIC", PANIC),
    ("INTERNAL", INTERNAL),
];

/// The name of a status code (`"NON_FINITE"`), or `"UNKNOWN"` for a code this version does
/// not define.
pub fn name(code: StatusCode) -> &'static str {
    ALL.iter()
        .find(|(_, c)| *c == code)
        .map_or("UNKNOWN", |(n, _)| n)
}

/// The status a model error maps to.
pub fn of_model_error(err: &ModelError) -> StatusCode {
    match err {
        ModelError::Dimension { .. } => DIMENSION_MISMATCH,
        ModelError::NonFinite { .. } => NON_FINITE,
        ModelError::Config(_) => INVALID_CONFIG,
        ModelError::Other(_) => INTERNAL,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct_and_ok_is_zero() {
        assert_eq!(OK, 0);
        for (i, (_, a)) in ALL.iter().enumerate() {
            for (_, b) in &ALL[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert_eq!(name(PANIC), "PANIC");
        assert_eq!(name(999), "UNKNOWN");
    }
}
