//! Cold start: the servers whose tools the cache does not know are started in the background
//! to list them, at most `concurrency` at a time, so the first ones are done early instead
//! of every process competing for the cores at once. A request that needs a server still
//! waiting for its turn moves it ahead ([`Discovery::urge`]) and waits for it, bounded by its
//! start timeout ([`Discovery::wait_for_server`]).
//!
//! A server leaves the pending set once it has listed its tools or failed to (the failure is
//! kept by its [`Downstream`]); each change bumps the
//! supervisor's generation, so the catalogue, the manifest and its "still starting" line are
//! rebuilt. Discovery is done when the set is empty.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{Notify, Semaphore, watch};

use crate::supervisor::{Downstream, Supervisor};

/// What [`Discovery::search_bound`] allows a server's first `tools/list` past its start.
pub const LISTING_ALLOWANCE: Duration = Duration::from_secs(5);

/// The default number of servers started at once: two per core, from 2 to 8.
pub fn default_concurrency() -> usize {
    let cores = std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get);
    (cores * 2).clamp(2, 8)
}

/// The background listing of the servers a gateway's cache did not know.
#[derive(Debug)]
pub struct Discovery {
    supervisor: Arc<Supervisor>,
    pending: watch::Sender<BTreeSet<String>>,
    urgent: BTreeMap<String, Arc<Notify>>,
}

impl Discovery {
    /// Starts listing, in the background, every server of `supervisor` without a manifest,
    /// `concurrency` (at least 1) at a time. Must be called within a Tokio runtime. A second
    /// discovery over the same supervisor starts nothing and is done at once.
    pub fn start(supervisor: Arc<Supervisor>, concurrency: usize) -> Arc<Self> {
        let unknown: Vec<Arc<Downstream>> = if supervisor.claim_discovery() {
            supervisor.servers().filter(|server| server.manifest().is_none()).cloned().collect()
        } else {
            Vec::new()
        };
        let names: BTreeSet<String> = unknown.iter().map(|server| server.config().name.clone()).collect();
        let urgent = names.iter().map(|name| (name.clone(), Arc::new(Notify::new()))).collect();
        let discovery = Arc::new(Self { supervisor, pending: watch::channel(names).0, urgent });
        let permits = Arc::new(Semaphore::new(concurrency.max(1)));
        for server in unknown {
            tokio::spawn(Arc::clone(&discovery).list(server, Arc::clone(&permits)));
        }
        discovery
    }

    /// Lists one server once a permit is free (or at once when urged), then takes it off the
    /// pending set. A failure is recorded and logged by the server itself.
    async fn list(self: Arc<Self>, server: Arc<Downstream>, permits: Arc<Semaphore>) {
        let name = server.config().name.clone();
        let permit = match self.urgent.get(&name) {
            Some(urgent) => tokio::select! {
                biased;
                () = urgent.notified() => None,
                permit = permits.acquire_owned() => permit.ok(),
            },
            None => permits.acquire_owned().await.ok(),
        };
        let began = Instant::now();
        if let Ok(manifest) = server.refresh_manifest().await {
            let ms = began.elapsed().as_millis();
            tracing::info!(server = %name, tools = manifest.tools.len(), ms, "listed the server's tools");
        }
        drop(permit);
        self.pending.send_modify(|pending| {
            pending.remove(&name);
        });
        self.supervisor.touch();
    }

    /// The servers still starting or listing, by name.
    pub fn pending(&self) -> BTreeSet<String> {
        self.pending.borrow().clone()
    }

    /// Whether `server` is still starting or listing.
    pub fn is_pending(&self, server: &str) -> bool {
        self.pending.borrow().contains(server)
    }

    /// Whether every server has listed its tools or failed to.
    pub fn is_done(&self) -> bool {
        self.pending.borrow().is_empty()
    }

    /// Starts `server` now if it is still waiting for its turn.
    pub fn urge(&self, server: &str) {
        if let Some(urgent) = self.urgent.get(server) {
            urgent.notify_one();
        }
    }

    /// How long a request may wait for `server`: its start timeout, then its listing's (the
    /// call timeout). Zero for a server that is not pending.
    pub fn bound(&self, server: &str) -> Duration {
        match self.supervisor.server(server) {
            Some(downstream) if self.is_pending(server) => {
                let policy = &downstream.config().policy;
                policy.start_timeout + policy.call_timeout
            }
            _ => Duration::ZERO,
        }
    }

