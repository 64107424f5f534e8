//! `#[tools]` groups: the `#[tool]` methods of one `impl` block, `&self` their shared state,
//! registered together (all or none), the block's keys their defaults.

use std::sync::Arc;
use std::sync::Mutex;

use serde_json::json;
use tinytools::{Refusal, RegistryError, State, ToolExposure, ToolRegistry, tool, tools};

/// A ledger the tools share.
#[derive(Default)]
struct Ledger {
    entries: Mutex<Vec<(String, i64)>>,
}

/// The currency the host books in: registry state, read by a group method.
struct Currency(&'static str);

#[tools(family = "accounts", exposure = "deferred", read_only)]
impl Ledger {
    /// Record an amount against an account.
    #[tool(read_only = false, destructive = false, exposure = "direct")]
    fn record(
        &self,
        /// Account name.
        account: String,
        /// Amount in cents; negative for a debit.
        cents: i64,
    ) -> Result<String, Refusal> {
        if cents == 0 {
            return Err(Refusal::new("an entry of 0 changes nothing; give a non-zero amount"));
        }
        self.entries.lock().map_err(|_| Refusal::new("the ledger is unavailable"))?.push((account.clone(), cents));
        Ok(format!("recorded {cents} for {account}"))
    }

    /// An account's balance.
    #[tool]
    async fn balance(
        &self,
        /// Account name.
        account: String,
        currency: State<Currency>,
    ) -> String {
        let total: i64 =
            self.entries.lock().map(|e| e.iter().filter(|(a, _)| *a == account).map(|(_, c)| c).sum()).unwrap_or(0);
        let Currency(code) = &*currency;
        format!("{account}: {total} {code}")
    }

    /// Not a tool.
    fn len(&self) -> usize {
        self.entries.lock().map(|e| e.len()).unwrap_or(0)
    }
}

/// Something else called `balance`.
#[tool]
async fn balance() -> &'static str {
    "0"
}

#[tokio::test]
async fn a_group_registers_its_tools_with_the_block_s_defaults_and_shares_its_value() {
    let ledger = Arc::new(Ledger::default());
    let mut registry = ToolRegistry::new().with_state(Currency("EUR"));
    registry.register_group_arc(Arc::clone(&ledger)).expect("registers");
    assert_eq!(registry.len(), 2, "only the #[tool] methods");

    let record = registry.get("record").expect("registered");
    assert_eq!(record.exposure(), ToolExposure::Direct, "the method's key wins");
    assert_eq!(record.family(), Some("accounts"), "the block's default");
    assert!(!record.annotations().read_only && !record.annotations().destructive);
    let balance = registry.get("balance").expect("registered");
    assert_eq!(balance.exposure(), ToolExposure::Deferred);
    assert!(balance.annotations().read_only, "the block's flag");
    assert!(balance.schema().parameters["properties"].get("currency").is_none(), "state is not an argument");

    registry.dispatch("record", json!({"account": "rent", "cents": -120_000})).await.expect("runs");
    registry.dispatch("record", json!({"account": "rent", "cents": 20_000})).await.expect("runs");
    let refused = registry.dispatch("record", json!({"account": "rent", "cents": 0})).await.expect("a refusal");
    assert!(refused.is_error && refused.to_model_text().contains("non-zero"));
    let total = registry.dispatch("balance", json!({"account": "rent"})).await.expect("runs");
    assert_eq!(total.to_model_text(), "rent: -100000 EUR");
    assert_eq!(ledger.len(), 2, "the host's handle sees what the tools did");
}

#[test]
fn a_group_registers_all_or_none() {
    let mut registry = ToolRegistry::new().with_state(Currency("EUR"));
    registry.register(Balance).expect("registers");
    let error = registry.register_group(Ledger::default()).map(|_| ()).expect_err("`balance` is taken");
    assert!(matches!(&error, RegistryError::DuplicateName { name } if name == "balance"), "{error}");
    assert!(registry.get("record").is_none(), "nothing of the group was kept");

    let mut stateless = ToolRegistry::new();
    let error = stateless.register_group(Ledger::default()).map(|_| ()).expect_err("no Currency");
    assert!(matches!(error, RegistryError::MissingState { .. }), "{error}");
    assert!(stateless.is_empty());
}
