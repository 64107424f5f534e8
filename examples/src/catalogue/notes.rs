//! The one Direct tool: reading the user's notes.

use tinytools::{Refusal, tool};

/// Read one of the user's notes by its title and return its full text.
#[tool(read_only)]
pub async fn read_note(
    /// The note's title, such as "groceries" or "q3 planning".
    title: String,
) -> Result<String, Refusal> {
    match title.to_lowercase().as_str() {
        "groceries" => Ok("eggs, oat milk, coffee beans, limes".into()),
        "q3 planning" => Ok("Ship discovery; measure first-call tokens; hire one SRE.".into()),
        "portfolio" => Ok("Holdings: ACME (120 shares), GLOBX (40 shares).".into()),
        _ => Err(format!("no note titled {title:?}; known notes: groceries, q3 planning, portfolio").into()),
    }
}
