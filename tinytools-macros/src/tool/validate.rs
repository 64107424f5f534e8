//! Every rule `#[tool]` enforces, each failure an error at the offending span. All errors are
//! collected; none stops the others from being found.
//!
//! The name and family rules repeat `tinytools::tool::{check_tool_name, check_family}` (a
//! proc-macro cannot call its runtime crate); `naming_rules_agree_with_the_runtime` in
//! `ui-tests/tests/expansion.rs` keeps them in step.

use proc_macro2::Span;
use quote::format_ident;
use syn::spanned::Spanned;
use syn::{GenericParam, Type};

use super::Errors;
use super::attr::{Flag, ToolAttr, closest};
use super::parse::{ParamKind, ToolFn, unraw};

/// The reserved name of the discovery bridge.
const TOOL_SEARCH: &str = "tool_search";

/// A tool that passed every check: what the expansion writes down.
pub(crate) struct Tool {
    pub(crate) struct_ident: syn::Ident,
    /// The runtime crate's path: `::tinytools` unless `crate = "..."` says otherwise.
    pub(crate) krate: syn::Path,
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) exposure: Exposure,
    pub(crate) family: Option<String>,
    pub(crate) annotations: Annotations,
    pub(crate) compaction: Option<Compaction>,
    /// The description of each argument parameter, in order (`None`: undocumented).
    pub(crate) argument_docs: Vec<Option<String>>,
    /// Arguments the schema does not name are admitted (by default they are refused, and the
    /// model is told which exist).
    pub(crate) allow_unknown_arguments: bool,
    /// Each `#[grounded]` argument's wire name and its source tools, in parameter order.
    pub(crate) grounding: Vec<(String, Vec<String>)>,
    /// The tool blocks its thread (`#[tool(blocking)]`).
    pub(crate) blocking: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exposure {
    Direct,
    Deferred,
    Hidden,
}

#[derive(Clone, Copy)]
pub(crate) struct Annotations {
    pub(crate) read_only: bool,
    pub(crate) destructive: bool,
    pub(crate) idempotent: bool,
    pub(crate) open_world: bool,
}

