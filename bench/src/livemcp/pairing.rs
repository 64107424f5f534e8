//! Whether an aligned step's annotated tool is the tool its text describes, decided from words
//! alone (no model, no ranker).
//!
//! LiveMCPBench's annotations list a task's steps and its tools separately; where there are as
//! many of each, step *i* is paired with tool *i* ("aligned"). Some pairs are off: the steps
//! in one order and the tools in another, or a "write the report" step paired with the chain's
//! last fetching tool. The rule ([`pairing`]):
//! - a step's **words** are its lower-cased runs of letters and digits (split before an
//!   upper-case letter that follows a lower-case one), at least three letters long, less
//!   [`STOP_WORDS`]; two words match when one begins with the other (`cap` ~ `capitalization`);
//! - **described**: the paired tool's name or description shares a word with the step;
//! - **mis-paired**: it shares none, and the name of another tool of the same chain does (the
//!   step names another link of its chain: "get market capitalization" paired with
//!   `calculate` in a chain that has `get_stock_market_cap`);
//! - **unrelated**: neither (often a step no tool of the chain does, "write a report", or words
//!   the tool's text lacks, "get picture" for a canvas tool): not called mis-paired, listed
//!   apart.

use std::collections::BTreeSet;

/// Words a step shares with every tool without saying which.
pub const STOP_WORDS: [&str; 12] =
    ["the", "and", "for", "with", "from", "this", "that", "its", "into", "get", "use", "using"];

/// How an aligned step relates to its annotated tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pairing {
    /// The tool's name or description shares a word with the step.
    Described,
    /// It shares none; another tool of the chain's name does.
    MisPaired,
    /// Neither the tool nor another of the chain's names shares a word with the step.
    Unrelated,
}

/// The words of `text` the rule compares (see the module's documentation).
pub fn words(text: &str) -> BTreeSet<String> {
    crate::bfcl::twins::split_words(text)
        .into_iter()
        .filter(|word| word.len() >= 3 && !STOP_WORDS.contains(&word.as_str()))
        .collect()
}

/// Whether any word of `a` matches one of `b` (one begins with the other).
fn share(a: &BTreeSet<String>, b: &BTreeSet<String>) -> bool {
    a.iter().any(|x| b.iter().any(|y| x.starts_with(y.as_str()) || y.starts_with(x.as_str())))
}

/// How `step` relates to its paired tool (`tool_name`, `tool_description`), given the other
/// tools of its chain (`chain`, names; the paired tool's own name among them is ignored).
pub fn pairing<'a>(
    step: &str,
    tool_name: &str,
    tool_description: &str,
    chain: impl IntoIterator<Item = &'a str>,
) -> Pairing {
    let step = words(step);
    let own: BTreeSet<String> = words(tool_name).union(&words(tool_description)).cloned().collect();
    if share(&step, &own) {
        return Pairing::Described;
    }
    if chain.into_iter().filter(|name| *name != tool_name).any(|name| share(&step, &words(name))) {
        Pairing::MisPaired
    } else {
        Pairing::Unrelated
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CHAIN: [&str; 3] = ["get_stock_ohlcv", "get_stock_market_cap", "calculate"];

    #[test]
    fn a_step_naming_another_link_is_mis_paired() {
        let calculate = "Evaluate an arithmetic expression.";
        assert_eq!(pairing("get market capitalization", "calculate", calculate, CHAIN), Pairing::MisPaired);
        assert_eq!(
            pairing("Fetch the market capitalization", "get_stock_market_cap", "Market value of a company.", CHAIN),
            Pairing::Described
        );
    }

    #[test]
    fn a_step_sharing_no_word_with_the_chain_is_unrelated() {
        assert_eq!(
            pairing("write a report", "calculate", "Evaluate an arithmetic expression.", CHAIN),
            Pairing::Unrelated
        );
        // Its own name does not make a step mis-paired.
        assert_eq!(pairing("stock prices", "get_stock_ohlcv", "", ["get_stock_ohlcv"]), Pairing::Described);
    }

    #[test]
    fn words_split_on_case_and_drop_short_and_stop_words() {
        let expected: BTreeSet<String> = ["canvas", "drawing", "png"].map(String::from).into();
        assert_eq!(words("drawing_getCanvasPng of it"), expected);
    }
}
