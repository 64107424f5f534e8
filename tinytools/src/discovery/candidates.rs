//! Compact candidates: deferred tools offered by name and one line, without their schemas —
//! the second stage of a search answer, and the first request's likely tools when the
//! manifest could not afford every tool's line. The model calls a candidate by its own name;
//! admission checks the arguments against its schema, and a refused call promotes it typed.
//! The bridge picks them (`DiscoveryBridge::search_candidates`, `first_request_candidates`).

use serde::Serialize;

use super::DeferredCatalog;
use super::manifest::first_sentence;
use crate::rank::RankedTool;

/// A deferred tool offered compactly: its name and the first sentence of its description
/// (at most [`SUMMARY_CHARS`](super::SUMMARY_CHARS) characters, the manifest's line).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Candidate {
    /// The tool's own name: what the model calls it by.
    pub name: String,
    /// The first sentence of its description (empty when it has none).
    pub line: String,
}

impl Candidate {
    /// The candidate as a manifest line: `- name: line`, or `- name` without a line.
    pub fn manifest_line(&self) -> String {
        if self.line.is_empty() { format!("- {}", self.name) } else { format!("- {}: {}", self.name, self.line) }
    }

    /// What it costs against a candidate byte budget: its manifest line and a line break.
    pub fn bytes(&self) -> usize {
        self.manifest_line().len() + 1
    }
}

/// What the first request says before its candidate lines.
pub(super) const LIKELY_HEADER: &str =
    "Likely tools for this request (call one by its own name; its arguments load on the first call):";

/// The compact candidates among `hits`, in rank order: tools of the catalogue that `skip`
/// does not name (the full matches or promoted tools beside them), once each, at most
/// `limit` (clamped to [`MAX_CANDIDATES`](super::MAX_CANDIDATES)), while their lines fit
/// `bytes` ([`Candidate::bytes`]; a line that does not fit is passed over for a shorter
/// one after it).
pub(super) fn compact(
    catalog: &DeferredCatalog,
    hits: &[RankedTool],
    limit: usize,
    bytes: usize,
    skip: impl Fn(&str) -> bool,
) -> Vec<Candidate> {
    let limit = limit.min(super::MAX_CANDIDATES);
    let (mut chosen, mut spent): (Vec<Candidate>, usize) = (Vec::new(), 0);
    for hit in hits {
        if chosen.len() == limit {
            break;
        }
        if skip(&hit.name) || chosen.iter().any(|c| c.name == hit.name) {
            continue;
        }
        let Some(tool) = catalog.get(&hit.name) else { continue };
        let candidate =
            Candidate { name: tool.schema().name.clone(), line: first_sentence(&tool.schema().description) };
        let price = candidate.bytes();
        if spent.saturating_add(price) > bytes {
            continue;
        }
        spent += price;
        chosen.push(candidate);
    }
    chosen
}
