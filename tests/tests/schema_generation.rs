//! The schema `#[tool]` derives from a documented fn, checked as JSON.

use serde::{Deserialize, Serialize};
use serde_json::json;
use tinytools::{SchemaCompaction, Tool, ToolAnnotations, ToolExposure, tool};

/// Where to deliver.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
struct Address {
    /// Street and number.
    street: String,
    /// Postal code.
    postcode: String,
}

/// How fast to ship.
#[derive(Debug, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Speed {
    /// Three to five days.
    Standard,
    /// Next day.
    Express,
}

/// Ship a parcel to an address.
///
/// Charges the user's default card.
///
/// # Errors
/// Fails when the address is outside the delivery area.
#[tool(exposure = "deferred", family = "logistics", destructive = false, compaction = "third_party")]
async fn ship_parcel(
    /// Where the parcel goes.
    to: Address,
    /// Weight in grams.
    weight_grams: u32,
    /// Delivery speed.
    speed: Speed,
    /// Gift message printed on the slip.
    #[serde(rename = "gift_message")]
    message: Option<String>,
    /// Insure the parcel.
    #[serde(default)]
    insured: bool,
) -> Result<String, tinytools::Refusal> {
    Ok(format!("{} {weight_grams} {speed:?} {message:?} {insured}", to.postcode))
}

#[test]
fn description_is_the_doc_comment_up_to_the_first_heading() {
    assert_eq!(ShipParcel.description(), "Ship a parcel to an address.\n\nCharges the user's default card.");
}

#[test]
fn parameters_become_a_documented_object_schema() {
    let schema = ShipParcel.parameters_schema();
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["required"], json!(["to", "weight_grams", "speed"]));
    let properties = schema["properties"].as_object().expect("properties");
    let mut names: Vec<_> = properties.keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(names, ["gift_message", "insured", "speed", "to", "weight_grams"]);

    assert_eq!(properties["weight_grams"]["description"], "Weight in grams.");
    assert_eq!(properties["weight_grams"]["type"], "integer");
    assert_eq!(properties["weight_grams"]["minimum"], 0);
    assert_eq!(properties["gift_message"]["description"], "Gift message printed on the slip.");
    assert_eq!(properties["gift_message"]["type"], json!(["string", "null"]));
    assert_eq!(properties["insured"]["default"], false);
    assert!(schema.get("$schema").is_none() && schema.get("title").is_none());
}

#[test]
fn nested_structs_and_enums_land_in_defs_with_their_docs() {
    let schema = ShipParcel.parameters_schema();
    assert_eq!(schema["properties"]["to"]["$ref"], "#/$defs/Address");
    assert_eq!(schema["properties"]["to"]["description"], "Where the parcel goes.");
    let address = &schema["$defs"]["Address"];
    assert_eq!(address["required"], json!(["street", "postcode"]));
    assert_eq!(address["properties"]["postcode"]["description"], "Postal code.");

    let speed = &schema["$defs"]["Speed"];
    let values: Vec<_> = speed["oneOf"].as_array().expect("oneOf").iter().map(|v| v["const"].clone()).collect();
    assert_eq!(values, [json!("standard"), json!("express")]);
    assert_eq!(speed["oneOf"][1]["description"], "Next day.");
}

#[test]
fn exposure_family_classification_and_budget_are_carried() {
    assert_eq!(ShipParcel.name(), "ship_parcel");
    assert_eq!(ShipParcel.exposure(), ToolExposure::Deferred);
    assert_eq!(ShipParcel.family(), Some("logistics"));
    let annotations = ShipParcel.annotations();
    assert_eq!(
        (annotations.read_only, annotations.destructive, annotations.idempotent, annotations.open_world),
        (false, false, false, true)
    );
    assert_eq!(ShipParcel.schema_compaction(), Some(SchemaCompaction::THIRD_PARTY));
}

/// Count words.
#[tool]
fn word_count(text: String) -> usize {
    text.split_whitespace().count()
}

#[test]
fn defaults_are_direct_unclassified_and_unbudgeted() {
    assert_eq!(WordCount.exposure(), ToolExposure::Direct);
    assert_eq!(WordCount.family(), None);
    assert_eq!(WordCount.annotations(), ToolAnnotations::UNCLASSIFIED);
    assert_eq!(WordCount.schema_compaction(), None);
    // An undocumented parameter of a Direct tool is allowed and has no description.
    assert!(WordCount.parameters_schema()["properties"]["text"].get("description").is_none());
}

#[tokio::test]
async fn the_fn_stays_callable_as_written() {
    let address = Address { street: "1 Main St".into(), postcode: "1000-001".into() };
    let text = ship_parcel(address, 500, Speed::Express, None, true).await;
    assert_eq!(text.as_deref(), Ok("1000-001 500 Express None true"));
    assert_eq!(word_count("a b c".into()), 3);
}

#[tokio::test]
async fn serde_rename_and_default_are_honoured_when_called() {
    let result = ShipParcel
        .execute(json!({
            "to": {"street": "1 Main St", "postcode": "1000-001"},
            "weight_grams": 500,
            "speed": "standard",
            "gift_message": "hi"
        }))
        .await
        .expect("runs");
    assert_eq!(result.to_model_text(), r#"1000-001 500 Standard Some("hi") false"#);
}
