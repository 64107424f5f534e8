//! The two-stage search: `tool_search` answers its best few with full schemas and more as
//! compact candidates (a name and one line), and the first request at scale offers the
//! message's likely tools as candidate lines in `tool_search`'s description. A candidate is
//! called by name through the existing path: valid arguments run; refused ones are answered
//! with the argument error and promote the tool's schema.

use std::sync::Arc;

use serde_json::{Value, json};
use tinytools::ToolExposure;
use tinytools::discovery::{DiscoveryBridge, MAX_CANDIDATES, PrePromotion, ToolDiscoveryPolicy};
use tinytools::model::{Message, ModelResponse};
use tinytools::run::{Agent, Promotion, RunEvent, RunPolicy};
use tinytools::schema::EstimatedTokens;
use tinytools::surface::{Subject, Surface};
use tinytools::testkit::ScriptedModel;
use tinytools_examples::catalogue;
use tinytools_examples::eval::stub_tool;
use tinytools_integration_tests::{Recorder, names};

const QUERY: &str = "price of a stock or a coin in another currency";

fn listed(answer: &Value, field: &str) -> Vec<String> {
    answer[field].as_array().into_iter().flatten().filter_map(|m| m["name"].as_str().map(str::to_owned)).collect()
}

async fn answer(bridge: &DiscoveryBridge, args: Value) -> Value {
    serde_json::from_str(&bridge.search(&args).await.result.to_model_text()).expect("a JSON answer")
}

#[tokio::test]
async fn a_search_answers_its_best_few_in_full_and_the_next_ones_compactly() {
    let policy = ToolDiscoveryPolicy::default().with_search_candidates(6, 10_000);
    let bridge = DiscoveryBridge::new(&catalogue::registry(), policy);
    let answer = answer(&bridge, json!({"query": QUERY, "limit": 2})).await;
    let (full, compact) = (listed(&answer, "matches"), listed(&answer, "candidates"));
    assert_eq!(full.len(), 2, "{answer}");
    assert!(!compact.is_empty() && compact.len() <= 6, "{answer}");
    assert!(compact.iter().all(|name| !full.contains(name)), "a candidate never repeats a full match: {answer}");
    assert!(answer["matches"][0]["parameters"].is_object(), "full matches keep the spec's shape");
    let first = &answer["candidates"][0];
    assert_eq!(first.as_object().map(|o| o.len()), Some(2), "a name and a line: {first}");
    assert!(!first["line"].as_str().unwrap_or("").is_empty());
    assert!(answer["note"].as_str().unwrap_or("").contains("by its name"), "{answer}");
    // One ranking: the candidates are the hits right after the full matches.
    let wide = self::answer(&bridge, json!({"query": QUERY, "limit": 2 + compact.len()})).await;
    assert_eq!(listed(&wide, "matches")[2..], compact[..], "{wide}");
    // Deterministic, byte for byte.
    let again = self::answer(&bridge, json!({"query": QUERY, "limit": 2})).await;
    assert_eq!(answer, again);
}

#[tokio::test]
async fn candidates_are_clamped_budgeted_and_can_be_switched_off() {
    let registry = catalogue::registry();
    let off = DiscoveryBridge::new(&registry, ToolDiscoveryPolicy::default().with_search_candidates(0, 10_000));
    let answer = answer(&off, json!({"query": QUERY})).await;
    assert!(answer.get("candidates").is_none(), "full matches only: {answer}");
    assert_eq!(listed(&answer, "matches").len(), 5, "the spec's default of 5 full matches");
    let plain = DiscoveryBridge::new(&registry, ToolDiscoveryPolicy::default());
    let by_default = self::answer(&plain, json!({"query": QUERY})).await;
    assert_eq!(by_default, answer, "opt-in: by default a search answers as the spec says");

    let huge = ToolDiscoveryPolicy::default().with_search_candidates(usize::MAX, usize::MAX);
    assert_eq!(huge.search_candidates(), MAX_CANDIDATES);
    let all = DiscoveryBridge::new(&registry, huge);
    let answer = self::answer(&all, json!({"query": QUERY, "limit": 1})).await;
    assert!(listed(&answer, "candidates").len() <= MAX_CANDIDATES);

    // A budget of one line's bytes keeps at most one candidate; none fits zero bytes.
    let tight = DiscoveryBridge::new(&registry, ToolDiscoveryPolicy::default().with_search_candidates(10, 80));
    let answer = self::answer(&tight, json!({"query": QUERY, "limit": 1})).await;
    assert!(listed(&answer, "candidates").len() <= 1, "{answer}");
    let none = DiscoveryBridge::new(&registry, ToolDiscoveryPolicy::default().with_search_candidates(10, 0));
    assert!(self::answer(&none, json!({"query": QUERY})).await.get("candidates").is_none());
}

