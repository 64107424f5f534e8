//! The BFCL queries a run takes: the dev half's tool categories from a query file, the
//! irrelevance categories from the installed wheel, and the seeded, stratified sample.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tinytools_examples::eval::{self, EvalTool};

/// The tool categories the arm scores with BFCL's AST checker (the query file's others, Java
/// and JavaScript, and `live_parallel_multiple`, are left out).
pub const TOOL_CATEGORIES: [&str; 7] =
    ["simple_python", "multiple", "parallel", "parallel_multiple", "live_simple", "live_multiple", "live_parallel"];

/// The categories where the right answer is no call, read from the wheel.
pub const IRRELEVANCE_CATEGORIES: [&str; 2] = ["irrelevance", "live_irrelevance"];

/// One query of a query file (`../shared/eval/bfcl/queries.jsonl`'s format).
#[derive(Clone, Debug, Deserialize)]
pub struct QueryRow {
    /// BFCL's id.
    pub qid: String,
    /// BFCL's category.
    pub category: String,
    /// The user's words.
    pub query: String,
    /// Ids (in the tools file) of the functions the answer calls.
    #[serde(default)]
    pub gold: Vec<String>,
    /// Ids of the functions BFCL offered with it.
    #[serde(default)]
    pub candidates: Vec<String>,
}

/// A function as BFCL defines it: a name, a description, BFCL-typed parameters.
#[derive(Clone, Debug, Deserialize)]
pub struct Function {
    /// Its name (not unique across BFCL).
    pub name: String,
    /// Its description.
    #[serde(default)]
    pub description: String,
    /// Its parameters, in BFCL's JSON-Schema dialect.
    #[serde(default)]
    pub parameters: Value,
}

/// One query ready to run: its words, the functions BFCL offered with it, the names of the
/// functions a right answer calls (empty for irrelevance).
#[derive(Clone, Debug)]
pub struct Query {
    /// BFCL's id.
    pub qid: String,
    /// BFCL's category.
    pub category: String,
    /// The user's words.
    pub text: String,
    /// The functions BFCL offered.
    pub offered: Vec<Function>,
    /// The names a right answer calls.
    pub gold_names: Vec<String>,
}

impl Query {
    /// Whether the right answer is to call nothing.
    pub fn is_irrelevance(&self) -> bool {
        self.category.contains("irrelevance")
    }
}

/// Everything a BFCL run reads: the pooled functions and the queries.
#[derive(Debug)]
pub struct Dataset {
    /// One definition per distinct name, in file order (the first of each name).
    pub pool: Vec<Function>,
    /// The queries, in file order: tool categories first, then irrelevance.
    pub queries: Vec<Query>,
}

/// Whether a query id is in the dev half: its sha256 hex digest starts with 0–7.
pub fn in_dev_half(qid: &str) -> bool {
    let digest = Sha256::digest(qid.as_bytes());
    digest[0] >> 4 < 8
}

/// Reads the query file's rows of the tool categories, the tools file, and the wheel's
/// irrelevance queries of the dev half (from `wheel_data`, the wheel's `bfcl_eval/data`).
///
/// # Errors
/// A file that cannot be read or parsed, or a query naming a function the tools file lacks.
pub fn load(queries: &Path, tools: &Path, wheel_data: Option<&Path>) -> Result<Dataset, String> {
    let rows: Vec<QueryRow> = eval::read_jsonl(queries)?;
    let tools: Vec<EvalTool> = eval::read_jsonl(tools)?;
    let by_id: HashMap<&str, &EvalTool> = tools.iter().map(|tool| (tool.id.as_str(), tool)).collect();
    let function = |id: &str| -> Result<Function, String> {
        let tool =
            by_id.get(id).ok_or_else(|| format!("query file names function id `{id}`, not in the tools file"))?;
        Ok(Function {
            name: tool.name.clone(),
            description: tool.description.clone(),
            parameters: tool.parameters.clone(),
        })
    };
    let mut out = Vec::new();
    for row in rows.iter().filter(|row| TOOL_CATEGORIES.contains(&row.category.as_str())) {
        let offered = row.candidates.iter().map(|id| function(id)).collect::<Result<Vec<_>, _>>()?;
        let gold_names = row.gold.iter().map(|id| function(id).map(|f| f.name)).collect::<Result<Vec<_>, _>>()?;
        out.push(Query {
            qid: row.qid.clone(),
            category: row.category.clone(),
            text: row.query.clone(),
            offered,
            gold_names,
        });
    }
    if let Some(dir) = wheel_data {
        for category in IRRELEVANCE_CATEGORIES {
            out.extend(irrelevance(dir, category)?);
        }
    }
    let mut seen = std::collections::HashSet::new();
    let pool = tools
        .iter()
        .filter(|tool| seen.insert(tool.name.clone()))
        .map(|tool| Function {
            name: tool.name.clone(),
            description: tool.description.clone(),
            parameters: tool.parameters.clone(),
        })
        .collect();
    Ok(Dataset { pool, queries: out })
}

