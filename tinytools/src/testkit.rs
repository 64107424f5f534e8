//! Test doubles: [`ScriptedModel`] replays turns and records every request it was sent.
//! Behind the `testkit` feature.

use std::sync::Mutex;

use futures_util::StreamExt;

use crate::model::{
    ChatModel, ModelError, ModelProfile, ModelRequest, ModelResponse, ModelStream, RequestPurpose, StreamEvent,
};

type Turn = Box<dyn Fn(&ModelRequest) -> ModelResponse + Send + Sync>;

/// A model that answers from a script: turn `n` of each run answers the `n`-th call. Every
/// request is recorded, so tests can check what was sent.
///
/// A run's side request for search keywords ([`RequestPurpose::Keywords`]) is not a turn: it
/// is answered from a script of its own ([`with_keywords`](Self::with_keywords); an empty
/// answer once that is spent, so the message is ranked as written) and recorded apart
/// ([`keyword_requests`](Self::keyword_requests)), so a script of turns reads the same whether
/// the run asks for keywords or not.
///
/// ```
/// use tinytools::model::{ChatModel, Message, ModelRequest, ModelResponse};
/// use tinytools::testkit::ScriptedModel;
///
/// let model = ScriptedModel::new([ModelResponse::text("hello")]);
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let request = ModelRequest::new(vec![Message::user("hi")], Vec::new());
/// assert_eq!(model.complete(&request).await.unwrap().content, "hello");
/// assert_eq!(model.requests().len(), 1);
/// assert!(model.complete(&request).await.is_err(), "the script has one turn");
/// # });
/// ```
pub struct ScriptedModel {
    turns: Vec<Turn>,
    requests: Mutex<Vec<ModelRequest>>,
    keywords: Vec<String>,
    keyword_requests: Mutex<Vec<ModelRequest>>,
    /// Streams text and arguments in pieces of this many characters (0: whole).
    pieces: usize,
    profile: ModelProfile,
    /// The provider's and the model's names it reports ([`ScriptedModel::named`]).
    names: Option<(String, String)>,
}

impl ScriptedModel {
    /// A script of fixed responses.
    pub fn new(responses: impl IntoIterator<Item = ModelResponse>) -> Self {
        let turns =
            responses.into_iter().map(|response| Box::new(move |_: &ModelRequest| response.clone()) as Turn).collect();
        Self::dynamic(turns)
    }

    /// A script whose turns look at the request (to answer with what a search returned, say).
    pub fn dynamic(turns: Vec<Turn>) -> Self {
        Self {
            turns,
            requests: Mutex::new(Vec::new()),
            keywords: Vec::new(),
            keyword_requests: Mutex::new(Vec::new()),
            pieces: 0,
            profile: ModelProfile::default(),
            names: None,
        }
    }

    /// The same script, reporting `profile` (to play a model with native structured output
    /// or deferral, say).
    #[must_use]
    pub fn with_profile(mut self, profile: ModelProfile) -> Self {
        self.profile = profile;
        self
    }

    /// Streams each answer as a provider would: its text, and each call's arguments, in pieces
    /// of `chars` characters. Without it, [`stream`](ChatModel::stream) replays the whole
    /// answer ([`StreamEvent::replay`]).
    ///
    /// ```
    /// use tinytools::model::{ChatModel, ModelRequest, ModelResponse, StreamEvent};
    /// use tinytools::testkit::ScriptedModel;
    ///
    /// let model = ScriptedModel::new([ModelResponse::text("hello")]).streaming_in_pieces(2);
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let mut deltas = Vec::new();
    /// let request = ModelRequest::default();
    /// let stream = model.stream(&request);
    /// let response = stream.into_response_with(|e| if let StreamEvent::TextDelta(t) = e { deltas.push(t.clone()) }).await;
    /// assert_eq!(deltas, ["he", "ll", "o"]);
    /// assert_eq!(response.unwrap().content, "hello");
    /// # });
    /// ```
    #[must_use]
    pub fn streaming_in_pieces(mut self, chars: usize) -> Self {
        self.pieces = chars;
        self
    }

