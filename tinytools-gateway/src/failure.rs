//! Why a downstream server is unavailable, in words the client's model can act on.
//!
//! [`CallFailure`] is the whole text a failed call answers with. [`StartFailure`] is the
//! one-line reason a server could not be started or listed (command not found, exited during
//! the handshake, timed out, a variable unset) that the manifest, `tool_search` answers and
//! `call_tool` results name the server with. Neither holds a path or an expanded value: a
//! command is named by its file name, a variable by its name, a remote server by its `url`
//! as configured.

use std::time::{Duration, Instant};

use rmcp::ServiceError;

/// Why a call could not be answered by its server. Its `Display` is the text the client's
/// model reads: the server, what happened and what to do. It never holds an expanded value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CallFailure(pub String);

/// Why a server could not be started or listed: one line, without a path or a secret.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StartFailure {
    /// The command does not exist, or is not on `PATH`.
    #[error("command `{program}` not found")]
    CommandNotFound {
        /// The command's file name, as configured.
        program: String,
    },
    /// The command exists but could not be run.
    #[error("command `{program}` could not be run ({reason})")]
    NotRunnable {
        /// The command's file name, as configured.
        program: String,
        /// What the operating system said, such as "permission denied".
        reason: String,
    },
    /// Its `cwd` is not a directory.
    #[error("its working directory does not exist")]
    NoWorkingDirectory,
    /// A `${VAR}` its config references is not set.
    #[error("environment variable `{variable}` is not set")]
    VariableUnset {
        /// The variable's name.
        variable: String,
    },
    /// The process exited, or broke the protocol, before the handshake completed.
    #[error("exited during the MCP handshake")]
    ExitedDuringHandshake,
    /// No answer to `initialize` within the start timeout.
    #[error("timed out: no MCP handshake within {} s", .after.as_secs_f64())]
    TimedOut {
        /// The start timeout.
        after: Duration,
    },
    /// A remote server could not be reached, or refused the handshake.
    #[error("unreachable, or refused the MCP handshake")]
    Unreachable,
    /// Its config cannot be used as written (such as a header the transport sets itself).
    #[error("misconfigured: {0}")]
    Misconfigured(String),
    /// It started but could not list its tools.
    #[error("could not list its tools")]
    ListFailed,
}

impl StartFailure {
    /// What to do about it, for the call's answer and the log.
    pub fn advice(&self) -> &'static str {
        match self {
            Self::CommandNotFound { .. } => {
                "check that it is installed and on PATH, and the server's \"command\" in the gateway's config"
            }
            Self::NotRunnable { .. } => "check that the server's \"command\" names an executable file",
            Self::NoWorkingDirectory => "create it, or fix the server's \"cwd\" in the gateway's config",
            Self::VariableUnset { .. } => {
                "set it in the gateway's environment, or give a default in the config with `${VAR:-default}`"
            }
            Self::ExitedDuringHandshake => {
                "run its command by hand to see why, and check its args and env in the gateway's config"
            }
            Self::TimedOut { .. } => {
                "it may be hung or still installing; retry, or raise gateway.start_timeout_secs for it"
            }
            Self::Unreachable => {
                "check that it is running, its \"url\", and its \"headers\" (a 401 or 403 means a missing or wrong token)"
            }
            Self::Misconfigured(_) => "fix the server's entry in the gateway's config",
            Self::ListFailed => "check that the server answers tools/list",
        }
    }
}

/// A failed start or listing: its one-line reason, the text a call that needed the server
/// answers with, and when it happened.
#[derive(Clone, Debug)]
pub struct Failed {
    /// The one-line reason.
    pub reason: StartFailure,
    /// The whole text for a call's answer.
    pub message: CallFailure,
    /// When it failed.
    pub at: Instant,
}

impl Failed {
    /// A failure of the `server` server: `reason`, with `detail` (what the process or the
    /// transport said, already free of secrets) when there is one, and what to do.
    pub fn new(server: &str, reason: StartFailure, detail: Option<&str>) -> Self {
        let detail = detail.map(|detail| format!(" ({detail})")).unwrap_or_default();
        let message = CallFailure(format!(
            "the `{server}` server could not be started: {reason}{detail}; {}. It will be started again on the next call.",
            reason.advice()
        ));
        Self { reason, message, at: Instant::now() }
    }

    /// A failure whose text was written for it (a remote server's, naming its `url`).
    pub fn with_message(reason: StartFailure, message: CallFailure) -> Self {
        Self { reason, message, at: Instant::now() }
    }
}

/// `1.5 s`.
pub(crate) fn seconds(duration: Duration) -> String {
    format!("{} s", duration.as_secs_f64())
}

/// What a broken connection's error says, in a few words.
pub(crate) fn describe(error: &ServiceError) -> String {
    match error {
        ServiceError::TransportClosed => "the connection closed".to_owned(),
        ServiceError::TransportSend(_) => "the server's input closed".to_owned(),
        ServiceError::Cancelled { .. } => "the request was cancelled".to_owned(),
        ServiceError::Timeout { .. } => "the request timed out".to_owned(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_names_the_server_the_reason_and_what_to_do() {
        let failed = Failed::new("ghost", StartFailure::CommandNotFound { program: "ghost-mcp".into() }, None);
        assert_eq!(failed.reason.to_string(), "command `ghost-mcp` not found");
        let text = failed.message.to_string();
        assert!(
            text.starts_with("the `ghost` server could not be started: command `ghost-mcp` not found; check"),
            "{text}"
        );
        assert!(text.contains("PATH") && text.ends_with("started again on the next call."), "{text}");
        let timed_out = StartFailure::TimedOut { after: Duration::from_millis(1_500) };
        assert_eq!(timed_out.to_string(), "timed out: no MCP handshake within 1.5 s");
    }
}
