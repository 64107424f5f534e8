//! `live_tasks --aids none|standard|small`: which preset of the agent loop's aids
//! ([`tinytools::run::aids`]) every run of the benchmark gets.
//!
//! [`apply_aids`] is the one place a choice becomes a run policy: every task run's agent is
//! built with it ([`run_task`](crate::run_task)), over its arm's policy.
//!
//! ```
//! use tinytools::run::{Aids, RunPolicy};
//! use tinytools_bench::{AidsChoice, apply_aids};
//!
//! assert_eq!(AidsChoice::parse("none"), Some(AidsChoice::None));
//! assert_eq!(AidsChoice::default(), AidsChoice::Standard);
//! let off = apply_aids(RunPolicy::default(), AidsChoice::None);
//! assert!(off.aids.names().is_empty());
//! let small = apply_aids(RunPolicy::default(), AidsChoice::Small);
//! assert_eq!(small.aids.names(), Aids::small_model().names());
//! ```

use tinytools::run::{Aids, RunPolicy};

/// Which aids every run of the benchmark gets (`--aids`, default `standard`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AidsChoice {
    /// No aids: the loop's core alone ([`Aids::none`]).
    None,
    /// The library's default ([`Aids::standard`]).
    #[default]
    Standard,
    /// The aids measured on small local models ([`Aids::small_model`]).
    Small,
}

impl AidsChoice {
    /// Every choice, in the order `--aids` lists them.
    pub const ALL: [AidsChoice; 3] = [Self::None, Self::Standard, Self::Small];

    /// Its name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Standard => "standard",
            Self::Small => "small",
        }
    }

    /// The choice a name means.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|choice| choice.name() == name)
    }
}

/// `policy` with `choice`'s aids, whatever aids it had; the rest of it unchanged.
pub fn apply_aids(policy: RunPolicy, choice: AidsChoice) -> RunPolicy {
    match choice {
        AidsChoice::None => policy.with_aids(Aids::none()),
        AidsChoice::Standard => policy.with_aids(Aids::standard()),
        AidsChoice::Small => policy.with_aids(Aids::small_model()),
    }
}
