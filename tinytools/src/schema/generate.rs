//! Deriving a parameters schema from a Rust type with schemars.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::Value;

/// The parameters schema of `T` as `#[tool]` derives it: JSON Schema draft 2020-12 from
/// schemars, with the root's `$schema` and `title` removed (they cost bytes on every request
/// and tell the model nothing). Definitions stay under `$defs`.
///
/// ```
/// #[derive(schemars::JsonSchema)]
/// struct Args {
///     /// Ticker symbol.
///     symbol: String,
///     limit: Option<u32>,
/// }
///
/// let schema = tinytools::schema::schema_for::<Args>();
/// assert_eq!(schema["type"], "object");
/// assert_eq!(schema["properties"]["symbol"]["description"], "Ticker symbol.");
/// assert_eq!(schema["required"], serde_json::json!(["symbol"]));
/// assert!(schema.get("$schema").is_none() && schema.get("title").is_none());
/// ```
pub fn schema_for<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12().into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Some(root) = schema.as_object_mut() {
        root.remove("$schema");
        root.remove("title");
    }
    schema
}
