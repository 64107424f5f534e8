//! Schema preparation, provider profiles, the compaction ladder, and token counting.

use std::collections::HashMap;

use proptest::prelude::*;
use serde_json::{Value, json};
use tinytools::schema::{
    CompactionRung, EstimatedTokens, ProviderProfile, SchemaPreparation, TiktokenCounter, TokenCounter,
    count_tool_schema_tokens, schema_for,
};
use tinytools::{SchemaCompaction, Tool, ToolError, ToolRegistry, ToolSchema, tool};
use tinytools_examples::eval::{self, EvalTool};

fn tool_schema(parameters: Value) -> ToolSchema {
    ToolSchema::new("t", "A tool for the tests.", parameters)
}

fn preparations() -> Vec<SchemaPreparation> {
    let mut all = Vec::new();
    for profile in ProviderProfile::ALL {
        for strict in [false, true] {
            for budget in [
                None,
                Some(SchemaCompaction::THIRD_PARTY),
                Some(SchemaCompaction::UNLIMITED.with_max_description_bytes(60).with_max_schema_bytes(300)),
            ] {
                let mut preparation = SchemaPreparation::new(profile).with_strict(strict);
                preparation.compaction = budget;
                all.push(preparation);
            }
        }
    }
    all
}

fn top_level_names(schema: &Value) -> Vec<String> {
    schema["properties"].as_object().map(|p| p.keys().cloned().collect()).unwrap_or_default()
}

fn required(schema: &Value) -> Vec<String> {
    schema["required"].as_array().into_iter().flatten().filter_map(|v| v.as_str().map(str::to_owned)).collect()
}

/// Everything the issue asks of a prepared schema, for one preparation.
fn check_prepared(preparation: &SchemaPreparation, canonical: &ToolSchema) -> Result<(), String> {
    let prepared = preparation.prepare(canonical, None);
    let parameters = &prepared.schema.parameters;
    let problems = preparation.check(parameters);
    if !problems.is_empty() {
        return Err(format!(
            "{} strict={} breaks its rules: {problems:?}\n{parameters}",
            preparation.profile.name, preparation.strict
        ));
    }
    if top_level_names(parameters) != top_level_names(&canonical.parameters) {
        return Err(format!("the top-level names changed: {parameters}"));
    }
    let before = required(&canonical.parameters);
    let after = required(parameters);
    if !before.iter().all(|name| after.contains(name)) || (!preparation.strict && before != after) {
        return Err(format!("`required` changed from {before:?} to {after:?}"));
    }
    if let (Some(budget), Some(report)) = (preparation.compaction, &prepared.report) {
        let bytes = serde_json::to_string(parameters).map_or(0, |t| t.len());
        let max = budget.max_schema_bytes.unwrap_or(usize::MAX);
        if report.fits != (report.after <= max)
            || (!report.fits && report.rungs.last() != Some(&CompactionRung::BareTopLevelTypes))
        {
            return Err(format!("a bad report: {report:?}"));
        }
        if bytes != report.after {
            return Err(format!("the report says {} bytes, the schema has {bytes}", report.after));
        }
        if prepared.schema.description.len() > budget.max_description_bytes.unwrap_or(usize::MAX) {
            return Err("the description is over budget".into());
        }
    }
    if let Err(err) = jsonschema::validator_for(parameters) {
        return Err(format!("not valid JSON Schema any more ({err}): {parameters}"));
    }
    let again = preparation.prepare(&prepared.schema, None).schema;
    if again.to_compact_json() != prepared.schema.to_compact_json() {
        return Err(format!("not idempotent:\n{}\n{}", prepared.schema.to_compact_json(), again.to_compact_json()));
    }
    if preparation.prepare(canonical, None).schema.to_compact_json() != prepared.schema.to_compact_json() {
        return Err("not byte-stable".into());
    }
    Ok(())
}

