//! `PrePromotion::model_keywords` (on in `RunPolicy::small_model`, off by default): before
//! query-aware discovery ranks a user message, the run's own model writes a line of search
//! keywords for it. The request is the run's (usage, limits,
//! middleware, events), sees the message and no tool, and its answer only ever becomes search
//! words; when it cannot be made or fails, the message is ranked as written.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tinytools::discovery::{PrePromotion, ToolDiscoveryPolicy};
use tinytools::middleware::Middleware;
use tinytools::model::{ChatModel, Message, ModelError, ModelRequest, ModelResponse, RequestPurpose, Usage};
use tinytools::run::{Agent, Capture, Promotion, RunEvent, RunPolicy, StopReason, UsageLimits};
use tinytools::testkit::ScriptedModel;
use tinytools::{ToolExposure, ToolSchema};
use tinytools_examples::catalogue;
use tinytools_integration_tests::{NightShelter, Recorder};

/// Shares no word with `hotel_search`: BM25 alone does not promote it.
const SLEEP: &str = "Find us somewhere to sleep in Porto, arriving 3 June 2026 and leaving the 6th.";

fn offered(request: &ModelRequest) -> Vec<&str> {
    request.tools.iter().map(|tool| tool.name.as_str()).collect()
}

fn keyword_events(events: &[RunEvent]) -> Vec<(Option<String>, Option<Usage>, Option<String>)> {
    events
        .iter()
        .filter_map(|event| match event {
            RunEvent::KeywordsWritten { keywords, usage, error } => Some((keywords.clone(), *usage, error.clone())),
            _ => None,
        })
        .collect()
}

/// Pre-promotion with the keyword request, as the small-model profile has it.
fn asking() -> PrePromotion {
    PrePromotion::default().with_model_keywords(true)
}

fn policy(pre: PrePromotion) -> RunPolicy {
    RunPolicy::default().with_discovery(ToolDiscoveryPolicy::default().with_pre_promotion(pre))
}

#[tokio::test]
async fn the_run_s_model_names_the_service_and_the_tool_is_promoted() {
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("done")]).with_keywords(["Hotel booking, search"]));
    let recorder = Arc::new(Recorder::default());
    let outcome = Agent::new(Arc::new(catalogue::registry()), model.clone())
        .with_policy(policy(asking()))
        .with_events(recorder.clone())
        .run(vec![Message::user(SLEEP)])
        .await
        .expect("runs");
    assert_eq!(outcome.stop, StopReason::Answered);
    assert!(offered(&model.requests()[0]).contains(&"hotel_search"), "{:?}", offered(&model.requests()[0]));

    // One keyword request, before the first turn: the message, no tools, no tool's name.
    let asked = model.keyword_requests();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].purpose, RequestPurpose::Keywords);
    assert!(asked[0].tools.is_empty() && asked[0].callable_by_name.is_empty());
    let text = serde_json::to_string(&asked[0].messages).expect("serializes");
    assert!(text.contains("somewhere to sleep in Porto"), "{text}");
    let registry = catalogue::registry();
    for tool in registry.schemas().into_iter().chain(registry.deferred_schemas()) {
        assert!(!text.contains(&tool.name), "the keyword request named {}", tool.name);
    }
    // The keywords stay out of the conversation: the transcript is the user's words and the answer.
    assert_eq!(outcome.transcript.messages.len(), 2);
    let run_text = serde_json::to_string(&outcome.transcript.messages).expect("serializes");
    assert!(!run_text.contains("booking"), "{run_text}");
    // Reported without the keywords themselves unless the host captures tool I/O.
    let events = recorder.events();
    assert_eq!(keyword_events(&events), [(None, None, None)]);
    let first = events.iter().position(|e| matches!(e, RunEvent::KeywordsWritten { .. }));
    let promoted = events.iter().position(|e| matches!(e, RunEvent::ToolsPromoted { .. }));
    let called = events.iter().position(|e| matches!(e, RunEvent::ModelCalled { .. }));
    assert!(first < promoted && promoted < called, "{events:?}");
}

#[tokio::test]
async fn switched_off_no_keyword_request_is_made_and_the_message_ranks_as_written() {
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("done")]).with_keywords(["hotel booking search"]));
    Agent::new(Arc::new(catalogue::registry()), model.clone())
        .with_policy(policy(asking().with_model_keywords(false)))
        .run(vec![Message::user(SLEEP)])
        .await
        .expect("runs");
    assert!(model.keyword_requests().is_empty());
    assert!(!offered(&model.requests()[0]).contains(&"hotel_search"));

    // Nor when pre-promotion is off, or nothing is deferred.
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("done")]));
    Agent::new(Arc::new(catalogue::registry()), model.clone())
        .with_policy(policy(PrePromotion::off()))
        .run(vec![Message::user(SLEEP)])
        .await
        .expect("runs");
    let mut direct = tinytools::ToolRegistry::new();
    direct.register_as(Arc::new(NightShelter), ToolExposure::Direct).expect("registers");
    let direct_model = Arc::new(ScriptedModel::new([ModelResponse::text("done")]));
    Agent::new(Arc::new(direct), direct_model.clone())
        .with_policy(policy(asking()))
        .run(vec![Message::user(SLEEP)])
        .await
        .expect("runs");
    assert!(model.keyword_requests().is_empty() && direct_model.keyword_requests().is_empty());
}

