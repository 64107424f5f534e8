//! Query-aware discovery: a new user message is ranked against the deferred catalogue and the
//! best hits are promoted before the model is called; a deferred tool called by name with
//! arguments admission refuses is promoted and answered with its signature.

use std::sync::Arc;

use serde_json::json;
use tinytools::discovery::{PrePromotion, ToolDiscoveryPolicy};
use tinytools::model::{Message, ModelRequest, ModelResponse};
use tinytools::rank::{RankRequest, RankedTool, RankerError, ToolRanker};
use tinytools::run::{Agent, Promotion, RunEvent, RunPolicy, Transcript};
use tinytools::testkit::ScriptedModel;
use tinytools_examples::catalogue;
use tinytools_integration_tests::{Recorder, names};

fn promotions(recorder: &Recorder) -> Vec<(Vec<String>, Promotion)> {
    recorder
        .events()
        .into_iter()
        .filter_map(|event| match event {
            RunEvent::ToolsPromoted { names, cause } => Some((names, cause)),
            _ => None,
        })
        .collect()
}

fn policy(pre_promotion: PrePromotion) -> RunPolicy {
    RunPolicy::default().with_discovery(ToolDiscoveryPolicy::default().with_pre_promotion(pre_promotion))
}

fn answer_only() -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::new([ModelResponse::text("done")]))
}

async fn first_request(pre: PrePromotion, user: &str) -> (ModelRequest, Vec<(Vec<String>, Promotion)>, Transcript) {
    let model = answer_only();
    let recorder = Arc::new(Recorder::default());
    let agent = Agent::new(Arc::new(catalogue::registry()), model.clone())
        .with_policy(policy(pre))
        .with_events(recorder.clone());
    let outcome = agent.run(vec![Message::user(user)]).await.expect("runs");
    (model.requests().remove(0), promotions(&recorder), outcome.transcript)
}

const SPEC_TASK: &str = "What is ACME stock trading at right now?";

#[tokio::test]
async fn the_best_hit_is_promoted_before_the_first_call_and_recorded_like_a_searched_one() {
    let (request, promotions, transcript) = first_request(PrePromotion::default(), SPEC_TASK).await;
    assert_eq!(names(&request)[..2], ["read_note", "tool_search"], "the stable prefix comes first");
    assert!(names(&request)[2..].contains(&"stock_quote"), "{:?}", names(&request));
    let quote = request.tools.iter().find(|t| t.name == "stock_quote").expect("promoted");
    assert_eq!(quote.parameters["properties"]["symbol"]["type"], "string", "the full typed declaration");
    let [(promoted, Promotion::UserMessage { ranker, confidences, fallback })] = promotions.as_slice() else {
        panic!("one pre-promotion event: {promotions:?}")
    };
    assert_eq!(promoted[0], "stock_quote");
    assert_eq!((ranker.as_str(), fallback), ("bm25", &None));
    assert_eq!(confidences.len(), promoted.len());
    assert!(confidences.iter().all(|c| *c >= PrePromotion::default().min_confidence), "{confidences:?}");
    assert!(confidences.windows(2).all(|w| w[0] >= w[1]), "best first: {confidences:?}");
    // The same transcript patch a search makes, before the first model call.
    assert_eq!(transcript.patches.len(), 1);
    assert_eq!(transcript.patches[0].at_message, 1);
    assert_eq!(transcript.promoted().collect::<Vec<_>>(), promoted.iter().map(String::as_str).collect::<Vec<_>>());
}

#[tokio::test]
async fn an_unrelated_message_promotes_nothing() {
    let incidental = "Show me the highest common factor of 36 and 24.";
    for user in ["Tell me a joke about penguins.", "Thanks, that is all for today!", incidental, ""] {
        let (request, promotions, transcript) = first_request(PrePromotion::default(), user).await;
        assert_eq!(names(&request), ["read_note", "tool_search"], "{user:?}");
        assert!(promotions.is_empty() && transcript.patches.is_empty(), "{user:?}: {promotions:?}");
    }
    // The same message with the floor at zero does promote: the floor is what held it back.
    let (request, _, _) = first_request(PrePromotion::default().with_min_confidence(0.0), incidental).await;
    assert!(request.tools.len() > 2, "{:?}", names(&request));
}

