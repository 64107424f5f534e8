//! Several model servers behind one benchmark run. Each query run leases the least busy
//! server and keeps it for all its turns, so the turns of one run share that server's prompt
//! cache; a machine with one core per server then runs one server per core.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tinytools::model::ChatModel;

/// The model servers a benchmark spreads its query runs over.
pub struct Servers {
    servers: Vec<(Arc<dyn ChatModel>, AtomicUsize)>,
}

impl Servers {
    /// Query runs spread over `models`, one per server.
    ///
    /// # Errors
    /// When `models` is empty.
    pub fn new(models: Vec<Arc<dyn ChatModel>>) -> Result<Self, String> {
        if models.is_empty() {
            return Err("no model server: give at least one base URL".to_owned());
        }
        Ok(Self { servers: models.into_iter().map(|model| (model, AtomicUsize::new(0))).collect() })
    }

    /// Every query run on `model`.
    pub fn one(model: Arc<dyn ChatModel>) -> Self {
        Self { servers: vec![(model, AtomicUsize::new(0))] }
    }

    /// How many servers there are.
    pub fn len(&self) -> usize {
        self.servers.len()
    }

    /// Whether there are none (never: [`new`](Self::new) refuses an empty list).
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    /// The server with the fewest runs in flight (the first of equals), held until the lease
    /// is dropped.
    pub fn lease(&self) -> Lease<'_> {
        let index =
            (0..self.servers.len()).min_by_key(|&index| self.servers[index].1.load(Ordering::SeqCst)).unwrap_or(0);
        self.servers[index].1.fetch_add(1, Ordering::SeqCst);
        Lease { servers: self, index }
    }
}

/// One query run's hold on a server; dropping it frees the server's slot.
pub struct Lease<'a> {
    servers: &'a Servers,
    index: usize,
}

impl Lease<'_> {
    /// The leased server's model.
    pub fn model(&self) -> Arc<dyn ChatModel> {
        self.servers.servers[self.index].0.clone()
    }

    /// Which server (its place in the list the servers were made from).
    pub fn index(&self) -> usize {
        self.index
    }
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        self.servers.servers[self.index].1.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tinytools::testkit::ScriptedModel;

    fn model() -> Arc<dyn ChatModel> {
        Arc::new(ScriptedModel::new([]))
    }

    #[test]
    fn runs_go_to_the_least_busy_server_and_free_it_when_done() {
        let servers = Servers::new(vec![model(), model()]).unwrap();
        let first = servers.lease();
        let second = servers.lease();
        assert_eq!((first.index(), second.index()), (0, 1));
        let third = servers.lease();
        assert_eq!(third.index(), 0, "equals: the first");
        drop(second);
        assert_eq!(servers.lease().index(), 1, "the server a run just left");
        drop((first, third));
        assert_eq!(servers.lease().index(), 0);
    }

    #[test]
    fn no_server_is_an_error() {
        assert!(Servers::new(Vec::new()).is_err());
        assert_eq!(Servers::one(model()).len(), 1);
    }
}
