//! `tool_search` on arbitrary queries and limits: no panic, never an error for a non-empty
//! query, every match is a deferred tool of the catalogue, at most the clamped limit.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use tinytools::discovery::DiscoveryBridge;
use tinytools_fuzz::registry;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let limit = data.first().map_or(0, |b| i64::from(*b) - 100);
    let registry = registry();
    let bridge = DiscoveryBridge::new(&registry, Default::default());
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
    let answer = runtime.block_on(bridge.search(&json!({"query": text, "limit": limit})));
    let body: Value = serde_json::from_str(&answer.result.to_model_text()).unwrap_or(Value::Null);
    let Some(matches) = body["matches"].as_array() else {
        assert!(text.trim().is_empty() || answer.result.is_error, "{}", answer.result.to_model_text());
        return;
    };
    assert!(matches.len() <= 20);
    for hit in matches {
        let name = hit["name"].as_str().expect("a name");
        assert!(registry.deferred_schemas().iter().any(|s| s.name == name), "{name} is not deferred");
    }
});
