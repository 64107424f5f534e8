//! `live_tasks --aids none|standard|small|small-without:NAME`: which preset of the agent
//! loop's aids ([`tinytools::run::aids`]) every run of the benchmark gets. The last form is an
//! ablation: `small_model` without the one aid named, the measure `docs/aids.md` asks of each.
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
//! let ablated = AidsChoice::parse("small-without:replay_repeats").unwrap();
//! assert_eq!(ablated.name(), "small-without:replay_repeats");
//! assert!(!apply_aids(RunPolicy::default(), ablated).aids.names().contains(&"replay_repeats"));
//! assert_eq!(AidsChoice::parse("small-without:no_such_aid"), None);
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
    /// The aids kept for small local models ([`Aids::small_model`]).
    Small,
    /// [`Aids::small_model`] without the aid of this name: one aid's ablation.
    SmallWithout(&'static str),
}

impl AidsChoice {
    /// Every choice, in the order `--aids` lists them.
    pub const ALL: [AidsChoice; 3] = [Self::None, Self::Standard, Self::Small];

    /// Its name on the command line and in reports.
    pub fn name(self) -> String {
        match self {
            Self::None => "none".to_owned(),
            Self::Standard => "standard".to_owned(),
            Self::Small => "small".to_owned(),
            Self::SmallWithout(aid) => format!("small-without:{aid}"),
        }
    }

    /// The choice a name means; `small-without:` must name an aid of [`Aids::small_model`].
    pub fn parse(name: &str) -> Option<Self> {
        if let Some(aid) = name.strip_prefix("small-without:") {
            return Aids::small_model().names().into_iter().find(|known| *known == aid).map(Self::SmallWithout);
        }
        Self::ALL.into_iter().find(|choice| choice.name() == name)
    }
}

/// `policy` with `choice`'s aids, whatever aids it had; the rest of it unchanged.
pub fn apply_aids(policy: RunPolicy, choice: AidsChoice) -> RunPolicy {
    match choice {
        AidsChoice::None => policy.with_aids(Aids::none()),
        AidsChoice::Standard => policy.with_aids(Aids::standard()),
        AidsChoice::Small => policy.with_aids(Aids::small_model()),
        AidsChoice::SmallWithout(aid) => policy.with_aids(Aids::small_model().without(aid)),
    }
}