#[tokio::test]
async fn the_limit_and_the_token_budget_cap_what_is_promoted() {
    let wide = PrePromotion::default().with_limit(3).with_min_confidence(0.0).with_token_budget(100_000);
    let message = "Email the team the stock price and the weather forecast";
    let (request, _, _) = first_request(wide, message).await;
    assert_eq!(request.tools.len(), 2 + 3, "{:?}", names(&request));
    let (request, _, _) = first_request(wide.with_limit(1), message).await;
    assert_eq!(request.tools.len(), 2 + 1);
    let (request, promotions, _) = first_request(wide.with_token_budget(5), message).await;
    assert_eq!(names(&request), ["read_note", "tool_search"], "no declaration fits 5 tokens");
    assert!(promotions.is_empty());
    let off = first_request(PrePromotion::off(), SPEC_TASK).await;
    assert_eq!(names(&off.0), ["read_note", "tool_search"], "off means the bridge alone");
}

#[tokio::test]
async fn a_runner_up_far_behind_the_best_hit_is_not_promoted_beside_it() {
    let message = "Email the team the stock price and the weather forecast";
    let wide = PrePromotion::default().with_limit(3).with_min_confidence(0.0).with_token_budget(100_000);
    let (_, promotions, _) = first_request(wide, message).await;
    let [(all, Promotion::UserMessage { confidences, .. })] = promotions.as_slice() else {
        panic!("one pre-promotion event: {promotions:?}")
    };
    assert_eq!(all.len(), 3, "without the runner-up floor the limit decides: {all:?}");
    let share = confidences[1] / confidences[0];
    assert!(share < 1.0, "the ranking has a clear best hit: {confidences:?}");

    let just_above = wide.with_runner_up_floor(share + 0.01);
    let (request, promotions, _) = first_request(just_above, message).await;
    let [(alone, _)] = promotions.as_slice() else { panic!("{promotions:?}") };
    assert_eq!(alone, &all[..1], "only the best hit clears a floor above the runner-up's share");
    assert_eq!(names(&request), ["read_note", "tool_search", all[0].as_str()]);

    let (_, promotions, _) = first_request(wide.with_runner_up_floor(share - 0.01), message).await;
    let [(both, _)] = promotions.as_slice() else { panic!("{promotions:?}") };
    assert!(both.len() >= 2 && both[..2] == all[..2], "a floor under its share keeps it: {both:?}");
}

#[tokio::test]
async fn a_search_that_finds_a_pre_promoted_tool_adds_nothing_twice() {
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("s", "tool_search", json!({"query": "stock price of a ticker", "limit": 1}))]),
        ModelResponse::text("done"),
    ]));
    let agent = Agent::new(Arc::new(catalogue::registry()), model.clone()).with_policy(policy(PrePromotion::default()));
    agent.run(vec![Message::user(SPEC_TASK)]).await.expect("runs");
    let requests = model.requests();
    assert_eq!(names(&requests[0]), names(&requests[1]), "the prefix did not change");
    assert_eq!(names(&requests[1]).iter().filter(|n| **n == "stock_quote").count(), 1);
}

