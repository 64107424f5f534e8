//! Doc comments → descriptions, read the way rustdoc shows them.
//!
//! The description is the doc text up to the first Markdown heading (`# Errors`,
//! `# Examples`, ... are for Rust readers, not the model). A `# Arguments` section documents
//! parameters rustdoc-style: `* `name` - text` or `- name: text`.

use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// The doc text of a list of attributes, one entry per `///` line, with the first doc
/// attribute (for error spans).
pub(crate) fn doc_lines(attrs: &[Attribute]) -> (Vec<String>, Option<&Attribute>) {
    let mut lines = Vec::new();
    let mut first = None;
    for attr in attrs {
        if let Meta::NameValue(nv) = &attr.meta
            && nv.path.is_ident("doc")
            && let Expr::Lit(ExprLit { lit: Lit::Str(text), .. }) = &nv.value
        {
            first.get_or_insert(attr);
            // `///` alone is `#[doc = ""]`, a blank line that `lines()` would drop.
            let text = text.value();
            if text.is_empty() {
                lines.push(String::new());
            }
            lines.extend(text.lines().map(str::to_owned));
        }
    }
    (lines, first)
}

/// A fn's docs, split into the description and the `# Arguments` entries.
pub(crate) struct FnDocs {
    pub(crate) description: String,
    pub(crate) arguments: Vec<(String, String)>,
}

impl FnDocs {
    pub(crate) fn parse(lines: &[String]) -> Self {
        let lines = unindent(lines);
        let mut description = Vec::new();
        let mut arguments = Vec::new();
        let mut section: Option<String> = None;
        let mut fenced = false;
        for line in &lines {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
            }
            if !fenced && let Some(heading) = line.strip_prefix('#') {
                section = Some(heading.trim_start_matches('#').trim().to_ascii_lowercase());
                continue;
            }
            match section.as_deref() {
                None => description.push(line.clone()),
                Some("arguments" | "parameters") => argument_line(line, &mut arguments),
                Some(_) => {}
            }
        }
        let arguments =
            arguments.into_iter().map(|(name, text): (String, Vec<String>)| (name, render(&text))).collect();
        Self { description: render(&description), arguments }
    }
}

/// Text for a parameter's own `///` lines.
pub(crate) fn render_lines(lines: &[String]) -> String {
    render(&unindent(lines))
}

fn argument_line(line: &str, arguments: &mut Vec<(String, Vec<String>)>) {
    let trimmed = line.trim();
    let entry = trimmed.strip_prefix("* ").or_else(|| trimmed.strip_prefix("- "));
    if let Some(entry) = entry {
        let entry = entry.trim_start();
        let (name, rest) = match entry.strip_prefix('`') {
            Some(quoted) => quoted.split_once('`').unwrap_or((quoted, "")),
            None => entry.split_once([':', ' ']).unwrap_or((entry, "")),
        };
        let rest = rest.trim_start().trim_start_matches([':', '-', '—', '–']).trim();
        arguments.push((name.trim().to_owned(), vec![rest.to_owned()]));
    } else if let Some((_, text)) = arguments.last_mut() {
        text.push(trimmed.to_owned());
    }
}

/// Removes the indentation every non-empty line shares (rustdoc's `/// ` space included).
fn unindent(lines: &[String]) -> Vec<String> {
    let indent = lines
        .iter()
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.len() - line.trim_start().len())
        .min()
        .unwrap_or(0);
    lines.iter().map(|line| line.get(indent..).unwrap_or("").trim_end().to_owned()).collect()
}

/// Joins lines into paragraphs: a paragraph's lines with spaces (list items and fenced code
/// keep their line breaks), paragraphs with a blank line.
fn render(lines: &[String]) -> String {
    let mut out = String::new();
    let mut blank = false;
    let mut fenced = false;
    for line in lines {
        let fence = line.trim_start().starts_with("```");
        if line.trim().is_empty() && !fenced {
            blank = !out.is_empty();
            continue;
        }
        if !out.is_empty() {
            if blank {
                out.push_str("\n\n");
            } else if fenced || fence || starts_list_item(line) {
                out.push('\n');
            } else {
                out.push(' ');
            }
        }
        blank = false;
        out.push_str(if fenced || fence { line } else { line.trim() });
        if fence {
            fenced = !fenced;
        }
    }
    out
}

fn starts_list_item(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("- ")
        || line.starts_with("* ")
        || line.split_once(". ").is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(|line| format!(" {line}")).collect()
    }

    #[test]
    fn paragraphs_join_and_sections_stop_the_description() {
        let docs = FnDocs::parse(&lines(
            "Fetch the latest price\nfor a ticker symbol.\n\nPrices are delayed.\n- one\n- two\n\n# Errors\nWhen offline.",
        ));
        assert_eq!(
            docs.description,
            "Fetch the latest price for a ticker symbol.\n\nPrices are delayed.\n- one\n- two"
        );
    }

    #[test]
    fn an_arguments_section_documents_parameters() {
        let docs = FnDocs::parse(&lines(
            "Quote.\n\n# Arguments\n\n* `symbol` - Ticker symbol,\n  such as ACME.\n- limit: How many.\n",
        ));
        assert_eq!(docs.description, "Quote.");
        assert_eq!(
            docs.arguments,
            vec![("symbol".into(), "Ticker symbol, such as ACME.".into()), ("limit".into(), "How many.".into())]
        );
    }

    #[test]
    fn fenced_code_keeps_its_lines_and_headings() {
        let docs = FnDocs::parse(&lines("Run it.\n\n```\n# not a heading\nx = 1\n```"));
        assert_eq!(docs.description, "Run it.\n\n```\n# not a heading\nx = 1\n```");
    }
}
