//! `ToolRegistry`: exposure sets, ordering, byte stability, registration errors, policies.

use std::sync::Arc;

use proptest::prelude::*;
use serde_json::json;
use tinytools::{RegistryError, Tool, ToolAnnotations, ToolError, ToolExposure, ToolRegistry, ToolResult, tool};

/// Read a file from the workspace.
#[tool(read_only)]
async fn read_file(
    /// Path relative to the workspace root.
    path: String,
) -> String {
    format!("contents of {path}")
}

/// Ask the user a clarifying question and wait for the answer.
#[tool]
async fn ask_user(question: String) -> String {
    format!("user answered: {question}")
}

/// Fetch the latest price for a ticker symbol.
#[tool(exposure = "deferred", family = "finance", read_only)]
async fn stock_quote(
    /// Ticker symbol.
    symbol: String,
) -> String {
    format!("{symbol} 12.50")
}

/// Rotate the production database credentials.
#[tool(exposure = "hidden", destructive)]
async fn rotate_db_credentials() -> String {
    "rotated".into()
}

fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    registry
        .register(StockQuote)
        .and_then(|r| r.register(ReadFile))
        .and_then(|r| r.register(RotateDbCredentials))
        .and_then(|r| r.register(AskUser))
        .expect("valid tools register");
    registry
}

fn names(schemas: &[tinytools::ToolSchema]) -> Vec<&str> {
    schemas.iter().map(|s| s.name.as_str()).collect()
}

#[test]
fn schemas_are_the_direct_tools_name_sorted() {
    let registry = registry();
    assert_eq!(names(&registry.schemas()), ["ask_user", "read_file"]);
    assert_eq!(names(&registry.deferred_schemas()), ["stock_quote"]);
    assert_eq!(registry.len(), 4);
}

#[test]
fn hidden_tools_appear_in_no_schema_list() {
    let registry = registry();
    let everything = format!(
        "{}{}",
        serde_json::to_string(&registry.schemas()).unwrap_or_default(),
        serde_json::to_string(&registry.deferred_schemas()).unwrap_or_default()
    );
    assert!(!everything.contains("rotate_db_credentials"));
    assert_eq!(registry.get("rotate_db_credentials").map(|t| t.exposure()), Some(ToolExposure::Hidden));
}

#[tokio::test]
async fn dispatch_is_the_host_path_and_reaches_hidden_tools() {
    let registry = registry();
    let result = registry.dispatch("rotate_db_credentials", json!({})).await.expect("the host may call it");
    assert_eq!(result, ToolResult::text("rotated"));
    let deferred = registry.dispatch("stock_quote", json!({"symbol": "ACME"})).await.expect("runs");
    assert_eq!(deferred.to_model_text(), "ACME 12.50");
}

#[test]
fn policies_are_a_complete_snapshot() {
    let registry = registry();
    let policies = registry.policies();
    assert_eq!(policies.len(), registry.len());
    for tool in registry.iter() {
        let policy = policies.get(tool.name()).expect("every tool has an entry");
        assert_eq!(policy.exposure, tool.exposure());
        assert_eq!(policy.annotations, tool.annotations());
    }
    assert_eq!(policies.get("read_file").map(|p| p.annotations), Some(ToolAnnotations::READ_ONLY));
    assert!(policies.get("rotate_db_credentials").is_some_and(|p| p.annotations.destructive));
    assert!(!policies.contains("tool_search"));
}

#[test]
fn a_duplicate_name_is_an_error_that_names_it() {
    let mut registry = registry();
    let err = registry.register(ReadFile).map(|_| ()).expect_err("duplicate");
    assert!(matches!(&err, RegistryError::DuplicateName { name } if name == "read_file"));
    assert!(err.to_string().contains("`read_file` is already registered"), "{err}");
    assert_eq!(registry.len(), 4, "the registry is unchanged");
}

/// A tool whose declared facts come from fields, to test registration rules.
struct Declared {
    name: &'static str,
    family: Option<&'static str>,
    schema: serde_json::Value,
}

