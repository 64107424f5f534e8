//! Families `jira`, `github` and `ops`: issues, pull requests, incidents and metrics.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Value, json};
use tinytools::{Tool, tool};

pub(super) fn tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(JiraCreateIssue),
        Arc::new(JiraSearchIssues),
        Arc::new(JiraTransitionIssue),
        Arc::new(JiraAddComment),
        Arc::new(GithubCreatePr),
        Arc::new(GithubListIssues),
        Arc::new(GithubMergePr),
        Arc::new(GithubSearchCode),
        Arc::new(PagerdutyTriggerIncident),
        Arc::new(DatadogQueryMetrics),
        Arc::new(AwsListInstances),
    ]
}

/// The kind of a Jira issue.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum IssueType {
    /// Something broken.
    Bug,
    /// A piece of work.
    Task,
    /// A user-facing feature.
    Story,
}

/// Create an issue (bug, task or story) in a Jira project.
#[tool(exposure = "deferred", family = "jira", destructive = false)]
pub async fn jira_create_issue(
    /// Project key, such as OPS.
    project: String,
    /// One-line summary.
    summary: String,
    /// Issue type.
    issue_type: IssueType,
    /// Longer description, Markdown allowed.
    description: Option<String>,
    /// Priority from 1 (highest) to 5.
    #[schemars(range(min = 1, max = 5))]
    priority: Option<u8>,
) -> Value {
    json!({"key": format!("{project}-128"), "summary": summary, "type": format!("{issue_type:?}"), "priority": priority.unwrap_or(3), "has_description": description.is_some()})
}

/// Search Jira issues with a JQL query.
#[tool(exposure = "deferred", family = "jira", read_only)]
pub async fn jira_search_issues(
    /// JQL, such as "project = OPS AND status = 'In Progress'".
    jql: String,
    /// Most issues to return.
    limit: Option<u32>,
) -> Value {
    json!({"jql": jql, "issues": [{"key": "OPS-127", "summary": "Rotate TLS certs"}], "limit": limit.unwrap_or(20)})
}

/// Move a Jira issue to another status, such as "In Progress" or "Done".
#[tool(exposure = "deferred", family = "jira", destructive = false, idempotent)]
pub async fn jira_transition_issue(
    /// Issue key, such as OPS-127.
    #[grounded(from = "jira_search_issues", from = "jira_create_issue")]
    key: String,
    /// The target status.
    status: String,
) -> String {
    format!("{key} is now {status}")
}

/// Add a comment to a Jira issue.
#[tool(exposure = "deferred", family = "jira", destructive = false)]
pub async fn jira_add_comment(
    /// Issue key, such as OPS-127.
    #[grounded(from = "jira_search_issues", from = "jira_create_issue")]
    key: String,
    /// The comment, Markdown allowed.
    body: String,
) -> String {
    format!("commented on {key} ({} chars)", body.chars().count())
}

/// Open a GitHub pull request from a branch.
#[tool(exposure = "deferred", family = "github", destructive = false, open_world = true)]
pub async fn github_create_pr(
    /// Repository as owner/name.
    repo: String,
    /// Branch with the changes.
    head: String,
    /// Branch to merge into, usually main.
    base: String,
    /// Pull request title.
    title: String,
    /// Pull request description.
    body: Option<String>,
    /// Open it as a draft.
    #[serde(default)]
    draft: bool,
) -> Value {
    json!({"repo": repo, "number": 482, "head": head, "base": base, "title": title, "draft": draft, "has_body": body.is_some()})
}

/// List open issues of a GitHub repository, optionally filtered by label.
#[tool(exposure = "deferred", family = "github", read_only, open_world = true)]
pub async fn github_list_issues(
    /// Repository as owner/name.
    repo: String,
    /// Only issues with this label.
    label: Option<String>,
) -> Value {
    json!({"repo": repo, "label": label, "issues": [{"number": 91, "title": "Flaky test in CI"}]})
}

/// Merge a GitHub pull request.
#[tool(exposure = "deferred", family = "github", destructive, open_world = true)]
pub async fn github_merge_pr(
    /// Repository as owner/name.
    repo: String,
    /// Pull request number.
    #[grounded(from = "github_create_pr")]
    number: u64,
    /// "merge", "squash" or "rebase".
    method: Option<String>,
) -> String {
    format!("merged {repo}#{number} by {}", method.unwrap_or_else(|| "merge".into()))
}

/// Search code across GitHub repositories.
#[tool(exposure = "deferred", family = "github", read_only, open_world = true)]
pub async fn github_search_code(
    /// GitHub code search query, such as "ToolRegistry language:rust".
    query: String,
) -> Value {
    json!({"query": query, "results": [{"repo": "acme/tinytools", "path": "tinytools/src/registry/mod.rs"}]})
}

/// Page the on-call engineer by triggering a PagerDuty incident.
#[tool(exposure = "deferred", family = "ops", destructive = false, open_world = true)]
pub async fn pagerduty_trigger_incident(
    /// PagerDuty service id.
    service: String,
    /// What is wrong, in one line.
    title: String,
    /// "high" or "low".
    urgency: Option<String>,
) -> Value {
    json!({"incident": "PD-5521", "service": service, "title": title, "urgency": urgency.unwrap_or_else(|| "high".into())})
}

/// Query a Datadog metric over a time window and return its data points.
#[tool(exposure = "deferred", family = "ops", read_only, open_world = true)]
pub async fn datadog_query_metrics(
    /// Datadog metric query, such as "avg:system.cpu.user{service:api}".
    query: String,
    /// Window length in minutes, counting back from now.
    minutes: u32,
) -> Value {
    json!({"query": query, "minutes": minutes, "points": [[0, 41.2], [60, 44.9]]})
}

/// List AWS EC2 instances in a region with their state and type.
#[tool(exposure = "deferred", family = "ops", read_only, open_world = true)]
pub async fn aws_list_instances(
    /// AWS region, such as us-east-1.
    region: String,
    /// Only instances in this state, such as "running".
    state: Option<String>,
) -> Value {
    json!({"region": region, "state": state, "instances": [{"id": "i-0abc", "type": "t3.medium", "state": "running"}]})
}
