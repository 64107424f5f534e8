//! How a run ranks its [`DeferredCatalog`]: the host ranker when there is one, with its
//! timeout, panics and empty answers falling back to BM25 ([`RankOutcome`]).

use std::time::Instant;

use super::policy::{MAX_CANDIDATES, RankMode, ToolDiscoveryPolicy};
use crate::rank::{DeferredCatalog, RankContext, RankRequest, RankedTool};
use crate::unwind::{CatchUnwind, catch_call};

/// What one ranking produced, and how: the material of a `ToolSearched` event.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct RankOutcome {
    /// The matches, best first, every one a tool of the catalogue.
    pub matched: Vec<RankedTool>,
    /// Which ranking answered: `"bm25"` or the host ranker's name.
    pub ranker: String,
    /// The first match's confidence, when the ranker gave one.
    pub top_confidence: Option<f32>,
    /// Why a host ranker was not served, when it was not.
    pub fallback: Option<String>,
    /// In [`RankMode::Compare`], what BM25 would have answered.
    pub shadow_matched: Option<Vec<String>>,
    /// How long the ranking took.
    pub latency_ms: f64,
}

impl DeferredCatalog {
    /// Ranks the catalogue for `query` as `policy` says. Never fails: a host ranker that
    /// errors, panics, times out, or names nothing the catalogue holds falls back to BM25, and
    /// the reason is in [`RankOutcome::fallback`]. Every match is resolved through
    /// [`get`](Self::get), so a name the ranker invented never reaches the model. `limit` is
    /// clamped into `1..=policy.max_limit`.
    pub async fn rank(&self, policy: &ToolDiscoveryPolicy, query: &str, limit: usize) -> RankOutcome {
        self.rank_within(policy, query, limit, policy.max_limit()).await
    }

    /// [`rank`](Self::rank) with room for compact candidates: `limit` is clamped into
    /// `1..=max_limit + MAX_CANDIDATES` instead (a search's full matches and its candidates,
    /// or pre-promotion's hits and the first request's candidates, come from one ranking).
    pub async fn rank_with_candidates(&self, policy: &ToolDiscoveryPolicy, query: &str, limit: usize) -> RankOutcome {
        self.rank_within(policy, query, limit, policy.max_limit() + MAX_CANDIDATES).await
    }

    async fn rank_within(&self, policy: &ToolDiscoveryPolicy, query: &str, limit: usize, cap: usize) -> RankOutcome {
        let started = Instant::now();
        let limit = limit.clamp(1, cap.max(1));
        let host = policy.ranker.as_ref().filter(|_| policy.rank_mode != RankMode::Bm25);
        let Some(ranker) = host else {
            return self.bm25_outcome(query, limit, None, started);
        };
        let context = RankContext::default();
        let request = RankRequest { query, limit, catalog: self, context: &context };
        let name = ranker.name().to_owned();
        // A panic before the future exists is caught like one while it is polled.
        let answer = match catch_call(|| ranker.rank(request)) {
            Ok(future) => tokio::time::timeout(policy.ranker_timeout, CatchUnwind(future)).await,
            Err(panic) => Ok(Err(panic)),
        };
        let hits = match answer {
            Err(_) => Err(format!("ranker `{name}` timed out after {} ms", policy.ranker_timeout.as_millis())),
            Ok(Err(panic)) => Err(format!("ranker `{name}` panicked: {panic}")),
            Ok(Ok(Err(error))) => Err(format!("ranker `{name}`: {}", with_causes(&error))),
            Ok(Ok(Ok(hits))) => self.resolve(&name, hits, limit),
        };
        match hits {
            Err(reason) => {
                tracing::warn!(ranker = %name, %reason, "host ranker not served; BM25 answers");
                self.bm25_outcome(query, limit, Some(reason), started)
            }
            Ok(matched) => {
                let shadow_matched = (policy.rank_mode == RankMode::Compare)
                    .then(|| self.bm25(query, limit).into_iter().map(|hit| hit.name).collect());
                RankOutcome {
                    top_confidence: matched.first().and_then(|hit| hit.confidence),
                    matched,
                    ranker: name,
                    fallback: None,
                    shadow_matched,
                    latency_ms: elapsed_ms(started),
                }
            }
        }
    }

    /// Keeps the hits the catalogue holds, once each, at most `limit`.
    fn resolve(&self, ranker: &str, hits: Vec<RankedTool>, limit: usize) -> Result<Vec<RankedTool>, String> {
        let proposed = hits.len();
        let mut matched: Vec<RankedTool> = Vec::new();
        for hit in hits {
            if self.get(&hit.name).is_some() && !matched.iter().any(|m| m.name == hit.name) {
                let confidence = hit.confidence.filter(|c| c.is_finite()).map(|c| c.clamp(0.0, 1.0));
                matched.push(RankedTool { name: hit.name, confidence });
            }
        }
        matched.truncate(limit);
        match (proposed, matched.is_empty()) {
            (0, _) => Err(format!("ranker `{ranker}` returned nothing")),
            (n, true) => Err(format!("ranker `{ranker}` named {n} tool(s), none of them in the catalogue")),
            _ => Ok(matched),
        }
    }

    fn bm25_outcome(&self, query: &str, limit: usize, fallback: Option<String>, started: Instant) -> RankOutcome {
        let matched = self.bm25(query, limit);
        RankOutcome {
            top_confidence: matched.first().and_then(|hit| hit.confidence),
            matched,
            ranker: "bm25".to_owned(),
            fallback,
            shadow_matched: None,
            latency_ms: elapsed_ms(started),
        }
    }
}

/// An error and its causes, `: `-joined, as the fallback reason the host reads.
fn with_causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(next) = cause {
        text.push_str(": ");
        text.push_str(&next.to_string());
        cause = next.source();
    }
    text
}

fn elapsed_ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1_000.0
}