    /// Answers the run's keyword requests, in order, with these lines (an empty answer after
    /// the last).
    ///
    /// ```
    /// use tinytools::model::{ChatModel, ModelRequest, ModelResponse, RequestPurpose};
    /// use tinytools::testkit::ScriptedModel;
    ///
    /// let model = ScriptedModel::new([ModelResponse::text("hello")]).with_keywords(["stock quote"]);
    /// let keywords = ModelRequest::default().with_purpose(RequestPurpose::Keywords);
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// assert_eq!(model.complete(&keywords).await.unwrap().content, "stock quote");
    /// assert_eq!(model.complete(&keywords).await.unwrap().content, "", "the keyword script is spent");
    /// assert_eq!(model.complete(&ModelRequest::default()).await.unwrap().content, "hello");
    /// assert_eq!((model.requests().len(), model.keyword_requests().len()), (1, 2));
    /// # });
    /// ```
    #[must_use]
    pub fn with_keywords(mut self, lines: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.keywords = lines.into_iter().map(Into::into).collect();
        self
    }

    /// Reports these names as its [`provider_name`](ChatModel::provider_name) and
    /// [`model_name`](ChatModel::model_name), as a provider would (for the run's spans).
    ///
    /// ```
    /// use tinytools::model::ChatModel;
    /// use tinytools::testkit::ScriptedModel;
    ///
    /// let model = ScriptedModel::new([]).named("acme.ai", "acme-mini");
    /// assert_eq!((model.provider_name(), model.model_name()), (Some("acme.ai"), Some("acme-mini")));
    /// assert_eq!(ScriptedModel::new([]).model_name(), None);
    /// ```
    #[must_use]
    pub fn named(mut self, provider: impl Into<String>, model: impl Into<String>) -> Self {
        self.names = Some((provider.into(), model.into()));
        self
    }

    /// Every turn's request sent so far, in order.
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.requests.lock().map(|requests| requests.clone()).unwrap_or_default()
    }

    /// Every keyword request sent so far, in order.
    pub fn keyword_requests(&self) -> Vec<ModelRequest> {
        self.keyword_requests.lock().map(|requests| requests.clone()).unwrap_or_default()
    }
}

#[async_trait::async_trait]
impl ChatModel for ScriptedModel {
    fn profile(&self) -> ModelProfile {
        self.profile
    }

    fn model_name(&self) -> Option<&str> {
        self.names.as_ref().map(|(_, model)| model.as_str())
    }

    fn provider_name(&self) -> Option<&str> {
        self.names.as_ref().map(|(provider, _)| provider.as_str())
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        if request.purpose == RequestPurpose::Keywords {
            let index = match self.keyword_requests.lock() {
                Ok(mut requests) => {
                    requests.push(request.clone());
                    requests.len() - 1
                }
                Err(_) => return Err(ModelError::Transport("the script's record is poisoned".into())),
            };
            return Ok(ModelResponse::text(self.keywords.get(index).cloned().unwrap_or_default()));
        }
        let index = match self.requests.lock() {
            Ok(mut requests) => {
                requests.push(request.clone());
                requests.len() - 1
            }
            Err(_) => return Err(ModelError::Transport("the script's record is poisoned".into())),
        };
        self.turns.get(index).map(|turn| turn(request)).ok_or(ModelError::ScriptExhausted(index))
    }

    fn stream<'a>(&'a self, request: &'a ModelRequest) -> ModelStream<'a> {
        let pieces = self.pieces;
        let events = futures_util::stream::once(self.complete(request)).flat_map(move |outcome| {
            let events: Vec<Result<StreamEvent, ModelError>> = match outcome {
                Ok(response) if pieces > 0 => in_pieces(response, pieces).into_iter().map(Ok).collect(),
                Ok(response) => StreamEvent::replay(response).into_iter().map(Ok).collect(),
                Err(error) => vec![Err(error)],
            };
            futures_util::stream::iter(events)
        });
        ModelStream::new(events)
    }
}

/// `response` as a stream in pieces of `chars` characters.
fn in_pieces(response: ModelResponse, chars: usize) -> Vec<StreamEvent> {
    let split = |text: &str| -> Vec<String> {
        let characters: Vec<char> = text.chars().collect();
        characters.chunks(chars).map(|piece| piece.iter().collect()).collect()
    };
    let mut events: Vec<StreamEvent> = split(&response.content).into_iter().map(StreamEvent::TextDelta).collect();
    for (index, call) in response.tool_calls.iter().enumerate() {
        events.push(StreamEvent::ToolCallStarted { index, id: call.id.clone(), name: call.name.clone() });
        events.extend(
            split(&call.arguments).into_iter().map(|arguments| StreamEvent::ToolCallDelta { index, arguments }),
        );
    }
    if let Some(usage) = response.usage {
        events.push(StreamEvent::Usage(usage));
    }
    events.push(StreamEvent::Done(response));
    events
}
