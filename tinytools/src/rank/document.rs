//! [`ToolDocument`]: what of a tool the index reads, and how much each part weighs.

use serde_json::{Map, Value};

use crate::ToolSchema;

/// How much each part of a tool counts in its search document.
///
/// The defaults were chosen by measurement on the eval sets (`docs/retrieval.md`).
///
/// ```
/// use tinytools::rank::FieldWeights;
///
/// let weights = FieldWeights::default().with_name(3.0).with_family(0.0);
/// assert_eq!((weights.name, weights.description, weights.family), (3.0, 1.0, 0.0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct FieldWeights {
    /// The tool's name, split into words (`stock_quote` → "stock", "quote").
    pub name: f32,
    /// The tool's description.
    pub description: f32,
    /// The names of its top-level parameters.
    pub parameter_names: f32,
    /// The descriptions of its top-level parameters.
    pub parameter_descriptions: f32,
    /// Its family (`finance`, an MCP server's name).
    pub family: f32,
}

impl Default for FieldWeights {
    fn default() -> Self {
        Self { name: 2.0, description: 1.0, parameter_names: 1.0, parameter_descriptions: 0.5, family: 1.0 }
    }
}

impl FieldWeights {
    /// Sets the weight of the tool's name.
    #[must_use]
    pub const fn with_name(mut self, name: f32) -> Self {
        self.name = name;
        self
    }

    /// Sets the weight of the tool's description.
    #[must_use]
    pub const fn with_description(mut self, description: f32) -> Self {
        self.description = description;
        self
    }

    /// Sets the weight of its top-level parameter names.
    #[must_use]
    pub const fn with_parameter_names(mut self, parameter_names: f32) -> Self {
        self.parameter_names = parameter_names;
        self
    }

    /// Sets the weight of its top-level parameter descriptions.
    #[must_use]
    pub const fn with_parameter_descriptions(mut self, parameter_descriptions: f32) -> Self {
        self.parameter_descriptions = parameter_descriptions;
        self
    }

    /// Sets the weight of its family.
    #[must_use]
    pub const fn with_family(mut self, family: f32) -> Self {
        self.family = family;
        self
    }
}

/// A tool as the index reads it: its fields and their weights. Borrows from the declaration.
///
/// ```
/// use serde_json::json;
/// use tinytools::ToolSchema;
/// use tinytools::rank::{Bm25Index, FieldWeights, ToolDocument};
///
/// let quote = ToolSchema::new(
///     "stock_quote",
///     "Fetch the latest price for a ticker symbol.",
///     json!({"type": "object", "properties": {"symbol": {"type": "string"}}}),
/// );
/// let document = ToolDocument::new(&quote, Some("finance"));
/// let index = Bm25Index::with_fields([document.fields(FieldWeights::default())]);
/// assert_eq!(index.search("finance symbol", 1)[0].doc, 0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ToolDocument<'a> {
    name: &'a str,
    description: &'a str,
    /// The top-level `properties` object, read lazily: no copy, no allocation.
    properties: Option<&'a Map<String, Value>>,
    family: &'a str,
}

impl<'a> ToolDocument<'a> {
    /// Reads a tool's declaration and family.
    pub fn new(schema: &'a ToolSchema, family: Option<&'a str>) -> Self {
        Self {
            name: &schema.name,
            description: &schema.description,
            properties: schema.parameters.get("properties").and_then(Value::as_object),
            family: family.unwrap_or_default(),
        }
    }

    /// The weighted fields, ready for [`Bm25Index::with_fields`](super::Bm25Index::with_fields):
    /// name, description, family, then each top-level parameter's name and description.
    pub fn fields(self, weights: FieldWeights) -> impl Iterator<Item = (f32, &'a str)> {
        let parameters = self.properties.into_iter().flatten().flat_map(move |(name, property)| {
            let description = property.get("description").and_then(Value::as_str).unwrap_or_default();
            [(weights.parameter_names, name.as_str()), (weights.parameter_descriptions, description)]
        });
        [(weights.name, self.name), (weights.description, self.description), (weights.family, self.family)]
            .into_iter()
            .chain(parameters)
    }
}