#[async_trait::async_trait]
impl Tool for Declared {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        "A test tool."
    }
    fn parameters_schema(&self) -> serde_json::Value {
        self.schema.clone()
    }
    fn family(&self) -> Option<&str> {
        self.family
    }
    async fn execute(&self, _args: serde_json::Value) -> anyhow::Result<ToolResult> {
        Ok(ToolResult::text(self.name))
    }
}

fn declared(name: &'static str) -> Declared {
    Declared { name, family: None, schema: json!({"type": "object", "properties": {}}) }
}

#[test]
fn names_families_and_schemas_are_checked_at_registration() {
    let mut registry = ToolRegistry::new();
    let err = registry.register(declared("math.factorial")).map(|_| ()).expect_err("dotted name");
    assert!(matches!(err, RegistryError::InvalidName { .. }), "{err}");
    assert!(err.to_string().contains("'.'"), "{err}");

    let err =
        registry.register(Declared { family: Some("two words"), ..declared("ok") }).map(|_| ()).expect_err("family");
    assert!(matches!(err, RegistryError::InvalidFamily { .. }), "{err}");

    let err = registry
        .register(Declared { schema: json!({"type": "array"}), ..declared("ok") })
        .map(|_| ())
        .expect_err("schema");
    assert!(err.to_string().contains("\"type\": \"object\""), "{err}");

    let err = registry
        .register(Declared { schema: json!({"type": "object", "properties": {"x": {"type": 7}}}), ..declared("ok") })
        .map(|_| ())
        .expect_err("not JSON Schema");
    assert!(err.to_string().contains("not valid JSON Schema"), "{err}");
    assert!(registry.is_empty());
}

#[tokio::test]
async fn a_host_may_register_its_own_tool_search() {
    let mut registry = ToolRegistry::new();
    registry.register(declared("tool_search")).expect("allowed for hosts");
    assert_eq!(names(&registry.schemas()), ["tool_search"]);
    let result = registry.dispatch("tool_search", json!({})).await.expect("runs");
    assert_eq!(result.to_model_text(), "tool_search");
}

#[test]
fn register_as_overrides_the_declared_exposure() {
    let mut registry = ToolRegistry::new();
    registry.register_as(Arc::new(StockQuote), ToolExposure::Direct).expect("registers");
    registry.register_as(Arc::new(ReadFile), ToolExposure::Hidden).expect("registers");
    assert_eq!(names(&registry.schemas()), ["stock_quote"]);
    assert!(registry.deferred_schemas().is_empty());
    assert_eq!(registry.policies().get("read_file").map(|p| p.exposure), Some(ToolExposure::Hidden));
}

#[tokio::test]
async fn an_unknown_name_is_answered_not_panicked() {
    let err = registry().dispatch("stock_qoute", json!({})).await.expect_err("unknown");
    assert!(matches!(&err, ToolError::UnknownTool { name } if name == "stock_qoute"));
    assert!(err.to_model_result().is_error);
}

fn catalogue_tools() -> Vec<Arc<dyn Tool>> {
    tinytools_examples::catalogue::tools()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(tinytools_integration_tests::proptest_cases(64)))]

    /// Whatever order tools are registered in, the tools arrays are the same bytes.
    #[test]
    fn registration_order_never_changes_the_bytes(order in Just((0..41).collect::<Vec<usize>>()).prop_shuffle()) {
        let tools = catalogue_tools();
        let mut shuffled = ToolRegistry::new();
        for index in order {
            shuffled.register_arc(Arc::clone(&tools[index])).expect("registers");
        }
        let reference = tinytools_examples::catalogue::registry();
        let bytes = |registry: &ToolRegistry| {
            (serde_json::to_string(&registry.schemas()).unwrap_or_default(),
             serde_json::to_string(&registry.deferred_schemas()).unwrap_or_default())
        };
        prop_assert_eq!(bytes(&shuffled), bytes(&reference));
    }
}
