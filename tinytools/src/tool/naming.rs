//! The rules every tool name and family must follow.
//!
//! The `#[tool]` macro checks the same rules at compile time; `naming_rules_agree_with_the_runtime`
//! in `ui-tests/tests/expansion.rs` keeps the two in step.

/// The name the discovery bridge answers to. A host may register its own tool under this
/// name (it then wins over the bridge), but `#[tool]` refuses it so it is never taken by accident.
pub const TOOL_SEARCH: &str = "tool_search";

/// The longest tool name providers accept (OpenAI, Anthropic and Gemini agree on 64).
pub const MAX_NAME_LEN: usize = 64;

/// The longest family name.
pub const MAX_FAMILY_LEN: usize = 64;

/// Checks a tool name against `^[A-Za-z0-9_-]{1,64}$`, the rule providers enforce.
///
/// Returns what is wrong, in words fit for an error message.
///
/// ```
/// use tinytools::tool::check_tool_name;
///
/// assert!(check_tool_name("stock_quote").is_ok());
/// assert!(check_tool_name("stock quote").unwrap_err().contains("' '"));
/// ```
pub fn check_tool_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a tool name cannot be empty".into());
    }
    if name.len() > MAX_NAME_LEN {
        return Err(format!(
            "a tool name is at most {MAX_NAME_LEN} bytes (providers reject longer ones); this one has {}",
            name.len()
        ));
    }
    match name.chars().find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-')) {
        Some(bad) => Err(format!(
            "a tool name may use only ASCII letters, digits, '_' and '-' (providers reject others); found {bad:?}"
        )),
        None => Ok(()),
    }
}

/// Checks a family name: 1 to 64 ASCII letters, digits, `_`, `-` or `.`.
///
/// ```
/// use tinytools::tool::check_family;
///
/// assert!(check_family("finance").is_ok());
/// assert!(check_family("mcp.github").is_ok());
/// assert!(check_family("").is_err());
/// assert!(check_family("my family").is_err());
/// ```
pub fn check_family(family: &str) -> Result<(), String> {
    if family.is_empty() {
        return Err("a family cannot be empty; leave it out instead".into());
    }
    if family.len() > MAX_FAMILY_LEN {
        return Err(format!("a family is at most {MAX_FAMILY_LEN} bytes; this one has {}", family.len()));
    }
    match family.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))) {
        Some(bad) => Err(format!("a family may use only ASCII letters, digits, '_', '-' and '.'; found {bad:?}")),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_provider_rule() {
        for good in ["a", "stock_quote", "jira-create-issue", "A1", &"x".repeat(64)] {
            assert!(check_tool_name(good).is_ok(), "{good}");
        }
        for bad in ["", "math.factorial", "stock quote", "café", &"x".repeat(65)] {
            assert!(check_tool_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn families_allow_dots_but_not_spaces() {
        assert!(check_family("mcp.filesystem").is_ok());
        for bad in ["", " ", "fin ance", "finance!", &"f".repeat(65)] {
            assert!(check_family(bad).is_err(), "{bad:?}");
        }
    }
}
