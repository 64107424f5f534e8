//! [`aid_calls_as_notes`]: a call the run made for the model, as every provider's API takes it.

use std::borrow::Cow;

use super::Message;

/// The conversation as a provider sends it: each [`Message::AidCall`] and the tool result that
/// answers it become one [`Message::Feedback`] saying that the run, not the model, made the
/// call and what it answered. Every API accepts that (a user turn of the run's own words), and
/// the model is never told it called a tool it did not call. Borrows when there is none.
/// The bundled providers and dialects call it; a hand-written
/// [`ChatModel`](super::ChatModel) should too.
///
/// ```
/// use tinytools::model::{Message, ToolCall, aid_calls_as_notes};
///
/// let messages = vec![
///     Message::user("Weather in Lisbon?"),
///     Message::Assistant { content: "I will check the weather.".into(), tool_calls: vec![] },
///     Message::AidCall { aid: "my_aid".into(), call: ToolCall::new("aid_1", "weather", r#"{"city":"Lisbon"}"#) },
///     Message::Tool { call_id: "aid_1".into(), name: "weather".into(), content: "21 C".into(), is_error: false },
/// ];
/// let sent = aid_calls_as_notes(&messages);
/// assert_eq!(sent.len(), 3);
/// let Message::Feedback { content } = &sent[2] else { panic!() };
/// assert!(content.contains("you did not call it") && content.ends_with("21 C"));
/// assert!(matches!(aid_calls_as_notes(&messages[..2]), std::borrow::Cow::Borrowed(_)));
/// ```
pub fn aid_calls_as_notes(messages: &[Message]) -> Cow<'_, [Message]> {
    if !messages.iter().any(|message| matches!(message, Message::AidCall { .. })) {
        return Cow::Borrowed(messages);
    }
    let mut sent = Vec::with_capacity(messages.len());
    let mut messages = messages.iter().peekable();
    while let Some(message) = messages.next() {
        let Message::AidCall { call, .. } = message else {
            sent.push(message.clone());
            continue;
        };
        let mut note = format!(
            "The run called `{}` with {} itself after your last reply; you did not call it.",
            call.name,
            if call.arguments.trim().is_empty() { "{}" } else { call.arguments.as_str() }
        );
        if let Some(Message::Tool { call_id, content, is_error, .. }) = messages.peek()
            && *call_id == call.id
        {
            note.push_str(if *is_error { " It failed:\n" } else { " It answered:\n" });
            note.push_str(content);
            messages.next();
        }
        sent.push(Message::feedback(note));
    }
    Cow::Owned(sent)
}
