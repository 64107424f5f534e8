//! The deferral scenario of the spec's live proof, offline: the 41-tool catalogue, and what
//! its first request costs with every tool Direct versus the 40-tool long tail Deferred.
//!
//! ```text
//! cargo run -p tinytools-examples --example deferral            # a table
//! cargo run -p tinytools-examples --example deferral -- --json  # one JSON object
//! ```

use serde_json::json;
use tinytools::{ToolRegistry, ToolSchema};
use tinytools_examples::catalogue;

fn main() {
    let json_output = std::env::args().any(|arg| arg == "--json");
    let deferred = catalogue::registry();
    let direct = catalogue::all_direct_registry();

    let direct_surface = Surface::of(&direct);
    let deferred_surface = Surface::of(&deferred);

    if json_output {
        let figures = json!({
            "catalogue": deferred.len(),
            "direct": direct_surface.to_json(),
            "deferred": deferred_surface.to_json(),
            "saved_bytes": direct_surface.bytes - deferred_surface.bytes,
        });
        println!("{figures}");
        return;
    }

    println!("The 41-tool catalogue (schema bytes = compact JSON of name, description, parameters):\n");
    println!("{:<28} {:<9} {:<10} {:>6}", "tool", "exposure", "family", "bytes");
    for tool in deferred.iter() {
        println!(
            "{:<28} {:<9} {:<10} {:>6}",
            tool.name(),
            tool.exposure().to_string(),
            tool.family().unwrap_or("-"),
            tool.schema().byte_len()
        );
    }
    println!("\nFirst request's tools array:");
    println!("  all Direct : {:>2} tools, {:>6} bytes", direct_surface.tools, direct_surface.bytes);
    println!("  deferred   : {:>2} tools, {:>6} bytes", deferred_surface.tools, deferred_surface.bytes);
    println!(
        "  saved      : {:>6} bytes ({:.0}%), before the tool_search bridge is added back",
        direct_surface.bytes - deferred_surface.bytes,
        100.0 * (direct_surface.bytes - deferred_surface.bytes) as f64 / direct_surface.bytes as f64
    );
}

/// What a registry puts in the first request's tools array.
struct Surface {
    tools: usize,
    bytes: usize,
}

impl Surface {
    fn of(registry: &ToolRegistry) -> Self {
        let schemas = registry.schemas();
        Self { tools: schemas.len(), bytes: wire_bytes(&schemas) }
    }

    fn to_json(&self) -> serde_json::Value {
        json!({"tools": self.tools, "schema_bytes": self.bytes})
    }
}

/// The compact JSON size of the tools array.
fn wire_bytes(schemas: &[ToolSchema]) -> usize {
    serde_json::to_string(schemas).map_or(0, |text| text.len())
}
