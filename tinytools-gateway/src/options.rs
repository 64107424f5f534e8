//! [`GatewayOptions`]: how the gateway serves, whatever the transport.

use std::sync::Arc;
use std::time::Duration;

use tinytools::ToolRanker;
use tinytools::discovery::ToolDiscoveryPolicy;

use crate::discovery::default_concurrency;
use crate::manifest::ManifestNames;

/// How the gateway serves.
#[derive(Clone)]
#[non_exhaustive]
pub struct GatewayOptions {
    /// How long `tools/list` waits for the servers a cold cache did not know to list their
    /// tools before it answers with what is known (and how many are still starting). Default:
    /// 3 s. `tool_search` and `call_tool` wait for the servers they need regardless, each
    /// bounded by that server's start timeout.
    pub discovery_wait: Duration,
    /// How many of those servers are started at once. Default: two per core, from 2 to 8.
    pub discovery_concurrency: usize,
    /// What `tool_search`'s manifest says when its budget has no room for every tool's name
    /// ([`ManifestNames`]). Default: the count and the server names.
    pub manifest_names: ManifestNames,
    /// The most tools one `tools/list` page holds; longer lists are paged. Default: 100.
    pub page_size: usize,
    /// The manifest's token budget in `tool_search`'s description (estimated tokens).
    /// Default: 450, which keeps the first `tools/list` under 3,000 bytes.
    pub manifest_token_budget: usize,
    /// The opt-in `list_changed` profile ([`crate::promotion`]): tools a search found join
    /// `tools/list` and the client is notified. Default: off, so the surface never changes.
    pub list_changed: bool,
    /// At most this many tools promoted at once under that profile. Default: 32.
    pub promotion_limit: usize,
    /// What ranks the catalogue for `tool_search`. Default: `None`, BM25. An embedding
    /// ranker (the binary's `--embedding-model`) ranks by meaning; a failing or slow one falls
    /// back to BM25 for that search.
    pub ranker: Option<Arc<dyn ToolRanker>>,
    /// How long a search waits for [`ranker`](Self::ranker) before answering with BM25.
    /// Default: 2 s, the runtime's. An embedding ranker embeds every tool on its first search.
    pub ranker_timeout: Duration,
    /// The two-stage search: how many compact candidates (a name and one line each) a
    /// `tool_search` answer offers after its full matches, and in how many bytes
    /// ([`ToolDiscoveryPolicy::with_search_candidates`]). Default `(0, 1_500)`: none, as the
    /// runtime's default.
    pub search_candidates: (usize, usize),
}

impl std::fmt::Debug for GatewayOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayOptions")
            .field("discovery_wait", &self.discovery_wait)
            .field("discovery_concurrency", &self.discovery_concurrency)
            .field("manifest_names", &self.manifest_names)
            .field("page_size", &self.page_size)
            .field("manifest_token_budget", &self.manifest_token_budget)
            .field("list_changed", &self.list_changed)
            .field("promotion_limit", &self.promotion_limit)
            .field("ranker", &self.ranker.as_ref().map(|_| "custom"))
            .field("ranker_timeout", &self.ranker_timeout)
            .finish()
    }
}

impl Default for GatewayOptions {
    fn default() -> Self {
        Self {
            discovery_wait: Duration::from_secs(3),
            discovery_concurrency: default_concurrency(),
            manifest_names: ManifestNames::Count,
            page_size: 100,
            manifest_token_budget: 450,
            list_changed: false,
            promotion_limit: 32,
            ranker: None,
            ranker_timeout: Duration::from_secs(2),
            search_candidates: (0, 1_500),
        }
    }
}

impl GatewayOptions {
    /// Sets [`discovery_wait`](Self::discovery_wait).
    #[must_use]
    pub fn with_discovery_wait(mut self, wait: Duration) -> Self {
        self.discovery_wait = wait;
        self
    }

    /// Sets [`discovery_concurrency`](Self::discovery_concurrency) (at least 1).
    #[must_use]
    pub fn with_discovery_concurrency(mut self, servers: usize) -> Self {
        self.discovery_concurrency = servers.max(1);
        self
    }

    /// Sets [`manifest_names`](Self::manifest_names).
    #[must_use]
    pub fn with_manifest_names(mut self, names: ManifestNames) -> Self {
        self.manifest_names = names;
        self
    }

    /// Sets [`page_size`](Self::page_size) (at least 1).
    #[must_use]
    pub fn with_page_size(mut self, tools: usize) -> Self {
        self.page_size = tools.max(1);
        self
    }

    /// Sets [`list_changed`](Self::list_changed).
    #[must_use]
    pub fn with_list_changed(mut self, on: bool) -> Self {
        self.list_changed = on;
        self
    }

    /// Sets [`promotion_limit`](Self::promotion_limit).
    #[must_use]
    pub fn with_promotion_limit(mut self, limit: usize) -> Self {
        self.promotion_limit = limit;
        self
    }

    /// Sets [`ranker`](Self::ranker) and [`ranker_timeout`](Self::ranker_timeout). The
    /// gateway ranks once over the whole catalogue when every server is listed, so a ranker
    /// that embeds the tools has done so before the first search.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use tinytools::rank::{Bm25Ranker, ToolRanker};
    /// use tinytools_gateway::GatewayOptions;
    ///
    /// let ranker: Arc<dyn ToolRanker> = Arc::new(Bm25Ranker::default());
    /// let options = GatewayOptions::default().with_ranker(ranker, Duration::from_secs(30));
    /// assert!(options.ranker.is_some());
    /// ```
    #[must_use]
    pub fn with_ranker(mut self, ranker: Arc<dyn ToolRanker>, timeout: Duration) -> Self {
        self.ranker = Some(ranker);
        self.ranker_timeout = timeout;
        self
    }

    /// Sets [`search_candidates`](Self::search_candidates): `candidates` compact candidates
    /// within `bytes` in each `tool_search` answer (`0`: none).
    #[must_use]
    pub fn with_search_candidates(mut self, candidates: usize, bytes: usize) -> Self {
        self.search_candidates = (candidates, bytes);
        self
    }

    /// Sets [`manifest_token_budget`](Self::manifest_token_budget).
    #[must_use]
    pub fn with_manifest_token_budget(mut self, budget: usize) -> Self {
        self.manifest_token_budget = budget;
        self
    }
}

/// The discovery policy the gateway's catalogue is built with: the manifest budget and the
/// ranker of `options`.
pub(crate) fn policy(options: &GatewayOptions) -> ToolDiscoveryPolicy {
    let policy = ToolDiscoveryPolicy::default()
        .with_manifest_token_budget(options.manifest_token_budget)
        .with_ranker_timeout(options.ranker_timeout)
        .with_search_candidates(options.search_candidates.0, options.search_candidates.1);
    match &options.ranker {
        Some(ranker) => policy.with_ranker(ranker.clone()),
        None => policy,
    }
}
