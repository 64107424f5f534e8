//! Preparing and compacting the 3,420 BFCL schemas, per provider profile.
//!
//! `cargo bench -p tinytools-bench --bench schema` (reads BFCL's set from
//! `TINYTOOLS_EVAL_DIR`, else `../shared/eval`; `bench/scripts/fetch-eval.sh` fetches it).

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use tinytools::schema::{ProviderProfile, SchemaPreparation};
use tinytools::{SchemaCompaction, ToolSchema};
use tinytools_examples::eval::{self, EvalTool};

/// Ends the process with `message` as a failure.
fn fail(message: String) -> ! {
    eprintln!("schema: {message}");
    std::process::exit(1);
}

fn schemas() -> Vec<ToolSchema> {
    let path = eval::bench_set_dir("schema", "bfcl").join("tools.jsonl");
    let tools: Vec<EvalTool> = eval::read_jsonl(&path).unwrap_or_else(|err| fail(err));
    tools.into_iter().map(|t| ToolSchema::new(t.id, t.description, eval::normalize_schema(&t.parameters))).collect()
}

fn prepare(c: &mut Criterion) {
    let schemas = schemas();
    let tight = SchemaCompaction::UNLIMITED.with_max_description_bytes(200).with_max_schema_bytes(400);
    let mut group = c.benchmark_group("prepare 3,420 BFCL schemas");
    group.sample_size(10);
    for profile in ProviderProfile::ALL {
        for (label, budget) in [("third_party", SchemaCompaction::THIRD_PARTY), ("400B", tight)] {
            let preparation =
                SchemaPreparation::new(profile).with_strict(profile.name == "openai").with_compaction(budget);
            group.bench_function(BenchmarkId::new(profile.name, label), |b| {
                b.iter(|| {
                    schemas
                        .iter()
                        .filter(|schema| preparation.prepare(schema, None).schema.parameters.is_object())
                        .count()
                });
            });
        }
    }
    group.finish();
}

criterion_group!(benches, prepare);
criterion_main!(benches);