#[derive(Clone, Copy)]
pub(crate) enum Compaction {
    /// `SchemaCompaction::THIRD_PARTY` or `UNLIMITED`, by name, with no byte keys.
    Preset(&'static str),
    Bytes {
        description: Option<usize>,
        schema: Option<usize>,
    },
}

const PRESETS: [(&str, &str, Option<usize>, Option<usize>); 2] =
    [("third_party", "THIRD_PARTY", Some(1_000), Some(5_000)), ("unlimited", "UNLIMITED", None, None)];

pub(crate) fn validate(attr: &ToolAttr, tool_fn: &ToolFn, errors: &mut Errors) -> Option<Tool> {
    check_signature(tool_fn, errors);
    let name = tool_name(attr, tool_fn, errors);
    let exposure = exposure(attr, errors);
    let family = family(attr, errors);
    if let Some(lit) = &attr.family_description {
        errors.spanned(
            lit,
            "`family_description` describes a whole family: put it on the `#[tools(family = \"...\", family_description = \"...\")]` block, or call `ToolRegistry::describe_family`",
        );
    }
    let annotations = annotations(attr, errors);
    let compaction = compaction(attr, errors);
    let description = attr.description.as_ref().map_or_else(|| tool_fn.docs.description.clone(), syn::LitStr::value);
    let argument_docs = argument_docs(tool_fn, errors);
    let grounding = grounding(tool_fn, errors);

    if exposure == Exposure::Deferred {
        check_findable(attr, tool_fn, &description, &argument_docs, errors);
    }
    if let Some(budget) = compaction.and_then(Compaction::description_budget)
        && description.len() > budget
    {
        let span = attr
            .description
            .as_ref()
            .map(Spanned::span)
            .or(tool_fn.doc_span)
            .unwrap_or_else(|| tool_fn.item.sig.ident.span());
        errors.push(syn::Error::new(
            span,
            format!(
                "the description is {} bytes, over this tool's description budget of {budget} bytes; shorten it (the model reads every byte on every turn) or raise `max_description_bytes`",
                description.len()
            ),
        ));
    }
    // (An exposure that failed to parse reads as Direct; it is reported already.)
    let direct = attr.exposure.as_ref().is_none_or(|lit| lit.value() == "direct");
    if direct && description.trim().is_empty() && attr.description.is_none() {
        errors.spanned(
            &tool_fn.item.sig.ident,
            "a Direct tool needs a description: the model reads it on every turn to decide when to call the tool; write a `///` doc comment on the fn (or `#[tool(description = \"...\")]`; `description = \"\"` if it really needs none)",
        );
    }
    let struct_ident = struct_ident(attr, tool_fn, errors);
    let krate = krate(attr, errors);
    errors.is_empty().then_some(Tool {
        struct_ident,
        krate,
        name,
        description,
        exposure,
        family,
        annotations,
        compaction,
        argument_docs,
        allow_unknown_arguments: attr.allow_unknown_arguments.is_some_and(|flag| flag.value),
        grounding,
        blocking: attr.blocking.is_some_and(|flag| flag.value),
    })
}

/// The generated struct's name: `ident = "..."`, or the fn's name in UpperCamelCase. A type of
/// the same name in the fn's signature would clash with it (E0428 and follow-on errors far
/// from the cause), so that is reported here, with the way out.
fn struct_ident(attr: &ToolAttr, tool_fn: &ToolFn, errors: &mut Errors) -> syn::Ident {
    let fn_ident = &tool_fn.item.sig.ident;
    let ident = format_ident!("{}", upper_camel(&unraw(fn_ident)), span = fn_ident.span());
    if let Some(lit) = &attr.ident {
        return match syn::parse_str::<syn::Ident>(&lit.value()) {
            Ok(named) => syn::Ident::new(&named.to_string(), lit.span()),
            Err(_) => {
                errors.spanned(lit, format!("`{}` is not a Rust identifier: `ident` names the generated struct, such as `ident = \"QuoteTool\"`", lit.value()));
                ident
            }
        };
    }
    if tool_fn.receiver {
        // A group's tool structs live inside the group's own block: nothing to clash with.
        return ident;
    }
    let mut clash = None;
    let signature_types = tool_fn.params.iter().map(|param| &param.ty);
    let output = match &tool_fn.item.sig.output {
        syn::ReturnType::Type(_, ty) => Some(&**ty),
        syn::ReturnType::Default => None,
    };
    for ty in signature_types.chain(output) {
        find_bare_type(ty, &ident, &mut clash);
    }
    if let Some(path) = clash {
        errors.spanned(
            path,
            format!(
                "`{ident}` is also the name of the struct #[tool] generates for `{fn_ident}`, so the two would clash; name the tool's struct with `#[tool(ident = \"{ident}Tool\")]`, or rename this type"
            ),
        );
    }
    ident
}

/// The first single-segment type path named `ident` inside `ty` (`Result<StockQuote, E>`).
fn find_bare_type<'t>(ty: &'t Type, ident: &syn::Ident, found: &mut Option<&'t syn::TypePath>) {
    struct Finder<'t, 'i> {
        ident: &'i syn::Ident,
        found: &'i mut Option<&'t syn::TypePath>,
    }
    impl<'t> syn::visit::Visit<'t> for Finder<'t, '_> {
        fn visit_type_path(&mut self, path: &'t syn::TypePath) {
            if self.found.is_none()
                && path.qself.is_none()
                && path.path.segments.len() == 1
                && path.path.segments[0].ident == *self.ident
            {
                *self.found = Some(path);
            }
            syn::visit::visit_type_path(self, path);
        }
    }
    syn::visit::Visit::visit_type(&mut Finder { ident, found }, ty);
}

