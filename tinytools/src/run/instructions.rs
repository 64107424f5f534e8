//! [`Instructions`]: what the host tells the model on every request of a run.

use std::fmt;
use std::sync::Arc;

use super::view::RunView;

/// The host's instructions to the model (a system prompt): sent first on every request of
/// every run of the agent, streamed or not, fresh or resumed. They are never a message of the
/// transcript, so the caller never prepends, keeps or strips them, and context shrinking never
/// drops them.
///
/// Static text, or a function of the run's state ([`RunView`]: the turn, the user's request,
/// the tools offered) evaluated for each request:
///
/// ```
/// use std::sync::Arc;
/// use tinytools::model::{Message, ModelResponse};
/// use tinytools::run::{Agent, Instructions};
/// use tinytools::testkit::ScriptedModel;
///
/// let model = Arc::new(ScriptedModel::new([ModelResponse::text("Hello!")]));
/// let agent = Agent::builder(model.clone())
///     .instructions(Instructions::dynamic(|run| format!("You are a concise assistant. This is turn {}.", run.turn().0)))
///     .build()?;
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let outcome = agent.run(vec![Message::user("hi")]).await?;
/// assert_eq!(model.requests()[0].messages[0], Message::system("You are a concise assistant. This is turn 1."));
/// assert!(!outcome.transcript.messages.iter().any(|m| matches!(m, Message::System { .. })));
/// # Ok::<(), tinytools::run::RunError>(())
/// # }).unwrap();
/// # Ok::<(), tinytools::RegistryError>(())
/// ```
#[derive(Clone)]
pub struct Instructions(Source);

#[derive(Clone)]
enum Source {
    Text(Arc<str>),
    Dynamic(Arc<dyn Fn(&RunView<'_>) -> String + Send + Sync>),
}

impl Instructions {
    /// The same text on every request.
    pub fn text(text: impl Into<String>) -> Self {
        Self(Source::Text(Arc::from(text.into())))
    }

    /// Text written for each request from the run's state.
    pub fn dynamic(write: impl Fn(&RunView<'_>) -> String + Send + Sync + 'static) -> Self {
        Self(Source::Dynamic(Arc::new(write)))
    }

    /// The text for this request.
    pub(super) fn render(&self, run: &RunView<'_>) -> String {
        match &self.0 {
            Source::Text(text) => text.to_string(),
            Source::Dynamic(write) => write(run),
        }
    }
}

impl From<&str> for Instructions {
    fn from(text: &str) -> Self {
        Self::text(text)
    }
}

impl From<String> for Instructions {
    fn from(text: String) -> Self {
        Self::text(text)
    }
}

impl fmt::Debug for Instructions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Source::Text(text) => f.debug_tuple("Instructions::text").field(text).finish(),
            Source::Dynamic(_) => f.write_str("Instructions::dynamic(..)"),
        }
    }
}