/// A random JSON Schema of the kinds schemars and MCP servers write.
fn arb_schema() -> impl Strategy<Value = Value> {
    let text = "[a-z ]{0,80}";
    let leaf = prop_oneof![
        (text, prop::sample::select(vec!["string", "integer", "number", "boolean"]))
            .prop_map(|(d, t)| json!({"type": t, "description": d})),
        Just(json!({"type": ["integer", "null"], "format": "uint32", "minimum": 0})),
        Just(json!({"type": "string", "format": "date-time"})),
        Just(
            json!({"oneOf": [{"const": "a", "type": "string", "description": "first"}, {"const": "b", "type": "string"}]})
        ),
        Just(json!({"enum": [1, 2, 3], "type": "integer"})),
        Just(json!({"const": true})),
        Just(json!({"$ref": "#/$defs/Shared"})),
        Just(json!({"anyOf": [{"$ref": "#/$defs/Shared"}, {"type": "null"}], "description": "maybe shared"})),
    ];
    let tree = leaf.prop_recursive(4, 24, 5, move |inner| {
        prop_oneof![
            (prop::collection::btree_map("[a-z]{1,8}", inner.clone(), 0..5), "[a-z ]{0,40}").prop_map(
                |(properties, d)| {
                    let required: Vec<&String> = properties.keys().take(1).collect();
                    json!({"type": "object", "description": d, "properties": properties, "required": required})
                }
            ),
            inner.clone().prop_map(|items| json!({"type": "array", "items": items})),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| json!({"anyOf": [a, b]})),
            inner.prop_map(|map| json!({"type": "object", "additionalProperties": map})),
        ]
    });
    prop::collection::btree_map("[a-z]{1,10}", tree, 1..6).prop_map(|properties| {
        let required: Vec<&String> = properties.keys().step_by(2).collect();
        json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "$defs": {
                "Shared": {"type": "object", "description": "A shared, recursive shape.", "properties": {
                    "label": {"type": "string", "description": "Its label."},
                    "next": {"$ref": "#/$defs/Shared"}}},
                "Unused": {"type": "string", "description": "Nobody points here."}
            }
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(tinytools_integration_tests::proptest_cases(48)))]

    #[test]
    fn every_preparation_of_a_generated_schema_keeps_its_promises(parameters in arb_schema()) {
        let canonical = tool_schema(parameters);
        for preparation in preparations() {
            if let Err(problem) = check_prepared(&preparation, &canonical) {
                prop_assert!(false, "{}", problem);
            }
        }
    }
}

/// The tools of each of `sets`, or `None` (the test skipped, with one line) when one is missing.
fn eval_tools(sets: &[&str]) -> Option<Vec<EvalTool>> {
    let dir = eval::sets_or_skip(sets)?;
    let mut tools = Vec::new();
    for set in sets {
        let path = dir.join(set).join("tools.jsonl");
        tools.extend(eval::read_jsonl::<EvalTool>(&path).unwrap_or_else(|err| panic!("{err}")));
    }
    Some(tools)
}

#[test]
fn every_eval_schema_prepares_within_every_profile_and_budget() {
    let Some(tools) = eval_tools(&["bfcl", "metatool"]) else { return };
    let preparations = preparations();
    let mut checked = 0;
    for tool in &tools {
        let canonical = ToolSchema::new("t", tool.description.clone(), eval::normalize_schema(&tool.parameters));
        for preparation in &preparations {
            if let Err(problem) = check_prepared(preparation, &canonical) {
                panic!("{}: {problem}", tool.id);
            }
            checked += 1;
        }
    }
    assert_eq!(checked, (3_420 + 199) * preparations.len());
}

/// A shape with everything schemars writes: optional fields, an enum, a nested struct, a map
/// and recursion.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code)]
struct Order {
    /// Who ordered.
    customer: Customer,
    /// What, by SKU.
    lines: HashMap<String, u32>,
    /// How it ships.
    shipping: Shipping,
    /// A note on the box.
    note: Option<String>,
    /// The category tree it files under.
    category: Category,
}

/// A customer.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code)]
struct Customer {
    /// Their name.
    name: String,
    /// Their loyalty tier, if any.
    tier: Option<u8>,
}

/// How an order ships.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum Shipping {
    /// Three to five days.
    Standard,
    /// Next day.
    Express,
}

/// A category and its sub-categories.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code)]
struct Category {
    /// Its name.
    name: String,
    /// Its children.
    children: Vec<Category>,
}

