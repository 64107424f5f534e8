//! The 41-tool example catalogue: `read_note` (Direct) and a 40-tool Deferred long tail.
//!
//! ```
//! let registry = tinytools_examples::catalogue::registry();
//! assert_eq!(registry.len(), 41);
//! assert_eq!(registry.schemas().len(), 1); // only read_note is Direct
//! assert_eq!(registry.deferred_schemas().len(), 40);
//! ```

pub mod calendar_mail;
pub mod engineering;
pub mod finance;
pub mod notes;
pub mod team;
pub mod travel;

use std::sync::Arc;

use tinytools::{Tool, ToolRegistry};

/// Every tool of the catalogue, in a fixed order.
pub fn tools() -> Vec<Arc<dyn Tool>> {
    let mut tools: Vec<Arc<dyn Tool>> = vec![Arc::new(notes::ReadNote)];
    tools.extend(finance::tools());
    tools.extend(calendar_mail::tools());
    tools.extend(engineering::tools());
    tools.extend(team::tools());
    tools.extend(travel::tools());
    tools
}

/// The catalogue as the spec's live proof registers it: `read_note` Direct, the rest Deferred.
pub fn registry() -> ToolRegistry {
    registry_from(tools())
}

/// The same 41 tools with every one Direct: the baseline the deferral is measured against.
pub fn all_direct_registry() -> ToolRegistry {
    crate::surface::all_direct(&registry())
}

fn registry_from(tools: Vec<Arc<dyn Tool>>) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    for tool in tools {
        // The catalogue is fixed and its names are unique; the doctest above registers it.
        if let Err(err) = registry.register_arc(tool) {
            unreachable!("the example catalogue is valid: {err}");
        }
    }
    registry
}

/// The family `read_note` (which has none) is listed under by [`families`].
pub const NOTES_FAMILY: &str = "notes";

/// The catalogue's tool names by family (`read_note` under [`NOTES_FAMILY`]), families in
/// catalogue order: what `mcp_serve --family` serves, one MCP server per family.
///
/// ```
/// let families = tinytools_examples::catalogue::families();
/// assert_eq!(families[0], ("notes".to_owned(), vec!["read_note".to_owned()]));
/// assert_eq!(families.iter().map(|(_, names)| names.len()).sum::<usize>(), 41);
/// ```
pub fn families() -> Vec<(String, Vec<String>)> {
    let mut families: Vec<(String, Vec<String>)> = Vec::new();
    for tool in tools() {
        let family = tool.family().unwrap_or(NOTES_FAMILY).to_owned();
        let name = tool.name().to_owned();
        match families.iter_mut().find(|(known, _)| *known == family) {
            Some((_, names)) => names.push(name),
            None => families.push((family, vec![name])),
        }
    }
    families
}

/// A small deterministic number from text, so made-up data is stable across runs.
pub(crate) fn stable_number(text: &str, modulo: u64) -> u64 {
    text.bytes()
        .fold(1_469_598_103_934_665_603_u64, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(1_099_511_628_211))
        % modulo.max(1)
}
