//! Config strings with `${VAR}` references ([`Template`]) and what they expand to
//! ([`Secret`]): the unexpanded form is the one shown and hashed, the expanded one is never
//! printed.

use std::fmt;

/// A config string as written, with `${VAR}` (or `${VAR:-default}`) references to the
/// environment, expanded only when a server starts.
///
/// Its `Debug` and `Display` show the unexpanded text, so a secret kept in the environment
/// never reaches a log, an error or the cache.
///
/// ```
/// use tinytools_gateway::template::Template;
///
/// let token = Template::parse("Bearer ${API_TOKEN}").unwrap();
/// let expanded = token.expand(|name| (name == "API_TOKEN").then(|| "s3cret".to_owned())).unwrap();
/// assert_eq!(expanded.expose(), "Bearer s3cret");
/// assert_eq!(format!("{expanded:?}"), "<redacted>");
/// assert_eq!(token.to_string(), "Bearer ${API_TOKEN}");
/// assert_eq!(token.expand(|_| None).unwrap_err(), "API_TOKEN");
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Template {
    raw: String,
}

/// An expanded config value. It prints as `<redacted>`; [`expose`](Self::expose) is the
/// one way to read it, for handing it to the server's process.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The expanded text.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl Template {
    /// Checks the references of a config string.
    ///
    /// # Errors
    /// What is wrong with it (an unclosed `${`, an empty or malformed variable name), as a
    /// phrase for the config error.
    pub fn parse(raw: &str) -> Result<Self, String> {
        let template = Self { raw: raw.to_owned() };
        template.walk(|_, _| Some(String::new()))?;
        Ok(template)
    }

    /// The text as written.
    pub fn raw(&self) -> &str {
        &self.raw
    }

    /// Whether it references the environment at all.
    pub fn has_references(&self) -> bool {
        self.raw.contains("${")
    }

    /// Expands every reference with `lookup`; a `${VAR:-default}` uses its default when the
    /// variable is unset or empty.
    ///
    /// # Errors
    /// The name of the first variable `lookup` does not know (and that has no default).
    pub fn expand(&self, lookup: impl Fn(&str) -> Option<String>) -> Result<Secret, String> {
        let mut missing = None;
        let expanded = self
            .walk(|name, has_default| {
                let value = lookup(name);
                if value.is_none() && !has_default && missing.is_none() {
                    missing = Some(name.to_owned());
                }
                value
            })
            .map_err(|_| String::new())?;
        match missing {
            Some(name) => Err(name),
            None => Ok(Secret(expanded)),
        }
    }

    /// Substitutes each reference; `lookup` answering `None` leaves a default in place, or
    /// nothing.
    fn walk(&self, mut lookup: impl FnMut(&str, bool) -> Option<String>) -> Result<String, String> {
        let mut out = String::with_capacity(self.raw.len());
        let mut rest = self.raw.as_str();
        while let Some(start) = rest.find("${") {
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let Some(end) = after.find('}') else {
                return Err("a `${` is not closed with `}`".to_owned());
            };
            let inner = &after[..end];
            let (name, default) = match inner.split_once(":-") {
                Some((name, default)) => (name, Some(default)),
                None => (inner, None),
            };
            let valid = !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit());
            if !valid {
                return Err(format!(
                    "`${{{inner}}}` is not a variable reference; write `${{NAME}}` with letters, digits and `_`"
                ));
            }
            match (lookup(name, default.is_some()).filter(|value| !value.is_empty() || default.is_none()), default) {
                (Some(value), _) => out.push_str(&value),
                (None, Some(default)) => out.push_str(default),
                (None, None) => {}
            }
            rest = &after[end + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

impl fmt::Debug for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.raw)
    }
}

impl fmt::Display for Template {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.raw)
    }
}

#[cfg(test)]
mod tests {
    use super::Template;

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/me".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn references_expand_and_defaults_apply() {
        let t = Template::parse("${HOME}/x:${NOPE:-fallback}:${EMPTY:-d}:${EMPTY}").unwrap();
        assert_eq!(t.expand(env).unwrap().expose(), "/home/me/x:fallback:d:");
        assert_eq!(Template::parse("plain $HOME").unwrap().expand(env).unwrap().expose(), "plain $HOME");
    }

    #[test]
    fn the_first_missing_variable_is_named() {
        let t = Template::parse("${HOME}${A}${B}").unwrap();
        assert_eq!(t.expand(env).unwrap_err(), "A");
    }

    #[test]
    fn malformed_references_are_refused() {
        assert!(Template::parse("${OPEN").unwrap_err().contains("not closed"));
        assert!(Template::parse("${}").unwrap_err().contains("not a variable reference"));
        assert!(Template::parse("${A B}").unwrap_err().contains("not a variable reference"));
        assert!(Template::parse("${1A}").is_err());
    }
}
