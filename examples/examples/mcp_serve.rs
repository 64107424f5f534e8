//! Serve the 41-tool example catalogue as an MCP server on stdio.
//!
//! Direct and Deferred tools are listed with the schemas `#[tool]` derived and their
//! classification as MCP annotations; Hidden tools never are. Point any MCP client at it:
//!
//! ```text
//! cargo build -p tinytools-examples --features mcp --example mcp_serve
//! npx @modelcontextprotocol/inspector target/debug/examples/mcp_serve
//! ```
//!
//! `--family finance,travel` serves only those families' tools (`notes` is `read_note`): the
//! `live_tasks` gateway arm (`tinytools-bench`) starts one server per family behind `tinytools-gateway`.

use std::sync::Arc;

use tinytools::ToolRegistry;
use tinytools::mcp::McpToolServer;
use tinytools_examples::catalogue;

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let server = match families() {
        Ok(None) => McpToolServer::new(Arc::new(catalogue::registry()))
            .with_server_info("tinytools-catalogue", env!("CARGO_PKG_VERSION"))
            .with_instructions(
                "Example tools with made-up data: finance, calendar, mail, Jira, GitHub, team and travel.",
            ),
        Ok(Some(wanted)) => match registry_of(&wanted) {
            Ok(registry) => McpToolServer::new(Arc::new(registry))
                .with_server_info(format!("tinytools-catalogue-{}", wanted.join("-")), env!("CARGO_PKG_VERSION")),
            Err(message) => fail(&message),
        },
        Err(message) => fail(&message),
    };
    if let Err(err) = server.serve_stdio().await {
        eprintln!("mcp_serve: {err}");
        std::process::exit(1);
    }
}

fn fail(message: &str) -> ! {
    eprintln!("mcp_serve: {message}");
    std::process::exit(2);
}

/// The families `--family` names, if it is given.
fn families() -> Result<Option<Vec<String>>, String> {
    let mut args = std::env::args().skip(1);
    let mut wanted = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--family" => {
                let value = args.next().ok_or("--family needs a value: --family finance,travel")?;
                wanted = Some(value.split(',').map(|family| family.trim().to_owned()).collect());
            }
            other => return Err(format!("unknown argument `{other}`; the only option is --family NAME[,NAME]")),
        }
    }
    Ok(wanted)
}

/// The catalogue's tools of these families, with the catalogue's exposure.
fn registry_of(wanted: &[String]) -> Result<ToolRegistry, String> {
    let families = catalogue::families();
    let mut names: Vec<&str> = Vec::new();
    for family in wanted {
        let Some((_, members)) = families.iter().find(|(known, _)| known == family) else {
            let known: Vec<&str> = families.iter().map(|(name, _)| name.as_str()).collect();
            return Err(format!("unknown family `{family}`; the families are {}", known.join(", ")));
        };
        names.extend(members.iter().map(String::as_str));
    }
    let mut registry = ToolRegistry::new();
    for tool in catalogue::tools().into_iter().filter(|tool| names.contains(&tool.name())) {
        let name = tool.name().to_owned();
        registry.register_arc(tool).map_err(|err| format!("cannot serve `{name}`: {err}"))?;
    }
    Ok(registry)
}
