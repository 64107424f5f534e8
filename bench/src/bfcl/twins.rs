//! Same-job twins among BFCL's functions, decided from their words alone (no model): which
//! pooled functions the native + twins arm offers beside a query's own ([`most_alike`]), and
//! which of them the twin-tolerant score accepts in the gold function's place ([`TwinRule`]).
//!
//! The rule, stated once ([`TwinRule::twins`]): two functions are twins when
//! 1. their **required parameters** have the same names and the same types (BFCL's type names
//!    mapped to JSON Schema's, `dict` → object, `float` → number, ...), and there is at least
//!    one — so BFCL's checker can judge a call of one against the other's parameters as they
//!    are;
//! 2. their **descriptions' word sets** (lower-cased letters and digits, a short stop list
//!    removed) have a Jaccard similarity of at least [`TwinRule::min_description_similarity`]
//!    ([`DEFAULT_MIN_DESCRIPTION_SIMILARITY`], 0.3, chosen on the dev half's distribution:
//!    `bfcl_twins` prints it); and
//! 3. each function's **name words** (split on `.`, `_`, digits and case; [`GENERIC_NAME_WORDS`]
//!    such as `get` or `calculate` left out) all appear in the other's name or description,
//!    compared on their first five letters (`libraries` ~ `library`): the word that names the
//!    job (`humidity` in `weather_forecast_humidity`, `gcd`) must be shared, which a templated
//!    description alone does not show (`…humidity forecast…` and `…temperature forecast…` share
//!    78 % of their words).

use std::collections::BTreeSet;

use serde_json::Value;
use tinytools_examples::eval::{json_type, safe_name};

use super::data::Function;

/// The twin rule's default description similarity (Jaccard of word sets).
pub const DEFAULT_MIN_DESCRIPTION_SIMILARITY: f64 = 0.3;

/// Words left out of descriptions' word sets.
pub const STOP_WORDS: [&str; 24] = [
    "a", "an", "the", "of", "to", "for", "in", "on", "and", "or", "by", "with", "is", "are", "be", "given", "from",
    "as", "at", "this", "that", "it", "its", "into",
];

/// Name words that say how, not what: left out of rule 3's name words.
pub const GENERIC_NAME_WORDS: [&str; 24] = [
    "get",
    "set",
    "calculate",
    "calc",
    "compute",
    "find",
    "fetch",
    "retrieve",
    "search",
    "math",
    "api",
    "tool",
    "tools",
    "info",
    "data",
    "details",
    "detail",
    "by",
    "list",
    "create",
    "update",
    "delete",
    "current",
    "latest",
];

/// How many leading letters rule 3 compares.
const STEM: usize = 5;

/// A function's words and parameters, computed once.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// Its name on the wire.
    pub wire_name: String,
    /// Its description's words.
    pub description: BTreeSet<String>,
    /// Its name's words.
    pub name: BTreeSet<String>,
    /// Its parameters' names, required or not.
    pub parameters: BTreeSet<String>,
    /// Its required parameters, `(name, JSON Schema type)`, sorted.
    pub required: Vec<(String, String)>,
}

impl Profile {
    /// The profile of `function`.
    pub fn of(function: &Function) -> Self {
        let properties = function.parameters.get("properties").and_then(Value::as_object);
        let parameters = properties.map(|p| p.keys().cloned().collect()).unwrap_or_default();
        let mut required: Vec<(String, String)> = function
            .parameters
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(|name| {
                let declared = properties.and_then(|p| p.get(name)).and_then(|p| p.get("type")).and_then(Value::as_str);
                let ty = declared.map(|t| json_type(t).map_or_else(|| t.to_ascii_lowercase(), str::to_owned));
                (name.to_owned(), ty.unwrap_or_default())
            })
            .collect();
        required.sort();
        required.dedup();
        Self {
            wire_name: safe_name(&function.name),
            description: description_words(&function.description),
            name: name_words(&function.name),
            parameters,
            required,
        }
    }
}

/// A description's words: lower-cased runs of letters and digits, [`STOP_WORDS`] left out.
pub fn description_words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_ascii_lowercase)
        .filter(|word| !STOP_WORDS.contains(&word.as_str()))
        .collect()
}

/// A function name's words: split on everything but letters and digits and before an
/// upper-case letter that follows a lower-case one (`getTopAssists` → get, top, assists).
pub fn name_words(name: &str) -> BTreeSet<String> {
    split_words(name).into_iter().collect()
}

