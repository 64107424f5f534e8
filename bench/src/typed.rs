//! The typed-output suite: 24 extractions, each a short text and the Rust type its facts go
//! into, run through [`Agent::run_typed`] against a real model. A third of them (every third
//! task) is held out: no wording, type or default was tuned on them.
//!
//! Each task records whether the first answer validated, whether an answer validated within
//! the retries, and whether the value is right (every expected field equal; strings compared
//! without case or surrounding space, numbers within 0.01).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tinytools::model::{ChatModel, Message};
use tinytools::run::{Agent, RunFailure, RunPolicy};

/// A person in a text.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Contact {
    /// The person's full name.
    pub name: String,
    /// Age in years, when the text gives it.
    pub age: Option<u32>,
    /// Email address, when the text gives one.
    pub email: Option<String>,
}

/// An invoice's facts.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Invoice {
    /// Who is billed (a company or person).
    pub customer: String,
    /// The total amount, as a number (no currency sign).
    pub total: f64,
    /// The three-letter currency code, such as USD or EUR.
    pub currency: String,
    /// Whether the text says it is already paid.
    pub paid: bool,
}

/// A meeting.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Meeting {
    /// What the meeting is about, in a few words.
    pub topic: String,
    /// The day, as written in the text (for example "Friday" or "2027-03-04").
    pub day: String,
    /// The people attending, by first name.
    pub attendees: Vec<String>,
}

/// A product listing.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Product {
    /// The product's name.
    pub name: String,
    /// The price, as a number.
    pub price: f64,
    /// Whether it is in stock.
    pub in_stock: bool,
    /// How it is sold.
    pub unit: Unit,
}

/// How a product is sold.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// One item.
    Piece,
    /// By weight, per kilogram.
    Kilogram,
    /// By volume, per litre.
    Litre,
}

/// A flight.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Flight {
    /// The flight number, such as BA117.
    pub number: String,
    /// The departure airport's three-letter code.
    pub from: String,
    /// The arrival airport's three-letter code.
    pub to: String,
    /// How many passengers are booked on it.
    pub passengers: u32,
}

/// A support ticket.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Ticket {
    /// A short title for the problem.
    pub title: String,
    /// How urgent it is.
    pub priority: Priority,
    /// The product the problem is with.
    pub product: String,
}

/// A ticket's urgency.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    /// Can wait.
    Low,
    /// Soon.
    Medium,
    /// Now.
    High,
}

/// One extraction.
#[derive(Clone, Copy, Debug)]
pub struct Task {
    /// Its id.
    pub id: &'static str,
    /// The type its answer takes.
    pub kind: Kind,
    /// The text to extract from.
    pub text: &'static str,
    /// The fields that must be right, as JSON.
    pub expected: fn() -> Value,
}

/// The output types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Kind {
    Contact,
    Invoice,
    Meeting,
    Product,
    Flight,
    Ticket,
}

impl Task {
    /// Held out of tuning: every third task.
    pub fn held_out(&self, index: usize) -> bool {
        index % 3 == 2
    }
}

macro_rules! task {
    ($id:literal, $kind:ident, $text:literal, $expected:tt) => {
        Task { id: $id, kind: Kind::$kind, text: $text, expected: || json!($expected) }
    };
}

