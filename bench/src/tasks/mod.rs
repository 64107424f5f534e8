//! The task suite of the live deferral benchmark: what users ask of the 41-tool catalogue,
//! what a successful run calls, and a judge that reads a run's transcript.
//!
//! Every task is data: its words ([`Task::prompt`]), its family, and what success is
//! ([`Expect`]): tool calls in order, each with lenient argument checks ([`Arg`]), or no
//! catalogue tool at all. [`judge`] checks a transcript against it; [`scale_registry`] adds
//! BFCL's real tool definitions as Deferred distractors, to measure the same tasks over a
//! catalogue of a thousand tools.
//!
//! ```
//! use tinytools_bench::tasks::{self, Expect};
//!
//! let task = tasks::get("finance-share-price").unwrap();
//! assert_eq!(task.family, "finance");
//! assert!(matches!(task.expect, Expect::Steps(steps) if steps[0].tool == "stock_quote"));
//! ```

mod chains;
mod distractors;
mod judge;
mod suite;
#[cfg(test)]
mod tests;

use std::sync::LazyLock;

pub use distractors::{bfcl_distractors, bfcl_tools_path, scale_registry};
pub use judge::{Judgement, judge, last_reply};

/// The kinds of task ([`Task::kind`]), in the order reports list them.
pub const KINDS: [&str; 3] = ["single", "chain", "no_tool"];

/// The catalogue's families, plus `notes` (the Direct `read_note`) and `none` (tasks no tool fits).
pub const FAMILIES: [&str; 13] = [
    "finance",
    "calendar",
    "gmail",
    "jira",
    "github",
    "ops",
    "slack",
    "drive",
    "crm",
    "travel",
    "utilities",
    "notes",
    "none",
];

/// One thing a user asks, and what a successful run does about it.
#[derive(Clone, Copy, Debug)]
pub struct Task {
    /// Stable id, `family-what`, such as `finance-share-price`.
    pub id: &'static str,
    /// The family of the tool the task is mainly about (see [`FAMILIES`]).
    pub family: &'static str,
    /// The user's words.
    pub prompt: &'static str,
    /// What success is.
    pub expect: Expect,
}

/// What a successful run does.
#[derive(Clone, Copy, Debug)]
pub enum Expect {
    /// Calls these tools in this order (other calls in between are allowed), each with
    /// arguments that pass its checks and a result that is not an error.
    Steps(&'static [Step]),
    /// No catalogue tool fits: the run calls none (other than `tool_search`) and answers in text.
    NoTool,
}

/// One expected tool call.
#[derive(Clone, Copy, Debug)]
pub struct Step {
    /// The tool's name.
    pub tool: &'static str,
    /// Checks on its arguments: a path into the arguments (`symbol`, `options/limit`) and
    /// what its value must be. Arguments not named are free (optional ones included).
    pub args: &'static [(&'static str, Arg)],
    /// Arguments, as JSON text, that pass the checks: the call a correct run could make
    /// (a derived value written as the catalogue's deterministic tools return it).
    pub example: &'static str,
}