/// `text`'s words in order, lower-cased: split on everything but ASCII letters and digits,
/// and before an upper-case letter that follows a lower-case one (`getTopAssists` → get, top,
/// assists). Shared with LiveMCPBench's step pairing (`livemcp::pairing::words`).
pub fn split_words(text: &str) -> Vec<String> {
    let mut spaced = String::with_capacity(text.len() + 8);
    let mut previous_lower = false;
    for c in text.chars() {
        if c.is_ascii_uppercase() && previous_lower {
            spaced.push(' ');
        }
        previous_lower = c.is_ascii_lowercase();
        spaced.push(c);
    }
    spaced
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_ascii_lowercase)
        .collect()
}

/// Jaccard similarity of two sets (0 when both are empty).
pub fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let shared = a.intersection(b).count();
    let union = a.len() + b.len() - shared;
    if union == 0 { 0.0 } else { shared as f64 / union as f64 }
}

/// The twin rule (see the module's documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwinRule {
    /// Rule 2's least Jaccard similarity of the descriptions' words.
    pub min_description_similarity: f64,
}

impl Default for TwinRule {
    fn default() -> Self {
        Self { min_description_similarity: DEFAULT_MIN_DESCRIPTION_SIMILARITY }
    }
}

impl TwinRule {
    /// Whether `a` and `b` are same-job twins; a function is not its own twin (same wire name).
    pub fn twins(&self, a: &Profile, b: &Profile) -> bool {
        a.wire_name != b.wire_name
            && !a.required.is_empty()
            && a.required == b.required
            && jaccard(&a.description, &b.description) >= self.min_description_similarity
            && names_covered(a, b)
            && names_covered(b, a)
    }
}

/// Rule 3: every non-generic word of `a`'s name is in `b`'s name or description (first
/// [`STEM`] letters).
fn names_covered(a: &Profile, b: &Profile) -> bool {
    let stem = |word: &String| word.chars().take(STEM).collect::<String>();
    let text: BTreeSet<String> = b.name.iter().chain(&b.description).map(stem).collect();
    a.name
        .iter()
        .filter(|word| !GENERIC_NAME_WORDS.contains(&word.as_str()) && !word.chars().all(|c| c.is_ascii_digit()))
        .all(|word| text.contains(&stem(word)))
}

/// How alike two functions are, for the native + twins arm: the mean of the Jaccard
/// similarities of their name-and-description words and of their parameter names.
pub fn likeness(a: &Profile, b: &Profile) -> f64 {
    let words = |p: &Profile| p.name.union(&p.description).cloned().collect::<BTreeSet<_>>();
    0.5 * jaccard(&words(a), &words(b)) + 0.5 * jaccard(&a.parameters, &b.parameters)
}

/// The `k` pooled functions most like any of `offered` (each scored by its best
/// [`likeness`] to one of them), best first, ties in pool order; never one whose wire name is
/// an offered function's. Returns their indices in `pool`.
pub fn most_alike(pool: &[Profile], offered: &[Profile], k: usize) -> Vec<usize> {
    if k == 0 || offered.is_empty() {
        return Vec::new();
    }
    let mut scored: Vec<(usize, f64)> = pool
        .iter()
        .enumerate()
        .filter(|(_, p)| offered.iter().all(|o| o.wire_name != p.wire_name))
        .map(|(i, p)| (i, offered.iter().map(|o| likeness(o, p)).fold(0.0, f64::max)))
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.into_iter().take(k).map(|(i, _)| i).collect()
}

