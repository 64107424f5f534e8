//! The run's own model writing search keywords for a user message before query-aware
//! discovery ranks it ([`PrePromotion::model_keywords`](crate::discovery::PrePromotion::model_keywords)):
//! one short request of the run, within its usage limits, through the middleware's
//! `before_send`, racing cancellation; under
//! [`PrePromotion::model_keywords_below`](crate::discovery::PrePromotion::model_keywords_below)
//! only for a message whose own ranking is not confident.

use tracing::Instrument;

use super::events::RunEvent;
use super::spans::Chat;
use super::state::Run;
use crate::discovery::RankOutcome;
use crate::rank::keywords::{keyword_line, keyword_request, with_keywords};

impl Run<'_> {
    /// The ranking pre-promotion chooses from for `query`, and the text it ranked: the query
    /// with the model's keywords, or the query alone when keywords are off or, under a gate,
    /// when the query alone ranks a hit at or above the gate's confidence (then no keyword
    /// request is made).
    pub(super) async fn pre_promotion_ranking(&mut self, query: String, wanted: usize) -> (String, RankOutcome) {
        let pre = self.policy().discovery.pre_promotion;
        let mut plain = None;
        if let (true, Some(gate)) = (pre.model_keywords, pre.model_keywords_below) {
            let outcome = self.bridge.catalog().rank_with_candidates(self.bridge.policy(), &query, wanted).await;
            if outcome.top_confidence.is_some_and(|confidence| confidence >= gate) {
                tracing::debug!(target: "tinytools::run", gate, "no search keywords: the message alone ranks a confident hit");
                return (query, outcome);
            }
            plain = Some(outcome);
        }
        let expanded = self.with_model_keywords(&query).await;
        // No keywords came back: the message's own ranking, when the gate made it, is the answer.
        if let Some(outcome) = plain.filter(|_| expanded == query) {
            return (query, outcome);
        }
        let outcome = self.bridge.catalog().rank_with_candidates(self.bridge.policy(), &expanded, wanted).await;
        (expanded, outcome)
    }

    /// What pre-promotion ranks for `query`: the query, then the keywords the run's model
    /// wrote for it. The query as it is when keywords are off, when the request limit leaves
    /// no room for the keyword request and an answer, when the run is cancelled, or when the
    /// model fails or writes none. The request is counted in the run's `spent`.
    pub(super) async fn with_model_keywords(&mut self, query: &str) -> String {
        let policy = self.setup.policy;
        if !policy.discovery.pre_promotion.model_keywords {
            return query.to_owned();
        }
        // The conversation's own request must still fit after this one.
        if policy.usage_limits.before_request(self.spent.requests.saturating_add(1)).is_err() {
            tracing::debug!(target: "tinytools::run", "no search keywords: the request limit leaves no room");
            return query.to_owned();
        }
        let mut request = keyword_request(query);
        request.max_response_bytes = Some(policy.caps.max_response_bytes);
        for middleware in self.setup.middleware {
            middleware.before_send(&mut request.messages, &request.tools).await;
        }
        self.spent.requests += 1;
        let chat = Chat::start(self.setup.model, &request, false, policy.capture);
        let asking = self.setup.model.complete(&request).instrument(chat.span.clone());
        let Some(outcome) = self.cancel.run_until_cancelled(asking).await else {
            chat.cancelled();
            return query.to_owned();
        };
        match &outcome {
            Ok(response) => chat.answered(response),
            Err(error) => chat.failed(error),
        }
        let (keywords, usage, error) = match outcome {
            Ok(response) => (keyword_line(&response.content), response.usage, None),
            Err(error) => {
                tracing::warn!(target: "tinytools::run", %error, "the search-keyword request failed; the message is ranked as it is");
                (String::new(), None, Some(error.to_string()))
            }
        };
        if let Some(reported) = usage {
            self.spent.usage += reported;
        }
        let shown = Some(keywords.clone()).filter(|_| policy.capture.tool_io);
        self.emit(RunEvent::KeywordsWritten { keywords: shown, usage, error });
        with_keywords(query, &keywords)
    }
}
