//! Tool-name globs for a server's `allow` and `deny` lists: `*` matches any run of
//! characters (none included), `?` exactly one, every other character itself.

use std::fmt;

/// One glob over tool names, as written in the config.
///
/// ```
/// use tinytools_gateway::glob::Glob;
///
/// let glob = Glob::new("get_*");
/// assert!(glob.matches("get_current_time"));
/// assert!(!glob.matches("set_time"));
/// assert!(Glob::new("file?").matches("files"));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Glob {
    pattern: String,
}

impl Glob {
    /// A glob from its pattern.
    pub fn new(pattern: impl Into<String>) -> Self {
        Self { pattern: pattern.into() }
    }

    /// The pattern, as written.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Whether `name` matches the whole pattern.
    pub fn matches(&self, name: &str) -> bool {
        let pattern: Vec<char> = self.pattern.chars().collect();
        let name: Vec<char> = name.chars().collect();
        // Iterative wildcard matching with one backtrack point: linear in practice, never
        // exponential.
        let (mut p, mut n) = (0, 0);
        let mut star: Option<(usize, usize)> = None;
        while n < name.len() {
            match pattern.get(p) {
                Some('*') => {
                    star = Some((p, n));
                    p += 1;
                }
                Some(&c) if c == '?' || c == name[n] => {
                    p += 1;
                    n += 1;
                }
                _ => match star {
                    Some((star_p, star_n)) => {
                        p = star_p + 1;
                        n = star_n + 1;
                        star = Some((star_p, star_n + 1));
                    }
                    None => return false,
                },
            }
        }
        pattern[p..].iter().all(|c| *c == '*')
    }
}

impl fmt::Debug for Glob {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Glob({:?})", self.pattern)
    }
}

#[cfg(test)]
mod tests {
    use super::Glob;

    #[test]
    fn stars_and_marks() {
        let cases = [
            ("*", "anything", true),
            ("*", "", true),
            ("get_*", "get_", true),
            ("*_file", "read_text_file", true),
            ("*_file", "read_text_files", false),
            ("a*b*c", "aXbYc", true),
            ("a*b*c", "aXbY", false),
            ("?", "", false),
            ("exact", "exact", true),
            ("exact", "exactly", false),
        ];
        for (pattern, name, expected) in cases {
            assert_eq!(Glob::new(pattern).matches(name), expected, "{pattern} vs {name}");
        }
    }
}