/// `calls` (`[{name: arguments}]`, as BFCL's checker reads them) with every call of a gold
/// function's twin renamed to that gold function, for the twin-tolerant score: `None` when no
/// call names a twin (the score is then BFCL's own). A call of a gold function itself, or of
/// a function `profile_of` does not know, is kept as it is.
pub fn as_gold<'a>(
    calls: &[Value],
    gold: &[Profile],
    profile_of: impl Fn(&str) -> Option<&'a Profile>,
    rule: TwinRule,
) -> Option<Vec<Value>> {
    let mut renamed = false;
    let out = calls
        .iter()
        .map(|call| {
            let Some((name, arguments)) = call.as_object().filter(|c| c.len() == 1).and_then(|c| c.iter().next())
            else {
                return call.clone();
            };
            if gold.iter().any(|g| &g.wire_name == name) {
                return call.clone();
            }
            let twin_of = profile_of(name).and_then(|called| gold.iter().find(|g| rule.twins(g, called)));
            match twin_of {
                Some(gold) => {
                    renamed = true;
                    serde_json::json!({ gold.wire_name.clone(): arguments })
                }
                None => call.clone(),
            }
        })
        .collect();
    renamed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn function(name: &str, description: &str, parameters: Value) -> Profile {
        Profile::of(&Function { name: name.into(), description: description.into(), parameters })
    }

    fn two_integers() -> Value {
        json!({"type": "dict", "properties": {"num1": {"type": "integer"}, "num2": {"type": "integer"}},
            "required": ["num1", "num2"]})
    }

    fn location_days() -> Value {
        json!({"type": "dict", "properties": {"location": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["location", "days"]})
    }

    #[test]
    fn same_job_functions_are_twins() {
        let rule = TwinRule::default();
        let gcd = function("math.gcd", "Compute the greatest common divisor of two numbers", two_integers());
        let twin = function(
            "calculate_gcd",
            "Calculate the greatest common divisor (gcd) between two integers.",
            two_integers(),
        );
        assert!(rule.twins(&gcd, &twin) && rule.twins(&twin, &gcd));
        assert!(!rule.twins(&gcd, &gcd), "a function is not its own twin");
    }

    #[test]
    fn a_different_job_is_refused() {
        let rule = TwinRule::default();
        let gcd = function(
            "calculate_gcd",
            "Calculate the greatest common divisor (gcd) between two integers.",
            two_integers(),
        );
        let lcm = function(
            "calculate_lcm",
            "Calculate the least common multiple (lcm) between two integers.",
            two_integers(),
        );
        assert!(!rule.twins(&gcd, &lcm), "names differ in the word that names the job");
        // A templated description: 78 % of the words shared, the job word not.
        let humidity = function(
            "weather_forecast_humidity",
            "Retrieve a humidity forecast for a specific location for a certain number of days.",
            location_days(),
        );
        let temperature = function(
            "weather_forecast_temperature",
            "Retrieve a temperature forecast for a specific location for a certain number of days.",
            location_days(),
        );
        assert!(jaccard(&humidity.description, &temperature.description) > 0.7);
        assert!(!rule.twins(&humidity, &temperature));
        // The same job with other required parameters: the checker could not judge it.
        let other_params = function(
            "gcd",
            "Calculate the greatest common divisor of two integers.",
            json!({
            "type": "dict", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}),
        );
        assert!(!rule.twins(&gcd, &other_params));
        let stricter = TwinRule { min_description_similarity: 0.9 };
        let twin = function("gcd", "Calculate the greatest common divisor of two integers.", two_integers());
        assert!(rule.twins(&gcd, &twin) && !stricter.twins(&gcd, &twin));
    }

    #[test]
    fn words_are_split_and_stopped() {
        assert_eq!(
            name_words("CustomDashboardsApi.get_top2"),
            ["api", "custom", "dashboards", "get", "top2"].map(String::from).into()
        );
        assert_eq!(description_words("The area of a Circle."), ["area", "circle"].map(String::from).into());
    }

    #[test]
    fn the_most_alike_come_first_and_never_the_offered() {
        let offered = [function("math.gcd", "Greatest common divisor of two numbers", two_integers())];
        let pool = [
            function("math.gcd", "pooled copy", two_integers()),
            function("weather", "Forecast for a place", location_days()),
            function("gcd", "Greatest common divisor of two integers", two_integers()),
            function("lcm", "Least common multiple of two integers", two_integers()),
        ];
        assert_eq!(most_alike(&pool, &offered, 2), [2, 3]);
        assert_eq!(most_alike(&pool, &offered, 9), [2, 3, 1]);
        assert!(most_alike(&pool, &offered, 0).is_empty());
    }

    #[test]
    fn a_twin_s_call_is_scored_as_the_gold_function_s() {
        let gold = [function("math.gcd", "Compute the greatest common divisor of two numbers", two_integers())];
        let pool = [
            function(
                "calculate_gcd",
                "Calculate the greatest common divisor (gcd) between two integers.",
                two_integers(),
            ),
            function(
                "calculate_lcm",
                "Calculate the least common multiple (lcm) between two integers.",
                two_integers(),
            ),
        ];
        let profile_of = |name: &str| pool.iter().find(|p| p.wire_name == name);
        let rule = TwinRule::default();
        let twin_call = [json!({"calculate_gcd": {"num1": 4, "num2": 6}})];
        assert_eq!(
            as_gold(&twin_call, &gold, profile_of, rule),
            Some(vec![json!({"math_gcd": {"num1": 4, "num2": 6}})])
        );
        let other_job = [json!({"calculate_lcm": {"num1": 4, "num2": 6}})];
        assert_eq!(as_gold(&other_job, &gold, profile_of, rule), None);
        let gold_call = [json!({"math_gcd": {"num1": 4, "num2": 6}})];
        assert_eq!(as_gold(&gold_call, &gold, profile_of, rule), None);
    }
}
