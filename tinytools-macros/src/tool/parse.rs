//! Reading the fn: its parameters (argument or context), their docs and serde attributes, and
//! the shape of its return type. Problems of form are collected here; rules are checked in
//! `validate`.

use syn::spanned::Spanned;
use syn::{Attribute, FnArg, GenericArgument, ItemFn, Pat, PathArguments, ReturnType, Type};

use super::Errors;
use super::docs::{self, FnDocs};

/// The fn under `#[tool]`, read.
pub(crate) struct ToolFn {
    /// The fn as written.
    pub(crate) item: ItemFn,
    pub(crate) docs: FnDocs,
    /// The first doc attribute, for errors about the description.
    pub(crate) doc_span: Option<proc_macro2::Span>,
    pub(crate) params: Vec<Param>,
    pub(crate) output: Output,
    /// A `&self` method of a `#[tools]` group (a free fn otherwise).
    pub(crate) receiver: bool,
}

/// One parameter.
pub(crate) struct Param {
    pub(crate) ident: syn::Ident,
    pub(crate) ty: Type,
    pub(crate) kind: ParamKind,
    /// Its own `///` text, if any.
    pub(crate) docs: Option<String>,
    /// `#[serde(...)]` and `#[schemars(...)]`, moved onto the arguments struct's field.
    pub(crate) field_attrs: Vec<Attribute>,
    /// The name the model sends it under (after `#[serde(rename = "...")]`).
    pub(crate) wire_name: String,
    /// `#[grounded]` on it, read.
    pub(crate) grounded: Option<Grounded>,
}

/// `#[grounded]` or `#[grounded(from = "tool", ...)]` on a parameter: its value must come from
/// the conversation (`tinytools::Grounding`).
pub(crate) struct Grounded {
    /// The attribute, where errors about it point.
    pub(crate) attr: Attribute,
    /// The tools whose results the value comes from, as written.
    pub(crate) sources: Vec<syn::LitStr>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParamKind {
    /// Deserialized from the arguments object.
    Argument,
    /// The call's `ToolContext`, by reference or by value.
    Context { by_ref: bool },
    /// Host state, `State<T>`: read from the call's registry, not from the arguments.
    State,
}

/// What the fn returns, as written: only where compile errors point. The conversion itself is
/// chosen by the type (`__private::Returned`), so an alias of `Result` splits like one.
pub(crate) enum Output {
    /// Spelt `Result<T, E>`: errors about the output point at `T`, about the error at `E`.
    Result { ok: Box<Type>, err: Option<Box<Type>> },
    /// Anything else (`()` and aliases included): errors point at the whole type.
    Value(Option<Box<Type>>),
}

impl ToolFn {
    pub(crate) fn parse(item: ItemFn, errors: &mut Errors) -> Self {
        Self::parse_in(item, false, errors)
    }

    /// A `#[tool]` method of a `#[tools]` impl block: `&self` is the group.
    pub(crate) fn parse_method(item: ItemFn, errors: &mut Errors) -> Self {
        Self::parse_in(item, true, errors)
    }

    fn parse_in(item: ItemFn, method: bool, errors: &mut Errors) -> Self {
        let (lines, first_doc) = docs::doc_lines(&item.attrs);
        let docs = FnDocs::parse(&lines);
        let doc_span = first_doc.map(Spanned::span);
        let mut params = Vec::new();
        for input in &item.sig.inputs {
            match input {
                FnArg::Receiver(receiver) if method => {
                    if !matches!(receiver.kind, syn::ReceiverKind::Reference(_, _, None)) {
                        errors.spanned(
                            receiver,
                            "a #[tool] method takes `&self`: calls may run at the same time, so the group is shared, never moved or borrowed mutably (use a `Mutex` inside for what changes)",
                        );
                    }
                }
                FnArg::Receiver(receiver) => errors.spanned(
                    receiver,
                    "a #[tool] fn cannot take `self`: write a free fn and reach shared state through a `State<T>` parameter (`ToolRegistry::with_state` supplies it), or mark the `impl` block `#[tools]` to make its `&self` methods tools",
                ),
                FnArg::Typed(typed) => {
                    if let Some(param) = Param::parse(typed, errors) {
                        params.push(param);
                    }
                }
            }
        }
        let output = Output::parse(&item.sig.output);
        if method && !item.sig.inputs.iter().any(|input| matches!(input, FnArg::Receiver(_))) {
            errors.spanned(
                &item.sig.ident,
                "a #[tool] method in a #[tools] block takes `&self` (the group it belongs to); move a fn without it out of the block, or add `&self`",
            );
        }
        Self { item, docs, doc_span, params, output, receiver: method }
    }

