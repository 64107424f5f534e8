//! What schema preparation and compaction do to a catalogue: bytes and tokens (o200k) per
//! tool and in total, before and after.
//!
//! ```text
//! cargo run -p tinytools-examples --features tiktoken --example schema_report                     # the 41-tool catalogue
//! cargo run -p tinytools-examples --features tiktoken --example schema_report -- --profile gemini --max-schema-bytes 300
//! cargo run --release -p tinytools-examples --features tiktoken --example schema_report -- \
//!     --tools ../shared/eval/bfcl/tools.jsonl --summary                       # totals only
//! ```
//!
//! Options: `--profile openai|anthropic|gemini|portable` (default openai), `--strict`,
//! `--max-schema-bytes N` and `--max-description-bytes N` (default: `SchemaCompaction::THIRD_PARTY`),
//! `--tools FILE` (an eval `tools.jsonl`), `--summary`, `--json`.

use serde_json::json;
use tinytools::schema::{ProviderProfile, SchemaPreparation, TiktokenCounter, TokenCounter};
use tinytools::{SchemaCompaction, ToolSchema};
use tinytools_examples::{catalogue, eval};

struct Row {
    name: String,
    canonical: (usize, usize),
    prepared: (usize, usize),
    compacted: (usize, usize),
    rungs: usize,
    fits: bool,
}

fn main() {
    if let Err(message) = run() {
        eprintln!("schema_report: {message}");
        std::process::exit(2);
    }
}

/// The command line's choices.
struct Options {
    profile: ProviderProfile,
    strict: bool,
    summary: bool,
    json: bool,
    budget: SchemaCompaction,
    tools_file: Option<String>,
}

fn run() -> Result<(), String> {
    let options = options()?;
    let rows = rows(&schemas(options.tools_file.as_deref())?, &options);
    let total = |pick: fn(&Row) -> (usize, usize)| rows.iter().map(pick).fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    let (canonical, prepared, compacted) = (total(|r| r.canonical), total(|r| r.prepared), total(|r| r.compacted));
    let over = rows.iter().filter(|r| !r.fits).count();
    let Options { profile, strict, budget, .. } = options;
    if options.json {
        let report = json!({
            "tools": rows.len(), "profile": profile.name, "strict": strict,
            "budget": {"max_schema_bytes": budget.max_schema_bytes, "max_description_bytes": budget.max_description_bytes},
            "canonical": {"bytes": canonical.0, "tokens": canonical.1},
            "prepared": {"bytes": prepared.0, "tokens": prepared.1},
            "compacted": {"bytes": compacted.0, "tokens": compacted.1},
            "tools_at_the_floor": over,
        });
        println!("{report}");
        return Ok(());
    }
    println!(
        "profile {}{}, budget {:?} schema bytes / {:?} description bytes, tokens: o200k\n",
        profile.name,
        if strict { " (strict)" } else { "" },
        budget.max_schema_bytes,
        budget.max_description_bytes
    );
    if !options.summary {
        print_rows(&rows);
    }
    println!("{} tools", rows.len());
    println!("  canonical  {:>9} bytes {:>8} tokens", canonical.0, canonical.1);
    println!("  prepared   {:>9} bytes {:>8} tokens", prepared.0, prepared.1);
    println!("  compacted  {:>9} bytes {:>8} tokens   ({over} at the floor, over budget)", compacted.0, compacted.1);
    Ok(())
}

fn options() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let mut options = Options {
        profile: ProviderProfile::OPENAI,
        strict: false,
        summary: false,
        json: false,
        budget: SchemaCompaction::THIRD_PARTY,
        tools_file: None,
    };
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--profile" => {
                let name = value()?;
                options.profile = ProviderProfile::ALL
                    .into_iter()
                    .find(|p| p.name == name)
                    .ok_or_else(|| format!("unknown profile `{name}`"))?;
            }
            "--strict" => options.strict = true,
            "--summary" => options.summary = true,
            "--json" => options.json = true,
            "--max-schema-bytes" => {
                options.budget.max_schema_bytes = Some(value()?.parse().map_err(|_| "a byte count")?);
            }
            "--max-description-bytes" => {
                options.budget.max_description_bytes = Some(value()?.parse().map_err(|_| "a byte count")?);
            }
            "--tools" => options.tools_file = Some(value()?),
            other => return Err(format!("unknown option `{other}`; see the example's header")),
        }
    }
    Ok(options)
}

/// The schemas to report on: an eval `tools.jsonl`, or the 41-tool catalogue with its hints.
fn schemas(tools_file: Option<&str>) -> Result<Vec<(ToolSchema, Option<SchemaCompaction>)>, String> {
    Ok(match tools_file {
        Some(path) => eval::read_jsonl::<eval::EvalTool>(path.as_ref())?
            .into_iter()
            .map(|t| {
                let parameters = eval::normalize_schema(&t.parameters);
                (ToolSchema::new(t.id, t.description, parameters), None)
            })
            .collect(),
        None => catalogue::all_direct_registry().iter().map(|t| (t.schema().clone(), t.compaction())).collect(),
    })
}

/// Each schema's cost as written, prepared for the profile, and compacted to the budget.
fn rows(schemas: &[(ToolSchema, Option<SchemaCompaction>)], options: &Options) -> Vec<Row> {
    let counter = TiktokenCounter::O200K;
    let cost = |schema: &ToolSchema| {
        let text = schema.to_compact_json();
        (text.len(), counter.count(&text))
    };
    let plain = SchemaPreparation::new(options.profile).with_strict(options.strict);
    let budgeted = plain.with_compaction(options.budget);
    schemas
        .iter()
        .map(|(schema, hint)| {
            let compacted = budgeted.prepare(schema, *hint);
            let report = compacted.report.clone();
            Row {
                name: schema.name.clone(),
                canonical: cost(schema),
                prepared: cost(&plain.prepare(schema, None).schema),
                compacted: cost(&compacted.schema),
                rungs: report.as_ref().map_or(0, |r| r.rungs.len()),
                fits: report.is_none_or(|r| r.fits),
            }
        })
        .collect()
}

/// One line per tool.
fn print_rows(rows: &[Row]) {
    println!("{:<32} {:>14} {:>14} {:>14} {:>5}", "tool", "canonical B/t", "prepared B/t", "compacted B/t", "rungs");
    for row in rows {
        let pair = |(b, t): (usize, usize)| format!("{b}/{t}");
        let floor = if row.fits { "" } else { " (floor, over budget)" };
        println!(
            "{:<32} {:>14} {:>14} {:>14} {:>5}{floor}",
            row.name,
            pair(row.canonical),
            pair(row.prepared),
            pair(row.compacted),
            row.rungs
        );
    }
    println!();
}
