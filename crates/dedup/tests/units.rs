//! Dedup below the document against a brute-force reference (a set of the normalised units'
//! text, or of their n-grams of words as strings, in keep order), in memory and spilled to
//! disk, with and without a seen file.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use neardup_core::normalize::{NormalizeOptions, Normalizer};
use neardup_core::tokenize::Tokenizer;
use neardup_dedup::units::{
    Cover, DocumentUnits, NgramRule, Rewritten, Unit, UnitDedup, UnitRule, UnitSplitter,
};
use neardup_dedup::Budget;
use neardup_ingest::{Corpus, CorpusError, CorpusOptions, NoHooks};
use proptest::prelude::*;

/// The reference: each key as the text of its normalised units (the exact rule) or of its
/// n-grams of words (the fraction rule), first occurrence kept.
fn reference(rule: UnitRule, texts: &[String], seen: &mut HashSet<String>) -> Vec<Rewritten> {
    let splitter = UnitSplitter::new(rule.unit, NormalizeOptions::web());
    let normalizer = Normalizer::new(NormalizeOptions::web());
    texts
        .iter()
        .map(|text| {
            let units = splitter.split(text);
            let normalized: Vec<String> = units
                .segments
                .iter()
                .map(|s| {
                    let mut out = String::new();
                    normalizer.normalize_into(&text[s.start..s.content_end], &mut out);
                    out
                })
                .collect();
            let removed = match rule.ngrams {
                None => {
                    let flags: Vec<bool> = (0..units.keys.len())
                        .map(|i| !seen.insert(normalized[units.covered(i)].join("\n")))
                        .collect();
                    units.removed(&flags)
                }
                Some(ngrams) => normalized
                    .iter()
                    .map(|unit| fraction_seen(unit, ngrams, seen))
                    .collect(),
            };
            // One key a unit, its flag the unit's removal: the rewrite alone is the library's.
            let by_unit = DocumentUnits {
                keys: vec![0; units.segments.len()],
                segments: units.segments,
                cover: Cover::Window(1),
            };
            Rewritten::new(text, &by_unit, &removed, rule.min_chars)
        })
        .collect()
}

/// The fraction rule on one normalised unit: its n-grams of words as strings (or the unit
/// itself when it has `n` words or fewer), each looked up and added in order; whether at
/// least the threshold of them were seen.
fn fraction_seen(unit: &str, rule: NgramRule, seen: &mut HashSet<String>) -> bool {
    let mut words = Vec::new();
    Tokenizer::Words.for_each_token(unit, |w| words.push(w));
    let keys: Vec<String> = if words.len() <= rule.n as usize {
        vec![format!("unit {unit}")]
    } else {
        words
            .windows(rule.n as usize)
            .map(|gram| format!("gram {}", gram.join(" ")))
            .collect()
    };
    let count = keys
        .iter()
        .filter(|key| !seen.insert((*key).clone()))
        .count();
    count as f64 >= rule.threshold * keys.len() as f64
}

fn corpus_of(dir: &Path, name: &str, texts: &[String]) -> Corpus {
    let path = dir.join(name);
    let lines: Vec<String> = texts
        .iter()
        .enumerate()
        .map(|(i, t)| serde_json::json!({"id": i.to_string(), "text": t}).to_string() + "\n")
        .collect();
    std::fs::write(&path, lines.concat()).unwrap();
    let options = CorpusOptions {
        inputs: vec![path],
        ..CorpusOptions::default()
    };
    Corpus::new(options, true, Arc::new(NoHooks)).unwrap()
}

/// Runs the dedup with `set_memory` bytes for the keys; returns the rewrites and the passes.
fn run(
    dedup: &mut UnitDedup,
    corpus: &Corpus,
) -> Result<(Vec<Rewritten>, u32), neardup_dedup::DedupError> {
    let mut out = Vec::new();
    let figures = dedup.run(
        corpus,
        |_, rewritten| Ok::<_, Failure>(rewritten),
        |rewritten| {
            out.push(rewritten);
            Ok(())
        },
    );
    let figures = figures.map_err(|Failure(e)| e)?;
    Ok((out, figures.passes))
}