#[tokio::test]
async fn resume_restores_pre_promotions_the_rules_still_admit_and_ranks_the_new_message() {
    let (_, _, mut transcript) = first_request(PrePromotion::default(), SPEC_TASK).await;
    assert!(transcript.promoted().any(|name| name == "stock_quote"));
    transcript.messages.push(Message::Assistant { content: "ACME is at 12.50.".into(), tool_calls: Vec::new() });
    transcript.messages.push(Message::user("And what will the weather forecast be in Paris tomorrow?"));

    let next = answer_only();
    let recorder = Arc::new(Recorder::default());
    Agent::new(Arc::new(catalogue::registry()), next.clone())
        .with_events(recorder.clone())
        .resume(transcript.clone())
        .await
        .expect("resumes");
    let tools = names(&next.requests()[0]).into_iter().map(str::to_owned).collect::<Vec<_>>();
    assert!(tools.contains(&"stock_quote".to_owned()), "restored: {tools:?}");
    assert!(tools.contains(&"weather_forecast".to_owned()), "the new message is ranked: {tools:?}");
    assert!(matches!(promotions(&recorder).as_slice(), [(_, Promotion::UserMessage { .. })]));

    // Under an allow-list without it, the earlier promotion is not restored.
    let narrowed = answer_only();
    let allow = RunPolicy::default().allow_only(["read_note", "weather_forecast"]);
    Agent::new(Arc::new(catalogue::registry()), narrowed.clone())
        .with_policy(allow)
        .resume(transcript)
        .await
        .expect("resumes");
    assert_eq!(names(&narrowed.requests()[0]), ["read_note", "tool_search", "weather_forecast"]);

    // A transcript that does not end with a user message is not ranked again.
    let (_, _, mut answered) = first_request(PrePromotion::off(), SPEC_TASK).await;
    answered.messages.push(Message::Assistant { content: "Which ticker?".into(), tool_calls: Vec::new() });
    let again = answer_only();
    Agent::new(Arc::new(catalogue::registry()), again.clone()).resume(answered).await.expect("resumes");
    assert_eq!(names(&again.requests()[0]), ["read_note", "tool_search"]);
}

/// Names `weather_forecast` for anything, with a confidence.
struct AlwaysWeather;

#[async_trait::async_trait]
impl ToolRanker for AlwaysWeather {
    fn name(&self) -> &str {
        "always-weather"
    }
    async fn rank(&self, _request: RankRequest<'_>) -> Result<Vec<RankedTool>, RankerError> {
        Ok(vec![RankedTool::new("weather_forecast", Some(0.9))])
    }
}

/// Fails every time.
struct Broken;

#[async_trait::async_trait]
impl ToolRanker for Broken {
    fn name(&self) -> &str {
        "broken"
    }
    async fn rank(&self, _request: RankRequest<'_>) -> Result<Vec<RankedTool>, RankerError> {
        Err(RankerError::unavailable("index offline"))
    }
}

#[tokio::test]
async fn the_runs_ranker_decides_and_a_failing_one_falls_back_to_bm25() {
    for (ranker, expect_ranker, expect_tool) in [
        (Arc::new(AlwaysWeather) as Arc<dyn ToolRanker>, "always-weather", "weather_forecast"),
        (Arc::new(Broken), "bm25", "stock_quote"),
    ] {
        let model = answer_only();
        let recorder = Arc::new(Recorder::default());
        let discovery = ToolDiscoveryPolicy::default().with_ranker(ranker);
        Agent::new(Arc::new(catalogue::registry()), model.clone())
            .with_policy(RunPolicy::default().with_discovery(discovery))
            .with_events(recorder.clone())
            .run(vec![Message::user(SPEC_TASK)])
            .await
            .expect("runs");
        assert!(names(&model.requests()[0]).contains(&expect_tool));
        let promotions = promotions(&recorder);
        let [(_, Promotion::UserMessage { ranker, fallback, .. })] = promotions.as_slice() else {
            panic!("one pre-promotion")
        };
        assert_eq!(ranker, expect_ranker);
        assert_eq!(fallback.is_some(), expect_ranker == "bm25");
    }
}

