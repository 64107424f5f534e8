//! Reading JSON as small models write it: strict first, then with `//` and `/* */` comments
//! and trailing commas, in one pass.
//!
//! [`read_value`] reads the value at one start. What it would find at every `{` and `[` of a
//! reply, in work linear in the reply, is [`Readings`](super::readings::Readings)' to answer;
//! the pieces of the reading they share (skipping comments, the ends of strings, numbers and
//! literals) are here.

use std::cell::OnceCell;

use serde_json::Value;

/// How deep the relaxed reading nests, as serde_json's own limit.
pub(super) const MAX_DEPTH: usize = 128;

/// The JSON value starting at byte `at` of `text` and how many bytes it takes: strict JSON
/// first, then the relaxed reading (comments, trailing commas).
pub(crate) fn read_value(text: &str, at: usize, marks: &OnceCell<Marks>) -> Option<(Value, usize)> {
    let candidate = &text[at..];
    let mut stream = serde_json::Deserializer::from_str(candidate).into_iter::<Value>();
    if let Some(Ok(value)) = stream.next() {
        return Some((value, stream.byte_offset()));
    }
    let mut reader = Relaxed { text, at, out: String::new(), marks };
    reader.value(0)?;
    let value = serde_json::from_str(&reader.out).ok()?;
    Some((value, reader.at - at))
}

/// Where lines end and block comments could close in a reply, found in one pass the first time
/// a comment is met, so no comment's end is searched for twice however many readings start.
pub(crate) struct Marks {
    newlines: Vec<usize>,
    /// The byte offset of the `*` of each `*/`.
    block_ends: Vec<usize>,
}

impl Marks {
    fn of(text: &str) -> Self {
        work::charge(text.len());
        let bytes = text.as_bytes();
        let mut marks = Self { newlines: Vec::new(), block_ends: Vec::new() };
        for (at, byte) in bytes.iter().enumerate() {
            match byte {
                b'\n' => marks.newlines.push(at),
                b'*' if bytes.get(at + 1) == Some(&b'/') => marks.block_ends.push(at),
                _ => {}
            }
        }
        marks
    }

    /// The first mark at or after `from`.
    fn next(list: &[usize], from: usize) -> Option<usize> {
        list.get(list.partition_point(|&at| at < from)).copied()
    }
}

/// A one-pass reader of JSON with comments and trailing commas: it copies the value's tokens
/// into `out` as strict JSON (serde_json then checks strings and numbers) and fails at the
/// first thing JSON does not allow, so a reading that is not JSON stops early.
struct Relaxed<'a> {
    text: &'a str,
    at: usize,
    out: String,
    marks: &'a OnceCell<Marks>,
}

