//! BERT's uncased WordPiece tokenizer, a copy of `tinytools`' own
//! (`tinytools/src/rank/embedding/wordpiece.rs`, crate-private there), so that
//! [`OrtEmbedder`](super::OrtEmbedder) feeds ONNX Runtime exactly the ids `BertEmbedder` reads
//! without loading the safetensors weights a second time. The `ort` feature's test checks the
//! two agree.

use std::collections::HashMap;
use std::path::Path;

use unicode_normalization::UnicodeNormalization;

use super::OrtError;

/// Words longer than this many characters become `[UNK]` (BERT's `max_input_chars_per_word`).
const MAX_WORD_CHARS: usize = 100;

/// An uncased BERT tokenizer: clean, lower-case, strip accents, split on whitespace and
/// punctuation (CJK characters stand alone), then greedy longest-match WordPiece.
#[derive(Clone, Debug)]
pub(super) struct WordPiece {
    vocab: HashMap<String, u32>,
    pub(super) unk: u32,
    pub(super) cls: u32,
    pub(super) sep: u32,
}

impl WordPiece {
    /// Reads the vocabulary of a Hugging Face `tokenizer.json` (a WordPiece model).
    pub(super) fn from_tokenizer_json(path: &Path) -> Result<Self, OrtError> {
        let json: serde_json::Value = super::read_json(path)?;
        let model = &json["model"];
        if model["type"] != "WordPiece" {
            return Err(OrtError::format(path, "the tokenizer is not WordPiece (only BERT-style models load)"));
        }
        let vocab: HashMap<String, u32> = model["vocab"]
            .as_object()
            .ok_or_else(|| OrtError::format(path, "`model.vocab` is missing"))?
            .iter()
            .filter_map(|(token, id)| Some((token.clone(), u32::try_from(id.as_u64()?).ok()?)))
            .collect();
        let special = |token: &str| {
            vocab.get(token).copied().ok_or_else(|| OrtError::format(path, format!("the vocabulary has no `{token}`")))
        };
        Ok(Self { unk: special("[UNK]")?, cls: special("[CLS]")?, sep: special("[SEP]")?, vocab })
    }

    /// The ids of `text`'s word pieces, at most `max` of them (no `[CLS]`/`[SEP]`).
    pub(super) fn encode(&self, text: &str, max: usize) -> Vec<u32> {
        let mut ids = Vec::new();
        for word in words(text) {
            if ids.len() >= max {
                break;
            }
            self.pieces(&word, &mut ids);
        }
        ids.truncate(max);
        ids
    }

    /// Greedy longest-match-first WordPiece of one word; `[UNK]` when any part is unknown.
    fn pieces(&self, word: &str, ids: &mut Vec<u32>) {
        if word.chars().count() > MAX_WORD_CHARS {
            ids.push(self.unk);
            return;
        }
        let start_len = ids.len();
        let mut start = 0;
        let mut candidate = String::new();
        while start < word.len() {
            let mut end = word.len();
            let found = loop {
                candidate.clear();
                if start > 0 {
                    candidate.push_str("##");
                }
                candidate.push_str(&word[start..end]);
                if let Some(&id) = self.vocab.get(&candidate) {
                    break Some((id, end));
                }
                // Step back one character.
                match word[start..end].char_indices().next_back() {
                    Some((at, _)) if at > 0 => end = start + at,
                    _ => break None,
                }
            };
            match found {
                Some((id, end)) => {
                    ids.push(id);
                    start = end;
                }
                None => {
                    ids.truncate(start_len);
                    ids.push(self.unk);
                    return;
                }
            }
        }
    }
}

/// BERT's basic tokenization: cleaned, lower-cased, accent-stripped words and single
/// punctuation marks.
fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let flush = |word: &mut String, words: &mut Vec<String>| {
        if !word.is_empty() {
            words.push(std::mem::take(word));
        }
    };
    for c in text.chars() {
        if c == '\0' || c == '\u{fffd}' || (c.is_control() && !c.is_whitespace()) || is_format(c) {
            continue;
        }
        if c.is_whitespace() {
            flush(&mut word, &mut words);
        } else if is_punctuation(c) || is_cjk(c) {
            flush(&mut word, &mut words);
            words.push(c.to_string());
        } else {
            // Lower-case, then drop combining marks after canonical decomposition ("é" → "e").
            for lower in c.to_lowercase() {
                word.extend(lower.nfd().filter(|m| !is_combining_mark(*m)));
            }
        }
    }
    flush(&mut word, &mut words);
    words
}

/// ASCII punctuation and symbols, plus any other character that is neither a letter, a digit,
/// whitespace nor a combining mark (BERT asks Unicode's `P*` categories, which the standard
/// library does not expose; the two differ only on rare symbols, which WordPiece maps to
/// `[UNK]` either way).
fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || (!c.is_ascii() && !c.is_alphanumeric() && !c.is_whitespace() && !is_combining_mark(c))
}

/// Combining diacritical marks (the blocks NFD produces for Latin, Greek and Cyrillic accents).
fn is_combining_mark(c: char) -> bool {
    matches!(c, '\u{0300}'..='\u{036f}' | '\u{1ab0}'..='\u{1aff}' | '\u{1dc0}'..='\u{1dff}' | '\u{20d0}'..='\u{20ff}' | '\u{fe20}'..='\u{fe2f}')
}

/// The invisible format characters (Unicode `Cf`) text commonly carries, which BERT drops:
/// soft hyphen, zero-width space and joiners, direction marks, word joiner, byte-order mark.
fn is_format(c: char) -> bool {
    matches!(c, '\u{00ad}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2064}' | '\u{feff}')
}

/// The CJK ideograph blocks BERT surrounds with spaces.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B820..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}
