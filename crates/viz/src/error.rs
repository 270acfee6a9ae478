//! Errors of the rerun logger.

/// Why the rerun logger could not start or finish.
#[derive(Debug, thiserror::Error)]
pub enum VizError {
    /// The binary was built without the `rerun` feature.
    #[error(
        "built without rerun: rebuild with the `rerun` feature (on by default) or pass --no-viz"
    )]
    NotBuilt,
    /// The rerun sink (file, spawned viewer or connection) could not be opened.
    #[error("cannot {action}: {message}")]
    Open {
        /// What was attempted ("write FILE", "spawn a viewer", "connect to URL").
        action: String,
        /// rerun's message, with a hint where one helps.
        message: String,
    },
    /// The robot description could not be read for its visuals.
    #[error("cannot read the visuals of {source_name}: {message}")]
    Urdf {
        /// The URDF's name (file or built-in).
        source_name: String,
        /// The parser's message.
        message: String,
    },
    /// A rerun call on the logger thread failed.
    #[error("rerun logging failed at {entity}: {message}")]
    Log {
        /// The entity being logged.
        entity: String,
        /// rerun's message.
        message: String,
    },
    /// The logger thread could not be started or panicked.
    #[error("the rerun logger thread {0}")]
    Thread(String),
}

/// Result of the viz module.
pub type Result<T, E = VizError> = std::result::Result<T, E>;
