//! A dialect-wrapped model's stream: the inner model's text passed on as it comes, its calls
//! parsed at the end of the turn.
//!
//! A text dialect's deltas stop at the first `<tool_call>` tag: the call syntax never reaches a
//! reader, and a piece that might be the start of the tag waits for the next one. A native
//! model's deltas and calls pass unchanged. When the turn ends, the whole answer is read as
//! [`complete`](crate::model::ChatModel::complete) reads it, and each call that the inner
//! stream did not announce (all of a text dialect's, a native model's recovered ones) is
//! announced before `Done`.

use super::DialectModel;
use super::envelope::{CALL_OPEN, find_ci};
use crate::model::{ModelError, ModelRequest, ModelResponse, ModelStream, StreamEvent};
use crate::pump::{Outlet, Pump};

/// The stream of `model`'s answer to `request`.
pub(super) fn stream<'a>(model: &'a DialectModel, request: &'a ModelRequest) -> ModelStream<'a> {
    let pump = Pump::new(move |outlet: Outlet<Result<StreamEvent, ModelError>>| async move {
        let native = model.native();
        let rendered = (!native).then(|| model.dialect.render_request(request));
        let mut inner = model.inner.stream(rendered.as_ref().unwrap_or(request));
        let mut shown = Shown { stop_at_calls: !native, ..Shown::default() };
        let mut announced = 0;
        while let Some(event) = inner.next().await {
            match event {
                Ok(StreamEvent::TextDelta(text)) => {
                    if let Some(text) = shown.push(&text) {
                        outlet.push(Ok(StreamEvent::TextDelta(text)));
                    }
                }
                Ok(StreamEvent::Done(response)) => {
                    if let Some(text) = shown.rest() {
                        outlet.push(Ok(StreamEvent::TextDelta(text)));
                    }
                    let response = model.read_answer(request, response);
                    announce(&response, announced, &outlet);
                    outlet.push(Ok(StreamEvent::Done(response)));
                    return;
                }
                Ok(StreamEvent::Usage(usage)) => outlet.push(Ok(StreamEvent::Usage(usage))),
                Ok(event) if native => {
                    if matches!(event, StreamEvent::ToolCallStarted { .. }) {
                        announced += 1;
                    }
                    outlet.push(Ok(event));
                }
                // A text dialect's request declares no tools: the inner model has no native calls.
                Ok(_) => {}
                Err(error) => {
                    outlet.push(Err(error));
                    return;
                }
            }
        }
        let reason = "the inner model's stream ended without its answer".to_owned();
        outlet.push(Err(ModelError::Interrupted { during: "before the answer's end".to_owned(), reason }));
    });
    ModelStream::new(pump)
}

/// Announces the calls of `response` from `from` on: those the inner stream did not.
fn announce(response: &ModelResponse, from: usize, outlet: &Outlet<Result<StreamEvent, ModelError>>) {
    for (index, call) in response.tool_calls.iter().enumerate().skip(from) {
        outlet.push(Ok(StreamEvent::ToolCallStarted { index, id: call.id.clone(), name: call.name.clone() }));
        if !call.arguments.is_empty() {
            outlet.push(Ok(StreamEvent::ToolCallDelta { index, arguments: call.arguments.clone() }));
        }
    }
}

/// What of the text has been shown.
#[derive(Default)]
struct Shown {
    /// Show nothing from the first `<tool_call>` on (text dialects).
    stop_at_calls: bool,
    /// Text held back: it may be the start of the tag.
    held: String,
    /// The tag was seen.
    stopped: bool,
}

impl Shown {
    /// The part of `text` (after what was held) that can be shown now.
    fn push(&mut self, text: &str) -> Option<String> {
        if !self.stop_at_calls {
            return Some(text.to_owned()).filter(|text| !text.is_empty());
        }
        if self.stopped {
            return None;
        }
        self.held.push_str(text);
        if let Some(at) = find_ci(&self.held, CALL_OPEN) {
            self.stopped = true;
            self.held.truncate(at);
            return self.rest();
        }
        let keep = (1..CALL_OPEN.len())
            .rev()
            .find(|&len| {
                self.held.len() >= len
                    && self.held.is_char_boundary(self.held.len() - len)
                    && self.held[self.held.len() - len..].eq_ignore_ascii_case(&CALL_OPEN[..len])
            })
            .unwrap_or(0);
        let held = self.held.split_off(self.held.len() - keep);
        Some(std::mem::replace(&mut self.held, held)).filter(|text| !text.is_empty())
    }

    /// What is still held, once the text is complete (an unfinished tag is only text).
    fn rest(&mut self) -> Option<String> {
        Some(std::mem::take(&mut self.held)).filter(|text| !text.is_empty())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_dialect_deltas_stop_at_the_call_tag_however_it_is_split() {
        let reply = "Checking the price. <TOOL_call>{\"name\": \"stock_quote\"}</tool_call> done";
        for piece in 1..reply.len() {
            let mut shown = Shown { stop_at_calls: true, ..Shown::default() };
            let chars: Vec<char> = reply.chars().collect();
            let mut text = String::new();
            for chunk in chars.chunks(piece) {
                text.extend(shown.push(&chunk.iter().collect::<String>()));
            }
            text.extend(shown.rest());
            assert_eq!(text, "Checking the price. ", "pieces of {piece}");
        }
    }

    #[test]
    fn a_held_piece_that_is_not_the_tag_is_shown() {
        let mut shown = Shown { stop_at_calls: true, ..Shown::default() };
        assert_eq!(shown.push("a <tool"), Some("a ".to_owned()));
        assert_eq!(shown.push("s ✓"), Some("<tools ✓".to_owned()));
        assert_eq!(shown.push("<to"), None);
        assert_eq!(shown.rest(), Some("<to".to_owned()));
    }
}
