//! BERT's uncased WordPiece tokenizer: text → vocabulary ids, as `tokenizer.json` describes it.

use std::collections::HashMap;
use std::path::Path;

use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

use tinytools::rank::embedding::EmbeddingError;

use super::read_json;

/// Words longer than this many characters become `[UNK]` (BERT's `max_input_chars_per_word`).
const MAX_WORD_CHARS: usize = 100;

/// An uncased BERT tokenizer: clean, lower-case, strip accents, split on whitespace and
/// punctuation (CJK characters stand alone), then greedy longest-match WordPiece.
#[derive(Clone, Debug)]
pub(crate) struct WordPiece {
    vocab: HashMap<String, u32>,
    pub(crate) unk: u32,
    pub(crate) cls: u32,
    pub(crate) sep: u32,
}

impl WordPiece {
    /// Reads the vocabulary of a Hugging Face `tokenizer.json` (a WordPiece model).
    pub(crate) fn from_tokenizer_json(path: &Path) -> Result<Self, EmbeddingError> {
        let json: serde_json::Value = read_json(path)?;
        let model = &json["model"];
        if model["type"] != "WordPiece" {
            return Err(EmbeddingError::format(path, "the tokenizer is not WordPiece (only BERT-style models load)"));
        }
        let vocab: HashMap<String, u32> = model["vocab"]
            .as_object()
            .ok_or_else(|| EmbeddingError::format(path, "`model.vocab` is missing"))?
            .iter()
            .filter_map(|(token, id)| Some((token.clone(), u32::try_from(id.as_u64()?).ok()?)))
            .collect();
        Self::new(vocab).map_err(|missing| EmbeddingError::format(path, format!("the vocabulary has no `{missing}`")))
    }

    /// A tokenizer over `vocab`; `Err` names a special token it lacks.
    pub(crate) fn new(vocab: HashMap<String, u32>) -> Result<Self, &'static str> {
        let special = |token: &'static str| vocab.get(token).copied().ok_or(token);
        Ok(Self { unk: special("[UNK]")?, cls: special("[CLS]")?, sep: special("[SEP]")?, vocab })
    }

    /// The largest id the vocabulary holds.
    pub(crate) fn max_id(&self) -> u32 {
        self.vocab.values().copied().max().unwrap_or(0)
    }

    /// The vocabulary in id order: `None` for an id no token has.
    pub(crate) fn by_id(&self) -> Vec<Option<&str>> {
        let mut tokens = vec![None; self.max_id() as usize + 1];
        for (token, &id) in &self.vocab {
            tokens[id as usize] = Some(token.as_str());
        }
        tokens
    }

    /// The ids of `text`'s word pieces, at most `max` of them (no `[CLS]`/`[SEP]`).
    pub(crate) fn encode(&self, text: &str, max: usize) -> Vec<u32> {
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

/// BERT's basic tokenization, as Hugging Face's `BertNormalizer` and `BertPreTokenizer` do it:
/// control and format characters dropped, CJK ideographs and punctuation (Unicode's `P*`) each
/// a word of their own, words split at whitespace, lower-cased, and accents stripped (the
/// nonspacing marks, `Mn`, of the canonical decomposition: "é" → "e", Devanagari's "ै" gone).
/// Symbols (emoji, `So`) are not punctuation: "🚀🔥" is one word, one `[UNK]`.
fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let flush = |word: &mut String, words: &mut Vec<String>| {
        if !word.is_empty() {
            words.push(std::mem::take(word));
        }
    };
    for c in text.chars() {
        if c == '\0' || c == '\u{fffd}' || is_control(c) {
            continue;
        }
        if c.is_whitespace() {
            flush(&mut word, &mut words);
        } else if is_punctuation(c) || is_cjk(c) {
            flush(&mut word, &mut words);
            words.push(c.to_string());
        } else {
            // Lower-case, then drop nonspacing marks after canonical decomposition ("é" → "e").
            for lower in c.to_lowercase() {
                word.extend(lower.nfd().filter(|m| get_general_category(*m) != GeneralCategory::NonspacingMark));
            }
        }
    }
    flush(&mut word, &mut words);
    words
}

/// BERT's punctuation: ASCII punctuation and symbols, and Unicode's `P*` categories.
fn is_punctuation(c: char) -> bool {
    use GeneralCategory as G;
    c.is_ascii_punctuation()
        || matches!(
            get_general_category(c),
            G::ConnectorPunctuation
                | G::DashPunctuation
                | G::ClosePunctuation
                | G::FinalPunctuation
                | G::InitialPunctuation
                | G::OtherPunctuation
                | G::OpenPunctuation
        )
}

/// What BERT drops as control: Unicode's `C*` categories (control, format such as the soft
/// hyphen and zero-width space, private use, unassigned), but tab, line feed and carriage
/// return, which are whitespace.
fn is_control(c: char) -> bool {
    use GeneralCategory as G;
    !matches!(c, '\t' | '\n' | '\r')
        && matches!(get_general_category(c), G::Control | G::Format | G::PrivateUse | G::Unassigned | G::Surrogate)
}

/// The CJK ideograph blocks BERT surrounds with spaces.
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF | 0x3400..=0x4DBF | 0x20000..=0x2A6DF | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F | 0x2B820..=0x2CEAF | 0xF900..=0xFAFF | 0x2F800..=0x2FA1F)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> WordPiece {
        let tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##aff", "##able", "cafe", "?", "run", "##ning", "中"];
        WordPiece::new(tokens.iter().enumerate().map(|(i, t)| ((*t).to_owned(), i as u32)).collect())
            .unwrap_or_else(|missing| panic!("{missing}"))
    }

    #[test]
    fn splits_words_into_longest_known_pieces() {
        let wp = tiny();
        assert_eq!(wp.encode("Unaffable running?", 10), [4, 5, 6, 9, 10, 8]);
    }

    #[test]
    fn strips_accents_and_isolates_punctuation_and_cjk() {
        let wp = tiny();
        assert_eq!(words("Café,ok 中文"), ["cafe", ",", "ok", "中", "文"]);
        assert_eq!(words("zero\u{200b}width soft\u{00ad}hyphen\u{feff}"), ["zerowidth", "softhyphen"]);
        assert_eq!(wp.encode("CAFÉ", 10), [7]);
    }

    #[test]
    fn symbols_stay_in_their_word_and_nonspacing_marks_go() {
        // Emoji are symbols (`So`), not punctuation: three in a row are one word.
        assert_eq!(words("🚀🔥💯 go"), ["🚀🔥💯", "go"]);
        // Devanagari's vowel sign AI (U+0948) is a nonspacing mark; AA (U+093E) spaces, and stays.
        assert_eq!(words("कैसा"), ["कसा"]);
        // Unicode punctuation outside ASCII splits; format characters vanish.
        assert_eq!(words("a—b\u{200b}c «d»"), ["a", "—", "bc", "«", "d", "»"]);
    }

    #[test]
    fn unknown_words_become_one_unk_and_the_limit_holds() {
        let wp = tiny();
        assert_eq!(wp.encode("unxyz run", 10), [1, 9]);
        assert_eq!(wp.encode("unaffable unaffable", 4), [4, 5, 6, 4]);
        assert!(wp.encode("", 10).is_empty());
        let long = "a".repeat(MAX_WORD_CHARS + 1);
        assert_eq!(wp.encode(&long, 10), [1]);
    }

    #[test]
    fn a_vocabulary_without_special_tokens_is_refused() {
        let vocab: HashMap<String, u32> = [("[UNK]".to_owned(), 0)].into();
        assert_eq!(WordPiece::new(vocab).err(), Some("[CLS]"));
    }
}
