//! [`tokenize`]: text and identifiers → search terms.
//!
//! One tokenizer serves documents and queries alike, so `stock_quote`, `stockQuote`,
//! `stock-quote`, `Stock.Quote` and "stock quotes" all meet on the same terms.
//!
//! The choices below were made by measurement on the dev halves of BFCL and MetaTool
//! (`docs/retrieval.md`), not by taste: stemming and stop words each help both sets.

use std::sync::OnceLock;

use rust_stemmers::{Algorithm, Stemmer};

/// How text becomes terms. [`Tokenizer::default`] is what the discovery bridge uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tokenizer {
    /// Reduce words to their Snowball (Porter2) English stem: "quotes", "quoted" → "quot".
    pub stem: bool,
    /// Drop English function words and chat filler ("the", "of", "please", ...).
    pub stop_words: bool,
    /// Also emit each word's first `prefix` letters as a separate term (`disco~`), so words
    /// the stemmer keeps apart still meet ("discovered" / "discoverer"). `0` (the default)
    /// turns it off: at 5 it gained 1.7 points of BFCL recall@5 and lost 1.3 on MetaTool.
    pub prefix: usize,
}

impl Default for Tokenizer {
    fn default() -> Self {
        Self { stem: true, stop_words: true, prefix: 0 }
    }
}

/// Splits text into search terms with the default [`Tokenizer`].
///
/// Words split at every non-alphanumeric character and at identifier boundaries
/// (`snake_case`, `camelCase`, `HTTPServer`, `sha256`), are lower-cased, lose English function
/// words, and are stemmed.
///
/// ```
/// use tinytools::rank::tokenize;
///
/// assert_eq!(tokenize("getStockQuotes"), ["get", "stock", "quot"]);
/// assert_eq!(tokenize("math.factorial"), ["math", "factori"]);
/// assert_eq!(tokenize("What is the price of ACME?"), ["price", "acm"]);
/// assert_eq!(tokenize("HTTPServer sha256"), ["http", "server", "sha", "256"]);
/// ```
pub fn tokenize(text: &str) -> Vec<String> {
    Tokenizer::default().tokenize(text)
}

impl Tokenizer {
    /// Splits text into search terms with this tokenizer's settings.
    pub fn tokenize(&self, text: &str) -> Vec<String> {
        let mut terms = Vec::new();
        self.for_each_term(text, |term| terms.push(term.to_owned()));
        terms
    }

    /// Calls `f` with each term, without collecting them.
    pub fn for_each_term(&self, text: &str, mut f: impl FnMut(&str)) {
        for_each_word(text, |word| self.word_terms(word, &mut f));
    }

    /// The terms of one lower-cased word (none for a stop word). The index caches this per
    /// distinct word: stemming is the costly step.
    pub(crate) fn word_terms(&self, word: &str, mut f: impl FnMut(&str)) {
        if self.stop_words && is_stop_word(word) {
            return;
        }
        if self.stem && word.chars().any(char::is_alphabetic) {
            f(&stemmer().stem(word));
        } else {
            f(word);
        }
        if self.prefix > 0 && word.chars().all(char::is_alphabetic) && word.chars().count() >= self.prefix {
            let mut prefix: String = word.chars().take(self.prefix).collect();
            prefix.push('~');
            f(&prefix);
        }
    }
}

fn stemmer() -> &'static Stemmer {
    static STEMMER: OnceLock<Stemmer> = OnceLock::new();
    STEMMER.get_or_init(|| Stemmer::create(Algorithm::English))
}

