//! Admission against random schemas: the input is a schema and arguments (JSON, split at the
//! first NUL byte). Registering never panics; dispatching never panics; a call admission
//! accepts matches the schema as jsonschema sees it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tinytools::{ToolExposure, ToolRegistry, ToolSchema};
use tinytools_fuzz::Fixed;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (schema, args) = text.split_once('\0').unwrap_or((&text, "{}"));
    let Ok(parameters) = serde_json::from_str::<Value>(schema) else { return };
    let Ok(args) = serde_json::from_str::<Value>(args) else { return };
    let mut registry = ToolRegistry::new();
    let tool = Fixed { schema: ToolSchema::new("t", "A tool.", parameters), exposure: ToolExposure::Direct };
    if registry.register(tool).is_err() {
        return;
    }
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
    let _ = runtime.block_on(registry.dispatch("t", args));
});
