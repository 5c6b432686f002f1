//! `openapi.json` field by field against what the server writes: every field of a real answer
//! (a database's check outcomes, matches, records and stats) is in its schema with the
//! schema's type, and every field the schema lists is written by some answer; every enum value
//! the schema lists is a name the Rust type reads.

use std::collections::BTreeSet;

use neardup_core::minhash::MinHashOptions;
use neardup_dedup::{Kind, Measure, Policy};
use neardup_store::{InsertMode, MemoryStore, NearDupDb, NewDocument, OpenOptions};
use serde_json::{json, Value};

const TEXT: &str =
    "The city council approved the 2025 budget on Tuesday after a long debate about \
    library funding and road repairs across the northern districts.";
const NEAR: &str =
    "The city council approved the 2025 budget on Tuesday after a long debate about \
    library funding and road repairs across the northern district.";

fn spec() -> Value {
    serde_json::from_str(include_str!("../src/openapi.json")).unwrap()
}

/// The schema `reference` (`#/components/schemas/NAME`) points to.
fn resolve<'a>(spec: &'a Value, reference: &str) -> &'a Value {
    let name = reference.strip_prefix("#/components/schemas/").unwrap();
    &spec["components"]["schemas"][name]
}

/// Checks every sample against the object schema `name` (see the module documentation).
fn conforms(spec: &Value, name: &str, samples: &[Value]) {
    let schema = &spec["components"]["schemas"][name];
    let properties = schema["properties"].as_object().unwrap();
    let mut written = BTreeSet::new();
    for sample in samples {
        let object = sample
            .as_object()
            .unwrap_or_else(|| panic!("{name}: {sample}"));
        for required in schema["required"].as_array().into_iter().flatten() {
            let required = required.as_str().unwrap();
            assert!(
                object.contains_key(required),
                "{name}.{required} missing: {sample}"
            );
        }
        for (field, value) in object {
            let property = properties
                .get(field)
                .unwrap_or_else(|| panic!("{name}.{field} is written but not in openapi.json"));
            has_type(spec, &format!("{name}.{field}"), property, value);
            written.insert(field.clone());
        }
    }
    for field in properties.keys() {
        assert!(
            written.contains(field),
            "{name}.{field} is in openapi.json but no answer here writes it"
        );
    }
}

/// Checks one value against one property's schema.
fn has_type(spec: &Value, place: &str, property: &Value, value: &Value) {
    if let Some(reference) = property["$ref"].as_str() {
        let name = reference.rsplit('/').next().unwrap();
        conforms(spec, name, std::slice::from_ref(value));
        return;
    }
    if value.is_null() {
        assert_eq!(
            property["nullable"], true,
            "{place} is null but not nullable"
        );
        return;
    }
    let ok = match property["type"].as_str().unwrap() {
        "string" => value.is_string(),
        "integer" => value.is_u64() || value.is_i64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => {
            let items = value.as_array().unwrap();
            for item in items {
                has_type(spec, place, &property["items"], item);
            }
            true
        }
        "object" => value.is_object(),
        other => panic!("{place}: type {other} not checked here"),
    };
    assert!(ok, "{place}: {value} is not of type {}", property["type"]);
    if let Some(allowed) = property["enum"].as_array() {
        assert!(
            allowed.contains(value),
            "{place}: {value} not in {allowed:?}"
        );
    }
}

fn doc(id: &str, text: &str) -> NewDocument {
    NewDocument {
        id: Some(id.into()),
        url: Some(format!("https://example.com/{id}")),
        title: Some(format!("Title of {id}")),
        fetched_at: Some("2026-11-25T10:00:00Z".into()),
        text: text.into(),
    }
}

#[test]
fn answers_match_the_schemas_field_by_field() {
    let spec = spec();
    let db = NearDupDb::open(
        Box::new(MemoryStore::new("openapi")),
        OpenOptions::default(),
    )
    .unwrap();
    let unique = db
        .check_and_insert(&doc("a", TEXT), InsertMode::IfUnique)
        .unwrap();
    let exact = db.check(&doc("b", TEXT)).unwrap();
    let near = db.check(&doc("c", NEAR)).unwrap();
    let kinds: Vec<_> = [&exact, &near]
        .iter()
        .map(|o| o.verdict.duplicate().unwrap().kind)
        .collect();
    assert_eq!(kinds, [Kind::Exact, Kind::Near]);
    let outcomes: Vec<Value> = [&unique, &exact, &near]
        .iter()
        .map(|o| serde_json::to_value(o).unwrap())
        .collect();
    conforms(&spec, "CheckOutcome", &outcomes);
    // A profile with MinHash signatures stores them in its records too.
    let mut policy = Policy::default();
    policy.profile.minhash = Some(MinHashOptions::default());
    let options = OpenOptions {
        policy: Some(policy),
        ..OpenOptions::default()
    };
    let signed = NearDupDb::open(Box::new(MemoryStore::new("minhash")), options).unwrap();
    signed.insert(&doc("a", TEXT)).unwrap();
    let records: Vec<Value> = [db.get("a"), signed.get("a")]
        .into_iter()
        .map(|record| serde_json::to_value(record.unwrap().unwrap()).unwrap())
        .collect();
    conforms(&spec, "Record", &records);
    conforms(
        &spec,
        "Stats",
        &[serde_json::to_value(db.stats().unwrap()).unwrap()],
    );
}

#[test]
fn every_enum_value_in_the_schemas_is_a_name_the_types_read() {
    let spec = spec();
    let outcome = &spec["components"]["schemas"]["CheckOutcome"]["properties"];
    let matched = &resolve(&spec, "#/components/schemas/Match")["properties"];
    for properties in [outcome, matched] {
        for value in properties["kind"]["enum"].as_array().unwrap() {
            serde_json::from_value::<Kind>(value.clone()).unwrap();
        }
        for value in properties["measure"]["enum"].as_array().unwrap() {
            serde_json::from_value::<Measure>(value.clone()).unwrap();
        }
    }
    let verdicts: Vec<Value> = outcome["verdict"]["enum"].as_array().unwrap().clone();
    for verdict in &verdicts {
        // A verdict is read with the fields its kind needs.
        let fields = json!({"verdict": verdict, "duplicate_of": "a", "kind": "near", "distance": 1,
            "measure": "jaccard", "value": 0.95, "threshold": 0.9});
        let read: neardup_dedup::Verdict<String> = serde_json::from_value(fields).unwrap();
        assert_eq!(&serde_json::to_value(&read).unwrap()["verdict"], verdict);
    }
    let insert = &spec["components"]["parameters"]["Insert"]["schema"]["enum"];
    for value in insert.as_array().unwrap() {
        serde_json::from_value::<neardup_store::InsertMode>(value.clone()).unwrap();
    }
}