/// A check on one argument, lenient the way a human grader is: strings are trimmed and
/// compared case-insensitively; a number may come as a string (`"250"`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arg {
    /// The value, as text, equals this one (ISO codes, ids, enum values).
    Equals(&'static str),
    /// It equals one of these.
    AnyOf(&'static [&'static str]),
    /// Free text containing this.
    Contains(&'static str),
    /// Free text containing at least one of these.
    ContainsAny(&'static [&'static str]),
    /// Text starting with this (an RFC 3339 time whatever its seconds and offset).
    StartsWith(&'static str),
    /// A number within 0.1% (at least 0.01) of this one.
    Number(f64),
    /// A boolean (`true`, or the text `"true"`).
    Bool(bool),
    /// A list with an element equal to this (one of several recipients).
    Includes(&'static str),
    /// Present and not null, whatever its value.
    Present,
    /// Left out or null: an optional argument a correct call does not give (`thread_ts` for a
    /// new message in a channel, which a made-up one would bury in a thread that does not exist).
    Absent,
    /// Passes when left out; when given, must pass the inner check (an optional filter the
    /// task implies but a correct run may skip).
    IfGiven(&'static Arg),
    /// Equals the value at a JSON pointer in an earlier step's result (an id, a key, an
    /// amount): for a list, one element does. `step` counts from 0.
    FromResult {
        /// The earlier step.
        step: usize,
        /// JSON pointer into its result, such as `/issues/0/key`.
        pointer: &'static str,
    },
    /// Free text mentioning the value at a JSON pointer in an earlier step's result (a
    /// number matches any number in the text within [`Arg::Number`]'s tolerance).
    MentionsResult {
        /// The earlier step.
        step: usize,
        /// JSON pointer into its result, such as `/price`.
        pointer: &'static str,
    },
    /// Text (or every element of a list) found in an earlier step's result text, which need
    /// not be JSON (a ticker symbol read from a note).
    FoundInResult {
        /// The earlier step.
        step: usize,
    },
}

impl Task {
    /// The expected steps (none for a [`Expect::NoTool`] task).
    pub fn steps(&self) -> &'static [Step] {
        match self.expect {
            Expect::Steps(steps) => steps,
            Expect::NoTool => &[],
        }
    }

    /// Whether no catalogue tool fits the task.
    pub fn is_no_tool(&self) -> bool {
        matches!(self.expect, Expect::NoTool)
    }

    /// Whether the task takes more than one call, a later one using an earlier one's result.
    pub fn is_chain(&self) -> bool {
        self.steps().len() > 1
    }

    /// The task's kind, one of [`KINDS`]: `single` (one call), `chain` ([`is_chain`](Self::is_chain))
    /// or `no_tool` ([`is_no_tool`](Self::is_no_tool)).
    pub fn kind(&self) -> &'static str {
        match (self.is_no_tool(), self.is_chain()) {
            (true, _) => KINDS[2],
            (false, true) => KINDS[1],
            (false, false) => KINDS[0],
        }
    }

    /// What success is, in words: `stock_quote(symbol = "GLOBX")`, or `no catalogue tool`.
    pub fn success(&self) -> String {
        if self.is_no_tool() {
            return "no catalogue tool (tool_search allowed), and a text answer".to_owned();
        }
        let step = |step: &Step| {
            let args: Vec<String> = step.args.iter().map(|(path, arg)| format!("{path} {}", arg.describe())).collect();
            format!("{}({})", step.tool, args.join(", "))
        };
        self.steps().iter().map(step).collect::<Vec<_>>().join(" then ")
    }
}

impl Arg {
    /// The earlier step whose result the check reads, if it reads one.
    pub fn reads_step(&self) -> Option<usize> {
        match self {
            Self::FromResult { step, .. } | Self::MentionsResult { step, .. } | Self::FoundInResult { step } => {
                Some(*step)
            }
            Self::IfGiven(inner) => inner.reads_step(),
            _ => None,
        }
    }

    /// The check in words, such as `= "GLOBX"` or `= step 1's /issues/0/key`.
    pub fn describe(&self) -> String {
        match self {
            Self::Equals(text) => format!("= {text:?}"),
            Self::AnyOf(options) => format!("in {options:?}"),
            Self::Contains(text) => format!("contains {text:?}"),
            Self::ContainsAny(options) => format!("contains one of {options:?}"),
            Self::StartsWith(text) => format!("starts with {text:?}"),
            Self::Number(number) => format!("≈ {number}"),
            Self::Bool(value) => format!("= {value}"),
            Self::Includes(text) => format!("includes {text:?}"),
            Self::Present => "given".to_owned(),
            Self::Absent => "left out".to_owned(),
            Self::IfGiven(inner) => format!("if given {}", inner.describe()),
            Self::FromResult { step, pointer } => format!("= step {}'s {pointer}", step + 1),
            Self::MentionsResult { step, pointer } => format!("mentions step {}'s {pointer}", step + 1),
            Self::FoundInResult { step } => format!("found in step {}'s result", step + 1),
        }
    }
}

static ALL: LazyLock<Vec<Task>> = LazyLock::new(|| {
    let mut all = Vec::new();
    all.extend_from_slice(suite::SINGLE);
    all.extend_from_slice(chains::CHAINS);
    all.extend_from_slice(chains::NO_TOOL);
    all
});

/// Every task: single-tool tasks by family, then two-step tasks, then tasks no tool fits.
pub fn all() -> &'static [Task] {
    &ALL
}

/// The task with this id.
pub fn get(id: &str) -> Option<&'static Task> {
    all().iter().find(|task| task.id == id)
}
