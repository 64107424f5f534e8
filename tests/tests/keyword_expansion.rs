//! `ExpandingRanker`: a chat model's search keywords bridge a message that shares no word with
//! its tool; the keyword model sees the message and nothing of the catalogue; a failing one
//! leaves the ranking as it was; a Hidden tool stays out of reach whatever the keywords say.
//! (The run's own keywords, `PrePromotion::model_keywords`, are switched off here: the ranker
//! does the expanding; `model_keywords.rs` tests the run's.)

use std::sync::Arc;

use tinytools::discovery::{PrePromotion, ToolDiscoveryPolicy};
use tinytools::model::{ChatModel, Message, ModelError, ModelRequest, ModelResponse};
use tinytools::rank::{Bm25Ranker, DeferredCatalog, ExpandingRanker, RankContext, RankRequest, ToolRanker};
use tinytools::run::{Agent, Promotion, RunEvent, RunPolicy};
use tinytools::testkit::ScriptedModel;
use tinytools::{ToolExposure, ToolRegistry};
use tinytools_examples::catalogue;
use tinytools_integration_tests::{NightShelter, Recorder};

const SLEEP: &str = "Find us somewhere to sleep in Porto, arriving 3 June 2026 and leaving the 6th.";

/// Runs `user` over `registry` with `keywords` writing the search keywords; returns the run
/// model's first request and the pre-promotion events (ranker, promoted names, fallback).
async fn first_request(
    registry: ToolRegistry,
    keywords: Arc<dyn ChatModel>,
    user: &str,
) -> (ModelRequest, Vec<(String, Vec<String>, Option<String>)>, Arc<ExpandingRanker>) {
    let ranker = Arc::new(ExpandingRanker::new(Arc::new(Bm25Ranker), keywords));
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("done")]));
    let recorder = Arc::new(Recorder::default());
    let discovery = plain_discovery().with_ranker(ranker.clone());
    Agent::new(Arc::new(registry), model.clone())
        .with_policy(RunPolicy::default().with_discovery(discovery))
        .with_events(recorder.clone())
        .run(vec![Message::user(user)])
        .await
        .expect("runs");
    let promotions = recorder
        .events()
        .into_iter()
        .filter_map(|event| match event {
            RunEvent::ToolsPromoted { names, cause: Promotion::UserMessage { ranker, fallback, .. } } => {
                Some((ranker, names, fallback))
            }
            _ => None,
        })
        .collect();
    (model.requests().remove(0), promotions, ranker)
}

/// Discovery without the run's own keywords.
fn plain_discovery() -> ToolDiscoveryPolicy {
    ToolDiscoveryPolicy::default().with_pre_promotion(PrePromotion::default().with_model_keywords(false))
}

/// A keyword model that writes `line`.
fn writing(line: &str) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::new([]).with_keywords([line]))
}

/// A model whose every request fails.
struct Failing;

#[async_trait::async_trait]
impl ChatModel for Failing {
    async fn complete(&self, _request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        Err(ModelError::Transport("the keyword server is down".into()))
    }
}

fn offered(request: &ModelRequest) -> Vec<&str> {
    request.tools.iter().map(|tool| tool.name.as_str()).collect()
}

