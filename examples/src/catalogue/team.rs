//! Families `slack`, `drive` and `crm`: messages, shared files, customers.

use std::sync::Arc;

use serde_json::{Value, json};
use tinytools::{Tool, tool};

pub(super) fn tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(SlackPostMessage),
        Arc::new(SlackSearchMessages),
        Arc::new(SlackSetStatus),
        Arc::new(DriveSearchFiles),
        Arc::new(DriveShareFile),
        Arc::new(DocsCreateDocument),
        Arc::new(CrmFindContact),
        Arc::new(CrmUpdateDeal),
        Arc::new(CrmLogCall),
    ]
}

/// Post a message to a Slack channel or thread.
#[tool(exposure = "deferred", family = "slack", destructive = false, open_world = true)]
pub async fn slack_post_message(
    /// Channel name, such as #general, or a user id for a direct message.
    channel: String,
    /// Message text, Slack mrkdwn allowed.
    text: String,
    /// Reply in this thread (the parent message's timestamp, from slack_search_messages);
    /// leave out for a new message in the channel.
    #[grounded(from = "slack_search_messages")]
    thread_ts: Option<String>,
) -> Value {
    json!({"ok": true, "channel": channel, "ts": "1733011200.000100", "in_thread": thread_ts.is_some(), "chars": text.len()})
}

/// Search Slack messages the user can see.
#[tool(exposure = "deferred", family = "slack", read_only)]
pub async fn slack_search_messages(
    /// Search terms, Slack modifiers allowed ("in:#ops from:@dana").
    query: String,
) -> Value {
    json!({"query": query, "matches": [{"channel": "#ops", "ts": "1733009000.000200", "text": "deploy is green"}]})
}

/// Set the user's Slack status text and emoji.
#[tool(exposure = "deferred", family = "slack", destructive = false, idempotent)]
pub async fn slack_set_status(
    /// Status text, such as "In a meeting".
    text: String,
    /// Emoji code, such as :calendar:.
    emoji: Option<String>,
) -> String {
    format!("status set to {} {text}", emoji.unwrap_or_default())
}

/// Search Google Drive files by name or content.
#[tool(exposure = "deferred", family = "drive", read_only)]
pub async fn drive_search_files(
    /// Words to look for in file names and contents.
    query: String,
    /// Only this kind: "document", "spreadsheet", "presentation" or "pdf".
    file_type: Option<String>,
) -> Value {
    json!({"query": query, "file_type": file_type, "files": [{"id": "f_204", "name": "Q3 plan"}]})
}

/// Share a Google Drive file with someone.
#[tool(exposure = "deferred", family = "drive", destructive = false, open_world = true)]
pub async fn drive_share_file(
    /// The file's id, from drive_search_files or docs_create_document.
    #[grounded(from = "drive_search_files", from = "docs_create_document")]
    file_id: String,
    /// Email address to share with.
    email: String,
    /// "reader", "commenter" or "writer".
    role: String,
) -> String {
    format!("shared {file_id} with {email} as {role}")
}

/// Create a Google Docs document with a title and initial text.
#[tool(exposure = "deferred", family = "drive", destructive = false)]
pub async fn docs_create_document(
    /// Document title.
    title: String,
    /// Initial content, Markdown allowed.
    content: Option<String>,
) -> Value {
    json!({"document_id": "doc_88", "title": title, "chars": content.map_or(0, |c| c.len())})
}

/// Find a customer contact in the CRM by name, email or company.
#[tool(exposure = "deferred", family = "crm", read_only)]
pub async fn crm_find_contact(
    /// Name, email address or company to look for.
    query: String,
) -> Value {
    json!({"query": query, "contacts": [{"id": "c_12", "name": "Dana Ortiz", "company": "Globex"}]})
}

/// Update a sales deal's stage or amount in the CRM.
#[tool(exposure = "deferred", family = "crm", destructive = false, idempotent)]
pub async fn crm_update_deal(
    /// The deal's id.
    #[grounded]
    deal_id: String,
    /// New stage, such as "negotiation" or "closed won".
    stage: Option<String>,
    /// New amount in the deal's currency.
    amount: Option<f64>,
) -> Value {
    json!({"deal_id": deal_id, "stage": stage, "amount": amount})
}

/// Log a phone call with a contact in the CRM.
#[tool(exposure = "deferred", family = "crm", destructive = false)]
pub async fn crm_log_call(
    /// The contact's id, from crm_find_contact.
    #[grounded(from = "crm_find_contact")]
    contact_id: String,
    /// What was discussed.
    notes: String,
    /// Call length in minutes.
    minutes: Option<u32>,
) -> String {
    format!("logged a {}-minute call with {contact_id} ({} chars of notes)", minutes.unwrap_or(0), notes.len())
}