    /// The fn as the user wrote it, less the parameter attributes only `#[tool]` understands
    /// (doc comments and serde/schemars attributes are not allowed on fn parameters).
    pub(crate) fn cleaned_fn(&self) -> ItemFn {
        let mut item = self.item.clone();
        for input in &mut item.sig.inputs {
            if let FnArg::Typed(typed) = input {
                typed.attrs.retain(|attr| {
                    !is_field_attr(attr) && !attr.path().is_ident("doc") && !attr.path().is_ident("grounded")
                });
            }
        }
        item
    }

    pub(crate) fn arguments(&self) -> impl Iterator<Item = &Param> {
        self.params.iter().filter(|param| param.kind == ParamKind::Argument)
    }

    /// Each `State<T>` parameter's name and its `T`, in order.
    pub(crate) fn states(&self) -> impl Iterator<Item = (&syn::Ident, &Type)> {
        self.params.iter().filter_map(|param| Some((&param.ident, state_inner(&param.ty)?)))
    }
}

impl Param {
    fn parse(typed: &syn::PatType, errors: &mut Errors) -> Option<Self> {
        let ident = match &*typed.pat {
            Pat::Ident(pat) if pat.subpat.is_none() && pat.by_ref.is_none() => pat.ident.clone(),
            other => {
                errors.spanned(
                    other,
                    "a #[tool] parameter must be a plain name (`symbol: String`): its name becomes the argument's name, so destructuring patterns cannot be used",
                );
                return None;
            }
        };
        let ty = (*typed.ty).clone();
        let kind = match context_kind(&ty) {
            Some(by_ref) => ParamKind::Context { by_ref },
            None if state_inner(&ty).is_some() => ParamKind::State,
            None => ParamKind::Argument,
        };
        let (lines, _) = docs::doc_lines(&typed.attrs);
        let docs = (!lines.is_empty()).then(|| docs::render_lines(&lines)).filter(|text| !text.is_empty());
        let field_attrs: Vec<Attribute> = typed.attrs.iter().filter(|attr| is_field_attr(attr)).cloned().collect();
        let wire_name = serde_rename(&field_attrs).unwrap_or_else(|| unraw(&ident));
        let grounded = Grounded::parse(&typed.attrs, errors);
        Some(Self { ident, ty, kind, docs, field_attrs, wire_name, grounded })
    }
}

impl Grounded {
    /// The parameter's `#[grounded]`, if it has one; malformed ones are reported.
    fn parse(attrs: &[Attribute], errors: &mut Errors) -> Option<Self> {
        let mut found: Option<Self> = None;
        for attr in attrs.iter().filter(|attr| attr.path().is_ident("grounded")) {
            if found.is_some() {
                errors.spanned(
                    attr,
                    "this parameter is already `#[grounded]`; keep one attribute and list every source in it: `#[grounded(from = \"a\", from = \"b\")]`",
                );
                continue;
            }
            let mut sources = Vec::new();
            match &attr.meta {
                syn::Meta::Path(_) => {}
                syn::Meta::List(_) => {
                    let parsed = attr.parse_nested_meta(|meta| {
                        if !meta.path.is_ident("from") {
                            return Err(meta.error(
                                "unknown `#[grounded]` option; the only one is `from = \"tool_name\"`, a tool whose result the value is copied from",
                            ));
                        }
                        match meta.value()?.parse::<syn::Expr>()? {
                            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(source), .. }) => {
                                sources.push(source);
                                Ok(())
                            }
                            other => Err(syn::Error::new_spanned(
                                other,
                                "`from` takes the source tool's name as a string: `from = \"crm_find_contact\"`",
                            )),
                        }
                    });
                    if let Err(error) = parsed {
                        errors.push(error);
                    }
                }
                syn::Meta::NameValue(name_value) => errors.spanned(
                    name_value,
                    "write `#[grounded]`, or `#[grounded(from = \"tool_name\")]` to name the tool whose result the value is copied from",
                ),
            }
            found = Some(Self { attr: attr.clone(), sources });
        }
        found
    }
}

