//! Runs: the agent loop ([`Agent`]), its policy, limits, events and transcript.
//!
//! `agent.rs` builds a run and promotes tools; `turns.rs` is the loop of model calls;
//! `adoption.rs` takes a call a reply spelt out in prose for the call; `restatement.rs` tells
//! a reply that describes a call that ran from one that tells its answer;
//! `call.rs` answers one tool call; `guard.rs` is the loop guard; `grounding.rs` refuses
//! invented values of grounded arguments; `unused_values.rs` asks about a value of the request
//! that no call used; `context.rs` shrinks a
//! conversation that overflows the window; `limits.rs` holds usage limits and size caps.

mod adoption;
mod agent;
mod call;
mod context;
mod error;
mod events;
mod grounding;
mod guard;
mod limits;
mod policy;
mod restatement;
mod summarization;
mod transcript;
mod turns;
mod unused_values;

pub use agent::{Agent, RunOutcome, StopReason};
pub use error::{ContextOverflow, RunError, RunFailure};
pub use events::{EventSink, Promotion, RunEvent};
pub use limits::{RunCaps, UsageLimit, UsageLimitExceeded, UsageLimits};
pub use policy::{Capture, LoopGuard, RunPolicy};
pub use summarization::SummarizationPolicy;
pub use transcript::{ToolPatch, Transcript};
