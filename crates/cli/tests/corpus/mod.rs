//! The small news corpus the dedup and input tests share: an exact copy of the first record
//! (third) and a near copy of the second (fifth); and a big random one.

#![allow(dead_code)] // Each test file uses part of this module.

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

/// A corpus of `documents` JSON lines of 80 random words each (about 600 bytes; text that
/// compresses about 1.6 times), every tenth an exact copy of the one before it: big enough,
/// made in the test, to catch a run in the middle.
pub fn random_corpus(documents: usize) -> String {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        // xorshift64: reproducible, no dependency.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut corpus = String::new();
    let mut text = String::new();
    for i in 0..documents {
        if i % 10 != 9 {
            text = (0..80)
                .map(|_| {
                    let word = next();
                    (0..3 + word % 6)
                        .map(|j| char::from(b'a' + ((word >> (7 * j + 4)) % 26) as u8))
                        .collect::<String>()
                })
                .collect::<Vec<_>>()
                .join(" ");
        }
        corpus.push_str(&json!({ "id": format!("d{i}"), "text": text }).to_string());
        corpus.push('\n');
    }
    corpus
}