/// `crate = "..."`: the path the expansion reaches the runtime crate by.
fn krate(attr: &ToolAttr, errors: &mut Errors) -> syn::Path {
    let default = || syn::parse_quote!(::tinytools);
    let Some(lit) = &attr.krate else {
        return default();
    };
    match lit.parse::<syn::Path>() {
        Ok(path) => path,
        Err(_) => {
            errors.spanned(lit, format!("`{}` is not a path: `crate` names the runtime crate as your Cargo.toml renamed it, such as `crate = \"::my_tools\"`", lit.value()));
            default()
        }
    }
}

fn check_signature(tool_fn: &ToolFn, errors: &mut Errors) {
    let sig = &tool_fn.item.sig;
    for param in &sig.generics.params {
        let what = match param {
            GenericParam::Lifetime(_) => "lifetime",
            GenericParam::Type(_) => "type",
            GenericParam::Const(_) => "const",
        };
        errors.spanned(
            param,
            format!("a #[tool] fn cannot have {what} parameters: its arguments' JSON Schema is fixed at compile time, so every parameter needs a concrete, owned type"),
        );
    }
    if let Some(where_clause) = &sig.generics.where_clause {
        errors.spanned(where_clause, "a #[tool] fn cannot have a `where` clause: use concrete parameter types");
    }
    if let syn::Safety::Unsafe(token) = &sig.safety {
        errors.spanned(token, "a #[tool] fn cannot be `unsafe`: the model decides when it runs");
    }
    if let Some(abi) = &sig.abi {
        errors.spanned(abi, "a #[tool] fn cannot have an `extern` ABI");
    }
    let mut seen: Vec<(&str, &syn::Ident)> = Vec::new();
    let mut context: Option<&syn::Ident> = None;
    for param in &tool_fn.params {
        match param.kind {
            ParamKind::Context { .. } => {
                if context.replace(&param.ident).is_some() {
                    errors.spanned(&param.ident, "only one parameter may take the `ToolContext`");
                }
                continue;
            }
            ParamKind::State => continue,
            ParamKind::Argument => {}
        }
        check_argument_type(&param.ty, errors);
        if let Some((_, first)) = seen.iter().find(|(wire, _)| *wire == param.wire_name) {
            errors.spanned(
                &param.ident,
                format!(
                    "parameter `{}` is sent as `{}`, the same argument name as parameter `{first}`; rename one of them (or its `#[serde(rename)]`)",
                    param.ident, param.wire_name
                ),
            );
        } else {
            seen.push((&param.wire_name, &param.ident));
        }
    }
}

fn check_argument_type(ty: &Type, errors: &mut Errors) {
    match ty {
        Type::Reference(_) => errors.spanned(
            ty,
            "a #[tool] parameter must own its value (`String`, not `&str`; `Vec<T>`, not `&[T]`): arguments are deserialized from the model's JSON; only `&ToolContext` may be borrowed",
        ),
        Type::ImplTrait(_) => errors.spanned(ty, "a #[tool] parameter cannot be `impl Trait`: use a concrete type"),
        _ => {}
    }
}

fn tool_name(attr: &ToolAttr, tool_fn: &ToolFn, errors: &mut Errors) -> String {
    let (name, span) = match &attr.name {
        Some(lit) => (lit.value(), lit.span()),
        None => (unraw(&tool_fn.item.sig.ident), tool_fn.item.sig.ident.span()),
    };
    if name == TOOL_SEARCH {
        errors.push(syn::Error::new(
            span,
            "`tool_search` is reserved for the discovery bridge; give this tool another name (`#[tool(name = \"...\")]`)",
        ));
    } else if let Err(reason) = check_tool_name(&name) {
        errors.push(syn::Error::new(span, format!("`{name}` cannot be a tool name: {reason}")));
    }
    name
}