#[tokio::test]
async fn captured_the_event_carries_the_keywords_the_ranking_used() {
    let model = Arc::new(
        ScriptedModel::new([ModelResponse::text("done")]).with_keywords(["Hotel booking, API search\nwhy: a bed"]),
    );
    let recorder = Arc::new(Recorder::default());
    Agent::new(Arc::new(catalogue::registry()), model)
        .with_policy(policy(asking()).with_capture(Capture::default().with_tool_io(true)))
        .with_events(recorder.clone())
        .run(vec![Message::user(SLEEP)])
        .await
        .expect("runs");
    // The first line's words, less the echo of the request ("API").
    assert_eq!(keyword_events(&recorder.events()), [(Some("hotel booking search".to_owned()), None, None)]);
}

/// Answers turns and keyword requests, each with its own usage, counting both.
struct Metered {
    turns: AtomicUsize,
    keywords: AtomicUsize,
}

#[async_trait::async_trait]
impl ChatModel for Metered {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let mut response = if request.purpose == RequestPurpose::Keywords {
            self.keywords.fetch_add(1, Ordering::SeqCst);
            let mut response = ModelResponse::text("hotel booking");
            response.usage = Some(Usage::new(40, 3));
            response
        } else {
            self.turns.fetch_add(1, Ordering::SeqCst);
            ModelResponse::text("done")
        };
        if response.usage.is_none() {
            response.usage = Some(Usage::new(500, 10));
        }
        Ok(response)
    }
}

#[tokio::test]
async fn the_keyword_request_is_the_run_s_usage_and_within_its_request_limit() {
    let run = |limits: UsageLimits| async move {
        let model = Arc::new(Metered { turns: AtomicUsize::new(0), keywords: AtomicUsize::new(0) });
        let recorder = Arc::new(Recorder::default());
        let outcome = Agent::new(Arc::new(catalogue::registry()), model.clone())
            .with_policy(policy(asking()).with_usage_limits(limits))
            .with_events(recorder.clone())
            .run(vec![Message::user(SLEEP)])
            .await;
        let counts = (model.keywords.load(Ordering::SeqCst), model.turns.load(Ordering::SeqCst));
        (outcome, counts, recorder.events())
    };
    let (outcome, counts, events) = run(UsageLimits::default()).await;
    let outcome = outcome.expect("runs");
    assert_eq!(counts, (1, 1));
    assert_eq!((outcome.usage.prompt_tokens, outcome.usage.completion_tokens), (540, 13), "both requests counted");
    assert_eq!(keyword_events(&events), [(None, Some(Usage::new(40, 3)), None)]);

    // A limit of two requests holds the keyword request and the answer.
    let (outcome, counts, _) = run(UsageLimits::default().with_max_requests(2)).await;
    assert_eq!((outcome.map(|o| o.stop).ok(), counts), (Some(StopReason::Answered), (1, 1)));
    // A limit of one leaves no room for it: the one request is the conversation's.
    let (outcome, counts, events) = run(UsageLimits::default().with_max_requests(1)).await;
    assert_eq!((outcome.map(|o| o.stop).ok(), counts), (Some(StopReason::Answered), (0, 1)));
    assert!(keyword_events(&events).is_empty());
}

/// Fails every keyword request; answers every turn.
struct KeywordsDown;

#[async_trait::async_trait]
impl ChatModel for KeywordsDown {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        match request.purpose {
            RequestPurpose::Keywords => Err(ModelError::Transport("connection reset".into())),
            _ => Ok(ModelResponse::text(format!("offered {}", offered(request).join(",")))),
        }
    }
}

#[tokio::test]
async fn a_failed_keyword_request_leaves_the_message_ranked_as_written_and_the_run_goes_on() {
    let recorder = Arc::new(Recorder::default());
    let outcome = Agent::new(Arc::new(catalogue::registry()), Arc::new(KeywordsDown))
        .with_policy(policy(asking()))
        .with_events(recorder.clone())
        .run(vec![Message::user("What is ACME stock trading at?")])
        .await
        .expect("the run goes on");
    assert_eq!(outcome.stop, StopReason::Answered);
    assert!(outcome.answer.contains("stock_quote"), "the message's own words still rank: {}", outcome.answer);
    let events = keyword_events(&recorder.events());
    let [(None, None, Some(error))] = events.as_slice() else { panic!("one failed keyword request: {events:?}") };
    assert!(error.contains("connection reset"), "{error}");
}

/// Replaces every user message's text before it is sent.
struct Redact;