/// The error of a test run.
#[derive(Debug)]
struct Failure(neardup_dedup::DedupError);

impl From<neardup_dedup::DedupError> for Failure {
    fn from(e: neardup_dedup::DedupError) -> Self {
        Failure(e)
    }
}

impl From<CorpusError> for Failure {
    fn from(e: CorpusError) -> Self {
        Failure(e.into())
    }
}

fn budget(dir: &Path) -> Budget {
    Budget::new(Budget::MIN_MEMORY, Some(dir.to_path_buf())).unwrap()
}

const PIECES: &[&str] = &[
    "Home | News | Sport",
    "Accept cookies?",
    "The council met. It voted!",
    "the COUNCIL met.  It voted!",
    "Rain is expected on Monday.",
    "Subscribe to our newsletter.",
    "第一句。第二句！",
    "A unique story about a cat. It sat.",
    "Copyright 2024.",
    "Wait… what?! (Yes.) Go.",
];

/// Documents of pieces joined by blank lines, single line breaks or spaces.
fn documents() -> impl Strategy<Value = Vec<String>> {
    let doc = prop::collection::vec((0..PIECES.len(), 0..3usize), 0..7).prop_map(|parts| {
        let mut text = String::new();
        for (piece, join) in parts {
            text.push_str(PIECES[piece]);
            text.push_str(["\n\n", "\n", " "][join]);
        }
        text
    });
    prop::collection::vec(doc, 0..25)
}