fn exposure(attr: &ToolAttr, errors: &mut Errors) -> Exposure {
    let Some(lit) = &attr.exposure else {
        return Exposure::Direct;
    };
    match lit.value().as_str() {
        "direct" => Exposure::Direct,
        "deferred" => Exposure::Deferred,
        "hidden" => Exposure::Hidden,
        other => {
            let hint = closest(&other.to_ascii_lowercase(), &["direct", "deferred", "hidden"])
                .map(|near| format!("; did you mean \"{near}\"?"))
                .unwrap_or_default();
            errors.spanned(
                lit,
                format!("`{other}` is not an exposure: use \"direct\", \"deferred\" or \"hidden\"{hint}"),
            );
            Exposure::Direct
        }
    }
}

fn family(attr: &ToolAttr, errors: &mut Errors) -> Option<String> {
    let lit = attr.family.as_ref()?;
    let family = lit.value();
    match check_family(&family) {
        Err(reason) if family.is_empty() => errors.spanned(lit, reason),
        Err(reason) => errors.spanned(lit, format!("`{family}` cannot be a family: {reason}")),
        Ok(()) => {}
    }
    Some(family)
}

fn annotations(attr: &ToolAttr, errors: &mut Errors) -> Annotations {
    let read_only = attr.read_only.is_some_and(|flag| flag.value);
    if read_only && let Some(Flag { value: true, span }) = attr.destructive {
        errors.push(syn::Error::new(
            span,
            "a `read_only` tool cannot be `destructive`: it changes nothing; drop one of the two",
        ));
    }
    // MCP's defaults: unclassified means "may write, may destroy, not idempotent, open world";
    // read_only means a pure look-up.
    let base = if read_only {
        Annotations { read_only: true, destructive: false, idempotent: true, open_world: false }
    } else {
        Annotations { read_only: false, destructive: true, idempotent: false, open_world: true }
    };
    Annotations {
        read_only,
        destructive: attr.destructive.map_or(base.destructive, |flag| flag.value),
        idempotent: attr.idempotent.map_or(base.idempotent, |flag| flag.value),
        open_world: attr.open_world.map_or(base.open_world, |flag| flag.value),
    }
}

fn compaction(attr: &ToolAttr, errors: &mut Errors) -> Option<Compaction> {
    let bytes = |lit: &Option<syn::LitInt>| lit.as_ref().and_then(|lit| lit.base10_parse::<usize>().ok());
    let preset = attr.compaction.as_ref().and_then(|lit| {
        let found = PRESETS.iter().find(|(name, ..)| *name == lit.value());
        if found.is_none() {
            let names: Vec<_> = PRESETS.iter().map(|(name, ..)| format!("\"{name}\"")).collect();
            errors.spanned(
                lit,
                format!(
                    "`{}` is not a compaction preset: use {}, or set `max_schema_bytes` / `max_description_bytes`",
                    lit.value(),
                    names.join(" or ")
                ),
            );
        }
        found
    });
    let (description, schema) = (bytes(&attr.max_description_bytes), bytes(&attr.max_schema_bytes));
    match (preset, description, schema) {
        (None, None, None) => None,
        (Some((_, constant, ..)), None, None) => Some(Compaction::Preset(constant)),
        (preset, description, schema) => Some(Compaction::Bytes {
            description: description.or(preset.and_then(|p| p.2)),
            schema: schema.or(preset.and_then(|p| p.3)),
        }),
    }
}

impl Compaction {
    fn description_budget(self) -> Option<usize> {
        match self {
            Self::Preset(constant) => PRESETS.iter().find(|p| p.1 == constant).and_then(|p| p.2),
            Self::Bytes { description, .. } => description,
        }
    }
}

