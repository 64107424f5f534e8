//! Where a tool is shown to the model: [`ToolExposure`].

use serde::{Deserialize, Serialize};

/// How a registered tool is exposed to the model.
///
/// | Exposure | In the tools array | Callable by the model | Findable via `tool_search` |
/// |----------|--------------------|-----------------------|----------------------------|
/// | `Direct`   | yes | yes | n/a |
/// | `Deferred` | no  | yes (by name) | yes |
/// | `Hidden`   | no  | no — answered as an unknown tool | no |
///
/// Host code reaches every exposure, Hidden included, through
/// [`ToolRegistry::dispatch`](crate::ToolRegistry::dispatch).
///
/// ```
/// use tinytools::ToolExposure;
///
/// assert_eq!(ToolExposure::default(), ToolExposure::Direct);
/// assert!(ToolExposure::Deferred.is_model_callable());
/// assert!(!ToolExposure::Hidden.is_model_callable());
/// assert_eq!("deferred".parse::<ToolExposure>(), Ok(ToolExposure::Deferred));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolExposure {
    /// Sent in every request's tools array. Keep core primitives here (file, shell, reply,
    /// and above all any ask-the-user tool: a model does not search for a tool it does not
    /// know it needs).
    #[default]
    Direct,
    /// Not sent up front; listed in the `tool_search` manifest, found by search, and
    /// callable by its own name. For third-party catalogues and the long tail.
    Deferred,
    /// Never shown to or callable by the model; only the host reaches it.
    Hidden,
}

impl ToolExposure {
    /// The three exposures, in the order of the table above.
    pub const ALL: [ToolExposure; 3] = [Self::Direct, Self::Deferred, Self::Hidden];

    /// The lower-case name used in `#[tool(exposure = "...")]` and in serialized form.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Direct => "direct",
            Self::Deferred => "deferred",
            Self::Hidden => "hidden",
        }
    }

    /// Whether the model may call a tool of this exposure by name (Direct and Deferred).
    pub const fn is_model_callable(self) -> bool {
        matches!(self, Self::Direct | Self::Deferred)
    }
}

impl std::fmt::Display for ToolExposure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing a [`ToolExposure`] from text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown tool exposure `{0}`: expected one of \"direct\", \"deferred\" or \"hidden\"")]
pub struct ParseExposureError(pub String);

impl std::str::FromStr for ToolExposure {
    type Err = ParseExposureError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|exposure| exposure.as_str() == s).ok_or_else(|| ParseExposureError(s.to_owned()))
    }
}
