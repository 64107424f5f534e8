//! Tasks that take two calls, the second using what the first returned, and tasks no tool of
//! the catalogue fits.
//!
//! A derived argument is checked against the first call's result as the transcript shows it
//! ([`Arg::FromResult`], [`Arg::MentionsResult`], [`Arg::FoundInResult`]); the examples write
//! it as the catalogue's deterministic tools return it.

use super::{Arg, Expect, Step, Task};

/// The two-step tasks.
pub(super) static CHAINS: &[Task] = &[
    Task {
        id: "crm-log-call-after-lookup",
        family: "crm",
        prompt: "I just got off a 15-minute call with Dana Ortiz from Globex about their renewal. \
                 Can you log it on her record?",
        expect: Expect::Steps(&[
            Step {
                tool: "crm_find_contact",
                args: &[("query", Arg::ContainsAny(&["dana", "ortiz", "globex"]))],
                example: r#"{"query": "Dana Ortiz"}"#,
            },
            Step {
                tool: "crm_log_call",
                args: &[
                    ("contact_id", Arg::FromResult { step: 0, pointer: "/contacts/0/id" }),
                    ("notes", Arg::Contains("renewal")),
                    ("minutes", Arg::Number(15.0)),
                ],
                example: r#"{"contact_id": "c_12", "notes": "Discussed their renewal.", "minutes": 15}"#,
            },
        ]),
    },
    Task {
        id: "jira-comment-on-found",
        family: "jira",
        prompt: "There's a ticket in the OPS project about rotating the TLS certs. Add a comment on it saying \
                 the new certs are live.",
        expect: Expect::Steps(&[
            Step {
                tool: "jira_search_issues",
                args: &[("jql", Arg::Present)],
                example: r#"{"jql": "project = OPS AND text ~ \"TLS\""}"#,
            },
            Step {
                tool: "jira_add_comment",
                args: &[
                    ("key", Arg::FromResult { step: 0, pointer: "/issues/0/key" }),
                    ("body", Arg::Contains("live")),
                ],
                example: r#"{"key": "OPS-127", "body": "The new certs are live."}"#,
            },
        ]),
    },
    Task {
        id: "jira-finish-in-progress",
        family: "jira",
        prompt: "Whatever OPS ticket is sitting in progress right now is finished. Find it and move it to Done.",
        expect: Expect::Steps(&[
            Step {
                tool: "jira_search_issues",
                args: &[("jql", Arg::Contains("progress"))],
                example: r#"{"jql": "project = OPS AND status = 'In Progress'"}"#,
            },
            Step {
                tool: "jira_transition_issue",
                args: &[
                    ("key", Arg::FromResult { step: 0, pointer: "/issues/0/key" }),
                    ("status", Arg::Equals("Done")),
                ],
                example: r#"{"key": "OPS-127", "status": "Done"}"#,
            },
        ]),
    },
    Task {
        id: "drive-share-found-plan",
        family: "drive",
        prompt: "maria@acme.com should be able to leave comments on the Q3 plan. Can you share it with her?",
        expect: Expect::Steps(&[
            Step {
                tool: "drive_search_files",
                args: &[("query", Arg::Contains("q3"))],
                example: r#"{"query": "Q3 plan"}"#,
            },
            Step {
                tool: "drive_share_file",
                args: &[
                    ("file_id", Arg::FromResult { step: 0, pointer: "/files/0/id" }),
                    ("email", Arg::Equals("maria@acme.com")),
                    ("role", Arg::Equals("commenter")),
                ],
                example: r#"{"file_id": "f_204", "email": "maria@acme.com", "role": "commenter"}"#,
            },
        ]),
    },
    Task {
        id: "drive-new-doc-for-ben",
        family: "drive",
        prompt: "Make me a new doc called 'Launch checklist' and let ben@acme.com edit it.",
        expect: Expect::Steps(&[
            Step {
                tool: "docs_create_document",
                args: &[("title", Arg::Contains("launch checklist"))],
                example: r#"{"title": "Launch checklist"}"#,
            },
            Step {
                tool: "drive_share_file",
                args: &[
                    ("file_id", Arg::FromResult { step: 0, pointer: "/document_id" }),
                    ("email", Arg::Equals("ben@acme.com")),
                    ("role", Arg::Equals("writer")),
                ],
                example: r#"{"file_id": "doc_88", "email": "ben@acme.com", "role": "writer"}"#,
            },
        ]),
    },
    Task {
        id: "gmail-reply-to-sender",
        family: "gmail",
        prompt: "Somebody emailed me the Q3 numbers. Write back to them: thanks, I'll go through them by Friday.",
        expect: Expect::Steps(&[
            Step {
                tool: "gmail_search",
                args: &[("query", Arg::Contains("q3"))],
                example: r#"{"query": "Q3 numbers"}"#,
            },
            Step {
                tool: "gmail_send",
                args: &[
                    ("to", Arg::FromResult { step: 0, pointer: "/messages/0/from" }),
                    ("subject", Arg::Present),
                    ("body", Arg::Contains("friday")),
                ],
                example: r#"{"to": ["alice@example.com"], "subject": "Re: Q3 numbers",
                    "body": "Thanks! I'll go through them by Friday."}"#,
            },
        ]),
    },
    Task {
        id: "gmail-star-found",
        family: "gmail",
        prompt: "Find the mail with the Q3 numbers and star it, I'll need it next week.",
        expect: Expect::Steps(&[
            Step {
                tool: "gmail_search",
                args: &[("query", Arg::Contains("q3"))],
                example: r#"{"query": "Q3 numbers"}"#,
            },
            Step {
                tool: "gmail_label",
                args: &[
                    ("message_ids", Arg::FromResult { step: 0, pointer: "/messages/0/id" }),
                    ("label", Arg::Contains("star")),
                ],
                example: r#"{"message_ids": ["msg_77"], "label": "STARRED"}"#,
            },
        ]),
    },
    Task {
        id: "finance-price-to-slack",
        family: "finance",
        prompt: "Post what GLOBX is trading at in #markets so the team sees it.",
        expect: Expect::Steps(&[
            Step { tool: "stock_quote", args: &[("symbol", Arg::Equals("GLOBX"))], example: r#"{"symbol": "GLOBX"}"# },
            Step {
                tool: "slack_post_message",
                args: &[
                    ("channel", Arg::AnyOf(&["#markets", "markets"])),
                    ("text", Arg::MentionsResult { step: 0, pointer: "/price" }),
                    ("thread_ts", Arg::Absent),
                ],
                example: r##"{"channel": "#markets", "text": "GLOBX is trading at $685.83."}"##,
            },
        ]),
    },
    Task {
        id: "finance-travel-spend-euros",
        family: "finance",
        prompt: "What did I spend on travel between 1 and 28 February 2026? My accountant wants it in euros.",
        expect: Expect::Steps(&[
            Step {
                tool: "expense_report",
                args: &[
                    ("start_date", Arg::Equals("2026-02-01")),
                    ("end_date", Arg::Equals("2026-02-28")),
                    ("category", Arg::Contains("travel")),
                ],
                example: r#"{"start_date": "2026-02-01", "end_date": "2026-02-28", "category": "travel"}"#,
            },
            Step {
                tool: "currency_convert",
                args: &[
                    ("amount", Arg::FromResult { step: 0, pointer: "/total" }),
                    ("from", Arg::FromResult { step: 0, pointer: "/currency" }),
                    ("to", Arg::Equals("EUR")),
                ],
                example: r#"{"amount": 1284.10, "from": "USD", "to": "EUR"}"#,
            },
        ]),
    },
    Task {
        id: "github-flaky-to-jira",
        family: "github",
        prompt: "Take the open issue labelled flaky in acme/web and file it as a bug in the QA Jira project, \
                 same title.",
        expect: Expect::Steps(&[
            Step {
                tool: "github_list_issues",
                args: &[("repo", Arg::Equals("acme/web")), ("label", Arg::Contains("flaky"))],
                example: r#"{"repo": "acme/web", "label": "flaky"}"#,
            },
            Step {
                tool: "jira_create_issue",
                args: &[
                    ("project", Arg::Equals("QA")),
                    ("issue_type", Arg::Equals("bug")),
                    ("summary", Arg::MentionsResult { step: 0, pointer: "/issues/0/title" }),
                ],
                example: r#"{"project": "QA", "summary": "Flaky test in CI", "issue_type": "bug"}"#,
            },
        ]),
    },
    Task {
        id: "github-open-then-land",
        family: "github",
        prompt: "Open a PR on acme/api from hotfix/timeouts into main called 'Fix upstream timeouts', then \
                 squash-merge it straight away, it's already been reviewed.",
        expect: Expect::Steps(&[
            Step {
                tool: "github_create_pr",
                args: &[
                    ("repo", Arg::Equals("acme/api")),
                    ("head", Arg::Equals("hotfix/timeouts")),
                    ("base", Arg::Equals("main")),
                    ("title", Arg::Contains("timeouts")),
                ],
                example: r#"{"repo": "acme/api", "head": "hotfix/timeouts", "base": "main",
                    "title": "Fix upstream timeouts"}"#,
            },
            Step {
                tool: "github_merge_pr",
                args: &[
                    ("repo", Arg::Equals("acme/api")),
                    ("number", Arg::FromResult { step: 0, pointer: "/number" }),
                    ("method", Arg::Equals("squash")),
                ],
                example: r#"{"repo": "acme/api", "number": 482, "method": "squash"}"#,
            },
        ]),
    },
    Task {
        id: "calendar-book-earliest-slot",
        family: "calendar",
        prompt: "Find a 30-minute gap on 17 March 2026 when priya@acme.com and tom@acme.com are both free, \
                 and book the earliest one as 'Design sync' with the two of them.",
        expect: Expect::Steps(&[
            Step {
                tool: "calendar_free_slots",
                args: &[
                    ("attendees", Arg::Includes("priya@acme.com")),
                    ("attendees", Arg::Includes("tom@acme.com")),
                    ("duration_minutes", Arg::Number(30.0)),
                    ("date", Arg::Equals("2026-03-17")),
                ],
                example: r#"{"attendees": ["priya@acme.com", "tom@acme.com"], "duration_minutes": 30,
                    "date": "2026-03-17"}"#,
            },
            Step {
                tool: "calendar_invite",
                args: &[
                    ("title", Arg::Contains("design sync")),
                    ("start", Arg::StartsWith("2026-03-17")),
                    ("start", Arg::MentionsResult { step: 0, pointer: "/slots/0" }),
                    ("duration_minutes", Arg::Number(30.0)),
                    ("attendees", Arg::Includes("priya@acme.com")),
                    ("attendees", Arg::Includes("tom@acme.com")),
                ],
                example: r#"{"title": "Design sync", "start": "2026-03-17T10:00:00Z", "duration_minutes": 30,
                    "attendees": ["priya@acme.com", "tom@acme.com"]}"#,
            },
        ]),
    },
    Task {
        id: "notes-biggest-holding-price",
        family: "notes",
        prompt: "My portfolio note lists what I hold. What's my biggest position trading at right now?",
        expect: Expect::Steps(&[
            Step {
                tool: "read_note",
                args: &[("title", Arg::Equals("portfolio"))],
                example: r#"{"title": "portfolio"}"#,
            },
            Step {
                tool: "stock_quote",
                args: &[("symbol", Arg::FoundInResult { step: 0 }), ("symbol", Arg::Equals("ACME"))],
                example: r#"{"symbol": "ACME"}"#,
            },
        ]),
    },
];

/// Tasks no catalogue tool fits: booking, shopping, playing music, general knowledge.
pub(super) static NO_TOOL: &[Task] = &[
    Task {
        id: "none-restaurant-table",
        family: "none",
        prompt: "Book me a table for four at Nopa tonight at 8.",
        expect: Expect::NoTool,
    },
    Task {
        id: "none-grocery-delivery",
        family: "none",
        prompt: "Order oat milk and coffee beans from the supermarket for delivery tomorrow morning.",
        expect: Expect::NoTool,
    },
    Task { id: "none-play-jazz", family: "none", prompt: "Play some jazz in the kitchen.", expect: Expect::NoTool },
    Task { id: "none-percentage", family: "none", prompt: "Quick one: what's 15% of 2,340?", expect: Expect::NoTool },
    Task {
        id: "none-capital-australia",
        family: "none",
        prompt: "My kid asks what the capital of Australia is. Is it Sydney?",
        expect: Expect::NoTool,
    },
];
