//! Aids: opt-in corrections of a model's turns, behind one small seam.
//!
//! The loop's core does what every agent SDK does: a reply without calls is the answer, every
//! call the model emitted runs (through its gates), and nothing else. An [`Aid`] may step in at
//! three points, and can only:
//! - on a reply without calls ([`Aid::on_reply`]): accept it, send [`Feedback`] (optionally
//!   promoting deferred tools, or offering none for one turn), or take a call for it — of a
//!   read-only tool, unless the aid [is built for side effects](Aid::takes_side_effect_calls);
//! - on a call about to run ([`Aid::on_call`]): let it run, answer it without running, or run
//!   it on adjusted arguments with a note (read-only tools only, on the same terms);
//! - after a turn's calls were answered ([`Aid::after_calls`]): send [`Feedback`].
//!
//! Whatever an aid does, the core's invariants hold: feedback is a [`Message::Feedback`],
//! never the user's words; every feedback turn is a model call that counts against
//! `max_turns` and the usage limits; an aid sees only the run's surface (a Hidden tool is
//! invisible to it, as to the model); and each action is a [`RunEvent::AidActed`].
//!
//! Presets ([`Aids`]): `none`; `standard`, the default — at most one stop, said in one
//! feedback, after the same call returned the same result several times in a row; and
//! `small_model`, the aids kept for small local models. This crate ships those three aids
//! ([`StopRepeats`], [`ReplayRepeats`], [`AskAfterEmptyReply`]); any other is the host's own
//! [`Aid`] (`docs/aids.md` has the evidence for each choice, and for the aids removed because
//! they gained nothing).
//!
//! ```
//! use tinytools::run::aids::{Aids, StopRepeats};
//!
//! assert_eq!(Aids::none().names(), Vec::<&str>::new());
//! assert_eq!(Aids::standard().names(), ["stop_repeats"]);
//! assert_eq!(Aids::small_model().names(), ["replay_repeats", "stop_repeats", "ask_after_empty_reply"]);
//! let patient = Aids::none().with(StopRepeats::after(5));
//! assert_eq!(patient.names(), ["stop_repeats"]);
//! ```
//!
//! [`RunEvent::AidActed`]: super::RunEvent::AidActed

mod empty_reply;
mod prose;
mod repeats;

use std::fmt;
use std::sync::Arc;

pub use super::view::RunView;
pub use empty_reply::AskAfterEmptyReply;
pub use repeats::{ReplayRepeats, StopRepeats};

use crate::ToolResult;
use crate::model::{Message, ToolCall};

/// One correction of a model's turns. See the [module docs](self).
///
/// ```
/// use std::sync::Arc;
/// use tinytools::model::{Message, ModelResponse};
/// use tinytools::run::aids::{Aid, Feedback, ReplyAction, RunView};
/// use tinytools::run::{Agent, RunEvent};
/// use tinytools::testkit::ScriptedModel;
/// use tinytools::ToolRegistry;
///
/// /// Asks once for an answer in English when a reply has none.
/// struct AskForText;
///
/// #[async_trait::async_trait]
/// impl Aid for AskForText {
///     fn name(&self) -> &'static str {
///         "ask_for_text"
///     }
///
///     async fn on_reply(&self, view: &RunView<'_>, reply: &str) -> ReplyAction {
///         if reply.trim().is_empty() && view.feedback_sent(self.name()) == 0 {
///             ReplyAction::Feedback(Feedback::new("Please answer in plain text."))
///         } else {
///             ReplyAction::Accept
///         }
///     }
/// }
///
/// let model = Arc::new(ScriptedModel::new([ModelResponse::text(""), ModelResponse::text("Hello!")]));
/// let agent = Agent::new(Arc::new(ToolRegistry::new()), model.clone()).with_aid(AskForText);
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let outcome = agent.run(vec![Message::user("Hi")]).await?;
/// assert_eq!((outcome.answer.as_str(), outcome.turns), ("Hello!", 2));
/// let asked = &model.requests()[1].messages[2];
/// assert_eq!(asked, &Message::feedback("Please answer in plain text."));
/// # Ok::<(), tinytools::run::RunError>(())
/// # }).unwrap();
/// ```
#[async_trait::async_trait]
pub trait Aid: Send + Sync {
    /// Its name, as events and `docs/aids.md` give it (`snake_case`).
    fn name(&self) -> &'static str;

    /// Whether this aid may take a call of a tool with side effects for a reply, or run one on
    /// adjusted arguments. `false` by default, and for every aid this crate ships: a `true`
    /// here is the footgun that lets text which only *describes* a call (an offer, a quoted
    /// warning, a prompt injection the model repeated) post, send or delete. The core ignores
    /// such an action of any other aid.
    fn takes_side_effect_calls(&self) -> bool {
        false
    }

    /// A reply without calls, `reply` its text. Default: accept it.
    async fn on_reply(&self, view: &RunView<'_>, reply: &str) -> ReplyAction {
        let _ = (view, reply);
        ReplyAction::Accept
    }