/// The 24 tasks, in order.
pub fn tasks() -> Vec<Task> {
    vec![
        task!("contact-1", Contact, "Hi, I'm Maria Gonzales, 41, reach me at maria.g@example.org.", {"name": "Maria Gonzales", "age": 41, "email": "maria.g@example.org"}),
        task!("invoice-1", Invoice, "Invoice 2231 for Northwind Traders: total due 1,250.00 EUR. Status: unpaid.", {"customer": "Northwind Traders", "total": 1250.0, "currency": "EUR", "paid": false}),
        task!("meeting-1", Meeting, "Let's do the budget review on Thursday with Priya, Tom and Lena.", {"day": "Thursday", "attendees": ["Priya", "Tom", "Lena"]}),
        task!("product-1", Product, "Fresh basil, 2.40 per kilogram, currently in stock.", {"price": 2.4, "in_stock": true, "unit": "kilogram"}),
        task!("flight-1", Flight, "Flight LH400 from FRA to JFK has 212 passengers booked.", {"number": "LH400", "from": "FRA", "to": "JFK", "passengers": 212}),
        task!("ticket-1", Ticket, "URGENT: the Acme Router X2 reboots every few minutes and our whole office is offline.", {"priority": "high", "product": "Acme Router X2"}),
        task!("contact-2", Contact, "Please add Kenji Watanabe to the list. No email on file.", {"name": "Kenji Watanabe", "email": null}),
        task!("invoice-2", Invoice, "Received with thanks: $86.50 from Blue Harbor Cafe for invoice 17 (paid in full).", {"customer": "Blue Harbor Cafe", "total": 86.5, "currency": "USD", "paid": true}),
        task!("meeting-2", Meeting, "Sprint planning is on 2027-03-04. Attendees: Omar and Sofia.", {"day": "2027-03-04", "attendees": ["Omar", "Sofia"]}),
        task!("product-2", Product, "Olive oil, extra virgin, 9.99 a litre. Sold out until next week.", {"price": 9.99, "in_stock": false, "unit": "litre"}),
        task!("flight-2", Flight, "BA117 London Heathrow (LHR) to New York (JFK), 5 passengers in the group booking.", {"number": "BA117", "from": "LHR", "to": "JFK", "passengers": 5}),
        task!("ticket-2", Ticket, "Small thing, no rush: the PhotoSuite app shows the wrong icon in dark mode.", {"priority": "low", "product": "PhotoSuite"}),
        task!("contact-3", Contact, "From: Dr. Amara Okafor <amara@okafor-clinic.com>, aged 58", {"name": "Amara Okafor", "age": 58, "email": "amara@okafor-clinic.com"}),
        task!("invoice-3", Invoice, "Globex Corporation owes us 12,000 USD for the Q3 licence; the invoice is still open.", {"customer": "Globex Corporation", "total": 12000.0, "currency": "USD", "paid": false}),
        task!("meeting-3", Meeting, "Design sync Monday: Ana, Bruno, Chen and Dmitri will join.", {"day": "Monday", "attendees": ["Ana", "Bruno", "Chen", "Dmitri"]}),
        task!("product-3", Product, "USB-C cable, 1 m, 7.50 each. In stock.", {"price": 7.5, "in_stock": true, "unit": "piece"}),
        task!("flight-3", Flight, "Reminder: AF1234 departs CDG for NCE with 143 passengers on board.", {"number": "AF1234", "from": "CDG", "to": "NCE", "passengers": 143}),
        task!("ticket-3", Ticket, "When you get a chance this week, the invoice export in LedgerPro drops the last row.", {"priority": "medium", "product": "LedgerPro"}),
        task!("contact-4", Contact, "New signup: Lars Eriksen (lars.eriksen@example.no), 29 years old.", {"name": "Lars Eriksen", "age": 29, "email": "lars.eriksen@example.no"}),
        task!("invoice-4", Invoice, "Initech paid invoice 5521 of GBP 740.25 yesterday.", {"customer": "Initech", "total": 740.25, "currency": "GBP", "paid": true}),
        task!("meeting-4", Meeting, "Quarterly retro, Friday. Invited: Yuki, Hassan.", {"day": "Friday", "attendees": ["Yuki", "Hassan"]}),
        task!("product-4", Product, "Rice (basmati) sold by weight at 3.20 per kg; plenty available.", {"price": 3.2, "in_stock": true, "unit": "kilogram"}),
        task!("flight-4", Flight, "Flight QF1 SYD-SIN, passenger count 301.", {"number": "QF1", "from": "SYD", "to": "SIN", "passengers": 301}),
        task!("ticket-4", Ticket, "Production is down! CloudSync stopped syncing for all customers an hour ago.", {"priority": "high", "product": "CloudSync"}),
    ]
}

