//! The small news corpus the dedup and input tests share: an exact copy of the first record
//! (third) and a near copy of the second (fifth).

use serde_json::json;

pub const COUNCIL: &str = "The city council approved the new budget on Tuesday evening after a long debate over \
    school funding, road repairs and the cost of the proposed stadium. The mayor said the plan keeps taxes \
    flat for a third year while adding forty teachers and resurfacing twelve miles of road.";
pub const WEATHER: &str = "Forecasters expect heavy rain across the region on Monday, with up to forty millimetres \
    in the hills and strong gusts along the coast. Drivers are advised to allow extra time for the morning \
    commute, and the ferry service may run a reduced timetable if winds are strong.";
pub const LIBRARY: &str = "From next month the central library will open until nine in the evening on weekdays \
    and from ten until four on Sundays, following a survey in which two thirds of members asked for it.";

pub fn corpus() -> String {
    [
        json!({"id": "council", "text": COUNCIL, "url": "https://news.example.com/budget", "fetched_at": "2024-07-25T10:00:00Z"}),
        json!({"id": "weather", "text": WEATHER, "extra": {"kept": "as is"}}),
        json!({"id": "council-copy", "text": COUNCIL.to_uppercase(), "fetched_at": "2024-07-26T10:00:00Z"}),
        json!({"id": "library", "text": LIBRARY}),
        json!({"id": "weather-near", "text": format!("{WEATHER} Updated.")}),
    ]
    .iter()
    .map(|v| format!("{v}\n"))
    .collect()
}
