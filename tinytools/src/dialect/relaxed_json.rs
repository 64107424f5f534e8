//! Reading JSON as small models write it: strict first, then with `//` and `/* */` comments
//! and trailing commas, in one pass.

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
        loop {
            let bytes = self.text.as_bytes();
            match (bytes.get(self.at), bytes.get(self.at + 1)) {
                (Some(b' ' | b'\t' | b'\n' | b'\r'), _) => self.at += 1,
                (Some(b'/'), Some(b'/')) => {
                    let marks = self.marks.get_or_init(|| Marks::of(self.text));
                    self.at = Marks::next(&marks.newlines, self.at + 2).unwrap_or(self.text.len());
                }
                (Some(b'/'), Some(b'*')) => {
                    let marks = self.marks.get_or_init(|| Marks::of(self.text));
                    self.at = Marks::next(&marks.block_ends, self.at + 2)? + 2;
                }
                _ => return Some(()),
            }
        }
    }

    fn value(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'{' => self.container(b'}', true, depth),
            b'[' => self.container(b']', false, depth),
            b'"' => self.string(),
            b'-' | b'0'..=b'9' => {
                let rest = &self.text.as_bytes()[self.at..];
                let len =
                    rest.iter().take_while(|b| matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')).count();
                self.copy(len);
                Some(())
            }
            _ => {
                let literal =
                    ["true", "false", "null"].into_iter().find(|word| self.text[self.at..].starts_with(word))?;
                self.copy(literal.len());
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
        let bytes = self.text.as_bytes();
        let mut end = self.at + 1;
        loop {
            match bytes.get(end)? {
                b'"' => break,
                b'\\' => end += 2,
                _ => end += 1,
            }
        }
        self.copy(end + 1 - self.at);
        Some(())
    }
}
