//! Families `travel` and `utilities`: weather, flights, hotels, directions, translation, units, news.

use std::sync::Arc;

use serde_json::{Value, json};
use tinytools::{Refusal, Tool, tool};

use super::stable_number;

pub(super) fn tools() -> Vec<Arc<dyn Tool>> {
    vec![
        Arc::new(WeatherForecast),
        Arc::new(FlightSearch),
        Arc::new(HotelSearch),
        Arc::new(MapsDirections),
        Arc::new(TranslateText),
        Arc::new(UnitConvert),
        Arc::new(NewsHeadlines),
    ]
}

/// Get the weather forecast for a city for the next few days.
#[tool(exposure = "deferred", family = "travel", read_only, open_world = true)]
pub async fn weather_forecast(
    /// City name, such as Lisbon.
    city: String,
    /// Number of days, 1 to 7.
    #[schemars(range(min = 1, max = 7))]
    days: Option<u8>,
) -> Value {
    let high = 10 + stable_number(&city, 20);
    json!({"city": city, "days": days.unwrap_or(3), "high_c": high, "low_c": high - 7, "summary": "partly cloudy"})
}

/// Search one-way or return flights between two airports.
#[tool(exposure = "deferred", family = "travel", read_only, open_world = true)]
pub async fn flight_search(
    /// Departure airport IATA code, such as LIS.
    origin: String,
    /// Arrival airport IATA code, such as JFK.
    destination: String,
    /// Departure date, YYYY-MM-DD.
    date: String,
    /// Return date for a round trip, YYYY-MM-DD.
    return_date: Option<String>,
    /// Number of adult passengers.
    passengers: Option<u8>,
) -> Value {
    json!({"origin": origin, "destination": destination, "date": date, "return_date": return_date, "passengers": passengers.unwrap_or(1), "offers": [{"airline": "TP", "price_usd": 612}]})
}

/// Search hotels in a city for given dates and guests.
#[tool(exposure = "deferred", family = "travel", read_only, open_world = true)]
pub async fn hotel_search(
    /// City name.
    city: String,
    /// Check-in date, YYYY-MM-DD.
    check_in: String,
    /// Check-out date, YYYY-MM-DD.
    check_out: String,
    /// Number of guests.
    guests: Option<u8>,
) -> Value {
    json!({"city": city, "check_in": check_in, "check_out": check_out, "guests": guests.unwrap_or(1), "hotels": [{"name": "Casa Azul", "price_usd": 140}]})
}

/// Get directions and travel time between two places by car, transit, bike or foot.
#[tool(exposure = "deferred", family = "travel", read_only, open_world = true)]
pub async fn maps_directions(
    /// Starting address or place name.
    from: String,
    /// Destination address or place name.
    to: String,
    /// "driving", "transit", "bicycling" or "walking".
    mode: Option<String>,
) -> Value {
    json!({"from": from, "to": to, "mode": mode.unwrap_or_else(|| "driving".into()), "minutes": 5 + stable_number(&to, 60)})
}

/// Translate text into another language.
#[tool(exposure = "deferred", family = "utilities", read_only, open_world = true)]
pub async fn translate_text(
    /// The text to translate.
    text: String,
    /// Target language code, such as "fr" or "ja".
    target_language: String,
) -> String {
    format!("[{target_language}] {text}")
}

/// Convert a quantity between units of length, mass, volume or temperature.
#[tool(exposure = "deferred", family = "utilities", read_only)]
pub async fn unit_convert(
    /// The quantity.
    value: f64,
    /// Unit to convert from, such as "mi", "kg" or "F".
    from_unit: String,
    /// Unit to convert to, such as "km", "lb" or "C".
    to_unit: String,
) -> Result<Value, Refusal> {
    let factor = match (from_unit.as_str(), to_unit.as_str()) {
        ("mi", "km") => 1.609_344,
        ("km", "mi") => 1.0 / 1.609_344,
        ("kg", "lb") => 2.204_622_6,
        ("lb", "kg") => 1.0 / 2.204_622_6,
        ("F", "C") => return Ok(json!({"value": (value - 32.0) * 5.0 / 9.0, "unit": "C"})),
        ("C", "F") => return Ok(json!({"value": value * 9.0 / 5.0 + 32.0, "unit": "F"})),
        (from, to) => return Err(format!("cannot convert {from} to {to}; supported: mi/km, kg/lb, F/C").into()),
    };
    Ok(json!({"value": value * factor, "unit": to_unit}))
}

/// Get today's top news headlines, optionally on one topic.
#[tool(exposure = "deferred", family = "utilities", read_only, open_world = true)]
pub async fn news_headlines(
    /// Topic, such as "technology" or "markets".
    topic: Option<String>,
    /// Two-letter country code for regional news.
    country: Option<String>,
) -> Value {
    json!({"topic": topic, "country": country, "headlines": ["Markets open higher", "New tool-use benchmark released"]})
}
