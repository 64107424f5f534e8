//! `#[tool]`: attribute → fn model → validated tool → generated code.
//!
//! This module uses only `proc_macro2`, so the expansion can be run (and snapshotted) outside
//! a proc-macro context; see `ui-tests/tests/expansion.rs`.

pub(crate) mod attr;
pub(crate) mod docs;
pub(crate) mod expand;
pub(crate) mod parse;
pub(crate) mod validate;

use proc_macro2::TokenStream;
use quote::ToTokens;

/// Expands `#[tool(attr)] item`. On error: every error found, plus the fn itself (cleaned of
/// the attributes only `#[tool]` understands) so that one mistake does not cascade into
/// "cannot find function" errors elsewhere.
pub(crate) fn tool(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item_fn = match syn::parse2::<syn::ItemFn>(item.clone()) {
        Ok(item_fn) => item_fn,
        Err(_) => {
            return syn::Error::new_spanned(
                &item,
                "#[tool] goes on a free `fn` (usually an `async fn`) whose parameters become the tool's arguments",
            )
            .to_compile_error();
        }
    };
    let mut errors = Errors::default();
    let attr = attr::ToolAttr::parse(attr, &mut errors);
    let parsed = parse::ToolFn::parse(item_fn, &mut errors);
    let tool = validate::validate(&attr, &parsed, &mut errors);
    match (errors.into_result(), tool) {
        (Ok(()), Some(tool)) => expand::expand(&parsed, &tool),
        (Err(err), _) => {
            let mut out = err.to_compile_error();
            parsed.cleaned_fn().to_tokens(&mut out);
            out
        }
        (Ok(()), None) => parsed.cleaned_fn().into_token_stream(),
    }
}

/// Every error found so far; reported together.
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub(crate) fn spanned(&mut self, tokens: impl ToTokens, message: impl std::fmt::Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    pub(crate) fn into_result(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}
