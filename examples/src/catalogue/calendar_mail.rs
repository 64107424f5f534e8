//! Families `calendar` and `gmail`: events, invitations, free time; searching and sending mail.

use std::sync::Arc;

use serde_json::{Value, json};
use tinytools::{Tool, tool};

pub(super) fn tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(CalendarInvite),
        Arc::new(CalendarListEvents),
        Arc::new(CalendarFreeSlots),
        Arc::new(CalendarCancelEvent),
        Arc::new(GmailSearch),
        Arc::new(GmailSend),
        Arc::new(GmailReadThread),
        Arc::new(GmailLabel),
    ]
}

/// Create a calendar event and send invitations to the attendees.
#[tool(exposure = "deferred", family = "calendar", destructive = false, open_world = true)]
pub async fn calendar_invite(
    /// Event title.
    title: String,
    /// Start time, RFC 3339 (2026-12-01T15:00:00Z).
    start: String,
    /// Length of the event in minutes.
    duration_minutes: u32,
    /// Email addresses of the people to invite.
    attendees: Vec<String>,
    /// Where it happens: a room or a video link.
    location: Option<String>,
) -> Value {
    json!({"event_id": "evt_1042", "title": title, "start": start, "duration_minutes": duration_minutes, "invited": attendees, "location": location})
}

/// List the events on the user's calendar between two dates.
#[tool(exposure = "deferred", family = "calendar", read_only)]
pub async fn calendar_list_events(
    /// First day, YYYY-MM-DD.
    from: String,
    /// Last day, YYYY-MM-DD.
    to: String,
) -> Value {
    json!({"from": from, "to": to, "events": [{"title": "Standup", "start": format!("{from}T09:30:00Z")}]})
}

/// Find times when all the given people are free for a meeting of a given length.
#[tool(exposure = "deferred", family = "calendar", read_only)]
pub async fn calendar_free_slots(
    /// Email addresses of everyone who must attend.
    attendees: Vec<String>,
    /// Meeting length in minutes.
    duration_minutes: u32,
    /// Day to search, YYYY-MM-DD.
    date: String,
) -> Value {
    json!({"date": date, "duration_minutes": duration_minutes, "attendees": attendees, "slots": ["10:00", "14:30"]})
}

/// Cancel a calendar event and notify its attendees.
#[tool(exposure = "deferred", family = "calendar", destructive, idempotent)]
pub async fn calendar_cancel_event(
    /// The event's id, as returned by calendar_invite or calendar_list_events.
    #[grounded(from = "calendar_invite", from = "calendar_list_events")]
    event_id: String,
    /// A note sent to attendees.
    message: Option<String>,
) -> String {
    format!("cancelled {event_id}{}", message.map(|m| format!(" with note: {m}")).unwrap_or_default())
}

/// Search the user's Gmail mailbox with Gmail query syntax and return matching messages.
#[tool(exposure = "deferred", family = "gmail", read_only)]
pub async fn gmail_search(
    /// Gmail search query, such as "from:alice has:attachment newer_than:7d".
    query: String,
    /// Most messages to return (default 10).
    max_results: Option<u32>,
) -> Value {
    json!({"query": query, "messages": [{"id": "msg_77", "from": "alice@example.com", "subject": "Q3 numbers"}], "max_results": max_results.unwrap_or(10)})
}

/// Send an email from the user's Gmail account.
#[tool(exposure = "deferred", family = "gmail", destructive = false, open_world = true)]
pub async fn gmail_send(
    /// Recipient email addresses.
    #[grounded(from = "gmail_search", from = "gmail_read_thread")]
    to: Vec<String>,
    /// Subject line.
    subject: String,
    /// Plain-text body.
    body: String,
    /// Addresses to copy.
    #[serde(default)]
    cc: Vec<String>,
) -> Value {
    json!({"sent": true, "to": to, "cc": cc, "subject": subject, "bytes": body.len()})
}

/// Read every message of a Gmail thread, oldest first.
#[tool(exposure = "deferred", family = "gmail", read_only)]
pub async fn gmail_read_thread(
    /// The thread's id, from gmail_search.
    #[grounded(from = "gmail_search")]
    thread_id: String,
) -> Value {
    json!({"thread_id": thread_id, "messages": [{"from": "alice@example.com", "body": "Numbers attached."}]})
}

/// Add or remove a label on Gmail messages (archive, star, mark important).
#[tool(exposure = "deferred", family = "gmail", destructive = false, idempotent)]
pub async fn gmail_label(
    /// Ids of the messages to change.
    #[grounded(from = "gmail_search")]
    message_ids: Vec<String>,
    /// The label, such as STARRED or a user label.
    label: String,
    /// Remove the label instead of adding it.
    #[serde(default)]
    remove: bool,
) -> String {
    format!("{} {label} on {} messages", if remove { "removed" } else { "added" }, message_ids.len())
}
