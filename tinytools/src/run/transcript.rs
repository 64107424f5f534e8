//! [`Transcript`]: a run's messages and tool-change patches, serialisable for resume.

use serde::{Deserialize, Serialize};

use crate::ToolSchema;
use crate::model::Message;

/// Everything needed to resume a run: its messages, and the tools it promoted.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Transcript {
    /// The conversation.
    pub messages: Vec<Message>,
    /// Tool-change patches, in order.
    pub patches: Vec<ToolPatch>,
}

/// Tools added to the requests from a point in the conversation on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolPatch {
    /// The number of messages before the change (it applies to requests after them).
    pub at_message: usize,
    /// The declarations added, as they were sent.
    pub added: Vec<ToolSchema>,
}

impl Transcript {
    /// A conversation to resume that promoted nothing yet.
    ///
    /// ```
    /// use tinytools::model::Message;
    /// use tinytools::run::Transcript;
    ///
    /// let transcript = Transcript::new(vec![Message::user("Hi")]);
    /// assert_eq!(transcript.promoted().count(), 0);
    /// ```
    pub fn new(messages: Vec<Message>) -> Self {
        Self { messages, patches: Vec::new() }
    }

    /// The names of every promoted tool, in promotion order.
    pub fn promoted(&self) -> impl Iterator<Item = &str> {
        self.patches.iter().flat_map(|patch| patch.added.iter().map(|tool| tool.name.as_str()))
    }
}
