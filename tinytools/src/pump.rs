//! A stream pumped by a future: the future runs as the stream is polled and pushes items
//! through an [`Outlet`]; the stream hands them out in order, then ends when the future is done
//! and every item is out. Nothing is spawned, so the future may borrow (the agent, a request),
//! and dropping the stream drops the future, with whatever it was waiting on. The agent's
//! [`RunStream`](crate::run::RunStream) and a dialect's model stream are pumped.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use futures_util::stream::{Stream, StreamExt};

/// Where the future pushes its items.
pub(crate) struct Outlet<T>(Arc<Mutex<VecDeque<T>>>);

impl<T> Outlet<T> {
    /// Queues an item for the stream.
    pub(crate) fn push(&self, item: T) {
        if let Ok(mut queue) = self.0.lock() {
            queue.push_back(item);
        }
    }

    fn pop(&self) -> Option<T> {
        self.0.lock().ok()?.pop_front()
    }
}

/// The stream of a future's items; the future's own output is [`into_output`](Self::into_output).
pub(crate) struct Pump<'a, T, R> {
    state: State<'a, R>,
    outlet: Outlet<T>,
}

enum State<'a, R> {
    Running(Pin<Box<dyn Future<Output = R> + Send + 'a>>),
    Finished(R),
}

impl<'a, T, R> Pump<'a, T, R> {
    /// `body` is called now with the outlet; its future runs as the stream is polled.
    pub(crate) fn new<F>(body: impl FnOnce(Outlet<T>) -> F) -> Self
    where
        F: Future<Output = R> + Send + 'a,
    {
        let queue = Arc::new(Mutex::new(VecDeque::new()));
        let future = body(Outlet(Arc::clone(&queue)));
        Self { state: State::Running(Box::pin(future)), outlet: Outlet(queue) }
    }

    /// The future's output: runs it to its end if it is not there yet, dropping the items
    /// not taken as they come.
    pub(crate) async fn into_output(mut self) -> R {
        while StreamExt::next(&mut self).await.is_some() {}
        match self.state {
            State::Running(future) => future.await,
            State::Finished(output) => output,
        }
    }
}

// The future is boxed, and the items and output are only ever moved, never pinned.
impl<T, R> Unpin for Pump<'_, T, R> {}

impl<T, R> Stream for Pump<'_, T, R> {
    type Item = T;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let this = self.get_mut();
        if let Some(item) = this.outlet.pop() {
            return Poll::Ready(Some(item));
        }
        let State::Running(future) = &mut this.state else {
            return Poll::Ready(None);
        };
        if let Poll::Ready(output) = future.as_mut().poll(cx) {
            this.state = State::Finished(output);
        }
        match this.outlet.pop() {
            Some(item) => Poll::Ready(Some(item)),
            None if matches!(this.state, State::Finished(_)) => Poll::Ready(None),
            None => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_come_in_order_then_the_output() {
        let owned = String::from("borrowed");
        let shared = &owned;
        let mut pump = Pump::new(|outlet| async move {
            outlet.push(1);
            tokio::task::yield_now().await;
            outlet.push(2);
            outlet.push(3);
            shared.len()
        });
        let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
        let (items, output) = runtime.block_on(async {
            let items: Vec<i32> = (&mut pump).collect().await;
            (items, pump.into_output().await)
        });
        assert_eq!((items, output), (vec![1, 2, 3], 8));
    }

    #[test]
    fn the_output_comes_without_taking_the_items() {
        let pump: Pump<'_, i32, &str> = Pump::new(|outlet| async move {
            outlet.push(1);
            tokio::task::yield_now().await;
            outlet.push(2);
            "done"
        });
        let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
        assert_eq!(runtime.block_on(pump.into_output()), "done");
    }
}
