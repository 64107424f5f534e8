//! The discovery bridge, ranking and the unknown-tool answer, against the spec's sentences.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tinytools::discovery::{
    DeferredCatalog, DiscoveryBridge, Manifest, ManifestDetail, RankMode, ToolDiscoveryPolicy, unknown_tool_answer,
};
use tinytools::rank::{Bm25Ranker, RankRequest, RankedTool, RankerError, ToolRanker};
use tinytools::schema::{EstimatedTokens, TokenCounter};
use tinytools::surface::{Subject, Surface};
use tinytools::{ToolExposure, ToolRegistry};
use tinytools_examples::catalogue;

fn everything(_: &str) -> bool {
    true
}

fn bridge(policy: ToolDiscoveryPolicy) -> (ToolRegistry, DiscoveryBridge) {
    let registry = catalogue::registry();
    let bridge = DiscoveryBridge::new(&registry, policy);
    (registry, bridge)
}

fn names(answer: &Value) -> Vec<String> {
    answer["matches"].as_array().into_iter().flatten().filter_map(|m| m["name"].as_str().map(str::to_owned)).collect()
}

async fn search(bridge: &DiscoveryBridge, args: Value) -> (Value, tinytools::discovery::SearchAnswer) {
    let answer = bridge.search(&args).await;
    let parsed = serde_json::from_str(&answer.result.to_model_text()).unwrap_or(Value::Null);
    (parsed, answer)
}

#[test]
fn the_bridge_is_appended_after_the_name_sorted_direct_set() {
    let (_, bridge) = bridge(ToolDiscoveryPolicy::default());
    let tools = bridge.advertised(&EstimatedTokens);
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["read_note", "tool_search"]);
    let schema = &tools[1];
    assert_eq!(schema.parameters["required"], json!(["query"]));
    assert_eq!(schema.parameters["properties"]["limit"]["maximum"], 20);
    assert_eq!(bridge.catalog().len(), 40);
}

#[test]
fn the_manifest_lists_every_deferred_tool_with_its_first_sentence() {
    let (_, bridge) = bridge(ToolDiscoveryPolicy::default());
    let description = bridge.schema(&EstimatedTokens).description;
    for tool in bridge.catalog().iter() {
        assert!(description.contains(&format!("- {}: ", tool.schema().name)), "{} missing", tool.schema().name);
    }
    assert!(
        description.contains("- stock_quote: Fetch the latest trading price of a stock by its ticker…"),
        "{description}"
    );
    for line in description.lines().filter(|l| l.starts_with("- ")) {
        let summary = line.split_once(": ").map_or("", |(_, s)| s);
        assert!(summary.chars().count() <= 60, "{line}");
    }
}

#[test]
fn the_manifest_degrades_to_names_then_a_count_then_nothing_and_never_exceeds_its_budget() {
    let catalog = catalogue::registry();
    let catalog = DeferredCatalog::new(&catalog, everything);
    let counter = EstimatedTokens;
    let summaries = Manifest::build(&catalog, 4_000, &counter);
    let names_cost = counter.count(&Manifest::build(&catalog, counter.count(&summaries.text) - 1, &counter).text);
    let mut seen = Vec::new();
    let count_cost = counter.count("40 tools are available through search.");
    for budget in [4_000, counter.count(&summaries.text), names_cost, names_cost - 1, count_cost, count_cost - 1, 3, 0]
    {
        let manifest = Manifest::build(&catalog, budget, &counter);
        assert!(counter.count(&manifest.text) <= budget, "budget {budget}: {manifest:?}");
        seen.push((budget, manifest.detail));
    }
    let details: Vec<ManifestDetail> = seen.iter().map(|(_, d)| *d).collect();
    assert_eq!(
        details,
        [
            ManifestDetail::Summaries,
            ManifestDetail::Summaries,
            ManifestDetail::Names,
            ManifestDetail::Count,
            ManifestDetail::Count,
            ManifestDetail::Nothing,
            ManifestDetail::Nothing,
            ManifestDetail::Nothing,
        ],
        "{seen:?}"
    );
    assert_eq!(Manifest::build(&catalog, count_cost, &counter).text, "40 tools are available through search.");
}

#[test]
fn below_the_names_rung_the_description_names_the_families_and_above_it_does_not() {
    let description = |budget| {
        bridge(ToolDiscoveryPolicy::default().with_manifest_token_budget(budget)).1.schema(&EstimatedTokens).description
    };
    let count = description(12);
    assert!(count.contains("40 tools are available through search."), "{count}");
    let families = count.split("Their families: ").nth(1).unwrap_or_default();
    for family in ["calendar", "finance", "gmail"] {
        assert!(families.contains(family), "{family} missing from {count}");
    }
    let nothing = description(0);
    assert!(nothing.contains("Their families: ") && !nothing.contains("40 tools"), "{nothing}");
    let names = description(400);
    assert!(names.contains("stock_quote") && !names.contains("Their families"), "{names}");
}