#[tokio::test]
async fn a_deferred_tool_called_without_its_schema_and_refused_is_promoted_and_answered_with_its_signature() {
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c1", "stock_quote", json!({"ticker": "ACME"}))]),
        ModelResponse::calls([("c2", "read_note", json!({"name": "q3"}))]),
        ModelResponse::text("done"),
    ]));
    let recorder = Arc::new(Recorder::default());
    let outcome = Agent::new(Arc::new(catalogue::registry()), model.clone())
        .with_policy(policy(PrePromotion::off()))
        .with_events(recorder.clone())
        .run(vec![Message::user("go")])
        .await
        .expect("runs");
    let Message::Tool { content, is_error, .. } = &outcome.transcript.messages[2] else { panic!("a tool answer") };
    assert!(*is_error);
    assert!(content.contains("\"symbol\" is a required property"), "{content}");
    assert!(content.contains("`stock_quote` takes: {symbol: string, options?: {"), "{content}");
    assert!(content.contains("- symbol: Ticker symbol"), "{content}");
    let requests = model.requests();
    assert_eq!(names(&requests[0]), ["read_note", "tool_search"]);
    assert_eq!(names(&requests[1]), ["read_note", "tool_search", "stock_quote"], "promoted for the retry");
    assert_eq!(promotions(&recorder), [(vec!["stock_quote".to_owned()], Promotion::RejectedCall)]);
    // A Direct tool's rejection carries its signature too, and promotes nothing.
    let Message::Tool { content, .. } = &outcome.transcript.messages[4] else { panic!("a tool answer") };
    assert!(content.contains("`read_note` takes: {title: string}"), "{content}");
    assert_eq!(outcome.transcript.patches.len(), 1);
}

#[tokio::test]
async fn an_invented_name_is_ranked_like_a_message_and_its_best_matches_are_loaded_and_named() {
    let run = |registry: tinytools::ToolRegistry, pre: PrePromotion| async move {
        let model = Arc::new(ScriptedModel::new([
            ModelResponse::calls([("c1", "get_stock_price", json!({"ticker": "ACME"}))]),
            ModelResponse::text("done"),
        ]));
        let recorder = Arc::new(Recorder::default());
        let outcome = Agent::new(Arc::new(registry), model.clone())
            .with_policy(policy(pre))
            .with_events(recorder.clone())
            .run(vec![Message::user("go")])
            .await
            .expect("runs");
        let Message::Tool { content, is_error, .. } = &outcome.transcript.messages[2] else { panic!("an answer") };
        assert!(*is_error);
        (
            content.clone(),
            names(&model.requests()[1]).iter().map(|n| (*n).to_owned()).collect::<Vec<_>>(),
            promotions(&recorder),
        )
    };
    let (answer, tools, promotions) = run(catalogue::registry(), PrePromotion::default()).await;
    assert!(
        answer.starts_with("No tool by that name is available. These tools may fit, and are now loaded:"),
        "{answer}"
    );
    assert!(answer.contains("- `stock_quote` takes {symbol: string"), "{answer}");
    assert!(!answer.contains("get_stock_price"), "the invented name is not repeated");
    assert!(tools.contains(&"stock_quote".to_owned()), "promoted for the next call: {tools:?}");
    assert!(
        matches!(promotions.as_slice(), [(names, Promotion::UnknownName)] if names.contains(&"stock_quote".to_owned()))
    );

    // A Hidden tool of that very name gets the very same answer: no oracle for hidden names.
    let mut with_hidden = catalogue::registry();
    with_hidden.register_as(Arc::new(HiddenPrice), tinytools::ToolExposure::Hidden).expect("registers");
    assert_eq!(run(with_hidden, PrePromotion::default()).await.0, answer);

    // With query-aware discovery off, the classic answer: close names and tool_search.
    let (answer, tools, promotions) = run(catalogue::registry(), PrePromotion::off()).await;
    assert!(answer.starts_with("No tool by that name is available.") && !answer.contains("now loaded"), "{answer}");
    assert!(answer.contains("tool_search") && tools == ["read_note", "tool_search"] && promotions.is_empty());
}

/// A Hidden tool named like the model's guess.
struct HiddenPrice;

#[async_trait::async_trait]
impl tinytools::Tool for HiddenPrice {
    fn name(&self) -> &str {
        "get_stock_price"
    }
    fn description(&self) -> &str {
        "Internal price feed."
    }
    fn parameters_schema(&self) -> serde_json::Value {
        json!({"type": "object", "properties": {"ticker": {"type": "string"}}})
    }
    async fn execute(&self, _args: serde_json::Value) -> anyhow::Result<tinytools::ToolResult> {
        Ok(tinytools::ToolResult::text("secret"))
    }
}

