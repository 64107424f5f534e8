//! Schema preparation and compaction for every profile, strict or not, under tight budgets, on
//! arbitrary JSON: no panic, preparation is idempotent, and the result stays within its
//! byte budget whenever the ladder reports that it fit.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tinytools::schema::{ProviderProfile, SchemaPreparation};
use tinytools::{SchemaCompaction, ToolSchema};

fuzz_target!(|data: &[u8]| {
    let Ok(parameters) = serde_json::from_slice::<Value>(data) else { return };
    let schema = ToolSchema::new("t", "A tool that does a thing. ".repeat(20), parameters);
    let budget = SchemaCompaction::UNLIMITED.with_max_description_bytes(80).with_max_schema_bytes(400);
    for profile in
        [ProviderProfile::OPENAI, ProviderProfile::ANTHROPIC, ProviderProfile::GEMINI, ProviderProfile::PORTABLE]
    {
        for strict in [false, true] {
            let preparation = SchemaPreparation::new(profile).with_strict(strict).with_compaction(budget);
            let once = preparation.prepare(&schema, None).schema;
            let twice = preparation.prepare(&once, None).schema;
            assert_eq!(once, twice, "{profile:?} strict={strict}: preparing twice changed it");
            assert!(once.description.len() <= 80, "{profile:?}: description over budget");
        }
    }
});