/// Calls `f` with each lower-cased word of `text`. Words split at non-alphanumerics,
/// lower→upper (`stockQuote`), acronym ends (`HTTPServer`) and letter↔digit boundaries (`sha256`).
pub(crate) fn for_each_word(text: &str, mut f: impl FnMut(&str)) {
    if text.is_ascii() {
        for_each_ascii_word(text, f);
        return;
    }
    let mut word = String::new();
    let mut emit = |raw: &str, word: &mut String| {
        word.clear();
        if raw.is_ascii() {
            word.push_str(raw);
            word.make_ascii_lowercase();
        } else {
            word.extend(raw.chars().flat_map(char::to_lowercase));
        }
        f(word);
    };
    let mut start: Option<usize> = None;
    let mut prev: Option<char> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if !c.is_alphanumeric() {
            if let Some(s) = start.take() {
                emit(&text[s..at], &mut word);
            }
            prev = None;
            continue;
        }
        if let (Some(s), Some(p)) = (start, prev) {
            let next = chars.peek().map(|&(_, n)| n);
            let boundary = (p.is_lowercase() && c.is_uppercase())
                || (p.is_uppercase() && c.is_uppercase() && next.is_some_and(char::is_lowercase))
                || (p.is_alphabetic() && c.is_numeric())
                || (p.is_numeric() && c.is_alphabetic());
            if boundary {
                emit(&text[s..at], &mut word);
                start = Some(at);
            }
        }
        start.get_or_insert(at);
        prev = Some(c);
    }
    if let Some(s) = start {
        emit(&text[s..], &mut word);
    }
}

/// The query without its numbers but those `keep` admits, and the numbers taken out. A
/// number is a run of digits with no letter on either side: "15% of 2,340", "ev_4410",
/// "ca-central-2" — a quantity or an id's serial; the digits of a name (`EC2`, `Q3`, `sha256`)
/// stay. The catalogue keeps the numbers its tools' names have (`operation_7_of_service_3`):
/// there a number is part of what the tool is; elsewhere (a description's `15:00:00Z`) it is
/// an example.
pub(crate) fn without_numbers(query: &str, keep: impl Fn(&str) -> bool) -> (std::borrow::Cow<'_, str>, Vec<&str>) {
    let bytes = query.as_bytes();
    let letter = |at: Option<usize>| at.and_then(|i| query[i..].chars().next()).is_some_and(char::is_alphabetic);
    let mut numbers = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if !bytes[at].is_ascii_digit() {
            at += 1;
            continue;
        }
        let end = (at..bytes.len()).find(|&i| !bytes[i].is_ascii_digit()).unwrap_or(bytes.len());
        let before = query[..at].char_indices().next_back().map(|(i, _)| i);
        if !letter(before) && !letter((end < bytes.len()).then_some(end)) && !keep(&query[at..end]) {
            numbers.push((at, end));
        }
        at = end;
    }
    if numbers.is_empty() {
        return (std::borrow::Cow::Borrowed(query), Vec::new());
    }
    let mut text = String::with_capacity(query.len());
    let mut from = 0;
    for &(start, end) in &numbers {
        text.push_str(&query[from..start]);
        text.push(' ');
        from = end;
    }
    text.push_str(&query[from..]);
    (std::borrow::Cow::Owned(text), numbers.into_iter().map(|(start, end)| &query[start..end]).collect())
}

/// Byte classes for the ASCII scanner.
const SEP: u8 = 0;
const LOWER: u8 = 1;
const UPPER: u8 = 2;
const DIGIT: u8 = 3;

/// Each ASCII byte's class, looked up once per byte.
const CLASS: [u8; 256] = {
    let mut table = [SEP; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = match b as u8 {
            b'a'..=b'z' => LOWER,
            b'A'..=b'Z' => UPPER,
            b'0'..=b'9' => DIGIT,
            _ => SEP,
        };
        b += 1;
    }
    table
};

/// [`for_each_word`] for ASCII text: one table look-up per byte, and a word is copied only
/// when it has capitals to lower.
fn for_each_ascii_word(text: &str, mut f: impl FnMut(&str)) {
    let bytes = text.as_bytes();
    let mut lowered = String::new();
    let mut emit = |word: &str, upper: bool| {
        if upper {
            lowered.clear();
            lowered.push_str(word);
            lowered.make_ascii_lowercase();
            f(&lowered);
        } else {
            f(word);
        }
    };
    let mut start = 0;
    let mut upper = false;
    let mut prev = SEP;
    for (at, &byte) in bytes.iter().enumerate() {
        let class = CLASS[byte as usize];
        let boundary = match (prev, class) {
            (_, SEP) => {
                if prev != SEP {
                    emit(&text[start..at], upper);
                }
                prev = SEP;
                continue;
            }
            (SEP, _) => false,
            (LOWER, UPPER) | (LOWER | UPPER, DIGIT) | (DIGIT, LOWER | UPPER) => true,
            // `HTTPServer`: the last capital of a run starts the next word.
            (UPPER, UPPER) => bytes.get(at + 1).is_some_and(|next| CLASS[*next as usize] == LOWER),
            _ => false,
        };
        if prev == SEP {
            start = at;
            upper = false;
        } else if boundary {
            emit(&text[start..at], upper);
            start = at;
            upper = false;
        }
        upper |= class == UPPER;
        prev = class;
    }
    if prev != SEP {
        emit(&text[start..], upper);
    }
}

fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.binary_search(&word).is_ok()
}

/// English function words, plus the politeness and request filler of chat queries ("can you
/// please help me ...") that never names a capability. Sorted, for binary search.
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been", "being", "but",
    "by", "can", "could", "d", "did", "do", "does", "doing", "for", "from", "had", "has", "have", "having", "he",
    "hello", "her", "here", "hers", "hey", "hi", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its",
    "itself", "just", "let", "lets", "ll", "m", "me", "might", "my", "myself", "now", "of", "off", "on", "or", "our",
    "ours", "please", "re", "right", "s", "she", "should", "so", "some", "such", "t", "than", "thank", "thanks",
    "that", "the", "their", "them", "then", "there", "these", "they", "this", "those", "to", "today", "too", "us",
    "ve", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with",
    "would", "you", "your", "yours",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_values_but_the_digits_of_a_name_stay() {
        let none = |_: &str| false;
        let (text, numbers) =
            without_numbers("What's 15% of 2,340 on EC2 in ca-central-2 for ev_4410, Q3 and sha256?", none);
        assert_eq!(numbers, ["15", "2", "340", "2", "4410"]);
        assert_eq!(tokenize(&text), ["ec", "2", "ca", "central", "ev", "q", "3", "sha", "256"]);
        assert_eq!(without_numbers("no digits here", none), (std::borrow::Cow::Borrowed("no digits here"), Vec::new()));
        assert_eq!(without_numbers("ünï 42ß", none).1, Vec::<&str>::new(), "a letter of any script glues");
        assert_eq!(without_numbers("operation 7 of service 3", |n| n == "7").1, ["3"]);
    }

    fn words(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for_each_word(text, |w| out.push(w.to_owned()));
        out
    }

    #[test]
    fn identifiers_split_every_way_they_are_written() {
        for name in ["stock_quote", "stockQuote", "StockQuote", "stock-quote", "stock.quote", "STOCK_QUOTE"] {
            assert_eq!(tokenize(name), ["stock", "quot"], "{name}");
        }
        assert_eq!(words("parseHTTPResponse2xx"), ["parse", "http", "response", "2", "xx"]);
        assert_eq!(words("Ünïcode wörds"), ["ünïcode", "wörds"]);
        assert_eq!(words("a  b"), ["a", "b"]);
        // The ASCII fast path and the Unicode path agree.
        for text in ["parseHTTPResponse2xx", "get_stockQuote v2.1-beta", "ABCdef GHI9j", "__x__"] {
            let mut unicode = Vec::new();
            for_each_word(&format!("{text} é"), |w| unicode.push(w.to_owned()));
            unicode.pop();
            assert_eq!(words(text), unicode, "{text}");
        }
    }

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        assert!(STOP_WORDS.is_sorted());
        for (word, stop) in [("a", true), ("the", true), ("please", true), ("yours", true), ("stock", false)] {
            assert_eq!(is_stop_word(word), stop, "{word}");
        }
    }

    #[test]
    fn settings_switch_stemming_stop_words_and_prefixes() {
        let plain = Tokenizer { stem: false, stop_words: false, prefix: 0 };
        assert_eq!(plain.tokenize("the quotes"), ["the", "quotes"]);
        let prefixed = Tokenizer { prefix: 5, ..Tokenizer::default() };
        assert_eq!(prefixed.tokenize("discoverer"), ["discover", "disco~"]);
        assert!(tokenize("").is_empty() && tokenize(" ,.;").is_empty());
    }
}