    /// How long a search (or a call of a name no server prefix claims) may wait for the
    /// pending servers: the longest start timeout among them, and [`LISTING_ALLOWANCE`] for
    /// the listing after it.
    pub fn search_bound(&self) -> Duration {
        let pending = self.pending();
        let longest = pending
            .iter()
            .filter_map(|server| self.supervisor.server(server))
            .map(|server| server.config().policy.start_timeout)
            .max();
        longest.map_or(Duration::ZERO, |start| start + LISTING_ALLOWANCE)
    }

    /// Urges `server` and waits until it is no longer pending, or `at_most`. True when it is
    /// done (listed or failed).
    pub async fn wait_for_server(&self, server: &str, at_most: Duration) -> bool {
        self.urge(server);
        let mut pending = self.pending.subscribe();
        let done = pending.wait_for(|pending| !pending.contains(server));
        tokio::time::timeout(at_most, done).await.is_ok_and(|done| done.is_ok())
    }

    /// Waits until discovery is done, or `at_most`. True when it is done.
    pub async fn wait(&self, at_most: Duration) -> bool {
        tokio::time::timeout(at_most, self.wait_all()).await.is_ok()
    }

    /// Waits until discovery is done.
    pub async fn wait_all(&self) {
        let mut pending = self.pending.subscribe();
        let _ = pending.wait_for(BTreeSet::is_empty).await;
    }
}

/// The most servers a query's words start ahead of their turn: enough for one of them to
/// answer soon, few enough that they do not all compete for the cores.
pub const MAX_NAMED: usize = 2;

/// Words of a server's name that say nothing about what it does.
const GENERIC: [&str; 6] = ["mcp", "server", "servers", "tool", "tools", "api"];

/// The pending servers a query names, at most [`MAX_NAMED`], in config order: those with a
/// word of their name among the query's (`github` in "open github issues", `mcp-server-time`
/// or `time2` in "what time is it in Tokyo"). A name's words are split at anything but
/// letters and digits and between letters and digits; numbers, words under three letters and
/// generic ones (mcp, server, tool, api) are left out, and a plural matches its singular.
pub fn named_in(query: &str, servers: &BTreeSet<String>) -> Vec<String> {
    let asked: BTreeSet<String> = words(query).collect();
    servers
        .iter()
        .filter(|server| {
            words(server)
                .filter(|word| word.len() >= 3 && !word.chars().all(|c| c.is_ascii_digit()))
                .filter(|word| !GENERIC.contains(&word.as_str()))
                .any(|word| asked.contains(&word) || asked.contains(&format!("{word}s")) || singular(&word, &asked))
        })
        .take(MAX_NAMED)
        .cloned()
        .collect()
}

/// Whether `word` is a plural whose singular was asked for (`issues` for `issue`).
fn singular(word: &str, asked: &BTreeSet<String>) -> bool {
    word.strip_suffix('s').is_some_and(|stem| asked.contains(stem))
}

/// Lower-cased words, split at anything but letters and digits and between letters and digits.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    let mut words = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        let boundary = current.chars().last().is_some_and(|last| last.is_ascii_digit() != c.is_ascii_digit());
        if (!c.is_alphanumeric() || boundary) && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        if c.is_alphanumeric() {
            current.extend(c.to_lowercase());
        }
    }
    if !current.is_empty() {
        words.push(current);
    }
    words.into_iter()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_names_servers_by_their_telling_words() {
        let servers: BTreeSet<String> =
            ["brave-search", "github", "mcp-server-time", "server07", "time01", "time03", "time05"]
                .map(String::from)
                .into();
        assert_eq!(named_in("open GitHub issues", &servers), ["github"]);
        assert_eq!(named_in("brave search the web", &servers), ["brave-search"]);
        assert_eq!(named_in("current time in a timezone", &servers), ["mcp-server-time", "time01"], "at most two");
        assert!(named_in("restart the mcp server 07", &servers).is_empty(), "generic words and numbers name nothing");
        let plural: BTreeSet<String> = ["issues", "note"].map(String::from).into();
        assert_eq!(named_in("create an issue", &plural), ["issues"]);
        assert_eq!(named_in("read my notes", &plural), ["note"]);
    }

    #[test]
    fn concurrency_defaults_to_two_per_core_within_bounds() {
        assert!((2..=8).contains(&default_concurrency()));
    }
}
