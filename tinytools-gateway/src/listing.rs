//! What `tools/list` answers: `tool_search`, `call_tool`, then the Direct tools, a page at a
//! time when the list is longer than a page.
//!
//! The list is usually a handful of tools, answered whole. Past the page size
//! ([`GatewayOptions::page_size`](crate::GatewayOptions::page_size)) it is cut into pages,
//! and `nextCursor` holds the next page's offset and a fingerprint of the list's names: any
//! gateway process serving the same list (a replica behind a load balancer) answers the next
//! page, and a cursor this gateway did not issue, or one from a list that has changed since,
//! is refused as invalid params (`-32602`) with what to do.

use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{ListToolsResult, Tool as RemoteTool, ToolAnnotations as RemoteAnnotations};
use serde_json::{Map, Value, json};
use tinytools::ToolSchema;

use crate::catalog::Catalog;
use crate::manifest::{ManifestNames, tool_search_schema};

/// The name of the tool that forwards a call.
pub const CALL_TOOL: &str = "call_tool";

/// The tools a gateway over `catalog` answers `tools/list` with: `tool_search` (its manifest
/// per `names`), `call_tool`, then the Direct tools.
pub fn listed_tools(catalog: &Catalog, names: ManifestNames) -> Vec<RemoteTool> {
    let mut tools = vec![listed(&tool_search_schema(catalog, names), None), listed(&call_tool_schema(), None)];
    tools.extend(catalog.direct().iter().map(|schema| listed(schema, catalog.direct_annotations(&schema.name))));
    tools
}

/// `call_tool`'s declaration.
pub fn call_tool_schema() -> ToolSchema {
    ToolSchema::new(
        CALL_TOOL,
        "Call a tool found with tool_search, by its name, with its arguments.",
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The tool's name, as tool_search gave it."},
                "arguments": {"type": "object", "description": "The tool's arguments, as its schema says."}
            },
            "required": ["name", "arguments"]
        }),
    )
}

/// A declaration as MCP lists it, with its annotations when it has valid ones.
pub(crate) fn listed(schema: &ToolSchema, annotations: Option<&Value>) -> RemoteTool {
    let input = match &schema.parameters {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    let tool = RemoteTool::new(schema.name.clone(), schema.description.clone(), Arc::new(input));
    match annotations.and_then(|value| serde_json::from_value::<RemoteAnnotations>(value.clone()).ok()) {
        Some(annotations) => tool.with_annotations(annotations),
        None => tool,
    }
}

/// The page of `tools` that `cursor` asks for (the first without one), at most `size` tools
/// (at least 1), with the next page's cursor when there is one.
///
/// # Errors
/// Invalid params when the cursor was not issued for this list.
pub fn page(tools: Vec<RemoteTool>, cursor: Option<&str>, size: usize) -> Result<ListToolsResult, ErrorData> {
    let size = size.max(1);
    let fingerprint = fingerprint(&tools);
    let start = match cursor {
        None => 0,
        Some(cursor) => match parse(cursor) {
            Some((offset, issued)) if issued == fingerprint && offset < tools.len() => offset,
            _ => {
                return Err(ErrorData::invalid_params(
                    "tools/list: this cursor is not one the gateway issued for its current tool list (the list may \
                     have changed since); list again without a cursor",
                    None,
                ));
            }
        },
    };
    let end = (start + size).min(tools.len());
    let next = (end < tools.len()).then(|| format!("{end}-{fingerprint:016x}"));
    let mut result = ListToolsResult::with_all_items(tools.into_iter().skip(start).take(end - start).collect());
    result.next_cursor = next;
    Ok(result)
}

fn parse(cursor: &str) -> Option<(usize, u64)> {
    let (offset, fingerprint) = cursor.split_once('-')?;
    Some((offset.parse().ok()?, u64::from_str_radix(fingerprint, 16).ok()?))
}

/// FNV-1a 64 over the tools' names: the same list gives the same fingerprint in any process.
fn fingerprint(tools: &[RemoteTool]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in tools.iter().flat_map(|tool| tool.name.bytes().chain([0])) {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tools(names: &[&str]) -> Vec<RemoteTool> {
        names.iter().map(|name| listed(&ToolSchema::new(*name, "d", json!({})), None)).collect()
    }

    fn names(result: &ListToolsResult) -> Vec<String> {
        result.tools.iter().map(|tool| tool.name.to_string()).collect()
    }

    #[test]
    fn pages_follow_their_cursors_and_a_foreign_cursor_is_refused() {
        let all = tools(&["a", "b", "c", "d", "e"]);
        let first = page(all.clone(), None, 2).unwrap();
        assert_eq!(names(&first), ["a", "b"]);
        let second = page(all.clone(), first.next_cursor.as_deref(), 2).unwrap();
        assert_eq!(names(&second), ["c", "d"]);
        let last = page(all.clone(), second.next_cursor.as_deref(), 2).unwrap();
        assert_eq!(names(&last), ["e"]);
        assert_eq!(last.next_cursor, None);
        assert!(page(all.clone(), None, 100).unwrap().next_cursor.is_none());
        for bad in ["", "x", "2", "9-0", "2-zz"] {
            let error = page(all.clone(), Some(bad), 2).unwrap_err();
            assert!(error.message.contains("list again without a cursor"), "{bad}: {error:?}");
        }
        let changed = page(tools(&["a", "b", "x", "d", "e"]), first.next_cursor.as_deref(), 2);
        assert!(changed.is_err(), "a cursor from another list is refused");
    }
}