#[test]
fn the_bridge_schema_is_byte_stable_for_the_same_catalogue() {
    let (_, first) = bridge(ToolDiscoveryPolicy::default());
    let mut reversed = ToolRegistry::new();
    for tool in catalogue::tools().into_iter().rev() {
        reversed.register_arc(tool).expect("registers");
    }
    let second = DiscoveryBridge::new(&reversed, ToolDiscoveryPolicy::default());
    assert_eq!(first.schema(&EstimatedTokens).to_compact_json(), second.schema(&EstimatedTokens).to_compact_json());
}

#[tokio::test]
async fn search_returns_full_schemas_and_finds_the_spec_task() {
    let (registry, bridge) = bridge(ToolDiscoveryPolicy::default());
    let (answer, raw) = search(&bridge, json!({"query": "What is ACME stock trading at right now?"})).await;
    assert_eq!(names(&answer)[0], "stock_quote");
    let quote = &answer["matches"][0];
    let canonical = registry.get("stock_quote").expect("registered").schema();
    assert_eq!(quote["description"], canonical.description);
    assert_eq!(quote["parameters"], canonical.parameters, "the full schema, not a summary");
    let outcome = raw.outcome.expect("ranked");
    assert_eq!(outcome.ranker, "bm25");
    assert!(outcome.top_confidence.is_some_and(|c| c > 0.0 && c <= 1.0));
    assert_eq!(raw.query.as_deref(), Some("What is ACME stock trading at right now?"));
}

#[tokio::test]
async fn limit_defaults_to_five_and_is_clamped() {
    let (_, bridge) = bridge(ToolDiscoveryPolicy::default());
    let broad = "get list search find send create calendar email issue";
    let count = |answer: &Value| names(answer).len();
    assert_eq!(count(&search(&bridge, json!({"query": broad})).await.0), 5);
    assert_eq!(count(&search(&bridge, json!({"query": broad, "limit": 2})).await.0), 2);
    assert_eq!(count(&search(&bridge, json!({"query": broad, "limit": 500})).await.0), 20);
    assert_eq!(count(&search(&bridge, json!({"query": broad, "limit": 0})).await.0), 1);
    assert_eq!(count(&search(&bridge, json!({"query": broad, "limit": -4})).await.0), 1);
    assert_eq!(count(&search(&bridge, json!({"query": broad, "limit": 2.7})).await.0), 2);
    assert_eq!(count(&search(&bridge, json!({"query": broad, "limit": "seven"})).await.0), 5);

    let tight = ToolDiscoveryPolicy::default().with_default_limit(50).with_max_limit(3);
    let (_, bridge) = self::bridge(tight);
    assert_eq!(count(&search(&bridge, json!({"query": broad})).await.0), 3);
}

#[tokio::test]
async fn no_match_and_bad_queries_get_clear_answers_that_never_echo_the_query() {
    let (_, bridge) = bridge(ToolDiscoveryPolicy::default());
    let (answer, raw) = search(&bridge, json!({"query": "zzyzx qwertyuiop"})).await;
    assert_eq!(answer["matches"], json!([]));
    assert!(answer["note"].as_str().is_some_and(|n| n.starts_with("No tool matches.")));
    assert!(!raw.result.to_model_text().contains("zzyzx"));
    assert!(!raw.result.is_error, "no match is an answer, not an error");

    for bad in [json!({}), json!({"query": "   "}), json!({"query": 7}), json!("stock"), Value::Null] {
        let answer = bridge.search(&bad).await;
        assert!(answer.result.is_error, "{bad}");
        assert!(answer.result.to_model_text().contains("needs a \"query\""), "{bad}");
        assert!(answer.outcome.is_none());
    }
}

