//! Reading `#[tool(key = value, flag, ...)]`. Only the form of each value is checked here;
//! what the values mean is `validate`'s business.

use proc_macro2::{Span, TokenStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Lit, LitBool, LitInt, LitStr, Meta, Token};

use super::Errors;

/// Every key `#[tool]` accepts, for "did you mean" and the unknown-key message.
pub(crate) const KEYS: [&str; 16] = [
    "name",
    "ident",
    "crate",
    "description",
    "exposure",
    "family",
    "family_description",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "compaction",
    "max_schema_bytes",
    "max_description_bytes",
    "allow_unknown_arguments",
    "blocking",
];

/// The attribute's keys, each with its literal (and so its span).
#[derive(Clone, Default)]
pub(crate) struct ToolAttr {
    pub(crate) name: Option<LitStr>,
    /// The generated struct's name, when the default (the fn's name in UpperCamelCase) is taken.
    pub(crate) ident: Option<LitStr>,
    /// The path to the runtime crate, when it is not `::tinytools` (a renamed dependency).
    pub(crate) krate: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) exposure: Option<LitStr>,
    pub(crate) family: Option<LitStr>,
    /// What the family's tools have in common: a `#[tools]` block's key only.
    pub(crate) family_description: Option<LitStr>,
    pub(crate) read_only: Option<Flag>,
    pub(crate) destructive: Option<Flag>,
    pub(crate) idempotent: Option<Flag>,
    pub(crate) open_world: Option<Flag>,
    pub(crate) compaction: Option<LitStr>,
    pub(crate) max_schema_bytes: Option<LitInt>,
    pub(crate) max_description_bytes: Option<LitInt>,
    pub(crate) allow_unknown_arguments: Option<Flag>,
    /// The tool blocks its thread: the run calls it on the blocking pool.
    pub(crate) blocking: Option<Flag>,
}

/// A boolean key: `read_only` alone means `read_only = true`.
#[derive(Clone, Copy)]
pub(crate) struct Flag {
    pub(crate) value: bool,
    pub(crate) span: Span,
}

impl ToolAttr {
    /// These keys, with `group`'s filling those not given: a `#[tools]` block's keys are
    /// defaults for its methods.
    pub(crate) fn over(&self, group: &ToolAttr) -> ToolAttr {
        let own = self.clone();
        let group = group.clone();
        ToolAttr {
            name: own.name,
            ident: own.ident,
            description: own.description,
            krate: own.krate.or(group.krate),
            exposure: own.exposure.or(group.exposure),
            family: own.family.or(group.family),
            // The block's own: it describes the family once, not each method.
            family_description: own.family_description,
            read_only: own.read_only.or(group.read_only),
            destructive: own.destructive.or(group.destructive),
            idempotent: own.idempotent.or(group.idempotent),
            open_world: own.open_world.or(group.open_world),
            compaction: own.compaction.or(group.compaction),
            max_schema_bytes: own.max_schema_bytes.or(group.max_schema_bytes),
            max_description_bytes: own.max_description_bytes.or(group.max_description_bytes),
            allow_unknown_arguments: own.allow_unknown_arguments.or(group.allow_unknown_arguments),
            blocking: own.blocking.or(group.blocking),
        }
    }

    pub(crate) fn parse(tokens: TokenStream, errors: &mut Errors) -> Self {
        let mut attr = Self::default();
        let metas = match syn::parse::Parser::parse2(Punctuated::<Meta, Token![,]>::parse_terminated, tokens) {
            Ok(metas) => metas,
            Err(err) => {
                errors.push(syn::Error::new(
                    err.span(),
                    format!("{err}; #[tool] takes `key = value` pairs and flags, such as #[tool(exposure = \"deferred\", read_only)]"),
                ));
                return attr;
            }
        };
        for meta in &metas {
            attr.read(meta, errors);
        }
        attr
    }