impl Output {
    fn parse(output: &ReturnType) -> Self {
        let ReturnType::Type(_, ty) = output else {
            return Self::Value(None);
        };
        if let Type::Path(path) = &**ty
            && let Some(last) = path.path.segments.last()
            && last.ident == "Result"
            && let PathArguments::AngleBracketed(args) = &last.arguments
        {
            let mut types = args.args.iter().filter_map(|arg| match arg {
                GenericArgument::Type(ty) => Some(Box::new(ty.clone())),
                _ => None,
            });
            if let Some(ok) = types.next() {
                return Self::Result { ok, err: types.next() };
            }
        }
        Self::Value(Some(ty.clone()))
    }
}

/// `T` when the type is `State<T>` (any path ending so, with one type argument).
fn state_inner(ty: &Type) -> Option<&Type> {
    let Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    if path.qself.is_some() || last.ident != "State" {
        return None;
    }
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    match args.args.iter().collect::<Vec<_>>().as_slice() {
        [GenericArgument::Type(inner)] => Some(inner),
        _ => None,
    }
}

/// `Some(by_ref)` when the type is `ToolContext` or `&ToolContext` (any path ending so).
fn context_kind(ty: &Type) -> Option<bool> {
    let (ty, by_ref) = match ty {
        Type::Reference(reference) if reference.mutability.is_none() => (&*reference.elem, true),
        other => (other, false),
    };
    match ty {
        Type::Path(path) if path.qself.is_none() && path.path.segments.last()?.ident == "ToolContext" => Some(by_ref),
        _ => None,
    }
}

fn is_field_attr(attr: &Attribute) -> bool {
    attr.path().is_ident("serde") || attr.path().is_ident("schemars")
}

/// `#[serde(rename = "x")]` (or `rename(deserialize = "x")`) on a parameter.
fn serde_rename(attrs: &[Attribute]) -> Option<String> {
    let mut rename = None;
    for attr in attrs.iter().filter(|attr| attr.path().is_ident("serde")) {
        // Other serde keys are serde's to check; only `rename` matters here.
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("rename") {
                if meta.input.peek(syn::Token![=]) {
                    rename = Some(meta.value()?.parse::<syn::LitStr>()?.value());
                } else {
                    meta.parse_nested_meta(|inner| {
                        let value = inner.value()?.parse::<syn::LitStr>()?.value();
                        if inner.path.is_ident("deserialize") {
                            rename = Some(value);
                        }
                        Ok(())
                    })?;
                }
            } else if meta.input.peek(syn::Token![=]) {
                meta.value()?.parse::<syn::Expr>()?;
            } else if meta.input.peek(syn::token::Paren) {
                meta.parse_nested_meta(|inner| {
                    if inner.input.peek(syn::Token![=]) {
                        inner.value()?.parse::<syn::Expr>()?;
                    }
                    Ok(())
                })?;
            }
            Ok(())
        });
    }
    rename
}

/// An identifier's text without a raw `r#` prefix.
pub(crate) fn unraw(ident: &syn::Ident) -> String {
    let text = ident.to_string();
    text.strip_prefix("r#").map(str::to_owned).unwrap_or(text)
}
