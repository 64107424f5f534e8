//! [`Execution`]: one tool call as a task the run owns, aborted when the run lets go of it.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::task::JoinHandle;
use tracing::Instrument;

use crate::{ToolError, ToolResult};

type Outcome = Result<ToolResult, ToolError>;

/// A tool call in flight. An async tool runs as a task of the current runtime, so a tool that
/// blocks its thread anyway holds one worker, not the run: the run's timeout still fires on
/// time on a multi-threaded runtime. A [blocking](crate::Tool::blocking) tool runs on the
/// blocking pool. Dropping an `Execution` aborts its task: an async tool's future is dropped
/// at its next `.await` (a blocking tool, already on its thread, runs to its end). Outside a
/// tokio runtime the call runs inline, as part of the future that awaits it.
pub(super) struct Execution {
    running: Running,
    tool: String,
}

enum Running {
    Task(JoinHandle<Outcome>),
    Inline(Pin<Box<dyn Future<Output = Outcome> + Send>>),
}

impl Execution {
    /// Starts `work`, the call of `tool`, in the current span (the call's `execute_tool`), so
    /// what the tool traces is the call's.
    pub(super) fn start(work: impl Future<Output = Outcome> + Send + 'static, blocking: bool, tool: &str) -> Self {
        let work = work.in_current_span();
        let running = match tokio::runtime::Handle::try_current() {
            Ok(handle) if blocking => {
                let inner = handle.clone();
                Running::Task(handle.spawn_blocking(move || inner.block_on(work)))
            }
            Ok(handle) => Running::Task(handle.spawn(work)),
            Err(_) => Running::Inline(Box::pin(work)),
        };
        Self { running, tool: tool.to_owned() }
    }
}

impl Future for Execution {
    type Output = Outcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Outcome> {
        let this = &mut *self;
        let outcome = match &mut this.running {
            Running::Inline(work) => return work.as_mut().poll(cx),
            Running::Task(handle) => std::task::ready!(Pin::new(handle).poll(cx)),
        };
        let tool = &this.tool;
        // The registry contains a tool's panics, so a join error is a panic outside the tool's
        // own code or the runtime shutting down.
        Poll::Ready(outcome.unwrap_or_else(|error| match error.is_panic() {
            true => Err(ToolError::Panicked { tool: tool.clone(), message: error.to_string() }),
            false => Err(ToolError::Cancelled { tool: tool.clone() }),
        }))
    }
}

impl Drop for Execution {
    fn drop(&mut self) {
        if let Running::Task(handle) = &self.running {
            handle.abort();
        }
    }
}
