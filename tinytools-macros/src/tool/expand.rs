//! Writing the code: the fn as written, a unit struct named after it, and — inside a
//! `const _: () = { ... };` block, so nothing else leaks into the user's module — the
//! arguments struct and the `Tool` impl.
//!
//! Every path goes through `::tinytools::__private`, so users depend on `tinytools` alone.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::parse::{Output, ParamKind, ToolFn};
use super::validate::{Compaction, Exposure, Tool};

pub(crate) fn expand(tool_fn: &ToolFn, tool: &Tool) -> TokenStream {
    let item = tool_fn.cleaned_fn();
    let vis = &item.vis;
    let fn_ident = &item.sig.ident;
    let struct_ident = &tool.struct_ident;
    let struct_doc = format!(" The `{}` tool, made by `#[tool]` from [`{fn_ident}`].", tool.name);

    let arguments = arguments_struct(tool_fn, tool);
    // Checked before the derives below, so a type that is not `Deserialize + JsonSchema`
    // is first reported with tinytools' message at the parameter's type.
    let checks = tool_fn.arguments().map(|param| {
        let ty = &param.ty;
        quote_spanned!(ty.span()=> __tt::assert_argument::<#ty>();)
    });
    let metadata = metadata(tool);
    let execute = execute(tool_fn);

    quote! {
        #item

        #[doc = #struct_doc]
        #[derive(Clone, Copy, Debug, Default)]
        #vis struct #struct_ident;

        const _: () = {
            use ::tinytools::__private as __tt;

            const _: () = { #(#checks)* };

            #arguments

            #[__tt::async_trait]
            impl ::tinytools::Tool for #struct_ident {
                #metadata
                #execute
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
    quote! {
        #[derive(__tt::serde::Deserialize, __tt::schemars::JsonSchema)]
        #[serde(crate = "::tinytools::__private::serde")]
        #deny
        #[schemars(crate = "::tinytools::__private::schemars")]
        struct Arguments {
            #(#fields)*
        }
    }
}

fn metadata(tool: &Tool) -> TokenStream {
    let Tool { name, description, .. } = tool;
    let exposure = match tool.exposure {
        Exposure::Direct => None,
        Exposure::Deferred => Some(quote!(::tinytools::ToolExposure::Deferred)),
        Exposure::Hidden => Some(quote!(::tinytools::ToolExposure::Hidden)),
    }
    .map(|exposure| quote!(fn exposure(&self) -> ::tinytools::ToolExposure { #exposure }));
    let family = tool.family.as_ref().map(
        |family| quote!(fn family(&self) -> ::core::option::Option<&str> { ::core::option::Option::Some(#family) }),
    );
    let annotations = {
        let a = tool.annotations;
        let (read_only, destructive, idempotent, open_world) = (a.read_only, a.destructive, a.idempotent, a.open_world);
        quote! {
            fn annotations(&self) -> ::tinytools::ToolAnnotations {
                ::tinytools::ToolAnnotations {
                    read_only: #read_only,
                    destructive: #destructive,
                    idempotent: #idempotent,
                    open_world: #open_world,
                }
            }
        }
    };
    let compaction = tool.compaction.map(|compaction| {
        let value = match compaction {
            Compaction::Preset(constant) => {
                let constant = syn::Ident::new(constant, Span::call_site());
                quote!(::tinytools::SchemaCompaction::#constant)
            }
            Compaction::Bytes { description, schema } => {
                let description = option_usize(description);
                let schema = option_usize(schema);
                quote!(::tinytools::SchemaCompaction { max_description_bytes: #description, max_schema_bytes: #schema })
            }
        };
        quote!(fn schema_compaction(&self) -> ::core::option::Option<::tinytools::SchemaCompaction> { ::core::option::Option::Some(#value) })
    });
    quote! {
        fn name(&self) -> &str {
            #name
        }

        fn description(&self) -> &str {
            #description
        }

        fn parameters_schema(&self) -> __tt::serde_json::Value {
            __tt::schema_for::<Arguments>()
        }

        #exposure
        #family
        #annotations
        #compaction
    }
}

fn option_usize(value: Option<usize>) -> TokenStream {
    match value {
        Some(bytes) => quote!(::core::option::Option::Some(#bytes)),
        None => quote!(::core::option::Option::None),
    }
}

fn execute(tool_fn: &ToolFn) -> TokenStream {
    // Mixed-site hygiene: these locals can never collide with the user's parameter names.
    let args = syn::Ident::new("args", Span::mixed_site());
    let ctx = syn::Ident::new("ctx", Span::mixed_site());
    let output = syn::Ident::new("output", Span::mixed_site());

    let fn_ident = &tool_fn.item.sig.ident;
    let fields = tool_fn.arguments().map(|param| &param.ident);
    let call = match tool_fn.item.sig.asyncness {
        Some(_) => {
            let call_args = tool_fn.params.iter().map(|param| match param.kind {
                ParamKind::Argument => {
                    let ident = &param.ident;
                    quote!(#ident)
                }
                ParamKind::Context { by_ref: true } => quote!(#ctx),
                ParamKind::Context { by_ref: false } => quote!(::core::clone::Clone::clone(#ctx)),
            });
            quote!(#fn_ident(#(#call_args),*).await)
        }
        // A synchronous fn runs on the blocking pool, with its own copy of the context.
        None => {
            let owned = syn::Ident::new("owned_ctx", Span::mixed_site());
            let call_args = tool_fn.params.iter().map(|param| match param.kind {
                ParamKind::Argument => {
                    let ident = &param.ident;
                    quote!(#ident)
                }
                ParamKind::Context { by_ref: true } => quote!(&#owned),
                ParamKind::Context { by_ref: false } => quote!(#owned),
            });
            let takes_context = tool_fn.params.iter().any(|param| matches!(param.kind, ParamKind::Context { .. }));
            let clone = takes_context.then(|| quote!(let #owned = ::core::clone::Clone::clone(#ctx);));
            quote!({
                #clone
                __tt::run_blocking(move || #fn_ident(#(#call_args),*)).await
            })
        }
    };
    let convert = match &tool_fn.output {
        Output::Result { ok, err } => {
            let ok_span = ok.span();
            let err_span = err.as_ref().map_or(ok_span, Spanned::span);
            let value = syn::Ident::new("value", Span::mixed_site());
            let error = syn::Ident::new("error", Span::mixed_site());
            let ok_arm = quote_spanned!(ok_span=> __tt::output(#value));
            let err_arm = quote_spanned!(err_span=> __tt::refusal(#error));
            quote! {
                match #output {
                    ::core::result::Result::Ok(#value) => #ok_arm,
                    ::core::result::Result::Err(#error) => #err_arm,
                }
            }
        }
        Output::Value(ty) => {
            let span = ty.as_ref().map_or_else(|| fn_ident.span(), Spanned::span);
            quote_spanned!(span=> __tt::output(#output))
        }
    };
    let body = quote! {
        let Arguments { #(#fields),* } = __tt::parse_arguments(#args)?;
        let #output = #call;
        #convert
    };
    let takes_context = tool_fn.params.iter().any(|param| matches!(param.kind, ParamKind::Context { .. }));
    if takes_context {
        quote! {
            async fn execute(&self, #args: __tt::serde_json::Value) -> __tt::anyhow::Result<::tinytools::ToolResult> {
                self.execute_with(#args, &::tinytools::ToolContext::detached()).await
            }

            async fn execute_with(
                &self,
                #args: __tt::serde_json::Value,
                #ctx: &::tinytools::ToolContext,
            ) -> __tt::anyhow::Result<::tinytools::ToolResult> {
                #body
            }
        }
    } else {
        quote! {
            async fn execute(&self, #args: __tt::serde_json::Value) -> __tt::anyhow::Result<::tinytools::ToolResult> {
                #body
            }
        }
    }
}