#[test]
fn a_schemars_struct_with_options_enums_nesting_maps_and_recursion_passes_every_profile() {
    let canonical = tool_schema(schema_for::<Order>());
    assert!(canonical.parameters.get("$defs").is_some(), "schemars writes definitions");
    for preparation in preparations() {
        check_prepared(&preparation, &canonical).unwrap_or_else(|problem| panic!("{problem}"));
    }
    let gemini = SchemaPreparation::new(ProviderProfile::GEMINI).prepare(&canonical, None).schema.parameters;
    assert_eq!(gemini["properties"]["shipping"]["enum"], json!(["standard", "express"]));
    assert_eq!(gemini["properties"]["note"]["nullable"], true);
    assert_eq!(gemini["properties"]["customer"]["properties"]["name"]["type"], "string");
    let openai =
        SchemaPreparation::new(ProviderProfile::OPENAI).with_strict(true).prepare(&canonical, None).schema.parameters;
    assert_eq!(openai["properties"]["note"]["type"], json!(["string", "null"]));
    assert_eq!(openai["$defs"]["Customer"]["additionalProperties"], false);
    assert_eq!(openai["$defs"]["Customer"]["required"], json!(["name", "tier"]));
}

/// Book a table.
#[tool(max_schema_bytes = 120)]
async fn book_table(
    /// The restaurant's exact name as listed.
    restaurant: String,
    /// How many people, 1 to 12.
    #[schemars(range(min = 1, max = 12))]
    party: u8,
    /// A note for the host.
    note: Option<String>,
) -> String {
    format!("{restaurant} {party} {note:?}")
}

#[tokio::test]
async fn admission_enforces_the_canonical_schema_whatever_the_projection_says() {
    let mut registry = ToolRegistry::new();
    registry.register(BookTable).expect("registers");
    let canonical = registry.get("book_table").expect("registered").schema().clone();

    // Compaction is looser on the wire: its own tiny budget strips the range and descriptions…
    let compacted =
        SchemaPreparation::new(ProviderProfile::PORTABLE).prepare(&canonical, BookTable.schema_compaction()).schema;
    assert!(compacted.parameters["properties"]["party"].get("maximum").is_none(), "{}", compacted.parameters);
    // …yet admission still refuses a party of 40.
    let err =
        registry.dispatch("book_table", json!({"restaurant": "Nopa", "party": 40})).await.expect_err("canonical range");
    assert!(matches!(err, ToolError::InvalidArguments { .. }), "{err}");

    // Strict mode is stricter on the wire: every property required, the object closed…
    let strict = SchemaPreparation::new(ProviderProfile::OPENAI).with_strict(true).prepare(&canonical, None).schema;
    assert_eq!(strict.parameters["required"], json!(["restaurant", "party", "note"]));
    assert_eq!(strict.parameters["additionalProperties"], false);
    // …yet admission accepts a call without the optional note.
    let ok = registry.dispatch("book_table", json!({"restaurant": "Nopa", "party": 2})).await;
    assert!(ok.is_ok_and(|r| !r.is_error));
}

#[test]
fn a_tools_own_budget_replaces_the_runs() {
    let run = SchemaPreparation::new(ProviderProfile::ANTHROPIC).with_compaction(SchemaCompaction::THIRD_PARTY);
    let canonical = BookTable.parameters_schema();
    let schema = ToolSchema::new("book_table", BookTable.description(), canonical);
    let with_hint = run.prepare(&schema, BookTable.schema_compaction());
    let without = run.prepare(&schema, None);
    assert!(with_hint.report.as_ref().is_some_and(|r| r.after <= 120 || !r.fits));
    assert!(with_hint.schema.byte_len() < without.schema.byte_len());
    assert!(without.report.as_ref().is_some_and(|r| r.rungs.is_empty()), "THIRD_PARTY's 5,000 bytes need no rung");
}

#[test]
fn third_party_is_codexs_mcp_budget_and_clips_descriptions_on_char_boundaries() {
    assert_eq!(
        SchemaCompaction::THIRD_PARTY,
        SchemaCompaction::UNLIMITED.with_max_description_bytes(1_000).with_max_schema_bytes(5_000)
    );
    let mut long = tool_schema(json!({"type": "object", "properties": {}}));
    long.description = "é".repeat(700);
    let (clipped, report) = SchemaCompaction::THIRD_PARTY.compact(&long);
    assert!(clipped.description.len() <= 1_000 && clipped.description.ends_with('…'));
    assert!(report.description_clipped);
}

#[test]
fn the_estimator_stays_near_o200k_and_leans_high_on_the_bfcl_schemas() {
    let Some(tools) = eval_tools(&["bfcl"]) else { return };
    let schemas: Vec<ToolSchema> = tools
        .into_iter()
        .map(|t| ToolSchema::new(t.id, t.description, eval::normalize_schema(&t.parameters)))
        .collect();
    let real = count_tool_schema_tokens(&schemas, &TiktokenCounter::O200K) as f64;
    let estimate = count_tool_schema_tokens(&schemas, &EstimatedTokens) as f64;
    let error = (estimate - real) / real;
    assert!((0.0..0.08).contains(&error), "estimate {estimate} vs o200k {real}: {:+.1}%", error * 100.0);
    assert!(TiktokenCounter::Cl100K.count("tool_search") > 0);
}