/// A host ranker with a chosen behaviour.
enum Host {
    Answers(Vec<&'static str>),
    Fails,
    Panics,
    Sleeps,
}

#[async_trait::async_trait]
impl ToolRanker for Host {
    fn name(&self) -> &str {
        "host"
    }
    async fn rank(&self, request: RankRequest<'_>) -> Result<Vec<RankedTool>, RankerError> {
        assert!(request.context.conversation.is_empty(), "the bridge passes an empty context");
        match self {
            Host::Answers(names) => Ok(names.iter().map(|n| RankedTool::new(*n, Some(0.9))).collect()),
            Host::Fails => return Err(RankerError::unavailable("embedding service unreachable")),
            Host::Panics => panic!("ranker bug"),
            Host::Sleeps => {
                tokio::time::sleep(Duration::from_secs(60)).await;
                Ok(Vec::new())
            }
        }
    }
}

fn with_host(host: Host, mode: RankMode) -> ToolDiscoveryPolicy {
    ToolDiscoveryPolicy::default()
        .with_ranker_timeout(Duration::from_millis(50))
        .with_ranker(Arc::new(host))
        .with_rank_mode(mode)
}

#[tokio::test]
async fn a_host_ranker_serves_and_invented_names_never_reach_the_model() {
    let ranker = Host::Answers(vec!["made_up_tool", "gmail_send", "read_note", "gmail_send", "crypto_price"]);
    let (_, bridge) = bridge(with_host(ranker, RankMode::Ranker));
    let (answer, raw) = search(&bridge, json!({"query": "anything"})).await;
    // `read_note` is Direct, not in the deferred catalogue; `made_up_tool` does not exist.
    assert_eq!(names(&answer), ["gmail_send", "crypto_price"]);
    let outcome = raw.outcome.expect("ranked");
    assert_eq!(outcome.ranker, "host");
    assert_eq!(outcome.top_confidence, Some(0.9));
    assert_eq!(outcome.fallback, None);
    assert_eq!(outcome.shadow_matched, None);
}

#[tokio::test]
async fn a_failing_panicking_slow_empty_or_inventing_ranker_falls_back_to_bm25() {
    let cases = [
        (Host::Fails, "ranker `host`: the ranker is unavailable: embedding service unreachable"),
        (Host::Panics, "ranker `host` panicked: ranker bug"),
        (Host::Sleeps, "ranker `host` timed out after 50 ms"),
        (Host::Answers(vec![]), "ranker `host` returned nothing"),
        (Host::Answers(vec!["ghost", "read_note"]), "ranker `host` named 2 tool(s), none of them in the catalogue"),
    ];
    for (host, reason) in cases {
        let (_, bridge) = bridge(with_host(host, RankMode::Ranker));
        let (answer, raw) = search(&bridge, json!({"query": "stock price for a ticker"})).await;
        let outcome = raw.outcome.expect("a search never errors");
        assert_eq!(outcome.fallback.as_deref(), Some(reason));
        assert_eq!(outcome.ranker, "bm25");
        assert_eq!(names(&answer)[0], "stock_quote", "BM25 answered for: {reason}");
    }
}

#[tokio::test]
async fn compare_serves_the_host_ranker_and_records_bm25_as_the_shadow() {
    let (_, bridge) = bridge(with_host(Host::Answers(vec!["weather_forecast"]), RankMode::Compare));
    let (answer, raw) = search(&bridge, json!({"query": "stock price for a ticker"})).await;
    assert_eq!(names(&answer), ["weather_forecast"], "the model sees the host ranking");
    let outcome = raw.outcome.expect("ranked");
    let shadow = outcome.shadow_matched.expect("compare records BM25");
    let bm25: Vec<String> = bridge.catalog().bm25("stock price for a ticker", 5).into_iter().map(|h| h.name).collect();
    assert_eq!(shadow, bm25);
    assert_eq!(shadow[0], "stock_quote");
}

#[tokio::test]
async fn bm25_mode_ignores_the_host_ranker_and_bm25_ranker_matches_the_catalogue() {
    let (_, bridge) = bridge(with_host(Host::Fails, RankMode::Bm25));
    let (answer, raw) = search(&bridge, json!({"query": "send an email"})).await;
    let outcome = raw.outcome.expect("ranked");
    assert_eq!((outcome.ranker.as_str(), outcome.fallback), ("bm25", None));

    let (_, explicit) = self::bridge(ToolDiscoveryPolicy::default().with_ranker(Arc::new(Bm25Ranker)));
    let (same, _) = search(&explicit, json!({"query": "send an email"})).await;
    assert_eq!(names(&answer), names(&same));
}

#[tokio::test]
async fn disabled_discovery_advertises_nothing_but_a_direct_call_by_name_still_runs() {
    let (registry, bridge) = bridge(ToolDiscoveryPolicy::disabled());
    assert!(!bridge.is_active());
    assert!(bridge.catalog().is_empty());
    let tools = bridge.advertised(&EstimatedTokens);
    assert_eq!(tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["read_note"]);
    let answer = bridge.unknown_tool("stock_qoute", &[]).to_model_text();
    assert!(!answer.contains("tool_search") && !answer.contains("stock_quote"), "{answer}");
    let result = registry.dispatch("stock_quote", json!({"symbol": "ACME"})).await.expect("deferral only subtracts");
    assert!(!result.is_error);
}

/// A hand-written host tool with a chosen name (`#[tool]` refuses `tool_search`).
struct HostTool(&'static str);

#[async_trait::async_trait]
impl tinytools::Tool for HostTool {
    fn name(&self) -> &str {
        self.0
    }
    fn description(&self) -> &str {
        "The host's own tool."
    }
    fn parameters_schema(&self) -> Value {
        json!({"type": "object", "properties": {"query": {"type": "string"}}})
    }
    async fn execute(&self, _args: Value) -> anyhow::Result<tinytools::ToolResult> {
        Ok(tinytools::ToolResult::text("host"))
    }
}

#[test]
fn a_host_registered_tool_search_wins_over_the_intrinsic_bridge() {
    let mut registry = catalogue::registry();
    registry.register(HostTool("tool_search")).expect("a host may take the name");
    let bridge = DiscoveryBridge::new(&registry, ToolDiscoveryPolicy::default());
    assert!(!bridge.is_active());
    let tools = bridge.advertised(&EstimatedTokens);
    let search: Vec<_> = tools.iter().filter(|t| t.name == "tool_search").collect();
    assert_eq!(search.len(), 1);
    assert_eq!(search[0].description, "The host's own tool.");
}

#[tokio::test]
async fn the_allow_list_fixes_the_catalogue_at_run_start() {
    let registry = catalogue::registry();
    let allowed = |subject: Subject<'_>| !subject.name().starts_with("gmail_");
    let bridge = DiscoveryBridge::over(Surface::new(&registry, &[&allowed]), ToolDiscoveryPolicy::default());
    assert_eq!(bridge.catalog().len(), 36);
    assert!(!bridge.schema(&EstimatedTokens).description.contains("gmail"));
    let (answer, _) = search(&bridge, json!({"query": "search my gmail inbox for messages", "limit": 20})).await;
    assert!(names(&answer).iter().all(|n| !n.starts_with("gmail_")), "{answer}");
    let unknown = bridge.unknown_tool("gmail_serch", &[]).to_model_text();
    assert!(!unknown.contains("gmail_search"), "{unknown}");
}

#[test]
fn the_unknown_tool_answer_names_at_most_three_close_matches_and_points_to_search() {
    let (_, bridge) = bridge(ToolDiscoveryPolicy::default());
    let answer = bridge.unknown_tool("calendar_invites", &[]).to_model_text();
    assert!(answer.contains("`calendar_invite`"), "{answer}");
    assert!(answer.matches('`').count() / 2 <= 3 + 1, "at most three names plus tool_search: {answer}");
    assert!(answer.contains("call `tool_search` with a short description"), "{answer}");
    assert!(!answer.contains("read_note, "), "never a list of every callable name");
}

#[test]
fn a_hidden_tool_gets_exactly_the_unknown_tool_answer() {
    let mut registry = catalogue::registry();
    registry.register_as(Arc::new(HostTool("purge_all_notes")), ToolExposure::Hidden).expect("registers");
    let bridge = DiscoveryBridge::new(&registry, ToolDiscoveryPolicy::default());
    for requested in ["purge_all_notes", "purge_all_note", "never_registered"] {
        let answer = bridge.unknown_tool(requested, &[]);
        assert!(!answer.to_model_text().contains("purge_all_notes"), "{requested}: {answer:?}");
    }
    let callable: Vec<String> = bridge.advertised(&EstimatedTokens).iter().map(|t| t.name.clone()).collect();
    assert!(!callable.iter().any(|n| n == "purge_all_notes"));
    let hidden_answer = bridge.unknown_tool("purge_all_notes", &[]);
    let mut visible: Vec<&str> = vec!["read_note"];
    visible.extend(bridge.catalog().iter().map(|t| t.schema().name.as_str()));
    assert_eq!(hidden_answer, unknown_tool_answer("purge_all_notes", visible, true, &[]));
}

/// A hand-written ranker (no `async fn`) whose `rank` panics before its future exists.
struct PanicsEagerly;

impl ToolRanker for PanicsEagerly {
    fn name(&self) -> &str {
        "eager"
    }
    fn rank<'life0, 'life1, 'async_trait>(
        &'life0 self,
        _request: RankRequest<'life1>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Vec<RankedTool>, RankerError>> + Send + 'async_trait>>
    where
        'life0: 'async_trait,
        'life1: 'async_trait,
        Self: 'async_trait,
    {
        panic!("bug while building the future")
    }
}

#[tokio::test]
async fn a_ranker_that_panics_before_its_future_exists_falls_back_to_bm25_too() {
    let policy = ToolDiscoveryPolicy::default().with_ranker(Arc::new(PanicsEagerly)).with_rank_mode(RankMode::Ranker);
    let (_, bridge) = bridge(policy);
    let (answer, raw) = search(&bridge, json!({"query": "stock price"})).await;
    assert_eq!(names(&answer).first().map(String::as_str), Some("stock_quote"));
    let outcome = raw.outcome.expect("ranked");
    assert_eq!(outcome.ranker, "bm25");
    assert!(outcome.fallback.is_some_and(|reason| reason.contains("panicked: bug while building the future")));
}
