//! An MCP server on stdio serving a slice of BFCL's real tool definitions as stub tools (each
//! answers "ok"): the distractor servers the `live_tasks` gateway arm puts beside the catalogue's
//! with `--gateway-distractors N`, so that the gateway fronts a few hundred tools.
//!
//! ```text
//! target/release/bfcl_serve --skip 40 --count 40   # BFCL's distractor tools 41 to 80
//! ```
//!
//! The tools are [`tinytools_bench::tasks::bfcl_distractors`], in the same order, read at run
//! time from `../shared/eval/bfcl/tools.jsonl`.

use std::sync::Arc;

use tinytools::ToolRegistry;
use tinytools::mcp::McpToolServer;
use tinytools_bench::tasks::bfcl_distractors;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let registry = match slice() {
        Ok(registry) => registry,
        Err(message) => {
            eprintln!("bfcl_serve: {message}");
            std::process::exit(2);
        }
    };
    let server = McpToolServer::new(Arc::new(registry)).with_server_info("bfcl-distractors", env!("CARGO_PKG_VERSION"));
    if let Err(err) = server.serve_stdio().await {
        eprintln!("bfcl_serve: {err}");
        std::process::exit(1);
    }
}

/// The registry of the distractors `--skip` and `--count` name.
fn slice() -> Result<ToolRegistry, String> {
    let (mut skip, mut count) = (0usize, 40usize);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().ok_or_else(|| format!("{arg} needs a count"))?;
        let number = value.parse::<usize>().map_err(|_| format!("{arg}: not a count: {value}"))?;
        match arg.as_str() {
            "--skip" => skip = number,
            "--count" => count = number,
            other => return Err(format!("unknown argument `{other}`; the options are --skip N and --count N")),
        }
    }
    let mut registry = ToolRegistry::new();
    for tool in bfcl_distractors(skip + count)?.into_iter().skip(skip) {
        let name = tool.name().to_owned();
        registry.register_arc(tool).map_err(|err| format!("BFCL tool {name}: {err}"))?;
    }
    Ok(registry)
}
