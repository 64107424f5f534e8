//! The `#[tool]` and `#[tools]` attributes of [tinytools](https://docs.rs/tinytools-sdk).
//!
//! Depend on `tinytools`, not on this crate: it re-exports the attribute, and the generated
//! code names its paths through `::tinytools::__private`.
//!
//! The work is split the way `serde_derive` splits it: `tool::attr` reads the attribute's
//! keys, `tool::parse` reads the fn, `tool::validate` checks every rule and collects every
//! error with its span, and `tool::expand` writes the code.

mod tool;
mod tools;

/// Turns a documented fn into a `tinytools::Tool`. See `tinytools::tool` for the documentation.
#[proc_macro_attribute]
pub fn tool(attr: proc_macro::TokenStream, item: proc_macro::TokenStream) -> proc_macro::TokenStream {
    tool::tool(attr.into(), item.into()).into()
}

/// Turns the `#[tool]` methods of an `impl` block into a tool group: one tool per method, `&self`
/// their shared state. See `tinytools::tools` for the documentation.
#[proc_macro_attribute]
pub fn tools(attr: proc_macro::TokenStream, item: proc_macro::TokenStream) -> proc_macro::TokenStream {
    tools::tools(attr.into(), item.into()).into()
}
