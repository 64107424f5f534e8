//! Runs: the agent loop ([`Agent`]), its policy, events and transcript.

mod agent;
mod call;
mod events;
mod guard;
mod policy;
mod transcript;

pub use agent::{Agent, RunError, RunOutcome, StopReason};
pub use events::{EventSink, Promotion, RunEvent};
pub use policy::{Capture, LoopGuard, RunPolicy};
pub use transcript::{ToolPatch, Transcript};
