//! Secrets the gateway must never print, scrubbed from whatever text reaches a log.
//!
//! The gateway's own messages never hold an expanded value, but the libraries under it may
//! log one: reqwest's errors (which rmcp logs) carry the request URL, and a remote server's
//! URL may hold a key in its query. Each remote server's expanded URL and header values are
//! [`register`]ed when they are expanded; [`scrub`] replaces them, and [`RedactingStderr`] is a
//! `tracing-subscriber` writer that scrubs every log line before it reaches stderr.

use std::io::Write;
use std::sync::{PoisonError, RwLock};

use tracing_subscriber::fmt::MakeWriter;

/// Each secret and what it is replaced with, longest first.
static SECRETS: RwLock<Vec<(String, String)>> = RwLock::new(Vec::new());

/// Adds `secret` (written as `replacement` from now on) to what [`scrub`] hides. Empty
/// secrets and ones already known are ignored.
pub fn register(secret: &str, replacement: &str) {
    if secret.is_empty() || secret == replacement {
        return;
    }
    let mut secrets = SECRETS.write().unwrap_or_else(PoisonError::into_inner);
    if secrets.iter().any(|(known, _)| known == secret) {
        return;
    }
    secrets.push((secret.to_owned(), replacement.to_owned()));
    // Longest first, so a URL is replaced whole before a token inside it.
    secrets.sort_by_key(|(known, _)| std::cmp::Reverse(known.len()));
}

/// `text` with every registered secret replaced.
pub fn scrub(text: &str) -> String {
    let secrets = SECRETS.read().unwrap_or_else(PoisonError::into_inner);
    let mut text = text.to_owned();
    for (secret, replacement) in secrets.iter() {
        if text.contains(secret.as_str()) {
            text = text.replace(secret.as_str(), replacement);
        }
    }
    text
}

/// A `tracing-subscriber` writer to stderr that [`scrub`]s each write (the fmt layer writes
/// one whole event at a time).
#[derive(Clone, Copy, Debug, Default)]
pub struct RedactingStderr;

/// The writer [`RedactingStderr`] makes.
#[derive(Debug)]
pub struct RedactingWriter;

impl Write for RedactingWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        std::io::stderr().write_all(scrub(&text).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

impl<'a> MakeWriter<'a> for RedactingStderr {
    type Writer = RedactingWriter;

    fn make_writer(&'a self) -> Self::Writer {
        RedactingWriter
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_secrets_are_replaced_longest_first() {
        register("tok-redact-test-1234", "<redacted>");
        register("http://h/mcp?k=tok-redact-test-1234", "http://h/mcp?k=${K}");
        register("", "x");
        let text = scrub("GET http://h/mcp?k=tok-redact-test-1234 failed; Bearer tok-redact-test-1234");
        assert_eq!(text, "GET http://h/mcp?k=${K} failed; Bearer <redacted>");
    }
}
