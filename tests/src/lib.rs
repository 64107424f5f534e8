//! Test-only package: see tests/. What several of its suites share.

use std::sync::Mutex;

use tinytools::run::{EventSink, RunEvent};

/// An event sink that keeps every event of a run, in order.
#[derive(Default)]
pub struct Recorder(Mutex<Vec<RunEvent>>);

impl Recorder {
    /// Every event so far.
    pub fn events(&self) -> Vec<RunEvent> {
        self.0.lock().map(|events| events.clone()).unwrap_or_default()
    }
}

impl EventSink for Recorder {
    fn emit(&self, event: &RunEvent) {
        if let Ok(mut events) = self.0.lock() {
            events.push(event.clone());
        }
    }
}