/// Rules of every unit; for paragraphs and lines, the exact rule or the fraction rule (n from
/// 1 to 4 words, thresholds of 1, 0.5 and between).
fn rules() -> impl Strategy<Value = UnitRule> {
    let unit = prop_oneof![
        Just(Unit::Paragraph),
        Just(Unit::Line),
        (1u32..4).prop_map(Unit::Sentences)
    ];
    let threshold = prop_oneof![Just(1.0), Just(0.5), 0.01f64..1.0];
    let ngrams = prop_oneof![
        Just(None),
        (1u32..5, threshold).prop_map(|(n, threshold)| Some(NgramRule { n, threshold })),
    ];
    (unit, 0u64..30, ngrams).prop_map(|(unit, min_chars, ngrams)| UnitRule {
        unit,
        min_chars,
        ngrams: ngrams.filter(|_| !matches!(unit, Unit::Sentences(_))),
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn in_memory_and_spilled_runs_match_the_reference(
        texts in documents(),
        rule in rules(),
        set_memory in prop_oneof![Just(0u64), 64u64..4096, Just(1u64 << 30)],
    ) {
        let dir = tempfile::tempdir().unwrap();
        let corpus = corpus_of(dir.path(), "c.jsonl", &texts);
        let expected = reference(rule, &texts, &mut HashSet::new());
        let mut dedup = UnitDedup::new(rule, NormalizeOptions::web(), &budget(dir.path()))
            .with_set_memory(set_memory);
        let (got, passes) = run(&mut dedup, &corpus).unwrap();
        prop_assert_eq!(got, expected);
        if set_memory == 0 && !texts.iter().all(|t| t.trim().is_empty()) {
            prop_assert_eq!(passes, 2, "no room: the keys go to disk");
        }
    }

    #[test]
    fn a_seen_file_carries_the_keys_to_the_next_run(
        first in documents(),
        second in documents(),
        rule in rules(),
        spill in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let set_memory = if spill { 0 } else { 1 << 30 };
        let seen_path = dir.path().join("seen.units");
        let mut seen = HashSet::new();
        reference(rule, &first, &mut seen);
        let expected = reference(rule, &second, &mut seen);
        for (name, texts) in [("a.jsonl", &first), ("b.jsonl", &second)] {
            let corpus = corpus_of(dir.path(), name, texts);
            let mut dedup = UnitDedup::new(rule, NormalizeOptions::web(), &budget(dir.path()))
                .with_set_memory(set_memory)
                .with_seen(&seen_path)
                .unwrap();
            let (got, _) = run(&mut dedup, &corpus).unwrap();
            if name == "b.jsonl" {
                prop_assert_eq!(&got, &expected);
            }
            let mut saved = Vec::new();
            let count = dedup.write_seen(&mut saved).unwrap();
            std::fs::write(&seen_path, saved).unwrap();
            if name == "b.jsonl" {
                prop_assert_eq!(count as usize, seen.len(), "the union, each key once");
            }
        }
    }
}

#[test]
fn navigation_repeated_across_pages_is_removed_after_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let page = |story: &str| format!("Home | News | Sport\n\n{story}\n\nAccept cookies?\n");
    let texts = vec![
        page("A story about the council."),
        page("Rain on Monday."),
        page("Rain on Monday."),
    ];
    let corpus = corpus_of(dir.path(), "c.jsonl", &texts);
    let rule = UnitRule::new(Unit::Paragraph);
    let mut dedup = UnitDedup::new(rule, NormalizeOptions::web(), &budget(dir.path()));
    let (got, passes) = run(&mut dedup, &corpus).unwrap();
    assert_eq!(passes, 1);
    assert_eq!(got[0].text, texts[0]);
    assert_eq!(got[1].text, "Rain on Monday.\n\n");
    assert_eq!(got[1].report.removed_spans, [[0, 21], [38, 54]]);
    assert!(got[2].report.dropped, "nothing left");
}

#[test]
fn a_paragraph_mostly_seen_before_goes_under_the_fraction_rule() {
    let dir = tempfile::tempdir().unwrap();
    let texts = vec![
        "The council met on Monday and approved the new budget for the river bridge.".to_string(),
        "Intro.\n\nthe COUNCIL met on Monday and approved the new budget for the school.\n\nThe council met on Monday and approved the new budget for the river bridge again."
            .to_string(),
    ];
    let corpus = corpus_of(dir.path(), "c.jsonl", &texts);
    let rule = |threshold| UnitRule {
        ngrams: Some(NgramRule { n: 3, threshold }),
        ..UnitRule::new(Unit::Paragraph)
    };
    // The second paragraph shares 10 of its 11 3-grams with the first document, the third 12
    // of 13.
    let mut half = UnitDedup::new(rule(0.5), NormalizeOptions::web(), &budget(dir.path()));
    let (got, _) = run(&mut half, &corpus).unwrap();
    assert_eq!(got[0].report.units_removed, 0);
    assert_eq!(got[1].text, "Intro.\n\n");
    let mut most = UnitDedup::new(rule(0.92), NormalizeOptions::web(), &budget(dir.path()));
    let (got, _) = run(&mut most, &corpus).unwrap();
    assert_eq!(
        got[1].report.units_removed, 1,
        "12 / 13 >= 0.92, 10 / 11 < 0.92"
    );
    assert!(got[1].text.contains("for the school"));
    let mut all = UnitDedup::new(rule(1.0), NormalizeOptions::web(), &budget(dir.path()));
    let (got, _) = run(&mut all, &corpus).unwrap();
    assert_eq!(got[1].report.units_removed, 0);
}

#[test]
fn a_seen_file_of_another_rule_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("seen.units");
    let corpus = corpus_of(dir.path(), "c.jsonl", &["One.\n\nTwo.".to_string()]);
    let with_seen = |unit| {
        UnitDedup::new(
            UnitRule::new(unit),
            NormalizeOptions::web(),
            &budget(dir.path()),
        )
        .with_seen(&path)
        .unwrap()
    };
    let mut lines = with_seen(Unit::Line);
    run(&mut lines, &corpus).unwrap();
    let mut saved = Vec::new();
    lines.write_seen(&mut saved).unwrap();
    std::fs::write(&path, saved).unwrap();
    let mut paragraphs = with_seen(Unit::Paragraph);
    let error = run(&mut paragraphs, &corpus).unwrap_err().to_string();
    assert!(error.contains("another rule"), "{error}");
    let ngrams = UnitRule {
        ngrams: Some(NgramRule {
            n: 3,
            threshold: 0.5,
        }),
        ..UnitRule::new(Unit::Line)
    };
    let mut fraction = UnitDedup::new(ngrams, NormalizeOptions::web(), &budget(dir.path()))
        .with_seen(&path)
        .unwrap();
    let error = run(&mut fraction, &corpus).unwrap_err().to_string();
    assert!(
        error.contains("3-grams"),
        "n-gram keys are not unit keys: {error}"
    );
    std::fs::write(&path, b"not a seen file").unwrap();
    let error = run(&mut paragraphs, &corpus).unwrap_err().to_string();
    assert!(error.contains("not a file of seen units"), "{error}");
}

