//! Tasks one call answers, by family, worded as users word them: the tool's name and its
//! obvious keywords are rarely in the request.

use super::{Arg, Expect, Step, Task};

/// The single-call tasks.
pub(super) static SINGLE: &[Task] = &[
    // finance
    Task {
        id: "finance-share-price",
        family: "finance",
        prompt: "How much is one share of GLOBX going for?",
        expect: Expect::Steps(&[Step {
            tool: "stock_quote",
            args: &[("symbol", Arg::Equals("GLOBX"))],
            example: r#"{"symbol": "GLOBX"}"#,
        }]),
    },
    Task {
        id: "finance-premarket-trades",
        family: "finance",
        prompt: "Is ACME moving before the bell? Count pre-market trading too, and show me the last 5 trades.",
        expect: Expect::Steps(&[Step {
            tool: "stock_quote",
            args: &[
                ("symbol", Arg::Equals("ACME")),
                ("options/extended_hours", Arg::Bool(true)),
                ("options/limit", Arg::Number(5.0)),
            ],
            example: r#"{"symbol": "ACME", "options": {"extended_hours": true, "limit": 5}}"#,
        }]),
    },
    Task {
        id: "finance-euros-to-yen",
        family: "finance",
        prompt: "I've got 250 euros left over from my trip. What would that come to in Japanese yen today?",
        expect: Expect::Steps(&[Step {
            tool: "currency_convert",
            args: &[("amount", Arg::Number(250.0)), ("from", Arg::Equals("EUR")), ("to", Arg::Equals("JPY"))],
            example: r#"{"amount": 250, "from": "EUR", "to": "JPY"}"#,
        }]),
    },
    Task {
        id: "finance-ether-in-pounds",
        family: "finance",
        prompt: "what's ethereum worth in pounds atm",
        expect: Expect::Steps(&[Step {
            tool: "crypto_price",
            args: &[("coin", Arg::AnyOf(&["ETH", "ethereum"])), ("vs_currency", Arg::Equals("GBP"))],
            example: r#"{"coin": "ETH", "vs_currency": "GBP"}"#,
        }]),
    },
    Task {
        id: "finance-retirement-today",
        family: "finance",
        prompt: "How's my retirement account doing today?",
        expect: Expect::Steps(&[Step {
            tool: "portfolio_summary",
            args: &[("account", Arg::Contains("retirement"))],
            example: r#"{"account": "retirement"}"#,
        }]),
    },
    Task {
        id: "finance-january-meals",
        family: "finance",
        prompt: "I'm doing my budget. How much did I put on restaurants and meals in January 2026 (the 1st to the 31st)?",
        expect: Expect::Steps(&[Step {
            tool: "expense_report",
            args: &[
                ("start_date", Arg::Equals("2026-01-01")),
                ("end_date", Arg::Equals("2026-01-31")),
                ("category", Arg::Contains("meal")),
            ],
            example: r#"{"start_date": "2026-01-01", "end_date": "2026-01-31", "category": "meals"}"#,
        }]),
    },
    // calendar
    Task {
        id: "calendar-week-agenda",
        family: "calendar",
        prompt: "What have I got on between Monday 9 March and Friday 13 March 2026?",
        expect: Expect::Steps(&[Step {
            tool: "calendar_list_events",
            args: &[("from", Arg::Equals("2026-03-09")), ("to", Arg::Equals("2026-03-13"))],
            example: r#"{"from": "2026-03-09", "to": "2026-03-13"}"#,
        }]),
    },
    Task {
        id: "calendar-common-free-time",
        family: "calendar",
        prompt: "When could priya@acme.com and tom@acme.com both do a 45-minute chat on 12 March 2026?",
        expect: Expect::Steps(&[Step {
            tool: "calendar_free_slots",
            args: &[
                ("attendees", Arg::Includes("priya@acme.com")),
                ("attendees", Arg::Includes("tom@acme.com")),
                ("duration_minutes", Arg::Number(45.0)),
                ("date", Arg::Equals("2026-03-12")),
            ],
            example: r#"{"attendees": ["priya@acme.com", "tom@acme.com"], "duration_minutes": 45, "date": "2026-03-12"}"#,
        }]),
    },
    Task {
        id: "calendar-budget-review",
        family: "calendar",
        prompt: "Put a 30-minute 'Budget review' with dana@globex.com on 2 April 2026 at 3pm UTC, in Room 4B.",
        expect: Expect::Steps(&[Step {
            tool: "calendar_invite",
            args: &[
                ("title", Arg::Contains("budget review")),
                ("start", Arg::StartsWith("2026-04-02T15:00")),
                ("duration_minutes", Arg::Number(30.0)),
                ("attendees", Arg::Includes("dana@globex.com")),
                ("location", Arg::Contains("4B")),
            ],
            example: r#"{"title": "Budget review", "start": "2026-04-02T15:00:00Z", "duration_minutes": 30,
                "attendees": ["dana@globex.com"], "location": "Room 4B"}"#,
        }]),
    },
    Task {
        id: "calendar-call-off",
        family: "calendar",
        prompt: "Scrap evt_2291, and let everyone know we'll find a new time next week.",
        expect: Expect::Steps(&[Step {
            tool: "calendar_cancel_event",
            args: &[
                ("event_id", Arg::Equals("evt_2291")),
                ("message", Arg::ContainsAny(&["next week", "new time", "reschedul"])),
            ],
            example: r#"{"event_id": "evt_2291", "message": "We'll find a new time next week."}"#,
        }]),
    },
    // gmail
    Task {
        id: "gmail-stripe-invoices",
        family: "gmail",
        prompt: "Did billing@stripe.com send me anything with an attachment in the last 30 days?",
        expect: Expect::Steps(&[Step {
            tool: "gmail_search",
            args: &[("query", Arg::Contains("billing@stripe.com"))],
            example: r#"{"query": "from:billing@stripe.com has:attachment newer_than:30d"}"#,
        }]),
    },
    Task {
        id: "gmail-running-late",
        family: "gmail",
        prompt: "Drop sam@acme.com a line with the subject 'Running late': I'll be 10 minutes late to standup.",
        expect: Expect::Steps(&[Step {
            tool: "gmail_send",
            args: &[
                ("to", Arg::Includes("sam@acme.com")),
                ("subject", Arg::Contains("running late")),
                ("body", Arg::Contains("late")),
            ],
            example: r#"{"to": ["sam@acme.com"], "subject": "Running late", "body": "I'll be 10 minutes late to standup."}"#,
        }]),
    },
    Task {
        id: "gmail-whole-conversation",
        family: "gmail",
        prompt: "Can you pull up the whole back-and-forth in conversation t_5530? Oldest first is fine.",
        expect: Expect::Steps(&[Step {
            tool: "gmail_read_thread",
            args: &[("thread_id", Arg::Equals("t_5530"))],
            example: r#"{"thread_id": "t_5530"}"#,
        }]),
    },
    Task {
        id: "gmail-star-two",
        family: "gmail",
        prompt: "Put a star on messages msg_12 and msg_19 so I don't lose them.",
        expect: Expect::Steps(&[Step {
            tool: "gmail_label",
            args: &[
                ("message_ids", Arg::Includes("msg_12")),
                ("message_ids", Arg::Includes("msg_19")),
                ("label", Arg::Contains("star")),
            ],
            example: r#"{"message_ids": ["msg_12", "msg_19"], "label": "STARRED"}"#,
        }]),
    },
    // jira
    Task {
        id: "jira-safari-checkout-bug",
        family: "jira",
        prompt: "The checkout button does nothing on Safari. Can you log that against the WEB project as a \
                 bug, priority 2?",
        expect: Expect::Steps(&[Step {
            tool: "jira_create_issue",
            args: &[
                ("project", Arg::Equals("WEB")),
                ("summary", Arg::Contains("checkout")),
                ("issue_type", Arg::Equals("bug")),
                ("priority", Arg::Number(2.0)),
            ],
            example: r#"{"project": "WEB", "summary": "Checkout button does nothing on Safari", "issue_type": "bug",
                "priority": 2}"#,
        }]),
    },
    Task {
        id: "jira-ops-in-flight",
        family: "jira",
        prompt: "What's the OPS team working on at the moment? Just the tickets that are in progress.",
        expect: Expect::Steps(&[Step {
            tool: "jira_search_issues",
            args: &[("jql", Arg::Contains("OPS")), ("jql", Arg::Contains("progress"))],
            example: r#"{"jql": "project = OPS AND status = 'In Progress'"}"#,
        }]),
    },
    Task {
        id: "jira-close-out",
        family: "jira",
        prompt: "OPS-131 is finished, mark it done.",
        expect: Expect::Steps(&[Step {
            tool: "jira_transition_issue",
            args: &[("key", Arg::Equals("OPS-131")), ("status", Arg::AnyOf(&["Done", "Closed", "Resolved"]))],
            example: r#"{"key": "OPS-131", "status": "Done"}"#,
        }]),
    },
    Task {
        id: "jira-staging-note",
        family: "jira",
        prompt: "Leave a note on WEB-88 that the fix is on staging now.",
        expect: Expect::Steps(&[Step {
            tool: "jira_add_comment",
            args: &[("key", Arg::Equals("WEB-88")), ("body", Arg::Contains("staging"))],
            example: r#"{"key": "WEB-88", "body": "The fix is deployed to staging."}"#,
        }]),
    },
    // github
    Task {
        id: "github-draft-rate-limits",
        family: "github",
        prompt: "Can you put up a draft for review on acme/api? The branch is feature/rate-limits, it goes into \
                 main, call it 'Add rate limiting'.",
        expect: Expect::Steps(&[Step {
            tool: "github_create_pr",
            args: &[
                ("repo", Arg::Equals("acme/api")),
                ("head", Arg::Equals("feature/rate-limits")),
                ("base", Arg::Equals("main")),
                ("title", Arg::Contains("rate limit")),
                ("draft", Arg::Bool(true)),
            ],
            example: r#"{"repo": "acme/api", "head": "feature/rate-limits", "base": "main", "title": "Add rate limiting",
                "draft": true}"#,
        }]),
    },
    Task {
        id: "github-open-bugs",
        family: "github",
        prompt: "Which bugs are still open in acme/web? They're the ones labelled bug.",
        expect: Expect::Steps(&[Step {
            tool: "github_list_issues",
            args: &[("repo", Arg::Equals("acme/web")), ("label", Arg::Contains("bug"))],
            example: r#"{"repo": "acme/web", "label": "bug"}"#,
        }]),
    },
    Task {
        id: "github-squash-57",
        family: "github",
        prompt: "Squash and land #57 on acme/api please.",
        expect: Expect::Steps(&[Step {
            tool: "github_merge_pr",
            args: &[
                ("repo", Arg::Equals("acme/api")),
                ("number", Arg::Number(57.0)),
                ("method", Arg::Equals("squash")),
            ],
            example: r#"{"repo": "acme/api", "number": 57, "method": "squash"}"#,
        }]),
    },
    Task {
        id: "github-legacy-auth",
        family: "github",
        prompt: "Where do we still call legacyAuth anywhere in our repos?",
        expect: Expect::Steps(&[Step {
            tool: "github_search_code",
            args: &[("query", Arg::Contains("legacyAuth"))],
            example: r#"{"query": "legacyAuth"}"#,
        }]),
    },
    // ops
    Task {
        id: "ops-payments-down",
        family: "ops",
        prompt: "Payments API is throwing 500s for everyone. Get whoever's on call onto it now, service id P7XK2Q.",
        expect: Expect::Steps(&[Step {
            tool: "pagerduty_trigger_incident",
            args: &[("service", Arg::Equals("P7XK2Q")), ("title", Arg::Present)],
            example: r#"{"service": "P7XK2Q", "title": "Payments API returning 500s for all requests", "urgency": "high"}"#,
        }]),
    },
    Task {
        id: "ops-checkout-cpu",
        family: "ops",
        prompt: "What has CPU on the checkout service looked like over the last two hours?",
        expect: Expect::Steps(&[Step {
            tool: "datadog_query_metrics",
            args: &[
                ("query", Arg::Contains("cpu")),
                ("query", Arg::Contains("checkout")),
                ("minutes", Arg::Number(120.0)),
            ],
            example: r#"{"query": "avg:system.cpu.user{service:checkout}", "minutes": 120}"#,
        }]),
    },
    Task {
        id: "ops-ireland-servers",
        family: "ops",
        prompt: "Which EC2 machines are actually up right now in eu-west-1?",
        expect: Expect::Steps(&[Step {
            tool: "aws_list_instances",
            args: &[("region", Arg::Equals("eu-west-1")), ("state", Arg::IfGiven(&Arg::Equals("running")))],
            example: r#"{"region": "eu-west-1", "state": "running"}"#,
        }]),
    },
    // slack
    Task {
        id: "slack-office-closed",
        family: "slack",
        prompt: "Let everyone in #general know the office is closed this Friday.",
        expect: Expect::Steps(&[Step {
            tool: "slack_post_message",
            args: &[
                ("channel", Arg::AnyOf(&["#general", "general"])),
                ("text", Arg::Contains("friday")),
                ("thread_ts", Arg::Absent),
            ],
            example: r##"{"channel": "#general", "text": "Heads up: the office is closed this Friday."}"##,
        }]),
    },
    Task {
        id: "slack-deploy-chatter",
        family: "slack",
        prompt: "Has anybody said anything about the deploy over in #ops?",
        expect: Expect::Steps(&[Step {
            tool: "slack_search_messages",
            args: &[("query", Arg::Contains("deploy"))],
            example: r##"{"query": "deploy in:#ops"}"##,
        }]),
    },
    Task {
        id: "slack-out-sick",
        family: "slack",
        prompt: "I'm off sick today. Can you make that show next to my name at work, with the thermometer emoji?",
        expect: Expect::Steps(&[Step {
            tool: "slack_set_status",
            args: &[("text", Arg::Contains("sick")), ("emoji", Arg::ContainsAny(&["thermometer", "\u{1F321}"]))],
            example: r#"{"text": "Out sick", "emoji": ":thermometer:"}"#,
        }]),
    },
    // drive
    Task {
        id: "drive-board-slides",
        family: "drive",
        prompt: "Can you dig up the slides from the board meeting?",
        expect: Expect::Steps(&[Step {
            tool: "drive_search_files",
            args: &[("query", Arg::Contains("board")), ("file_type", Arg::IfGiven(&Arg::Equals("presentation")))],
            example: r#"{"query": "board meeting", "file_type": "presentation"}"#,
        }]),
    },
    Task {
        id: "drive-edit-access",
        family: "drive",
        prompt: "lee@acme.com needs to be able to edit f_310, sort that out?",
        expect: Expect::Steps(&[Step {
            tool: "drive_share_file",
            args: &[
                ("file_id", Arg::Equals("f_310")),
                ("email", Arg::Equals("lee@acme.com")),
                ("role", Arg::Equals("writer")),
            ],
            example: r#"{"file_id": "f_310", "email": "lee@acme.com", "role": "writer"}"#,
        }]),
    },
    Task {
        id: "drive-offsite-agenda",
        family: "drive",
        prompt: "Start a fresh doc called 'Offsite agenda' that begins with 'Day 1: arrivals and dinner'.",
        expect: Expect::Steps(&[Step {
            tool: "docs_create_document",
            args: &[("title", Arg::Contains("offsite agenda")), ("content", Arg::Contains("day 1"))],
            example: r#"{"title": "Offsite agenda", "content": "Day 1: arrivals and dinner"}"#,
        }]),
    },
    // crm
    Task {
        id: "crm-initech-contact",
        family: "crm",
        prompt: "Who do we deal with over at Initech?",
        expect: Expect::Steps(&[Step {
            tool: "crm_find_contact",
            args: &[("query", Arg::Contains("initech"))],
            example: r#"{"query": "Initech"}"#,
        }]),
    },
    Task {
        id: "crm-deal-won",
        family: "crm",
        prompt: "Great news, D-4417 signed! Mark it closed won at $82,000.",
        expect: Expect::Steps(&[Step {
            tool: "crm_update_deal",
            args: &[
                ("deal_id", Arg::Equals("D-4417")),
                ("stage", Arg::Contains("won")),
                ("amount", Arg::Number(82_000.0)),
            ],
            example: r#"{"deal_id": "D-4417", "stage": "closed won", "amount": 82000}"#,
        }]),
    },
    Task {
        id: "crm-renewal-call",
        family: "crm",
        prompt: "Just spoke with c_48 for about 20 minutes about renewal pricing, can you record that?",
        expect: Expect::Steps(&[Step {
            tool: "crm_log_call",
            args: &[
                ("contact_id", Arg::Equals("c_48")),
                ("notes", Arg::Contains("renewal")),
                ("minutes", Arg::Number(20.0)),
            ],
            example: r#"{"contact_id": "c_48", "notes": "Discussed renewal pricing.", "minutes": 20}"#,
        }]),
    },
    // travel
    Task {
        id: "travel-lisbon-umbrella",
        family: "travel",
        prompt: "Will I need an umbrella in Lisbon over the next few days?",
        expect: Expect::Steps(&[Step {
            tool: "weather_forecast",
            args: &[("city", Arg::Contains("lisbon"))],
            example: r#"{"city": "Lisbon"}"#,
        }]),
    },
    Task {
        id: "travel-lisbon-new-york",
        family: "travel",
        prompt: "Two of us want to fly Lisbon to New York JFK on 14 May 2026 and come back on the 21st. What's out there?",
        expect: Expect::Steps(&[Step {
            tool: "flight_search",
            args: &[
                ("origin", Arg::Equals("LIS")),
                ("destination", Arg::Equals("JFK")),
                ("date", Arg::Equals("2026-05-14")),
                ("return_date", Arg::Equals("2026-05-21")),
                ("passengers", Arg::Number(2.0)),
            ],
            example: r#"{"origin": "LIS", "destination": "JFK", "date": "2026-05-14", "return_date": "2026-05-21",
                "passengers": 2}"#,
        }]),
    },
    Task {
        id: "travel-porto-stay",
        family: "travel",
        prompt: "Find us somewhere to sleep in Porto, arriving 3 June 2026 and leaving the 6th, two people.",
        expect: Expect::Steps(&[Step {
            tool: "hotel_search",
            args: &[
                ("city", Arg::Contains("porto")),
                ("check_in", Arg::Equals("2026-06-03")),
                ("check_out", Arg::Equals("2026-06-06")),
                ("guests", Arg::Number(2.0)),
            ],
            example: r#"{"city": "Porto", "check_in": "2026-06-03", "check_out": "2026-06-06", "guests": 2}"#,
        }]),
    },
    Task {
        id: "travel-cycle-paris",
        family: "travel",
        prompt: "How long would it take me to cycle from the Eiffel Tower to the Louvre?",
        expect: Expect::Steps(&[Step {
            tool: "maps_directions",
            args: &[
                ("from", Arg::Contains("eiffel")),
                ("to", Arg::Contains("louvre")),
                ("mode", Arg::Contains("bicycl")),
            ],
            example: r#"{"from": "Eiffel Tower, Paris", "to": "Louvre Museum, Paris", "mode": "bicycling"}"#,
        }]),
    },
    // utilities
    Task {
        id: "utilities-station-japanese",
        family: "utilities",
        prompt: "How would I ask 'where is the train station?' in Japanese?",
        expect: Expect::Steps(&[Step {
            tool: "translate_text",
            args: &[("text", Arg::Contains("train station")), ("target_language", Arg::AnyOf(&["ja", "japanese"]))],
            example: r#"{"text": "Where is the train station?", "target_language": "ja"}"#,
        }]),
    },
    Task {
        id: "utilities-marathon-km",
        family: "utilities",
        prompt: "A marathon is 26.2 miles. How far is that in kilometres, exactly?",
        expect: Expect::Steps(&[Step {
            tool: "unit_convert",
            args: &[("value", Arg::Number(26.2)), ("from_unit", Arg::Equals("mi")), ("to_unit", Arg::Equals("km"))],
            example: r#"{"value": 26.2, "from_unit": "mi", "to_unit": "km"}"#,
        }]),
    },
    Task {
        id: "utilities-tech-news",
        family: "utilities",
        prompt: "Anything big going on in tech today?",
        expect: Expect::Steps(&[Step {
            tool: "news_headlines",
            args: &[("topic", Arg::Contains("tech"))],
            example: r#"{"topic": "technology"}"#,
        }]),
    },
    Task {
        id: "utilities-uk-news",
        family: "utilities",
        prompt: "What are the papers in the UK leading with this morning?",
        expect: Expect::Steps(&[Step {
            tool: "news_headlines",
            args: &[("country", Arg::AnyOf(&["GB", "UK"]))],
            example: r#"{"country": "GB"}"#,
        }]),
    },
    // notes: the Direct tool
    Task {
        id: "notes-shopping-list",
        family: "notes",
        prompt: "What's on my grocery list again?",
        expect: Expect::Steps(&[Step {
            tool: "read_note",
            args: &[("title", Arg::Equals("groceries"))],
            example: r#"{"title": "groceries"}"#,
        }]),
    },
    Task {
        id: "notes-q3-decisions",
        family: "notes",
        prompt: "Remind me what we wrote down in the Q3 planning note?",
        expect: Expect::Steps(&[Step {
            tool: "read_note",
            args: &[("title", Arg::Equals("q3 planning"))],
            example: r#"{"title": "q3 planning"}"#,
        }]),
    },
];
