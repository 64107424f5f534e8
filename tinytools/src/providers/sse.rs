//! The server-sent events decoder both providers' streams share: bytes in, as the connection
//! delivers them, events out, as the WHATWG `text/event-stream` rules read them.
//!
//! Lines end in `\n`, `\r\n` or `\r`; a line starting with `:` is a comment (keep-alives); a
//! `data` field adds a line to the event's data; `event` names it; a blank line dispatches it.
//! An event still open when the body ends is dropped, never dispatched: a stream cut in the
//! middle of an event leaves no half-read event behind. One field beyond the standard is
//! read: older `llama-server`s wrote a failure mid-stream as an `error: {...}` line, which
//! becomes an `error` event.

/// One event of the stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// Its `event` field (`message` when it had none).
    pub(crate) event: String,
    /// Its `data` lines, joined by `\n`.
    pub(crate) data: String,
}

/// Decodes a `text/event-stream` body fed in pieces of any size.
#[derive(Debug, Default)]
pub(crate) struct SseDecoder {
    /// Bytes of a line not yet complete.
    partial: Vec<u8>,
    /// The open event's name.
    event: String,
    /// The open event's data, each line followed by `\n`.
    data: String,
    /// Whether the open event has a `data` (or legacy `error`) field.
    has_data: bool,
    /// Whether the last byte fed was a `\r` (a `\n` right after it ends no further line).
    after_cr: bool,
}

impl SseDecoder {
    /// Reads `bytes`, the next piece of the body, appending every event they complete to `out`.
    pub(crate) fn feed(&mut self, bytes: &[u8], out: &mut impl Extend<SseEvent>) {
        let mut start = 0;
        for (at, &byte) in bytes.iter().enumerate() {
            if byte != b'\n' && byte != b'\r' {
                continue;
            }
            let skip = byte == b'\n' && self.after_cr && at == start && self.partial.is_empty();
            self.after_cr = byte == b'\r';
            if skip {
                start = at + 1;
                continue;
            }
            self.partial.extend_from_slice(&bytes[start..at]);
            start = at + 1;
            let line = std::mem::take(&mut self.partial);
            if let Some(event) = self.line(&String::from_utf8_lossy(&line)) {
                out.extend([event]);
            }
        }
        if start < bytes.len() {
            self.after_cr = false;
            self.partial.extend_from_slice(&bytes[start..]);
        }
    }

    /// Reads one line; a blank one dispatches the open event.
    fn line(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            let event = std::mem::take(&mut self.event);
            let mut data = std::mem::take(&mut self.data);
            if !std::mem::take(&mut self.has_data) {
                return None;
            }
            data.pop();
            let event = if event.is_empty() { "message".to_owned() } else { event };
            return Some(SseEvent { event, data });
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = line.split_once(':').unwrap_or((line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => value.clone_into(&mut self.event),
            "data" => self.add_data(value),
            "error" => {
                "error".clone_into(&mut self.event);
                self.add_data(value);
            }
            _ => {}
        }
        None
    }

    fn add_data(&mut self, value: &str) {
        self.data.push_str(value);
        self.data.push('\n');
        self.has_data = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_pieces(body: &str, piece: usize) -> Vec<SseEvent> {
        let mut decoder = SseDecoder::default();
        let mut events = Vec::new();
        for chunk in body.as_bytes().chunks(piece.max(1)) {
            decoder.feed(chunk, &mut events);
        }
        events
    }

    fn event(event: &str, data: &str) -> SseEvent {
        SseEvent { event: event.into(), data: data.into() }
    }

    #[test]
    fn events_read_the_same_however_the_body_is_cut() {
        let body = "event: message_start\r\ndata: {\"type\":\"message_start\"}\r\n\r\n: keep-alive\n\n\
                    data: {\"a\":\n\
                    data: \"é ✓\"}\n\n\
                    data:[DONE]\r\r\
                    event: ping\ndata\n\n";
        let expected = vec![
            event("message_start", "{\"type\":\"message_start\"}"),
            event("message", "{\"a\":\n\"é ✓\"}"),
            event("message", "[DONE]"),
            event("ping", ""),
        ];
        for piece in 1..=body.len() {
            assert_eq!(decode_in_pieces(body, piece), expected, "pieces of {piece} bytes");
        }
    }

    #[test]
    fn an_event_cut_before_its_blank_line_is_not_dispatched() {
        let events = decode_in_pieces("data: {\"x\": 1}\n\ndata: {\"tool_calls\": [{\"index\": 0", 7);
        assert_eq!(events, vec![event("message", "{\"x\": 1}")]);
        let events = decode_in_pieces("data: {\"x\": 1}\n\ndata: {\"y\": 2}\n", 3);
        assert_eq!(events.len(), 1, "a data line without its blank line is still open");
    }

    #[test]
    fn events_without_data_are_dropped_and_unknown_fields_ignored() {
        let events = decode_in_pieces("event: nothing\n\nid: 7\nretry: 10\n\nfoo: bar\ndata: x\n\n", 4);
        assert_eq!(events, vec![event("message", "x")]);
    }

    #[test]
    fn a_legacy_llama_server_error_line_is_an_error_event() {
        let body = "data: {\"choices\":[]}\n\nerror: {\"code\":500,\"message\":\"slot unavailable\"}\n\n";
        let events = decode_in_pieces(body, 5);
        assert_eq!(events[1], event("error", "{\"code\":500,\"message\":\"slot unavailable\"}"));
    }
}
