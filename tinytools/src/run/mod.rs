//! Runs: the agent loop ([`Agent`]), its policy, limits, events and transcript, and the
//! [aids] that may correct a model's turns.
//!
//! The core: `agent.rs` builds a run (`builder.rs`: [`Agent::builder`]; `instructions.rs`: the
//! host's [`Instructions`], first on every request; `output.rs`: typed output,
//! [`Agent::run_typed`]); `state.rs` is the run in progress and how it promotes
//! tools (`promotion.rs`: a query ranked like a user message, for the unknown-name answer and
//! the aids); `turns.rs` is the loop; `ask.rs` one model call; `call.rs` one tool call
//! through its gates; `grounding.rs` the grounding gate; `context.rs` shrinks a conversation
//! that overflows the window; `limits.rs` holds usage limits and size caps; `seam.rs` is where
//! the loop asks the aids, on the core's terms; `stream.rs` is a run as a stream
//! ([`Agent::stream`]): the same loop, its model calls streamed and its events passed on;
//! `spans.rs` the run's `tracing` spans, after OpenTelemetry's GenAI conventions.

pub mod aids;

mod agent;
mod ask;
mod builder;
mod call;
mod context;
mod error;
mod events;
mod execution;
mod grounding;
mod instructions;
mod keywords;
mod limits;
mod outcome;
mod output;
mod policy;
mod promotion;
mod seam;
mod spans;
mod state;
mod stream;
mod transcript;
mod turns;
mod view;

pub use agent::Agent;
pub use aids::Aids;
pub use builder::AgentBuilder;
pub use error::{ContextOverflow, OutputInvalid, RunError, RunFailure};
pub use events::{AidAction, EventSink, Promotion, RunEvent};
pub use instructions::Instructions;
pub use limits::{RunCaps, UsageLimit, UsageLimitExceeded, UsageLimits};
pub use outcome::{RunOutcome, StopReason};
pub use output::{Typed, TypedRunStream};
pub use policy::{Capture, RunPolicy};
pub use stream::{RunStream, RunStreamItem};
pub use transcript::{ToolPatch, Transcript};
pub use view::RunView;
