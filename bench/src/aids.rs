//! `live_tasks --aids none|standard|small`: which of the run's aids to the model (the loop
//! guard's answers to repeats, prose calls, empty replies, ungrounded and unused values) every
//! run of the benchmark gets.
//!
//! [`apply_aids`] is the one place a choice becomes a run policy: every task run's agent is
//! built with it ([`run_task`](crate::run_task)), over its arm's policy.
//!
//! ```
//! use tinytools::run::{LoopGuard, RunPolicy};
//! use tinytools_bench::{AidsChoice, apply_aids};
//!
//! assert_eq!(AidsChoice::parse("none"), Some(AidsChoice::None));
//! assert_eq!(AidsChoice::default(), AidsChoice::Standard);
//! let off = apply_aids(RunPolicy::default(), AidsChoice::None);
//! assert_eq!(off.loop_guard, LoopGuard::off());
//! let standard = apply_aids(RunPolicy::default().with_loop_guard(LoopGuard::off()), AidsChoice::Standard);
//! assert_eq!(standard.loop_guard, LoopGuard::default());
//! ```

use tinytools::run::{LoopGuard, RunPolicy};

/// Which aids every run of the benchmark gets (`--aids`, default `standard`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AidsChoice {
    /// No aids: the loop guard off.
    None,
    /// The library's default aids.
    #[default]
    Standard,
    /// The aids meant for small models; for now the same as [`Standard`](Self::Standard).
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
        AidsChoice::None => policy.with_loop_guard(LoopGuard::off()),
        // Standard (and with it Small) is rewired when the aid presets land; until then both
        // are today's default loop guard.
        AidsChoice::Standard | AidsChoice::Small => policy.with_loop_guard(LoopGuard::default()),
    }
}