/// Document-level dedup of `texts` by the default policy (the engine as every door calls
/// it): which are kept.
fn kept_documents(texts: &[String]) -> Vec<bool> {
    let options = neardup_dedup::DedupOptions::new(neardup_dedup::Policy::default());
    let fingerprinter = neardup_core::Fingerprinter::new(options.policy.profile.clone()).unwrap();
    let items: Vec<neardup_dedup::Item> = texts
        .iter()
        .map(|text| {
            let mut item =
                neardup_dedup::Item::new(fingerprinter.fingerprint(text), text.len() as u64);
            item.features = Some(fingerprinter.feature_set(text));
            item
        })
        .collect();
    neardup_dedup::dedup(&items, &options).unwrap().kept
}

/// Documents of the pieces, and near copies of some of them (one piece more at the end, or
/// the same text again): document-level dedup has work to do.
fn documents_with_copies() -> impl Strategy<Value = Vec<String>> {
    let story =
        prop::collection::vec((0..PIECES.len(), 0..3usize, 0..1000u32), 1..8).prop_map(|parts| {
            let mut text = String::new();
            for (piece, join, n) in parts {
                // A number makes a paragraph rarer: long documents differ, near copies do not.
                text.push_str(&format!("{} {n}", PIECES[piece]));
                text.push_str(["\n\n", "\n", " "][join]);
            }
            text
        });
    let copies = prop::collection::vec((any::<prop::sample::Index>(), 0..3usize), 0..10);
    (prop::collection::vec(story, 1..16), copies).prop_map(|(mut texts, copies)| {
        for (of, change) in copies {
            let original = texts[of.index(texts.len())].clone();
            texts.push(match change {
                0 => original,
                1 => format!("{original}\n\nAccept cookies?"),
                _ => original.to_uppercase(),
            });
        }
        texts
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// One run does both: units over the documents document-level dedup keeps give what unit
    /// dedup of the kept records alone gives (`dedup --kept` then `dedup --granularity`), in
    /// memory, spilled, and over texts in memory.
    #[test]
    fn units_over_the_kept_documents_equal_unit_dedup_of_the_kept_output(
        texts in documents_with_copies(),
        rule in rules(),
        set_memory in prop_oneof![Just(0u64), 64u64..4096, Just(1u64 << 30)],
    ) {
        let dir = tempfile::tempdir().unwrap();
        let kept = kept_documents(&texts);
        let kept_texts: Vec<String> = texts
            .iter()
            .zip(&kept)
            .filter(|(_, k)| **k)
            .map(|(t, _)| t.clone())
            .collect();
        let alone = corpus_of(dir.path(), "kept.jsonl", &kept_texts);
        let mut pipeline = UnitDedup::new(rule, NormalizeOptions::web(), &budget(dir.path()));
        let (expected, _) = run(&mut pipeline, &alone).unwrap();
        let all = corpus_of(dir.path(), "all.jsonl", &texts);
        let mut combined = UnitDedup::new(rule, NormalizeOptions::web(), &budget(dir.path()))
            .with_set_memory(set_memory)
            .over_kept(kept.clone());
        let (got, passes) = run(&mut combined, &all).unwrap();
        prop_assert_eq!(&got, &expected);
        if set_memory == 0 {
            prop_assert_eq!(passes, 2, "no room: the keys go to disk");
        }
        let mut in_memory = UnitDedup::new(rule, NormalizeOptions::web(), &budget(dir.path()))
            .over_kept(kept.clone());
        let (rewrites, figures) = in_memory.run_texts(&texts).unwrap();
        prop_assert_eq!(rewrites.iter().map(Option::is_some).collect::<Vec<_>>(), kept);
        prop_assert_eq!(rewrites.into_iter().flatten().collect::<Vec<_>>(), expected);
        prop_assert_eq!(figures.documents as usize, kept_texts.len());
    }
}

#[test]
fn a_kept_list_of_another_length_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let texts = vec!["One.".to_string(), "Two.".to_string()];
    let corpus = corpus_of(dir.path(), "c.jsonl", &texts);
    let mut dedup = UnitDedup::new(
        UnitRule::new(Unit::Paragraph),
        NormalizeOptions::web(),
        &budget(dir.path()),
    )
    .over_kept(vec![true]);
    let error = run(&mut dedup, &corpus).unwrap_err().to_string();
    assert!(error.contains("changed between reads"), "{error}");
    assert!(dedup.run_texts(&texts).is_err());
}

/// Texts, a keep order of them (each text's place) and which are kept.
fn ordered_documents() -> impl Strategy<Value = (Vec<String>, Vec<u32>, Vec<bool>)> {
    documents().prop_flat_map(|texts| {
        let n = texts.len();
        let places = Just((0..n as u32).collect::<Vec<u32>>()).prop_shuffle();
        let kept = prop::collection::vec(prop::bool::weighted(0.8), n);
        (Just(texts), places, kept)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// In keep order, the first occurrence of a unit is the one of the document taken first:
    /// the rewrites are the reference's over the kept texts taken in that order, handed back
    /// in input order; in memory, spilled, and over texts in memory.
    #[test]
    fn units_in_keep_order_match_the_reference_in_that_order(
        (texts, places, kept) in ordered_documents(),
        rule in rules(),
        set_memory in prop_oneof![Just(0u64), 64u64..4096, Just(1u64 << 30)],
    ) {
        let dir = tempfile::tempdir().unwrap();
        let mut in_order: Vec<usize> = (0..texts.len()).collect();
        in_order.sort_by_key(|&i| places[i]);
        let taken: Vec<usize> = in_order.into_iter().filter(|&i| kept[i]).collect();
        let ordered: Vec<String> = taken.iter().map(|&i| texts[i].clone()).collect();
        let rewrites = reference(rule, &ordered, &mut HashSet::new());
        let mut expected: Vec<Option<Rewritten>> = vec![None; texts.len()];
        for (&i, rewrite) in taken.iter().zip(rewrites) {
            expected[i] = Some(rewrite);
        }
        let corpus = corpus_of(dir.path(), "c.jsonl", &texts);
        let mut dedup = UnitDedup::new(rule, NormalizeOptions::web(), &budget(dir.path()))
            .with_set_memory(set_memory)
            .over_kept(kept.clone())
            .in_keep_order(places.clone());
        let (got, _) = run(&mut dedup, &corpus).unwrap();
        let wanted: Vec<Rewritten> = expected.iter().flatten().cloned().collect();
        prop_assert_eq!(got, wanted);
        let mut in_memory = UnitDedup::new(rule, NormalizeOptions::web(), &budget(dir.path()))
            .over_kept(kept.clone())
            .in_keep_order(places.clone());
        let (rewrites, _) = in_memory.run_texts(&texts).unwrap();
        prop_assert_eq!(rewrites, expected);
    }
}

#[test]
fn a_later_document_taken_first_keeps_the_shared_paragraph() {
    let dir = tempfile::tempdir().unwrap();
    let texts = vec![
        "Home | News\n\nShort.".to_string(),
        "Home | News\n\nA much longer story about the council.".to_string(),
    ];
    let corpus = corpus_of(dir.path(), "c.jsonl", &texts);
    let ranks =
        neardup_dedup::KeepPolicy::Longest.ranks(2, |i| (texts[i as usize].len() as u64, None));
    assert_eq!(ranks, [1, 0]);
    let mut dedup = UnitDedup::new(
        UnitRule::new(Unit::Paragraph),
        NormalizeOptions::web(),
        &budget(dir.path()),
    )
    .in_keep_order(ranks);
    let (got, passes) = run(&mut dedup, &corpus).unwrap();
    assert_eq!(
        got[0].text, "Short.",
        "in input order, the first without the menu"
    );
    assert_eq!(got[1].text, texts[1]);
    assert_eq!(passes, 2);
    let error = dedup.run_texts(&texts[..1]).unwrap_err().to_string();
    assert!(error.contains("changed between reads"), "{error}");
}

/// Many documents: the deciding thread hands them over in several batches, rewritten on the
/// pool and handed to the sink in input order, in memory, spilled and in keep order, with
/// the figures of every document.
#[test]
fn many_documents_go_through_in_batches_in_input_order() {
    let dir = tempfile::tempdir().unwrap();
    let texts: Vec<String> = (0..5000)
        .map(|i| {
            let a = PIECES[i % PIECES.len()];
            let b = PIECES[(i * 7 + 3) % PIECES.len()];
            format!("{a}\n\nStory {} of the day.\n\n{b} {}\n", i % 1700, i % 13)
        })
        .collect();
    let corpus = corpus_of(dir.path(), "many.jsonl", &texts);
    let rule = UnitRule::new(Unit::Paragraph);
    let expected = reference(rule, &texts, &mut HashSet::new());
    for set_memory in [1u64 << 30, 4096, 0] {
        let mut dedup = UnitDedup::new(rule, NormalizeOptions::web(), &budget(dir.path()))
            .with_set_memory(set_memory);
        let mut documents = 0;
        let mut out = Vec::new();
        let figures = dedup
            .run(
                &corpus,
                |doc, rewritten| Ok::<_, Failure>((doc.id, rewritten)),
                |(id, rewritten)| {
                    assert_eq!(id, documents.to_string(), "input order");
                    documents += 1;
                    out.push(rewritten);
                    Ok(())
                },
            )
            .map_err(|Failure(e)| e)
            .unwrap();
        assert_eq!(out, expected, "set memory {set_memory}");
        assert_eq!(figures.documents, 5000);
        assert_eq!(
            figures.units_removed,
            expected.iter().map(|r| r.report.units_removed).sum::<u64>()
        );
        assert_eq!(figures.passes, if set_memory < 1 << 30 { 2 } else { 1 });
    }
    let ranks: Vec<u32> = (0..5000u32).rev().collect();
    let reversed: Vec<String> = texts.iter().rev().cloned().collect();
    let mut expected = reference(rule, &reversed, &mut HashSet::new());
    expected.reverse();
    let mut dedup =
        UnitDedup::new(rule, NormalizeOptions::web(), &budget(dir.path())).in_keep_order(ranks);
    let (got, passes) = run(&mut dedup, &corpus).unwrap();
    assert_eq!(
        (got, passes),
        (expected, 2),
        "keep order: the second read writes"
    );
}

/// A sink that fails stops the run with its own error, whichever batch it fails in.
#[test]
fn a_failing_sink_stops_the_run_with_its_error() {
    let dir = tempfile::tempdir().unwrap();
    let texts: Vec<String> = (0..4000).map(|i| format!("Story {i}.\n\nMenu\n")).collect();
    let corpus = corpus_of(dir.path(), "many.jsonl", &texts);
    for fail_at in [0usize, 2500] {
        let mut dedup = UnitDedup::new(
            UnitRule::new(Unit::Paragraph),
            NormalizeOptions::web(),
            &budget(dir.path()),
        );
        let mut seen = 0;
        let error = dedup
            .run(
                &corpus,
                |_, rewritten| Ok::<_, Failure>(rewritten),
                |_| {
                    seen += 1;
                    match seen > fail_at {
                        true => Err(Failure(neardup_dedup::DedupError::InvalidOption(
                            "the disk is full".into(),
                        ))),
                        false => Ok(()),
                    }
                },
            )
            .map_err(|Failure(e)| e)
            .unwrap_err();
        assert!(error.to_string().contains("the disk is full"), "{error}");
        assert_eq!(seen, fail_at + 1, "nothing handed over after the failure");
    }
}
