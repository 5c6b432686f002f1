//! The `python-simhash` profile against values made by the real PyPI package `simhash` 2.1.2
//! (fixture made by `tools/make_python_simhash_fixture.py`; 617 texts of every kind).

use neardup_core::{Fingerprinter, Profile, Simhash};

#[derive(serde::Deserialize)]
struct Case {
    text: String,
    value: String,
    kind: String,
}

#[test]
fn python_simhash_profile_matches_the_pypi_package_bit_for_bit() {
    let fixture = include_str!("fixtures/python_simhash.jsonl");
    let fingerprinter = Fingerprinter::new(Profile::python_simhash()).unwrap();
    let mut failures = Vec::new();
    let mut cases = 0;
    for line in fixture.lines() {
        let case: Case = serde_json::from_str(line).unwrap();
        let expected: Simhash = case.value.parse().unwrap();
        let actual = fingerprinter.fingerprint(&case.text).simhash;
        if actual != expected {
            let preview: String = case.text.chars().take(40).collect();
            failures.push(format!("{} {preview:?}: {actual} != {expected}", case.kind));
        }
        cases += 1;
    }
    assert!(cases >= 600, "fixture has only {cases} cases");
    assert!(
        failures.is_empty(),
        "{} of {cases} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn python_simhash_sanity_values() {
    let fingerprinter = Fingerprinter::new(Profile::python_simhash()).unwrap();
    let value = |text: &str| fingerprinter.fingerprint(text).simhash.to_string();
    assert_eq!(value("How are you? I am fine. Thanks."), "2f73898a203ee80b");
    assert_eq!(value(""), "e9800998ecf8427e");
}
