//! The deferral scenario of the spec's live proof, offline: the 41-tool catalogue, what its
//! first request costs with every tool Direct versus the 40-tool long tail Deferred behind
//! `tool_search`, the manifest, and what a search for the task returns.
//!
//! ```text
//! cargo run -p tinytools-examples --example deferral            # a report
//! cargo run -p tinytools-examples --example deferral -- --json  # the figures as one JSON object
//! ```

use serde_json::{Value, json};
use tinytools::discovery::{DiscoveryBridge, Manifest, ToolDiscoveryPolicy};
use tinytools::schema::{EstimatedTokens, TokenCounter, count_tool_schema_tokens};
use tinytools::{ToolRegistry, ToolSchema};
use tinytools_examples::catalogue;

/// The spec's task.
const TASK: &str = "What is ACME stock trading at right now?";

fn main() {
    let json_output = std::env::args().any(|arg| arg == "--json");
    let counter = EstimatedTokens;
    let policy = ToolDiscoveryPolicy::default();

    let all_direct = catalogue::all_direct_registry();
    let direct = Surface::of(&all_direct, &DiscoveryBridge::new(&all_direct, policy.clone(), |_| true), &counter);
    let registry = catalogue::registry();
    let bridge = DiscoveryBridge::new(&registry, policy.clone(), |_| true);
    let deferred = Surface::of(&registry, &bridge, &counter);
    let manifest = Manifest::build(bridge.catalog(), policy.manifest_token_budget, &counter);

    let runtime = match tokio::runtime::Builder::new_current_thread().enable_time().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("deferral: cannot start a runtime: {err}");
            std::process::exit(1);
        }
    };
    let search = runtime.block_on(bridge.search(&json!({"query": TASK})));
    let found: Value = serde_json::from_str(&search.result.to_model_text()).unwrap_or(Value::Null);
    let found_names: Vec<&str> =
        found["matches"].as_array().into_iter().flatten().filter_map(|m| m["name"].as_str()).collect();

    if json_output {
        let figures = json!({
            "catalogue": registry.len(),
            "token_counter": "estimate (bytes / 4.5)",
            "direct": direct.to_json(),
            "deferred": deferred.to_json(),
            "saved_bytes": direct.bytes.saturating_sub(deferred.bytes),
            "manifest": {"detail": format!("{:?}", manifest.detail), "tokens": counter.count(&manifest.text)},
            "task": TASK,
            "tool_search": found_names,
        });
        println!("{figures}");
        return;
    }

    println!("The 41-tool catalogue (bytes = compact JSON of name, description, parameters):\n");
    println!("{:<28} {:<9} {:<10} {:>6}", "tool", "exposure", "family", "bytes");
    for tool in registry.iter() {
        let exposure = tool.exposure().to_string();
        let family = tool.family().unwrap_or("-");
        println!("{:<28} {:<9} {:<10} {:>6}", tool.name(), exposure, family, tool.schema().byte_len());
    }
    println!("\nThe first request's tools array (tokens estimated):");
    println!("  {:<11} {:>5} {:>8} {:>8}  tools", "", "tools", "bytes", "tokens");
    for (label, surface) in [("all Direct", &direct), ("deferred", &deferred)] {
        println!(
            "  {label:<11} {:>5} {:>8} {:>8}  {}",
            surface.tools.len(),
            surface.bytes,
            surface.tokens,
            surface.names()
        );
    }
    let saved = 100.0 * direct.bytes.saturating_sub(deferred.bytes) as f64 / direct.bytes.max(1) as f64;
    println!("  saved       {:>14} bytes ({saved:.0}%)", direct.bytes.saturating_sub(deferred.bytes));
    println!(
        "\nThe manifest in tool_search's description ({:?}, {} tokens):",
        manifest.detail,
        counter.count(&manifest.text)
    );
    for line in manifest.text.lines() {
        println!("  {line}");
    }
    println!("\ntool_search {{\"query\": {TASK:?}}} returns: {}", found_names.join(", "));
    if let Some(first) = found["matches"].get(0) {
        println!("first match, with the full schema the model now calls it by:\n  {first}");
    }
}

/// What a run puts in its first request's tools array.
struct Surface {
    tools: Vec<ToolSchema>,
    bytes: usize,
    tokens: usize,
}

impl Surface {
    fn of(registry: &ToolRegistry, bridge: &DiscoveryBridge, counter: &dyn TokenCounter) -> Self {
        let tools = bridge.advertised(registry, |_| true, counter);
        let bytes = serde_json::to_string(&tools).map_or(0, |text| text.len());
        let tokens = count_tool_schema_tokens(&tools, counter);
        Self { tools, bytes, tokens }
    }

    fn names(&self) -> String {
        match self.tools.len() {
            0..=3 => self.tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", "),
            n => format!("{}, … ({n})", self.tools[0].name),
        }
    }

    fn to_json(&self) -> Value {
        json!({"tools": self.tools.len(), "schema_bytes": self.bytes, "tokens": self.tokens})
    }
}