#[derive(Deserialize)]
struct WheelEntry {
    id: String,
    question: Vec<Vec<WheelTurn>>,
    function: Vec<Function>,
}

#[derive(Deserialize)]
struct WheelTurn {
    role: String,
    content: String,
}

/// The dev half of one irrelevance category, from the wheel's `BFCL_v4_{category}.json`.
fn irrelevance(dir: &Path, category: &str) -> Result<Vec<Query>, String> {
    let entries: Vec<WheelEntry> = eval::read_jsonl(&dir.join(format!("BFCL_v4_{category}.json")))?;
    Ok(entries
        .into_iter()
        .filter(|entry| in_dev_half(&entry.id))
        .filter_map(|entry| {
            // The first turn's user words; BFCL's few system turns are left out, as the query
            // file leaves them out of the tool categories.
            let turn = entry.question.into_iter().next()?;
            let text = turn.into_iter().filter(|t| t.role == "user").map(|t| t.content).collect::<Vec<_>>().join("\n");
            Some(Query {
                qid: entry.id,
                category: category.to_owned(),
                text,
                offered: entry.function,
                gold_names: Vec::new(),
            })
        })
        .collect())
}

/// A seeded sample of `limit` queries, stratified by category: each category gets its share
/// of `limit` by size (largest remainders, at least one while `limit` allows), and within a
/// category the queries whose seeded hash is smallest. The same seed always draws the same
/// queries, and a category's larger share is a superset of its smaller one.
pub fn sample(queries: &[Query], limit: usize, seed: u64) -> Vec<Query> {
    if limit >= queries.len() {
        return queries.to_vec();
    }
    let mut by_category: BTreeMap<&str, Vec<&Query>> = BTreeMap::new();
    for query in queries {
        by_category.entry(query.category.as_str()).or_default().push(query);
    }
    let shares = shares(&by_category.values().map(Vec::len).collect::<Vec<_>>(), limit);
    let mut out = Vec::new();
    for ((_, mut members), share) in by_category.into_iter().zip(shares) {
        members.sort_by_key(|query| seeded_hash(seed, &query.qid));
        out.extend(members.into_iter().take(share).cloned());
    }
    out
}

/// `limit` split over groups of these sizes by largest remainder, every group at least one
/// while there is one to give.
fn shares(sizes: &[usize], limit: usize) -> Vec<usize> {
    let total: usize = sizes.iter().sum();
    let mut shares: Vec<usize> = sizes.iter().map(|&size| (size * limit / total.max(1)).max(1).min(size)).collect();
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse((sizes[i] * limit) % total.max(1)));
    let mut given: usize = shares.iter().sum();
    for &i in order.iter().cycle().take(order.len() * 4) {
        if given >= limit {
            break;
        }
        if shares[i] < sizes[i] {
            shares[i] += 1;
            given += 1;
        }
    }
    while given > limit {
        let Some(i) = (0..shares.len()).max_by_key(|&i| shares[i]) else { break };
        shares[i] -= 1;
        given -= 1;
    }
    shares
}

fn seeded_hash(seed: u64, qid: &str) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(seed.to_le_bytes());
    hasher.update(qid.as_bytes());
    hasher.finalize().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(qid: &str, category: &str) -> Query {
        Query { qid: qid.into(), category: category.into(), text: String::new(), offered: vec![], gold_names: vec![] }
    }

    #[test]
    fn the_dev_half_is_the_digest_rule() {
        // Their digests start c8, 44, da, 45, 28 (Python's hashlib).
        let ids = ["irrelevance_0", "irrelevance_1", "irrelevance_2", "live_irrelevance_0-0-0", "simple_python_0"];
        assert_eq!(ids.map(in_dev_half), [false, true, false, true, true]);
        let halves: usize = (0..1000).filter(|i| in_dev_half(&format!("q{i}"))).count();
        assert!((400..600).contains(&halves), "{halves}");
    }

    #[test]
    fn a_sample_is_stratified_seeded_and_nested() {
        let queries: Vec<Query> = (0..90)
            .map(|i| query(&format!("a{i}"), "a"))
            .chain((0..9).map(|i| query(&format!("b{i}"), "b")))
            .chain([query("c0", "c")])
            .collect();
        let ten = sample(&queries, 10, 7);
        let count = |s: &[Query], c: &str| s.iter().filter(|q| q.category == c).count();
        assert_eq!((count(&ten, "a"), count(&ten, "b"), count(&ten, "c")), (8, 1, 1));
        let ids = |s: &[Query]| s.iter().map(|q| q.qid.clone()).collect::<Vec<_>>();
        assert_eq!(ids(&ten), ids(&sample(&queries, 10, 7)));
        assert_ne!(ids(&ten), ids(&sample(&queries, 10, 8)));
        let twenty = sample(&queries, 20, 7);
        assert_eq!(twenty.len(), 20);
        assert!(ids(&ten).iter().all(|id| ids(&twenty).contains(id)));
        assert_eq!(sample(&queries, 500, 1).len(), 100);
    }
}