/// A tool whose declaration is mostly description: about 10,000 estimated tokens.
struct Manual;

#[async_trait::async_trait]
impl Tool for Manual {
    fn name(&self) -> &str {
        "manual"
    }
    fn description(&self) -> &str {
        static DESCRIPTION: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| "word ".repeat(9_000));
        &DESCRIPTION
    }
    fn parameters_schema(&self) -> Value {
        json!({"type": "object", "properties": {}})
    }
    async fn execute(&self, _: Value) -> anyhow::Result<tinytools::ToolResult> {
        Ok(tinytools::ToolResult::text("read"))
    }
}

#[tokio::test]
async fn schemas_that_eat_a_quarter_of_the_window_shrink_a_conversation_that_fits_without_them() {
    use tinytools::model::{Message, ModelResponse};
    use tinytools::run::{Agent, RunEvent, RunPolicy};
    use tinytools::testkit::ScriptedModel;

    const WINDOW: usize = 40_000;
    // A request may fill 90 % of the window: 36,000 estimated tokens.
    const FILL: usize = 36_000;
    let schema = ToolSchema::new("manual", Manual.description(), json!({}));
    let cost = count_tool_schema_tokens(&[schema], &EstimatedTokens);
    assert!((9_000..=11_000).contains(&cost), "{cost}");
    // An earlier turn with a long result, then the question: about 31,000 estimated tokens.
    let conversation = vec![
        Message::user("Read the page."),
        Message::Assistant {
            content: String::new(),
            tool_calls: ModelResponse::calls([("c0", "page", json!({}))]).tool_calls,
        },
        Message::Tool { call_id: "c0".into(), name: "page".into(), content: "x ".repeat(69_500), is_error: false },
        Message::Assistant { content: "I read it.".into(), tool_calls: Vec::new() },
        Message::user("What did it say?"),
    ];
    let tokens: usize =
        conversation.iter().map(|m| EstimatedTokens.count(&serde_json::to_string(m).expect("serialises"))).sum();
    assert!(tokens < FILL && tokens + cost > FILL, "{tokens} + {cost}");

    for with_manual in [false, true] {
        let mut registry = ToolRegistry::new();
        if with_manual {
            registry.register_as(std::sync::Arc::new(Manual), tinytools::ToolExposure::Direct).expect("registers");
        }
        let model = std::sync::Arc::new(ScriptedModel::new([ModelResponse::text("It said x.")]));
        let recorder = std::sync::Arc::new(tinytools_integration_tests::Recorder::default());
        let outcome = Agent::new(std::sync::Arc::new(registry), model.clone())
            .with_policy(RunPolicy::default().with_context_window(WINDOW))
            .with_events(recorder.clone())
            .run(conversation.clone())
            .await
            .expect("fits");
        assert_eq!(outcome.answer, "It said x.");
        let request = model.requests().remove(0);
        assert_eq!(request.tools.iter().any(|tool| tool.name == "manual"), with_manual);
        let shrunk =
            recorder.events().iter().any(|e| matches!(e, RunEvent::ContextShrunk { compacted_results: 1, .. }));
        let kept =
            request.messages.iter().any(|m| matches!(m, Message::Tool { content, .. } if content.len() > 100_000));
        assert_eq!((shrunk, kept), (with_manual, !with_manual), "with the manual: {with_manual}");
    }
}

/// Look up a customer order by its number.
#[tool(exposure = "deferred", family = "shop", max_schema_bytes = 120)]
async fn order_lookup(
    /// The order number printed on the receipt, such as A-1042.
    number: String,
    /// Include the shipment's tracking events.
    tracking: Option<bool>,
) -> String {
    format!("{number} {tracking:?}")
}

