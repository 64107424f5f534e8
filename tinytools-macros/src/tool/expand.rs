//! Writing the code: the fn as written, a unit struct named after it, and — inside a
//! `const _: () = { ... };` block, so nothing else leaks into the user's module — the
//! arguments struct and the `TypedTool` impl ([`tool_impl`], which `#[tools]` groups share).
//!
//! Every path goes through `::tinytools::__private` (or the `crate = "..."` path), so users
//! depend on `tinytools` alone, under whatever name their Cargo.toml gives it.

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;

use super::parse::{Output, ParamKind, ToolFn};
use super::validate::{Compaction, Exposure, Tool};

pub(crate) fn expand(tool_fn: &ToolFn, tool: &Tool) -> TokenStream {
    let item = tool_fn.cleaned_fn();
    let vis = &item.vis;
    let fn_ident = &item.sig.ident;
    let struct_ident = &tool.struct_ident;
    let struct_doc = format!(" The `{}` tool, made by `#[tool]` from [`{fn_ident}`].", tool.name);
    let tool_impl = tool_impl(tool_fn, tool);
    quote! {
        #item

        #[doc = #struct_doc]
        #[derive(Clone, Copy, Debug, Default)]
        #vis struct #struct_ident;

        #tool_impl
    }
}

/// The arguments struct and the `TypedTool` impl for `tool.struct_ident`, inside their own
/// `const _: () = { ... };` block. A `#[tools]` group calls this for each of its methods.
pub(crate) fn tool_impl(tool_fn: &ToolFn, tool: &Tool) -> TokenStream {
    let krate = &tool.krate;
    let struct_ident = &tool.struct_ident;
    let arguments = arguments_struct(tool_fn, tool);
    // Checked before the derives below, so a type that is not `Deserialize + JsonSchema`
    // is first reported with tinytools' message at the parameter's type.
    let checks = tool_fn.arguments().map(|param| {
        let ty = &param.ty;
        quote_spanned!(ty.span()=> __tt::assert_argument::<#ty>();)
    });
    let spec = spec(tool_fn, tool);
    let call = call(tool_fn, krate);
    quote! {
        const _: () = {
            use #krate::__private as __tt;
            use __tt::{ProducesToolResult as _, ProducesUnit as _, ProducesValue as _, ReturnsResult as _, ReturnsValue as _};

            const _: () = { #(#checks)* };

            #arguments

            impl #krate::TypedTool for #struct_ident {
                type Args = Arguments;
                type Output = #krate::ToolResult;
                type Error = __tt::anyhow::Error;

                #spec
                #call
            }
        };
    }
}

fn arguments_struct(tool_fn: &ToolFn, tool: &Tool) -> TokenStream {
    let fields = tool_fn.arguments().zip(&tool.argument_docs).map(|(param, doc)| {
        let ident = &param.ident;
        let ty = &param.ty;
        let attrs = &param.field_attrs;
        let description = doc.as_ref().map(|text| quote!(#[schemars(description = #text)]));
        quote! {
            #description
            #(#attrs)*
            #ident: #ty,
        }
    });
    // `deny_unknown_fields` makes schemars declare `additionalProperties: false`, which
    // admission enforces: a misnamed argument is refused with the names that exist.
    let deny = (!tool.allow_unknown_arguments).then(|| quote!(#[serde(deny_unknown_fields)]));
    let krate = path_text(&tool.krate);
    let serde_crate = format!("{krate}::__private::serde");
    let schemars_crate = format!("{krate}::__private::schemars");
    // `pub` only because the impl names it (`type Args`); nothing outside the block can.
    quote! {
        #[derive(__tt::serde::Deserialize, __tt::schemars::JsonSchema)]
        #[serde(crate = #serde_crate)]
        #deny
        #[schemars(crate = #schemars_crate)]
        pub struct Arguments {
            #(#fields)*
        }
    }
}

/// `spec` (a `static` the builders fill at compile time) and `required_state`.
fn spec(tool_fn: &ToolFn, tool: &Tool) -> TokenStream {
    let Tool { name, description, krate, .. } = tool;
    let exposure = match tool.exposure {
        Exposure::Direct => None,
        Exposure::Deferred => Some(quote!(.with_exposure(#krate::ToolExposure::Deferred))),
        Exposure::Hidden => Some(quote!(.with_exposure(#krate::ToolExposure::Hidden))),
    };
    let family = tool.family.as_ref().map(|family| quote!(.with_family(#family)));
    let annotations = {
        let a = tool.annotations;
        let (read_only, destructive, idempotent, open_world) = (a.read_only, a.destructive, a.idempotent, a.open_world);
        // Through the builder: `ToolAnnotations` is `#[non_exhaustive]`, so the user's crate,
        // where this expands, cannot write it as a struct literal.
        quote! {
            .with_annotations(
                #krate::ToolAnnotations::UNCLASSIFIED
                    .with_read_only(#read_only)
                    .with_destructive(#destructive)
                    .with_idempotent(#idempotent)
                    .with_open_world(#open_world)
            )
        }
    };
    let compaction = tool.compaction.map(|compaction| {
        let value = match compaction {
            Compaction::Preset(constant) => {
                let constant = syn::Ident::new(constant, Span::call_site());
                quote!(#krate::SchemaCompaction::#constant)
            }
            // `SchemaCompaction` is `#[non_exhaustive]`: built from `UNLIMITED` with its builder.
            Compaction::Bytes { description, schema } => {
                let description = description.map(|bytes| quote!(.with_max_description_bytes(#bytes)));
                let schema = schema.map(|bytes| quote!(.with_max_schema_bytes(#bytes)));
                quote!(#krate::SchemaCompaction::UNLIMITED #description #schema)
            }
        };
        quote!(.with_compaction(#value))
    });
    let grounding = (!tool.grounding.is_empty()).then(|| {
        let rules = tool.grounding.iter().map(|(argument, sources)| {
            let sources = (!sources.is_empty()).then(|| quote!(.with_sources(&[#(#sources),*])));
            quote!(#krate::Grounding::new(#argument) #sources)
        });
        quote!(.with_grounding(&[#(#rules),*]))
    });
    let blocking = tool.blocking.then(|| quote!(.with_blocking(true)));
    let states: Vec<&syn::Type> = tool_fn.states().map(|(_, inner)| inner).collect();
    let required_state = (!states.is_empty()).then(|| {
        quote! {
            fn required_state(&self) -> ::std::vec::Vec<__tt::RequiredState> {
                ::std::vec![#(__tt::RequiredState::of::<#states>()),*]
            }
        }
    });
    quote! {
        fn spec(&self) -> &#krate::ToolSpec {
            static SPEC: #krate::ToolSpec = #krate::ToolSpec::new(#name, #description)
                #exposure
                #family
                #annotations
                #compaction
                #grounding
                #blocking;
            &SPEC
        }

        #required_state
    }
}

fn call(tool_fn: &ToolFn, krate: &syn::Path) -> TokenStream {
    // Mixed-site hygiene: these locals can never collide with the user's parameter names.
    let args = syn::Ident::new("args", Span::mixed_site());
    let ctx = syn::Ident::new("ctx", Span::mixed_site());
    let output = syn::Ident::new("output", Span::mixed_site());

    let fn_ident = &tool_fn.item.sig.ident;
    let fields = tool_fn.arguments().map(|param| &param.ident);
    // The call's arguments in the fn's order: arguments and states by name, the context as
    // the fn takes it (`by_ref`, `owned`: borrowed or cloned from `context`).
    let call_args = |context: &TokenStream, owned: &TokenStream| -> Vec<TokenStream> {
        tool_fn
            .params
            .iter()
            .map(|param| match param.kind {
                ParamKind::Argument | ParamKind::State => param.ident.to_token_stream(),
                ParamKind::Context { by_ref: true } => context.clone(),
                ParamKind::Context { by_ref: false } => owned.clone(),
            })
            .collect()
    };
    let call = match tool_fn.item.sig.asyncness {
        Some(_) => {
            let call_args = call_args(&quote!(#ctx), &quote!(::core::clone::Clone::clone(#ctx)));
            // A `#[tools]` method: the tool struct holds the group.
            let callee = if tool_fn.receiver { quote!(self.0.#fn_ident) } else { quote!(#fn_ident) };
            quote!(#callee(#(#call_args),*).await)
        }
        // A synchronous fn runs on the blocking pool, with its own copy of the context (and of
        // the group's `Arc`).
        None => {
            let owned = syn::Ident::new("owned_ctx", Span::mixed_site());
            let call_args = call_args(&quote!(&#owned), &quote!(#owned));
            let takes_context = tool_fn.params.iter().any(|param| matches!(param.kind, ParamKind::Context { .. }));
            let clone = takes_context.then(|| quote!(let #owned = ::core::clone::Clone::clone(#ctx);));
            let group = syn::Ident::new("group", Span::mixed_site());
            let (hold, callee) = if tool_fn.receiver {
                (Some(quote!(let #group = ::std::sync::Arc::clone(&self.0);)), quote!(#group.#fn_ident))
            } else {
                (None, quote!(#fn_ident))
            };
            quote!({
                #clone
                #hold
                __tt::run_blocking(move || #callee(#(#call_args),*)).await
            })
        }
    };
    // The conversion is chosen by the returned type, not by how it is spelt: a `Result`
    // behind an alias splits like a `Result` (see `__private::Returned`). The spans point
    // compile errors at the return type (or its `Ok` / `Err` part).
    let (ok_span, err_span) = match &tool_fn.output {
        Output::Result { ok, err } => (ok.span(), err.as_ref().map_or(ok.span(), Spanned::span)),
        Output::Value(ty) => {
            let span = ty.as_ref().map_or_else(|| fn_ident.span(), Spanned::span);
            (span, span)
        }
    };
    let value = syn::Ident::new("value", Span::mixed_site());
    let error = syn::Ident::new("error", Span::mixed_site());
    // `identity(..)`, spanned at the type, is the argument whose bound is checked: so the
    // error points at the type rather than at the attribute. The probe itself keeps the
    // macro's own span (lints do not take it for the user's code).
    let ok_value = quote_spanned!(ok_span=> ::core::convert::identity(#value));
    let ok_arm = quote!((&&&__tt::Produced(&#value)).tt_produced().output(#ok_value));
    let err_arm = quote_spanned!(err_span=> __tt::tool_error(::core::convert::identity(#error)));
    let convert = quote! {
        match (&__tt::Returned(&#output)).tt_returned().split(#output) {
            ::core::result::Result::Ok(#value) => #ok_arm,
            ::core::result::Result::Err(#error) => #err_arm,
        }
    };
    // Each `State<T>` from the call's context (the registry checked at registration that it
    // has one).
    let states = tool_fn.states().map(|(ident, inner)| quote!(let #ident = __tt::state::<#inner>(#ctx)?;));
    let takes_context = tool_fn.params.iter().any(|param| param.kind != ParamKind::Argument);
    let ctx_param = if takes_context { ctx.clone() } else { syn::Ident::new("_ctx", Span::mixed_site()) };
    quote! {
        async fn call(
            &self,
            #args: Arguments,
            #ctx_param: &#krate::ToolContext,
        ) -> ::core::result::Result<#krate::ToolResult, __tt::anyhow::Error> {
            let Arguments { #(#fields),* } = #args;
            #(#states)*
            let #output = #call;
            #convert
        }
    }
}

/// A path as `serde(crate = "...")` takes it: `::tinytools`, `my_tools`.
fn path_text(path: &syn::Path) -> String {
    let segments: Vec<String> = path.segments.iter().map(|segment| segment.ident.to_string()).collect();
    let lead = if path.leading_colon.is_some() { "::" } else { "" };
    format!("{lead}{}", segments.join("::"))
}
