//! The `#[tool]` attribute of [tinytools](https://docs.rs/tinytools).
//!
//! Depend on `tinytools`, not on this crate: it re-exports the attribute, and the generated
//! code names its paths through `::tinytools::__private`.
//!
//! The work is split the way `serde_derive` splits it: `tool::attr` reads the attribute's
//! keys, `tool::parse` reads the fn, `tool::validate` checks every rule and collects every
//! error with its span, and `tool::expand` writes the code.

mod tool;

/// Turns a documented fn into a `tinytools::Tool`. See `tinytools::tool` for the documentation.
#[proc_macro_attribute]
pub fn tool(attr: proc_macro::TokenStream, item: proc_macro::TokenStream) -> proc_macro::TokenStream {
    tool::tool(attr.into(), item.into()).into()
}