/// Each argument's description: its own `///`, else its `# Arguments` entry.
fn argument_docs(tool_fn: &ToolFn, errors: &mut Errors) -> Vec<Option<String>> {
    for (name, _) in &tool_fn.docs.arguments {
        if !tool_fn.params.iter().any(|param| unraw(&param.ident) == *name) {
            let span = tool_fn.doc_span.unwrap_or_else(Span::call_site);
            errors.push(syn::Error::new(
                span,
                format!("the `# Arguments` section documents `{name}`, which is not a parameter of this fn"),
            ));
        }
    }
    tool_fn
        .arguments()
        .map(|param| {
            param.docs.clone().or_else(|| {
                let name = unraw(&param.ident);
                tool_fn.docs.arguments.iter().find(|(documented, _)| *documented == name).map(|(_, text)| text.clone())
            })
        })
        .collect()
}

fn check_findable(attr: &ToolAttr, tool_fn: &ToolFn, description: &str, docs: &[Option<String>], errors: &mut Errors) {
    if description.trim().is_empty() {
        let span = attr.exposure.as_ref().map_or_else(|| tool_fn.item.sig.ident.span(), Spanned::span);
        errors.push(syn::Error::new(
            span,
            "a deferred tool needs a description: the model finds it by searching the description, so add a `///` doc comment to the fn (or `description = \"...\"`)",
        ));
    }
    for (param, doc) in tool_fn.arguments().zip(docs) {
        if doc.is_none() {
            errors.spanned(
                &param.ident,
                format!("parameter `{}` of a deferred tool needs a `///` doc comment: a model that found the tool by search has only the schema to go on", param.ident),
            );
        }
    }
}

/// The `#[grounded]` arguments: only arguments the model sends can be grounded, and each
/// source must be a name a tool can have (not `tool_search`, which returns names, not values).
fn grounding(tool_fn: &ToolFn, errors: &mut Errors) -> Vec<(String, Vec<String>)> {
    let mut grounding = Vec::new();
    for param in &tool_fn.params {
        let Some(grounded) = &param.grounded else {
            continue;
        };
        if param.kind != ParamKind::Argument {
            let what = if param.kind == ParamKind::State { "host state" } else { "the call's context" };
            errors.spanned(
                &grounded.attr,
                format!(
                    "`#[grounded]` marks an argument the model sends; `{}` is {what}, which the model never writes, so remove the attribute",
                    param.ident
                ),
            );
            continue;
        }
        let mut sources: Vec<String> = Vec::new();
        for source in &grounded.sources {
            let name = source.value();
            if name == TOOL_SEARCH {
                errors.spanned(
                    source,
                    "`tool_search` answers with tool names, never with a value to copy; name the tool whose result holds the value",
                );
            } else if let Err(reason) = check_tool_name(&name) {
                errors.spanned(source, format!("`{name}` cannot be a source tool's name: {reason}"));
            } else if sources.contains(&name) {
                errors.spanned(source, format!("`{name}` is already a source of this argument; name each tool once"));
            } else {
                sources.push(name);
            }
        }
        grounding.push((param.wire_name.clone(), sources));
    }
    grounding
}

/// `^[A-Za-z0-9_-]{1,64}$`, as `tinytools::tool::check_tool_name`.
pub(crate) fn check_tool_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a tool name cannot be empty".into());
    }
    if name.len() > 64 {
        return Err(format!(
            "a tool name is at most 64 bytes (providers reject longer ones); this one has {}",
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

/// 1 to 64 of `[A-Za-z0-9_.-]`, as `tinytools::tool::check_family`.
pub(crate) fn check_family(family: &str) -> Result<(), String> {
    if family.is_empty() {
        return Err("a family cannot be empty; leave it out instead".into());
    }
    if family.len() > 64 {
        return Err(format!("a family is at most 64 bytes; this one has {}", family.len()));
    }
    match family.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))) {
        Some(bad) => Err(format!("a family may use only ASCII letters, digits, '_', '-' and '.'; found {bad:?}")),
        None => Ok(()),
    }
}

/// `stock_quote` → `StockQuote`.
fn upper_camel(snake: &str) -> String {
    snake
        .split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map(|first| first.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
        })
        .collect()
}
