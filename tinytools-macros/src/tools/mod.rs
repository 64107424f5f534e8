//! `#[tools]`: an `impl` block whose `#[tool]` methods take `&self` becomes a tool group — one
//! `Tool` per method, each holding the shared value, and a `ToolGroup` impl that hands them to
//! `ToolRegistry::register_group`. The block's own keys (`family`, `exposure`, the
//! classification flags, budgets, `crate`) are defaults its methods' `#[tool(...)]` override;
//! `family_description` is the block's alone: `ToolGroup::described_family` hands it to
//! `ToolRegistry::describe_family` when the group registers.
//!
//! Each method goes through the same `attr → parse → validate` steps as a free `#[tool]` fn,
//! and its `TypedTool` impl is written by the same `tool::expand::tool_impl`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{ImplItem, ItemFn, ItemImpl, Meta};

use crate::tool::attr::ToolAttr;
use crate::tool::parse::ToolFn;
use crate::tool::{Errors, expand, validate};

pub(crate) fn tools(attr: TokenStream, item: TokenStream) -> TokenStream {
    let mut item_impl = match syn::parse2::<ItemImpl>(item.clone()) {
        Ok(item_impl) => item_impl,
        Err(_) => {
            return syn::Error::new_spanned(
                &item,
                "#[tools] goes on an `impl` block whose `#[tool]` methods take `&self`, such as `#[tools(family = \"finance\")] impl Portfolio { ... }`",
            )
            .to_compile_error();
        }
    };
    let mut errors = Errors::default();
    let group = group_attr(attr, &item_impl, &mut errors);
    let tools = tool_methods(&mut item_impl, &group, &mut errors);
    if tools.is_empty() && errors.is_empty() {
        errors.spanned(
            &item_impl.self_ty,
            "this #[tools] block has no `#[tool]` method: mark the `&self` methods the model may call with `#[tool]`",
        );
    }
    if let Err(error) = errors.into_result() {
        let mut out = error.to_compile_error();
        out.extend(quote!(#item_impl));
        return out;
    }
    expand_group(&item_impl, &tools, &group)
}

/// The block's own `#[tools(...)]` keys, and what is wrong with the block as a whole: keys
/// that belong to one tool, a trait impl, generics.
fn group_attr(attr: TokenStream, item_impl: &ItemImpl, errors: &mut Errors) -> ToolAttr {
    let group = ToolAttr::parse(attr, errors);
    for (key, lit) in [("name", &group.name), ("ident", &group.ident), ("description", &group.description)] {
        if let Some(lit) = lit {
            errors.spanned(lit, format!("`{key}` belongs to one tool: put it on the method's `#[tool({key} = ...)]`"));
        }
    }
    if let Some(lit) = &group.family_description {
        if group.family.is_none() {
            errors.spanned(
                lit,
                "`family_description` describes the block's family: give the family too, as in #[tools(family = \"crm\", family_description = \"...\")]",
            );
        } else if lit.value().trim().is_empty() {
            errors.spanned(lit, "a family description cannot be empty; leave it out instead");
        }
    }
    if let Some((path, _)) = &item_impl.trait_ {
        errors
            .spanned(path, "#[tools] goes on an inherent `impl` block (`impl Portfolio { ... }`), not on a trait impl");
    }
    if !item_impl.generics.params.is_empty() {
        errors.spanned(
            &item_impl.generics,
            "a #[tools] impl block cannot be generic: each tool's JSON Schema is fixed at compile time; implement the block for a concrete type",
        );
    }
    group
}

/// Each `#[tool]` method of the block, parsed and validated with the group's keys under its
/// own; the `#[tool]` attribute and what only it reads on the parameters leave the method.
fn tool_methods(item_impl: &mut ItemImpl, group: &ToolAttr, errors: &mut Errors) -> Vec<(ToolFn, validate::Tool)> {
    let mut tools = Vec::new();
    for impl_item in &mut item_impl.items {
        let ImplItem::Fn(method) = impl_item else {
            continue;
        };
        let Some(at) = method.attrs.iter().position(|attr| attr.path().is_ident("tool")) else {
            continue;
        };
        let tool_attr = method.attrs.remove(at);
        let tokens = match &tool_attr.meta {
            Meta::Path(_) => TokenStream::new(),
            Meta::List(list) => list.tokens.clone(),
            Meta::NameValue(nv) => {
                errors.spanned(nv, "write `#[tool]` or `#[tool(key = value, ...)]`");
                continue;
            }
        };
        let own = ToolAttr::parse(tokens, errors);
        // `validate` refuses a method's own `family_description`; the block's is never merged.
        let merged = own.over(group);
        let item_fn = ItemFn {
            attrs: method.attrs.clone(),
            vis: method.vis.clone(),
            modifiers: method.modifiers.clone(),
            sig: method.sig.clone(),
            block: Box::new(method.block.clone()),
        };
        let parsed = ToolFn::parse_method(item_fn, errors);
        // The block keeps the method, less what only `#[tool]` reads on its parameters.
        method.sig = parsed.cleaned_fn().sig;
        if let Some(mut tool) = validate::validate(&merged, &parsed, errors) {
            // Inside the group's block, out of the user's namespace.
            tool.struct_ident = format_ident!("__Tool{}", tool.struct_ident);
            tools.push((parsed, tool));
        }
    }
    tools
}

/// The block as written, then (out of the user's namespace) a struct and a `Tool` impl per
/// method and the block's `ToolGroup` impl. `tools` is not empty.
fn expand_group(item_impl: &ItemImpl, tools: &[(ToolFn, validate::Tool)], group: &ToolAttr) -> TokenStream {
    let Some((_, first)) = tools.first() else {
        return quote!(#item_impl);
    };
    let self_ty = &item_impl.self_ty;
    let krate = &first.krate;
    let structs = tools.iter().map(|(_, tool)| {
        let ident = &tool.struct_ident;
        let doc = format!(" The `{}` tool of a `#[tools]` group.", tool.name);
        quote! {
            #[doc = #doc]
            struct #ident(::std::sync::Arc<#self_ty>);
        }
    });
    let impls = tools.iter().map(|(tool_fn, tool)| expand::tool_impl(tool_fn, tool));
    let idents = tools.iter().map(|(_, tool)| &tool.struct_ident);
    // Validated: a description comes with its family.
    let described = match (&group.family, &group.family_description) {
        (Some(family), Some(description)) => {
            let description = description.value().trim().to_owned();
            quote! {
                fn described_family(&self) -> ::std::option::Option<(&'static str, &'static str)> {
                    ::std::option::Option::Some((#family, #description))
                }
            }
        }
        _ => TokenStream::new(),
    };
    quote! {
        #item_impl

        const _: () = {
            #(#structs)*

            #(#impls)*

            impl #krate::ToolGroup for #self_ty {
                fn tools(self: ::std::sync::Arc<Self>) -> ::std::vec::Vec<::std::sync::Arc<dyn #krate::Tool>> {
                    ::std::vec![
                        #(::std::sync::Arc::new(#idents(::std::sync::Arc::clone(&self))) as ::std::sync::Arc<dyn #krate::Tool>),*
                    ]
                }

                #described
            }
        };
    }
}