    fn read(&mut self, meta: &Meta, errors: &mut Errors) {
        let Some(key) = meta.path().get_ident().map(ToString::to_string) else {
            errors.spanned(meta.path(), unknown_key_message(&path_text(meta.path())));
            return;
        };
        match key.as_str() {
            "name" => set(&mut self.name, string(meta, &key, errors), meta, &key, errors),
            "ident" => set(&mut self.ident, string(meta, &key, errors), meta, &key, errors),
            "crate" => set(&mut self.krate, string(meta, &key, errors), meta, &key, errors),
            "description" => set(&mut self.description, string(meta, &key, errors), meta, &key, errors),
            "exposure" => set(&mut self.exposure, string(meta, &key, errors), meta, &key, errors),
            "family" => set(&mut self.family, string(meta, &key, errors), meta, &key, errors),
            "family_description" => {
                set(&mut self.family_description, string(meta, &key, errors), meta, &key, errors);
            }
            "compaction" => set(&mut self.compaction, string(meta, &key, errors), meta, &key, errors),
            "read_only" => set(&mut self.read_only, flag(meta, &key, errors), meta, &key, errors),
            "destructive" => set(&mut self.destructive, flag(meta, &key, errors), meta, &key, errors),
            "idempotent" => set(&mut self.idempotent, flag(meta, &key, errors), meta, &key, errors),
            "open_world" => set(&mut self.open_world, flag(meta, &key, errors), meta, &key, errors),
            "blocking" => set(&mut self.blocking, flag(meta, &key, errors), meta, &key, errors),
            "allow_unknown_arguments" => {
                set(&mut self.allow_unknown_arguments, flag(meta, &key, errors), meta, &key, errors);
            }
            "max_schema_bytes" => set(&mut self.max_schema_bytes, integer(meta, &key, errors), meta, &key, errors),
            "max_description_bytes" => {
                set(&mut self.max_description_bytes, integer(meta, &key, errors), meta, &key, errors);
            }
            _ => errors.spanned(meta.path(), unknown_key_message(&key)),
        }
    }
}

fn set<T>(slot: &mut Option<T>, value: Option<T>, meta: &Meta, key: &str, errors: &mut Errors) {
    if slot.is_some() {
        errors.spanned(meta, format!("`{key}` is given twice; keep one"));
    } else if value.is_some() {
        *slot = value;
    }
}

fn literal<'m>(meta: &'m Meta, key: &str, expected: &str, errors: &mut Errors) -> Option<&'m Lit> {
    match meta {
        Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(ExprLit { lit, .. }) => Some(lit),
            other => {
                errors.spanned(other, format!("`{key}` takes {expected}"));
                None
            }
        },
        _ => {
            errors.spanned(meta, format!("`{key}` takes {expected}: write `{key} = ...`"));
            None
        }
    }
}

fn string(meta: &Meta, key: &str, errors: &mut Errors) -> Option<LitStr> {
    match literal(meta, key, "a string literal", errors)? {
        Lit::Str(text) => Some(text.clone()),
        other => {
            errors.spanned(other, format!("`{key}` takes a string literal, such as `{key} = \"...\"`"));
            None
        }
    }
}

fn integer(meta: &Meta, key: &str, errors: &mut Errors) -> Option<LitInt> {
    match literal(meta, key, "a byte count", errors)? {
        Lit::Int(int) if int.base10_parse::<usize>().is_ok() => Some(int.clone()),
        other => {
            errors.spanned(other, format!("`{key}` takes a byte count, such as `{key} = 2_000`"));
            None
        }
    }
}

fn flag(meta: &Meta, key: &str, errors: &mut Errors) -> Option<Flag> {
    match meta {
        Meta::Path(path) => Some(Flag { value: true, span: path.span() }),
        Meta::NameValue(nv) => match &nv.value {
            Expr::Lit(ExprLit { lit: Lit::Bool(LitBool { value, span }), .. }) => {
                Some(Flag { value: *value, span: *span })
            }
            other => {
                errors.spanned(other, format!("`{key}` takes `true` or `false`, or stands alone for `true`"));
                None
            }
        },
        Meta::List(list) => {
            errors.spanned(list, format!("`{key}` takes `true` or `false`, or stands alone for `true`"));
            None
        }
    }
}

fn path_text(path: &syn::Path) -> String {
    path.segments.iter().map(|s| s.ident.to_string()).collect::<Vec<_>>().join("::")
}

fn unknown_key_message(key: &str) -> String {
    let list = KEYS.join(", ");
    match closest(key, &KEYS) {
        Some(near) => {
            format!("unknown #[tool] key `{key}`; did you mean `{near}`?\nthe keys are: {list}")
        }
        None => format!("unknown #[tool] key `{key}`\nthe keys are: {list}"),
    }
}

/// The candidate nearest to `input` by edit distance, if it is near enough to be a typo.
pub(crate) fn closest<'a>(input: &str, candidates: &[&'a str]) -> Option<&'a str> {
    candidates
        .iter()
        .map(|candidate| (strsim::levenshtein(input, candidate), *candidate))
        .filter(|(distance, candidate)| *distance <= (candidate.len() / 3).max(1))
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, candidate)| candidate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typos_find_their_key_and_strangers_do_not() {
        assert_eq!(closest("exposer", &KEYS), Some("exposure"));
        assert_eq!(closest("readonly", &KEYS), Some("read_only"));
        assert_eq!(closest("famly", &KEYS), Some("family"));
        assert_eq!(closest("colour", &KEYS), None);
    }
}