#[async_trait::async_trait]
impl Middleware for Redact {
    async fn before_send(&self, messages: &mut Vec<Message>, _tools: &[ToolSchema]) {
        for message in messages.iter_mut() {
            if let Message::User { content } = message {
                *content = content.replace("Porto", "[city]");
            }
        }
    }
}

#[tokio::test]
async fn the_keyword_request_passes_through_the_middleware_like_every_request() {
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("done")]));
    Agent::new(Arc::new(catalogue::registry()), model.clone())
        .with_policy(policy(asking()))
        .with_middleware(Arc::new(Redact))
        .run(vec![Message::user(SLEEP)])
        .await
        .expect("runs");
    let sent = serde_json::to_string(&model.keyword_requests()[0].messages).expect("serializes");
    assert!(!sent.contains("Porto") && sent.contains("[city]"), "{sent}");
}

#[tokio::test]
async fn keywords_naming_a_hidden_tool_do_not_reach_it() {
    let mut registry = catalogue::registry();
    registry.register_as(Arc::new(NightShelter), ToolExposure::Hidden).expect("registers");
    let model = Arc::new(
        ScriptedModel::new([ModelResponse::text("done")])
            .with_keywords(["night_shelter_booking night shelter booking"]),
    );
    let recorder = Arc::new(Recorder::default());
    Agent::new(Arc::new(registry), model.clone())
        .with_policy(policy(asking()))
        .with_events(recorder.clone())
        .run(vec![Message::user(SLEEP)])
        .await
        .expect("runs");
    let everything = serde_json::to_string(&model.requests()).expect("serializes");
    assert!(!everything.contains("night_shelter_booking"), "{everything}");
    let events = serde_json::to_string(&recorder.events()).expect("serializes");
    assert!(!events.contains("night_shelter_booking"), "{events}");
}

/// The promotions of a run's first message: names and confidences.
fn promotions(events: &[RunEvent]) -> Vec<(String, f32)> {
    events
        .iter()
        .filter_map(|event| match event {
            RunEvent::ToolsPromoted { names, cause: Promotion::UserMessage { confidences, .. } } => {
                Some(names.iter().cloned().zip(confidences.iter().copied()).collect::<Vec<_>>())
            }
            _ => None,
        })
        .flatten()
        .collect()
}

#[tokio::test]
async fn under_a_gate_only_a_message_without_a_confident_hit_asks_for_keywords() {
    const STOCK: &str = "What is ACME stock trading at?";
    let run = |pre: PrePromotion, message: &'static str| async move {
        let model = Arc::new(ScriptedModel::new([ModelResponse::text("done")]).with_keywords(["hotel booking search"]));
        let recorder = Arc::new(Recorder::default());
        Agent::new(Arc::new(catalogue::registry()), model.clone())
            .with_policy(policy(pre))
            .with_events(recorder.clone())
            .run(vec![Message::user(message)])
            .await
            .expect("runs");
        (model.keyword_requests().len(), promotions(&recorder.events()))
    };
    // The message as written: its best hit and that hit's confidence.
    let (asked, alone) = run(asking().with_model_keywords(false), STOCK).await;
    assert_eq!(asked, 0);
    let Some((best, confidence)) = alone.first().cloned() else { panic!("the message alone promotes: {alone:?}") };
    assert_eq!(best, "stock_quote");

    // A gate at that confidence: the message's own ranking is kept and no request is made.
    let (asked, gated) = run(asking().with_model_keywords_below(Some(confidence)), STOCK).await;
    assert_eq!((asked, &gated), (0, &alone));
    // A gate just above it: the keywords are asked for and ranked with the message.
    let (asked, above) = run(asking().with_model_keywords_below(Some(confidence + 0.01)), STOCK).await;
    assert_eq!(asked, 1);
    assert!(above.iter().any(|(name, _)| name == "hotel_search"), "the keywords were ranked: {above:?}");

    // A message that shares no word with its tool asks, and the keywords promote the tool.
    let (asked, found) = run(asking().with_model_keywords_below(Some(0.2)), SLEEP).await;
    assert_eq!(asked, 1);
    assert!(found.iter().any(|(name, _)| name == "hotel_search"), "{found:?}");
    // Keywords off wins over the gate.
    let (asked, _) = run(asking().with_model_keywords(false).with_model_keywords_below(Some(0.2)), SLEEP).await;
    assert_eq!(asked, 0);
}

#[tokio::test]
async fn the_default_run_asks_for_no_keywords_and_the_small_model_profile_does() {
    let run = |agent: Agent, model: Arc<ScriptedModel>| async move {
        agent.run(vec![Message::user(SLEEP)]).await.expect("runs");
        (model.keyword_requests().len(), model.requests().len())
    };
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("done")]).with_keywords(["hotel booking"]));
    let default = Agent::new(Arc::new(catalogue::registry()), model.clone());
    assert_eq!(run(default, model).await, (0, 1), "one request for one turn, nothing else");
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("done")]).with_keywords(["hotel booking"]));
    let small = Agent::new(Arc::new(catalogue::registry()), model.clone()).for_small_model();
    assert_eq!(run(small, model).await, (1, 1));
}