/// A run whose model calls `stock_quote` twice (two symbols) and answers, under `pre`.
async fn two_quotes_then_done(
    pre: PrePromotion,
    first_fails: bool,
) -> (Vec<ModelRequest>, Vec<(Vec<String>, Promotion)>, Transcript) {
    let first = if first_fails { json!({"ticker": "ACME"}) } else { json!({"symbol": "ACME"}) };
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c1", "stock_quote", first)]),
        ModelResponse::calls([("c2", "stock_quote", json!({"symbol": "GLOBX"}))]),
        ModelResponse::text("done"),
    ]));
    let recorder = Arc::new(Recorder::default());
    let outcome = Agent::new(Arc::new(catalogue::registry()), model.clone())
        .with_policy(policy(pre))
        .with_events(recorder.clone())
        .run(vec![Message::user(CHAIN_TASK)])
        .await
        .expect("runs");
    (model.requests(), promotions(&recorder), outcome.transcript)
}

/// A message that names several tools' work.
const CHAIN_TASK: &str = "Check the ACME stock price, convert it to euros and post it in the team's slack channel.";

/// One tool promoted at the start, two more once a tool has answered; no floor, no budget.
fn follow_up() -> PrePromotion {
    PrePromotion::default().with_limit(1).with_min_confidence(0.0).with_token_budget(100_000).with_after_tool_result(2)
}

#[tokio::test]
async fn once_a_tool_has_answered_the_messages_next_hits_are_promoted_once() {
    let pre = follow_up();
    let (requests, promotions, transcript) = two_quotes_then_done(pre, false).await;
    assert_eq!(names(&requests[0]).len(), 3, "the limit holds at the start: {:?}", names(&requests[0]));
    // The same ranking's next two hits join the second request, after the first promotion.
    let (first, _, _) = first_request(pre.with_limit(3), CHAIN_TASK).await;
    assert_eq!(names(&first).len(), 5, "the message has three hits: {:?}", names(&first));
    assert_eq!(names(&requests[1]), names(&first), "hits 2 and 3 of the same ranking");
    let [(_, Promotion::UserMessage { .. }), (added, Promotion::AfterToolResult { ranker, confidences, .. })] =
        promotions.as_slice()
    else {
        panic!("a pre-promotion then a follow-up: {promotions:?}")
    };
    assert_eq!(added.as_slice(), &names(&requests[1])[3..]);
    assert_eq!((ranker.as_str(), confidences.len()), ("bm25", 2));
    // Recorded as a transcript patch after the tool's answer, so resume restores it.
    assert_eq!(transcript.patches.len(), 2);
    assert_eq!(transcript.patches[1].at_message, 3, "after the user message, the call and its answer");
    // Once per message: the second answered call promotes nothing more.
    assert_eq!(names(&requests[2]), names(&requests[1]));
}

#[tokio::test]
async fn no_follow_up_without_an_answered_call_or_by_default() {
    let pre = follow_up();
    // A refused call answers nothing: the follow-up waits for the call that runs.
    let (requests, promotions, _) = two_quotes_then_done(pre, true).await;
    let follow_ups: Vec<&Vec<String>> = promotions
        .iter()
        .filter_map(|(names, cause)| matches!(cause, Promotion::AfterToolResult { .. }).then_some(names))
        .collect();
    let [added] = follow_ups.as_slice() else { panic!("one follow-up: {promotions:?}") };
    assert!(!added.is_empty());
    assert!(
        added.iter().all(|name| !names(&requests[1]).contains(&name.as_str())),
        "a refused call promotes no follow-up"
    );
    assert!(added.iter().all(|name| names(&requests[2]).contains(&name.as_str())), "the next answered call does");
    // The default promotes nothing after a result.
    assert_eq!(PrePromotion::default().after_tool_result, 0);
    let pre = pre.with_after_tool_result(0);
    let (requests, promotions, _) = two_quotes_then_done(pre, false).await;
    assert!(requests.windows(2).all(|w| names(&w[0]) == names(&w[1])));
    assert_eq!(promotions.len(), 1, "{promotions:?}");
}