/// What one task came to.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// The task.
    pub id: &'static str,
    /// Whether it is held out.
    pub held_out: bool,
    /// The first answer validated.
    pub first_valid: bool,
    /// An answer validated within the retries.
    pub valid: bool,
    /// The validated value has every expected field right.
    pub correct: bool,
    /// Model requests made.
    pub requests: usize,
    /// The validated value, or the error.
    pub answer: Value,
}

/// Runs one task on `model` with `retries` retries.
pub async fn run(task: &Task, index: usize, model: Arc<dyn ChatModel>, retries: usize) -> Outcome {
    let agent = Agent::builder(model)
        .instructions("Extract the facts the user's text gives. Use null for a fact the text does not give.")
        .policy(RunPolicy::default().with_output_retries(retries))
        .build();
    let agent = match agent {
        Ok(agent) => agent,
        Err(error) => return failed(task, index, 0, &error.to_string()),
    };
    let messages = vec![Message::user(task.text)];
    let result = match task.kind {
        Kind::Contact => typed::<Contact>(&agent, messages).await,
        Kind::Invoice => typed::<Invoice>(&agent, messages).await,
        Kind::Meeting => typed::<Meeting>(&agent, messages).await,
        Kind::Product => typed::<Product>(&agent, messages).await,
        Kind::Flight => typed::<Flight>(&agent, messages).await,
        Kind::Ticket => typed::<Ticket>(&agent, messages).await,
    };
    match result {
        Ok((value, requests)) => Outcome {
            id: task.id,
            held_out: task.held_out(index),
            first_valid: requests == 1,
            valid: true,
            correct: matches(&(task.expected)(), &value),
            requests,
            answer: value,
        },
        Err((requests, message)) => failed(task, index, requests, &message),
    }
}

fn failed(task: &Task, index: usize, requests: usize, message: &str) -> Outcome {
    Outcome {
        id: task.id,
        held_out: task.held_out(index),
        first_valid: false,
        valid: false,
        correct: false,
        requests,
        answer: json!({"error": message}),
    }
}

/// The validated JSON value and the requests made, or the requests and the error.
async fn typed<T: DeserializeOwned + JsonSchema>(
    agent: &Agent,
    messages: Vec<Message>,
) -> Result<(Value, usize), (usize, String)> {
    match agent.run_typed::<T>(messages).await {
        Ok(typed) => Ok((typed.outcome.output.unwrap_or(Value::Null), typed.outcome.turns)),
        Err(error) => {
            let message = match &error.source {
                RunFailure::Output(invalid) => {
                    format!("{} (last answer: {})", invalid.errors.join("; "), invalid.answer)
                }
                other => other.to_string(),
            };
            Err((error.turns, message))
        }
    }
}

/// Whether every expected field of `expected` is in `got`, equal up to case, surrounding
/// space and 0.01.
pub fn matches(expected: &Value, got: &Value) -> bool {
    match (expected, got) {
        (Value::Object(want), Value::Object(have)) => {
            want.iter().all(|(key, value)| matches(value, have.get(key).unwrap_or(&Value::Null)))
        }
        (Value::Array(want), Value::Array(have)) => {
            want.len() == have.len() && want.iter().zip(have).all(|(w, h)| matches(w, h))
        }
        (Value::String(want), Value::String(have)) => want.trim().eq_ignore_ascii_case(have.trim()),
        (Value::Number(want), Value::Number(have)) => {
            (want.as_f64().unwrap_or(f64::NAN) - have.as_f64().unwrap_or(f64::NAN)).abs() < 0.01
        }
        (want, have) => want == have,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_suite_has_24_tasks_and_a_third_held_out() {
        let tasks = tasks();
        assert_eq!(tasks.len(), 24);
        assert_eq!(tasks.iter().enumerate().filter(|(i, t)| t.held_out(*i)).count(), 8);
    }

    #[test]
    fn matching_ignores_case_space_and_extra_fields() {
        assert!(matches(&json!({"a": "Foo", "n": 1.0}), &json!({"a": " foo", "n": 1.004, "b": 2})));
        assert!(!matches(&json!({"a": ["x", "y"]}), &json!({"a": ["x"]})));
        assert!(matches(&json!({"e": null}), &json!({})));
    }
}