impl Relaxed<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    /// Copies the next `len` bytes (ASCII punctuation or a whole token) to the output.
    fn copy(&mut self, len: usize) {
        self.out.push_str(&self.text[self.at..self.at + len]);
        self.at += len;
    }

    /// Skips whitespace and comments; `None` at a block comment that never closes.
    fn skip(&mut self) -> Option<()> {
        self.at = skip(self.text, self.at, self.marks)?;
        Some(())
    }

    fn value(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'{' => self.container(b'}', true, depth),
            b'[' => self.container(b']', false, depth),
            b'"' => self.string(),
            b'-' | b'0'..=b'9' => {
                self.copy(number_len(self.text, self.at));
                Some(())
            }
            _ => {
                self.copy(literal_len(self.text, self.at)?);
                Some(())
            }
        }
    }

    /// An object or array; a comma right before its close is dropped.
    fn container(&mut self, close: u8, object: bool, depth: usize) -> Option<()> {
        if depth >= MAX_DEPTH {
            return None;
        }
        self.copy(1);
        self.skip()?;
        if self.peek()? == close {
            self.copy(1);
            return Some(());
        }
        loop {
            if object {
                if self.peek()? != b'"' {
                    return None;
                }
                self.string()?;
                self.skip()?;
                if self.peek()? != b':' {
                    return None;
                }
                self.copy(1);
                self.skip()?;
            }
            self.value(depth + 1)?;
            self.skip()?;
            match self.peek()? {
                b',' => {
                    self.at += 1;
                    self.skip()?;
                    if self.peek()? == close {
                        self.copy(1);
                        return Some(());
                    }
                    self.out.push(',');
                }
                next if next == close => {
                    self.copy(1);
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A string, copied whole: comment marks inside it are its text.
    fn string(&mut self) -> Option<()> {
        let (end, _) = string_end(self.text, self.at)?;
        self.copy(end - self.at);
        Some(())
    }
}

/// Where whitespace and comments starting at `at` end; `None` at a block comment that never
/// closes.
fn skip(text: &str, mut at: usize, marks: &OnceCell<Marks>) -> Option<usize> {
    loop {
        match skip_step(text, at, marks)? {
            (next, Some(_)) => at = next,
            (next, None) => return Some(next),
        }
    }
}

/// Skips the whitespace at `at` and the comment after it, if there is one: where that ends,
/// and where the comment starts. A comment is jumped over, its end looked up in `marks`, not
/// searched for. `None` at a block comment that never closes.
pub(super) fn skip_step(text: &str, mut at: usize, marks: &OnceCell<Marks>) -> Option<(usize, Option<usize>)> {
    let bytes = text.as_bytes();
    while matches!(bytes.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    let end = match (bytes.get(at), bytes.get(at + 1)) {
        (Some(b'/'), Some(b'/')) => {
            let marks = marks.get_or_init(|| Marks::of(text));
            Marks::next(&marks.newlines, at + 2).unwrap_or(text.len())
        }
        (Some(b'/'), Some(b'*')) => {
            let marks = marks.get_or_init(|| Marks::of(text));
            Marks::next(&marks.block_ends, at + 2)? + 2
        }
        _ => return Some((at, None)),
    };
    Some((end, Some(at)))
}

/// The end (past the closing quote) of the string whose opening quote is at `at`, and whether
/// it holds an escape or a control character (what makes serde_json's check of it more than a
/// formality); `None` when it never closes.
pub(super) fn string_end(text: &str, at: usize) -> Option<(usize, bool)> {
    let bytes = text.as_bytes();
    let mut end = at + 1;
    let mut special = false;
    loop {
        match *bytes.get(end)? {
            b'"' => return Some((end + 1, special)),
            b'\\' => {
                special = true;
                end += 2;
            }
            byte => {
                special |= byte < 0x20;
                end += 1;
            }
        }
    }
}

/// The length of the number token at `at`: every byte a JSON number can hold (serde_json
/// judges the token).
pub(super) fn number_len(text: &str, at: usize) -> usize {
    let rest = &text.as_bytes()[at..];
    rest.iter().take_while(|b| matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')).count()
}

/// The length of the literal (`true`, `false`, `null`) at `at`.
pub(super) fn literal_len(text: &str, at: usize) -> Option<usize> {
    ["true", "false", "null"].into_iter().find(|word| text[at..].starts_with(word)).map(str::len)
}

/// A count of the bytes reading visits, for tests that pin reading to linear work without
/// timing it; nothing outside tests.
pub(super) mod work {
    #[cfg(test)]
    thread_local! {
        static VISITED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// Counts `bytes` visited.
    #[cfg_attr(not(test), inline(always))]
    pub(in crate::dialect) fn charge(bytes: usize) {
        #[cfg(test)]
        VISITED.with(|visited| visited.set(visited.get() + bytes));
        #[cfg(not(test))]
        let _ = bytes;
    }

    /// The bytes visited on this thread since the last call.
    #[cfg(test)]
    pub(in crate::dialect) fn take() -> usize {
        VISITED.with(|visited| visited.replace(0))
    }
}