#[tokio::test]
async fn the_bridge_prepares_everything_it_sends_and_honours_each_tools_budget() {
    use tinytools::discovery::DiscoveryBridge;

    let mut registry = tinytools_examples::catalogue::registry();
    registry.register(OrderLookup).expect("registers");
    for preparation in [
        SchemaPreparation::new(ProviderProfile::GEMINI),
        SchemaPreparation::new(ProviderProfile::OPENAI).with_strict(true),
        SchemaPreparation::new(ProviderProfile::PORTABLE).with_compaction(SchemaCompaction::THIRD_PARTY),
    ] {
        let policy = tinytools::RunPolicy::default().with_tool_schemas(preparation);
        let bridge = DiscoveryBridge::over(tinytools::surface::Surface::all(&registry), policy.discovery.clone())
            .with_preparation(policy.tool_schemas);
        let advertised = bridge.advertised(&EstimatedTokens);
        assert_eq!(advertised.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["read_note", "tool_search"]);
        for schema in &advertised {
            assert_eq!(preparation.check(&schema.parameters), Vec::<String>::new(), "{}", schema.name);
        }
        assert!(advertised[1].description.contains("- stock_quote: "), "the manifest is never clipped");

        for (query, first) in
            [("stock price for a ticker", "stock_quote"), ("look up my order by its number", "order_lookup")]
        {
            let answer = bridge.search(&json!({"query": query})).await;
            let found: Value = serde_json::from_str(&answer.result.to_model_text()).expect("JSON");
            let hit = &found["matches"][0];
            assert_eq!(hit["name"], first);
            assert_eq!(preparation.check(&hit["parameters"]), Vec::<String>::new(), "{hit}");
            if first == "order_lookup" {
                let bytes = hit["parameters"].to_string().len();
                // It fits the tool's own 120 bytes, or (where the profile's spelling of null or
                // strict mode costs more) sits exactly at the floor: bare types.
                let at_floor = hit["parameters"]["properties"].as_object().is_some_and(|p| {
                    p.values().all(|v| v.as_object().is_some_and(|o| o.keys().all(|k| k == "type" || k == "nullable")))
                });
                assert!(bytes <= 120 || at_floor, "the tool's own 120-byte budget: {bytes} {hit}");
                assert!(hit["parameters"]["properties"]["tracking"].get("type").is_some(), "{hit}");
                assert!(hit["parameters"]["properties"]["number"].get("description").is_none());
            }
        }
    }
}

#[test]
fn the_ladder_runs_its_rungs_in_the_specs_order() {
    // Every rung has something to do: an unreachable definition, nested and top-level
    // descriptions, a used definition, an object five levels deep, a combinator below the root.
    let parameters = json!({
        "type": "object",
        "$defs": {
            "Unused": {"type": "object", "description": "never referenced", "properties": {"u": {"type": "string"}}},
            "Filter": {"type": "object", "description": "a filter", "properties": {"field": {"type": "string", "description": "which field"}}}
        },
        "properties": {
            "filter": {"$ref": "#/$defs/Filter", "description": "how to filter"},
            "deep": {"type": "object", "description": "deep", "properties": {"a": {"type": "object", "properties": {
                "b": {"type": "object", "properties": {"c": {"type": "object", "properties": {"d": {"type": "string", "description": "bottom"}}}}}}}}},
            "either": {"anyOf": [{"type": "string"}, {"type": "integer"}], "description": "one or the other"}
        },
        "required": ["filter"]
    });
    let impossible = SchemaCompaction::UNLIMITED.with_max_schema_bytes(1);
    let (_, report) = impossible.compact_parameters(&parameters);
    // The spec: prune unreachable $defs → strip nested property descriptions → strip all
    // property descriptions → drop definition tables → collapse objects deeper than 3 → drop
    // anyOf/oneOf/allOf; then this crate's floor.
    const SPEC_ORDER: [CompactionRung; 7] = [
        CompactionRung::PruneUnreachableDefinitions,
        CompactionRung::StripNestedDescriptions,
        CompactionRung::StripAllDescriptions,
        CompactionRung::DropDefinitions,
        CompactionRung::CollapseDeepObjects,
        CompactionRung::DropCombinators,
        CompactionRung::BareTopLevelTypes,
    ];
    assert_eq!(report.rungs, SPEC_ORDER);
    // Every budget stops the ladder after a prefix of that order, keeping the top-level
    // argument surface.
    for budget in 1..=4_000 {
        let (compact, report) =
            SchemaCompaction::UNLIMITED.with_max_schema_bytes(budget * 10).compact_parameters(&parameters);
        assert_eq!(report.rungs[..], SPEC_ORDER[..report.rungs.len()], "budget {}", budget * 10);
        assert_eq!(top_level_names(&compact), top_level_names(&parameters));
        if report.rungs.is_empty() {
            break;
        }
    }
}
