//! Test doubles: [`ScriptedModel`] replays turns and records every request it was sent.
//! Behind the `testkit` feature.

use std::sync::Mutex;

use crate::model::{ChatModel, ModelError, ModelRequest, ModelResponse};

type Turn = Box<dyn Fn(&ModelRequest) -> ModelResponse + Send + Sync>;

/// A model that answers from a script: turn `n` of each run answers the `n`-th call. Every
/// request is recorded, so tests can check what was sent.
///
/// ```
/// use tinytools::model::{ChatModel, Message, ModelRequest, ModelResponse};
/// use tinytools::testkit::ScriptedModel;
///
/// let model = ScriptedModel::new([ModelResponse::text("hello")]);
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let request = ModelRequest { messages: vec![Message::user("hi")], ..Default::default() };
/// assert_eq!(model.complete(&request).await.unwrap().content, "hello");
/// assert_eq!(model.requests().len(), 1);
/// assert!(model.complete(&request).await.is_err(), "the script has one turn");
/// # });
/// ```
pub struct ScriptedModel {
    turns: Vec<Turn>,
    requests: Mutex<Vec<ModelRequest>>,
}

impl ScriptedModel {
    /// A script of fixed responses.
    pub fn new(responses: impl IntoIterator<Item = ModelResponse>) -> Self {
        let turns =
            responses.into_iter().map(|response| Box::new(move |_: &ModelRequest| response.clone()) as Turn).collect();
        Self { turns, requests: Mutex::new(Vec::new()) }
    }

    /// A script whose turns look at the request (to answer with what a search returned, say).
    pub fn dynamic(turns: Vec<Turn>) -> Self {
        Self { turns, requests: Mutex::new(Vec::new()) }
    }

    /// Every request sent so far, in order.
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.requests.lock().map(|requests| requests.clone()).unwrap_or_default()
    }
}

#[async_trait::async_trait]
impl ChatModel for ScriptedModel {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let index = match self.requests.lock() {
            Ok(mut requests) => {
                requests.push(request.clone());
                requests.len() - 1
            }
            Err(_) => return Err(ModelError::Transport("the script's record is poisoned".into())),
        };
        self.turns.get(index).map(|turn| turn(request)).ok_or(ModelError::ScriptExhausted(index))
    }
}