    /// A call about to run (its name is on the run's surface, or `tool_search`). Default: run it.
    async fn on_call(&self, view: &RunView<'_>, call: &ToolCall) -> CallAction {
        let _ = (view, call);
        CallAction::Run
    }

    /// After a turn's calls were answered (the view's messages end with their results).
    /// Default: nothing.
    async fn after_calls(&self, view: &RunView<'_>) -> Option<Feedback> {
        let _ = view;
        None
    }
}

/// What an aid does with a reply that made no call.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum ReplyAction {
    /// The reply stands (the next aid is asked; when all accept, it is the run's answer).
    Accept,
    /// Ask the model again with this feedback.
    Feedback(Feedback),
    /// Run this call for the reply, through every gate a model's call passes. It stays the
    /// aid's: the transcript keeps it as a [`Message::AidCall`] after the reply, and providers
    /// are sent it as a note of the run, never as the model's call. Ignored unless the tool is offered this turn and read-only, or the aid
    /// [takes side-effect calls](Aid::takes_side_effect_calls).
    TakeCall(ToolCall),
}

/// What an aid does with one call about to run.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum CallAction {
    /// Run it.
    Run,
    /// Answer it with this result without running it, promoting these deferred tools.
    Answer {
        /// What the model reads.
        result: ToolResult,
        /// Deferred tools of the run's surface to promote with the answer.
        promote: Vec<String>,
    },
    /// Run it on these arguments (JSON text) instead, its result led by `note`. Ignored unless
    /// the tool is read-only, or the aid [takes side-effect calls](Aid::takes_side_effect_calls).
    RunWith {
        /// The arguments to run on.
        arguments: String,
        /// The line that leads the result, saying what was changed.
        note: String,
    },
}

/// Text the run sends the model as a [`Message::Feedback`], and what comes with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Feedback {
    pub(crate) text: String,
    pub(crate) promote: Vec<String>,
    pub(crate) offer_tools: bool,
    pub(crate) final_answer: bool,
}

impl Feedback {
    /// Feedback of this text; the next turn offers the tools as usual.
    pub fn new(text: impl Into<String>) -> Self {
        Self { text: text.into(), promote: Vec::new(), offer_tools: true, final_answer: false }
    }

    /// Also promotes these deferred tools of the run's surface (other names are passed over).
    #[must_use]
    pub fn promoting(mut self, names: Vec<String>) -> Self {
        self.promote = names;
        self
    }

    /// The next turn offers no tools.
    #[must_use]
    pub fn without_tools(mut self) -> Self {
        self.offer_tools = false;
        self
    }

    /// The next turn offers no tools and its reply ends the run
    /// ([`StopReason::RepeatedCalls`](super::StopReason::RepeatedCalls)); calls in it are not run.
    #[must_use]
    pub fn final_answer(mut self) -> Self {
        self.offer_tools = false;
        self.final_answer = true;
        self
    }

    /// Its text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The message the run writes.
    pub(crate) fn message(&self) -> Message {
        Message::feedback(self.text.clone())
    }
}

/// The aids a run uses, in order: the first that does not accept a reply (or run a call as
/// it is) decides. See the [module docs](self) for the presets.
#[derive(Clone, Default)]
pub struct Aids {
    aids: Vec<Arc<dyn Aid>>,
}

impl Aids {
    /// No aid: the loop's core alone.
    pub fn none() -> Self {
        Self::default()
    }

    /// The default: [`StopRepeats`] — the same call returning the same result three times in a
    /// row ends the run with one request for the final answer. Nothing else.
    pub fn standard() -> Self {
        Self::none().with(StopRepeats::default())
    }

    /// The aids kept for small local models, in the order they act: [`ReplayRepeats`],
    /// [`StopRepeats`] and [`AskAfterEmptyReply`]; `docs/aids.md` has the evidence behind
    /// each choice.
    pub fn small_model() -> Self {
        Self::none().with(ReplayRepeats).with(StopRepeats::default()).with(AskAfterEmptyReply)
    }

    /// These aids and `aid` after them.
    #[must_use]
    pub fn with(mut self, aid: impl Aid + 'static) -> Self {
        self.aids.push(Arc::new(aid));
        self
    }

    /// These aids and a shared one after them.
    #[must_use]
    pub fn with_shared(mut self, aid: Arc<dyn Aid>) -> Self {
        self.aids.push(aid);
        self
    }

    /// These aids without the one of that name.
    #[must_use]
    pub fn without(mut self, name: &str) -> Self {
        self.aids.retain(|aid| aid.name() != name);
        self
    }

    /// The aids' names, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.aids.iter().map(|aid| aid.name()).collect()
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Arc<dyn Aid>> {
        self.aids.iter()
    }
}

impl fmt::Debug for Aids {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

/// The request for the answer once a tool has answered (shared by the aids that ask for it).
pub(crate) const ANSWER_FROM_RESULT: &str =
    "The tool has answered (above). Now tell the user what it answered, in one sentence, with the values it gave.";