#[tokio::test]
async fn hidden_and_narrowed_out_tools_are_never_candidates() {
    let mut registry = catalogue::registry();
    let schema = json!({"type": "object", "properties": {"coin": {"type": "string"}}});
    let hidden =
        stub_tool("crypto_price_secret".into(), "Get the secret price of a coin or stock.".into(), schema, "{}");
    registry.register_as(hidden, ToolExposure::Hidden).expect("registers");
    let allowed = |subject: Subject<'_>| subject.name() != "crypto_price";
    let policy = ToolDiscoveryPolicy::default().with_search_candidates(MAX_CANDIDATES, usize::MAX);
    let bridge = DiscoveryBridge::over(Surface::new(&registry, &[&allowed]), policy);
    let text = bridge.search(&json!({"query": QUERY, "limit": 1})).await.result.to_model_text();
    assert!(text.contains("\"candidates\""), "{text}");
    assert!(!text.contains("crypto_price"), "neither Hidden nor narrowed out: {text}");
    // The first request's candidates read the same catalogue.
    let small = ToolDiscoveryPolicy::default().with_manifest_token_budget(20);
    let bridge = DiscoveryBridge::over(Surface::new(&registry, &[&allowed]), small);
    let ranked = bridge.catalog().rank_with_candidates(bridge.policy(), QUERY, 60).await;
    let pre = PrePromotion::default().with_candidates(MAX_CANDIDATES, usize::MAX).with_min_confidence(0.0);
    let candidates = bridge.first_request_candidates(&ranked, pre, &EstimatedTokens, |_| false);
    assert!(!candidates.is_empty());
    let schema = bridge.schema_offering(&EstimatedTokens, &candidates);
    assert!(!schema.description.contains("crypto_price"), "{}", schema.description);
}

/// A run over the catalogue whose model searches, then makes `then`.
async fn search_then_call(then: (&'static str, Value)) -> (Vec<Vec<String>>, Vec<RunEvent>, Vec<Message>, Value) {
    let policy =
        ToolDiscoveryPolicy::default().with_pre_promotion(PrePromotion::off()).with_search_candidates(10, 1_500);
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("s1", "tool_search", json!({"query": QUERY, "limit": 1}))]),
        ModelResponse::calls([("c1", then.0, then.1)]),
        ModelResponse::text("done"),
    ]));
    let recorder = Arc::new(Recorder::default());
    let outcome = Agent::new(Arc::new(catalogue::registry()), model.clone())
        .with_policy(RunPolicy::default().with_discovery(policy))
        .with_events(recorder.clone())
        .run(vec![Message::user("go")])
        .await
        .expect("runs");
    let requests = model.requests().iter().map(|r| names(r).into_iter().map(str::to_owned).collect()).collect();
    let Message::Tool { content, .. } = &outcome.transcript.messages[2] else { panic!("the search's answer") };
    let answer = serde_json::from_str(content).expect("JSON");
    (requests, recorder.events(), outcome.transcript.messages, answer)
}

#[tokio::test]
async fn a_candidate_called_by_name_with_valid_arguments_runs() {
    let (requests, events, messages, answer) = search_then_call(("stock_quote", json!({"symbol": "ACME"}))).await;
    assert!(listed(&answer, "candidates").contains(&"stock_quote".to_owned()), "a candidate here: {answer}");
    assert!(!requests[1].contains(&"stock_quote".to_owned()), "not promoted by the search: {:?}", requests[1]);
    assert!(
        events.iter().any(|e| matches!(e, RunEvent::DeferredToolCall { tool_name, .. } if tool_name == "stock_quote"))
    );
    assert!(events.iter().any(|e| matches!(e, RunEvent::ToolStarted { tool_name, .. } if tool_name == "stock_quote")));
    let Message::Tool { content, is_error, .. } = &messages[4] else { panic!("the call's answer") };
    assert!(!is_error && content.contains("ACME"), "{content}");
}

