//! How an MCP server's tool names become provider-safe tinytools names.
//!
//! MCP allows names no provider accepts (`files/read`, `math.factorial`, 200 characters), and two
//! servers may both have a `search`. Every imported name is `{prefix}{tool}` with each character
//! outside `[A-Za-z0-9_-]` replaced by `_`; a name still over 64 bytes keeps its first 55 bytes
//! and ends in `_` plus 8 hex digits of a hash of the original, so long names stay distinct.

use crate::tool::MAX_NAME_LEN;

/// The name a server's tool is registered under.
///
/// ```
/// use tinytools::mcp::namespaced_name;
///
/// assert_eq!(namespaced_name("time__", "get_current_time"), "time__get_current_time");
/// assert_eq!(namespaced_name("fs__", "files/read.all"), "fs__files_read_all");
/// let long = namespaced_name("docs__", &"x".repeat(100));
/// assert_eq!(long.len(), 64);
/// assert_ne!(long, namespaced_name("docs__", &"x".repeat(101)));
/// ```
pub fn namespaced_name(prefix: &str, tool: &str) -> String {
    let safe: String = prefix.chars().chain(tool.chars()).map(safe_char).collect();
    if safe.len() <= MAX_NAME_LEN {
        return safe;
    }
    let tag = format!("_{:08x}", fnv1a(prefix, tool));
    // `safe` is ASCII, so any byte index is a char boundary.
    format!("{}{tag}", &safe[..MAX_NAME_LEN - tag.len()])
}

/// The default prefix for a server: its name made safe, then `__`.
///
/// ```
/// assert_eq!(tinytools::mcp::default_prefix("my.server"), "my_server__");
/// ```
pub fn default_prefix(server: &str) -> String {
    let mut prefix: String = server.chars().map(safe_char).collect();
    prefix.push_str("__");
    prefix
}

/// A server's name made into a valid family: characters outside `[A-Za-z0-9_.-]` become `-`,
/// and it is cut to 64 bytes.
///
/// ```
/// assert_eq!(tinytools::mcp::family_for("mcp-servers/everything"), "mcp-servers-everything");
/// ```
pub fn family_for(server: &str) -> String {
    let mut family: String = server
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') { c } else { '-' })
        .collect();
    family.truncate(crate::tool::MAX_FAMILY_LEN);
    if family.is_empty() { "mcp".into() } else { family }
}

/// What the model reads of an MCP tool: its description, else its title, else a line naming
/// the tool and its server.
///
/// ```
/// use tinytools::mcp::remote_description;
///
/// assert_eq!(remote_description("time", "now", Some(" "), Some("Current time")), "Current time");
/// assert_eq!(remote_description("time", "now", None, None), "`now` from the time MCP server.");
/// ```
pub fn remote_description(server: &str, tool: &str, description: Option<&str>, title: Option<&str>) -> String {
    match (description, title) {
        (Some(description), _) if !description.trim().is_empty() => description.to_owned(),
        (_, Some(title)) if !title.trim().is_empty() => title.to_owned(),
        _ => format!("`{tool}` from the {server} MCP server."),
    }
}

fn safe_char(c: char) -> char {
    if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }
}

/// FNV-1a over both parts: stable across runs and platforms, which `std`'s hasher is not.
fn fnv1a(prefix: &str, tool: &str) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in prefix.bytes().chain([0]).chain(tool.bytes()) {
        hash ^= u32::from(byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::{check_family, check_tool_name};

    #[test]
    fn every_name_follows_the_provider_rule() {
        for tool in ["get-current-time", "a.b/c d", "café", "", &"é".repeat(80), &"x".repeat(300)] {
            let name = namespaced_name("srv__", tool);
            assert!(check_tool_name(&name).is_ok(), "{name:?}");
        }
    }

    #[test]
    fn long_names_stay_distinct_and_stable() {
        let a = namespaced_name("p__", &format!("{}a", "x".repeat(80)));
        let b = namespaced_name("p__", &format!("{}b", "x".repeat(80)));
        assert_ne!(a, b);
        assert_eq!(a, namespaced_name("p__", &format!("{}a", "x".repeat(80))));
        assert!(a.starts_with("p__xxx"));
    }

    #[test]
    fn families_and_prefixes_are_valid() {
        assert_eq!(family_for("mcp-servers/everything"), "mcp-servers-everything");
        assert_eq!(default_prefix("my.server"), "my_server__");
        assert!(check_family(&family_for(&"s p".repeat(40))).is_ok());
        assert_eq!(family_for(""), "mcp");
    }
}
