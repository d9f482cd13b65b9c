use std::fmt;

use crate::codec::Failure;

/// The error of an orchestration, an activity, a query or update handler
/// or one of their operations. Its `Display` is the message a host records: an
/// orchestration that returns `Err(e)` fails with `e.to_string()` (or
/// continues as new, for [`Error::ContinueAsNew`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    /// An activity failed: its message, and details such as a trace.
    Activity {
        activity: String,
        message: String,
        details: String,
    },
    /// A child orchestration failed.
    Child {
        orchestration: String,
        message: String,
        details: String,
    },
    /// An event raised with [`Context::raise`](crate::Context::raise) was
    /// not delivered; the message says to which instance, and why not.
    Raise { event: String, message: String },
    /// The operation was cancelled: it lost a [`select`](crate::Context::select)
    /// (`reason` None), or the instance's cancellation was requested
    /// (`reason` Some, the reason given, which may be empty).
    Canceled { reason: Option<String> },
    /// Not an error: returned by an orchestration, it ends this execution
    /// and starts the next with this input. Make it with
    /// [`Context::continue_as_new`](crate::Context::continue_as_new).
    ContinueAsNew { input: Vec<u8> },
    /// A value did not decode from JSON, or an operation could not start
    /// (the message says which and why).
    Invalid(String),
    /// The author's own failure, with optional details.
    Failed { message: String, details: String },
}

impl Error {
    /// A failure with this message: `Err(Error::msg("no voice"))`.
    pub fn msg(message: impl Into<String>) -> Error {
        Error::Failed {
            message: message.into(),
            details: String::new(),
        }
    }

    /// Whether the operation was cancelled, for either reason.
    pub fn is_canceled(&self) -> bool {
        matches!(self, Error::Canceled { .. })
    }

    /// The details a host records beside the message, if any.
    pub fn details(&self) -> &str {
        match self {
            Error::Activity { details, .. } | Error::Child { details, .. } | Error::Failed { details, .. } => details,
            _ => "",
        }
    }

    /// The failure a host records for it: its message and details.
    pub(crate) fn failure(&self) -> Failure {
        Failure {
            message: self.to_string(),
            details: self.details().to_string(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Activity { activity, message, .. } => write!(f, "activity {:?} failed: {}", activity, message),
            Error::Child {
                orchestration, message, ..
            } => write!(f, "child orchestration {:?} failed: {}", orchestration, message),
            Error::Raise { message, .. } => f.write_str(message),
            Error::Canceled { reason: None } => f.write_str("durabox: the operation was cancelled"),
            Error::Canceled { reason: Some(r) } if r.is_empty() => f.write_str("durabox: the instance was cancelled"),
            Error::Canceled { reason: Some(r) } => write!(f, "durabox: the instance was cancelled: {}", r),
            Error::ContinueAsNew { input } => {
                write!(
                    f,
                    "durabox: the orchestration continues as new with input {}",
                    String::from_utf8_lossy(input)
                )
            }
            Error::Invalid(m) => f.write_str(m),
            Error::Failed { message, .. } => f.write_str(message),
        }
    }
}

impl std::error::Error for Error {}

impl From<String> for Error {
    fn from(message: String) -> Error {
        Error::msg(message)
    }
}

impl From<&str> for Error {
    fn from(message: &str) -> Error {
        Error::msg(message)
    }
}