#[tokio::test]
async fn a_message_that_shares_no_word_with_its_tool_reaches_it_through_the_models_keywords() {
    // BM25 alone does not promote `hotel_search` for this message: no word in common.
    let plain = Arc::new(ScriptedModel::new([ModelResponse::text("done")]));
    Agent::new(Arc::new(catalogue::registry()), plain.clone())
        .with_policy(RunPolicy::default().with_discovery(plain_discovery()))
        .run(vec![Message::user(SLEEP)])
        .await
        .expect("runs");
    assert!(!offered(&plain.requests()[0]).contains(&"hotel_search"), "{:?}", offered(&plain.requests()[0]));

    let keywords = writing("Hotel booking, search\nBecause they need a bed.");
    let (request, promotions, ranker) = first_request(catalogue::registry(), keywords.clone(), SLEEP).await;
    assert!(offered(&request).contains(&"hotel_search"), "{:?}", offered(&request));
    let [(name, promoted, fallback)] = promotions.as_slice() else { panic!("one pre-promotion: {promotions:?}") };
    assert_eq!((name.as_str(), fallback), ("bm25+keywords", &None));
    assert_eq!(promoted[0], "hotel_search");

    // The keyword model was asked once, with the message and no tools, and saw no tool's name.
    let asked = keywords.keyword_requests();
    assert_eq!(asked.len(), 1);
    assert!(asked[0].tools.is_empty() && asked[0].callable_by_name.is_empty());
    let text = serde_json::to_string(&asked[0].messages).expect("serializes");
    assert!(text.contains("somewhere to sleep in Porto"), "{text}");
    for tool in catalogue::registry().schemas() {
        assert!(!text.contains(&tool.name), "the keyword model saw {}", tool.name);
    }
    assert_eq!((ranker.usage().calls, ranker.usage().failed), (1, 0));
    // Only the first line's words are kept: the run model never sees the keyword model's text.
    let run_text = serde_json::to_string(&request.messages).expect("serializes");
    assert!(!run_text.contains("booking") && !run_text.contains("bed"), "{run_text}");
}

#[tokio::test]
async fn a_failing_keyword_model_leaves_the_query_as_it_was() {
    let (request, promotions, ranker) =
        first_request(catalogue::registry(), Arc::new(Failing), "What is ACME stock trading at?").await;
    assert!(offered(&request).contains(&"stock_quote"), "the message's own words still rank");
    let [(name, _, fallback)] = promotions.as_slice() else { panic!("one pre-promotion: {promotions:?}") };
    assert_eq!((name.as_str(), fallback), ("bm25+keywords", &None), "the inner ranker answered");
    assert_eq!((ranker.usage().calls, ranker.usage().failed), (1, 1));

    // An answer with no words in it expands nothing either, and is not a failure.
    let blank = writing("  \n ** \n");
    let (_, promotions, ranker) = first_request(catalogue::registry(), blank, SLEEP).await;
    assert!(promotions.iter().all(|(_, names, _)| !names.contains(&"hotel_search".to_owned())));
    assert_eq!((ranker.usage().calls, ranker.usage().failed), (1, 0));
}

#[tokio::test]
async fn words_the_keyword_model_echoes_from_its_instructions_promote_nothing() {
    // Qwen2.5-Coder-1.5B's real answer for this message. Its "api" echoes the keyword prompt
    // ("which kind of app or API ...") and, kept, matches a Datadog tool's parameter example.
    const CAPITAL: &str = "My kid asks what the capital of Australia is. Is it Sydney?";
    let keywords = writing("geolocation, api, getlocation");
    let (request, promotions, ranker) = first_request(catalogue::registry(), keywords, CAPITAL).await;
    assert!(promotions.is_empty(), "{promotions:?}");
    assert_eq!(offered(&request), ["read_note", "tool_search"]);
    assert_eq!(ranker.expand(CAPITAL).await, format!("{CAPITAL}\ngeolocation getlocation"), "cached, echo dropped");

    // The echo alone is what matched: kept, it ranks the Datadog tool first.
    let registry = catalogue::registry();
    let catalog = DeferredCatalog::new(&registry, |_| true);
    let query = format!("{CAPITAL}\ngeolocation api getlocation");
    let context = RankContext::default();
    let request = RankRequest::new(&query, 3, &catalog, &context);
    let hits = Bm25Ranker.rank(request).await.expect("BM25 ranks");
    assert_eq!(hits.first().map(|hit| hit.name.as_str()), Some("datadog_query_metrics"), "{hits:?}");
}

#[tokio::test]
async fn keywords_naming_a_hidden_tool_do_not_reach_it() {
    let mut registry = catalogue::registry();
    registry.register_as(Arc::new(NightShelter), ToolExposure::Hidden).expect("registers");
    let keywords = writing("night_shelter_booking night shelter booking");
    let (request, promotions, _) = first_request(registry, keywords, SLEEP).await;
    let everything = serde_json::to_string(&request).expect("serializes");
    assert!(!everything.contains("night_shelter_booking"), "{everything}");
    assert!(promotions.iter().all(|(_, names, _)| !names.contains(&"night_shelter_booking".to_owned())));
}