#[tokio::test]
async fn a_candidate_called_with_bad_arguments_gets_the_error_and_its_schema_for_the_next_request() {
    let (requests, events, messages, answer) = search_then_call(("stock_quote", json!({"ticker": "ACME"}))).await;
    assert!(listed(&answer, "candidates").contains(&"stock_quote".to_owned()), "{answer}");
    assert!(!requests[1].contains(&"stock_quote".to_owned()), "{:?}", requests[1]);
    let Message::Tool { content, is_error, .. } = &messages[4] else { panic!("the call's answer") };
    assert!(*is_error);
    assert!(content.contains("\"symbol\" is a required property"), "{content}");
    assert!(content.contains("`stock_quote` takes: {symbol: string"), "{content}");
    assert!(requests[2].contains(&"stock_quote".to_owned()), "typed on the next request: {:?}", requests[2]);
    let promoted: Vec<_> = events
        .into_iter()
        .filter_map(|e| match e {
            RunEvent::ToolsPromoted { names, cause } => Some((names, cause)),
            _ => None,
        })
        .collect();
    assert!(promoted.contains(&(vec!["stock_quote".to_owned()], Promotion::RejectedCall)), "{promoted:?}");
}

/// The first request of a one-message run over the catalogue with a manifest budget of
/// `manifest` tokens.
async fn first_request(manifest: usize, pre: PrePromotion) -> tinytools::model::ModelRequest {
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("done")]));
    let policy = ToolDiscoveryPolicy::default().with_manifest_token_budget(manifest).with_pre_promotion(pre);
    Agent::new(Arc::new(catalogue::registry()), model.clone())
        .with_policy(RunPolicy::default().with_discovery(policy))
        .run(vec![Message::user("What is the price of ACME stock, and of a cryptocurrency in another currency?")])
        .await
        .expect("runs");
    let requests = model.requests();
    assert_eq!(requests.len(), 1, "no extra model request");
    requests.into_iter().next().expect("one request")
}

fn description(request: &tinytools::model::ModelRequest) -> String {
    request.tools.iter().find(|t| t.name == "tool_search").map(|t| t.description.clone()).unwrap_or_default()
}

#[tokio::test]
async fn at_scale_the_first_request_offers_the_message_s_likely_tools_as_candidate_lines() {
    let pre = PrePromotion::default().with_limit(1).with_candidates(20, 1_500);
    let request = first_request(20, pre).await;
    let text = description(&request);
    assert!(text.contains("Likely tools for this request"), "{text}");
    let promoted: Vec<&str> = names(&request)[2..].to_vec();
    assert_eq!(promoted.len(), 1, "{:?}", names(&request));
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("- ")).collect();
    assert!(!lines.is_empty(), "{text}");
    let finance = ["- stock_quote: ", "- crypto_price: ", "- currency_convert: "];
    assert!(lines.iter().any(|l| finance.iter().any(|f| l.starts_with(f))), "the message's tools: {text}");
    assert!(lines.iter().all(|l| !l.starts_with(&format!("- {}:", promoted[0]))), "never the promoted tool twice");
    assert!(lines.iter().map(|l| l.len() + 1).sum::<usize>() <= pre.candidate_bytes);
    // The Direct tools and the conversation are as without candidates: only tool_search's
    // description differs, and nothing is written in the user's voice.
    let without = first_request(20, pre.with_candidates(0, 0)).await;
    assert_eq!(names(&request), names(&without));
    assert_eq!(request.tools[0], without.tools[0], "the Direct tool is untouched");
    assert_eq!(request.messages, without.messages);
    assert!(!description(&without).contains("Likely tools"), "a host can switch it off");
}

#[tokio::test]
async fn a_manifest_that_lists_every_line_gets_no_candidates() {
    let asked = PrePromotion::default().with_candidates(20, 1_500);
    let request = first_request(4_000, asked).await;
    assert!(!description(&request).contains("Likely tools"), "{}", description(&request));
    let by_default = first_request(20, PrePromotion::default()).await;
    assert!(!description(&by_default).contains("Likely tools"), "opt-in: {}", description(&by_default));
    let off = first_request(20, PrePromotion::off().with_candidates(20, 1_500)).await;
    assert!(!description(&off).contains("Likely tools"), "pre-promotion off: no candidates either");
}
