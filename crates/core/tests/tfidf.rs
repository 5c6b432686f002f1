//! TF-IDF weighting with an `IdfModel` fitted on a corpus, saved and loaded.

use std::sync::Arc;

use neardup_core::features::FeatureKind;
use neardup_core::weight::{IdfModel, Weighting};
use neardup_core::{Error, Fingerprinter, Profile};

fn tfidf_profile() -> Profile {
    Profile {
        name: "web-tfidf".into(),
        features: FeatureKind::Tokens,
        weighting: Weighting::TfIdf,
        top_k: Some(5),
        ..Profile::web()
    }
}

#[test]
fn fitted_model_weights_rare_words_up_and_survives_a_round_trip() {
    let corpus = [
        "the council met on monday",
        "the council met on tuesday",
        "the weather on monday was fine",
        "a rare aardvark visited the council",
    ];
    let profile = tfidf_profile();
    let model = Fingerprinter::fit_idf(&profile, corpus).unwrap();
    assert_eq!(model.documents(), 4);
    let path = std::env::temp_dir().join(format!("neardup-tfidf-{}.idf", std::process::id()));
    model.save(&path).unwrap();
    let loaded = Arc::new(IdfModel::load(&path).unwrap());
    std::fs::remove_file(&path).unwrap();
    assert_eq!(*loaded, model);

    let fingerprinter = Fingerprinter::with_idf_model(profile.clone(), loaded).unwrap();
    let features = fingerprinter.weighted_features("the aardvark and the council");
    // TF × smoothed IDF, ln((1 + N) / (1 + df)) + 1 with N = 4: "and" is unseen (df 0), "the"
    // is in every document but occurs twice, "aardvark" in one document, "council" in three.
    let weights: Vec<(&str, f64)> = features
        .iter()
        .map(|f| (f.text.as_str(), f.weight))
        .collect();
    let expected = [
        ("and", 5f64.ln() + 1.0),
        ("the", 2.0),
        ("aardvark", 2.5f64.ln() + 1.0),
        ("council", 1.25f64.ln() + 1.0),
    ];
    assert_eq!(weights.len(), expected.len());
    for ((text, weight), (want_text, want_weight)) in weights.iter().zip(expected) {
        assert_eq!(*text, want_text);
        assert!(
            (weight - want_weight).abs() < 1e-12,
            "{text}: {weight} vs {want_weight}"
        );
    }
    let a = fingerprinter.fingerprint("the aardvark and the council");
    assert_eq!(a, fingerprinter.fingerprint("the aardvark and the council"));
    assert!(a.features <= 5, "top-5 keeps five features");
}

#[test]
fn a_model_is_refused_for_other_features_and_required_for_tfidf() {
    let profile = tfidf_profile();
    assert!(matches!(
        Fingerprinter::new(profile.clone()),
        Err(Error::MissingIdfModel { .. })
    ));
    let other = Profile {
        features: FeatureKind::WordShingles { width: 2 },
        ..profile.clone()
    };
    let model = Arc::new(Fingerprinter::fit_idf(&other, ["some text"]).unwrap());
    assert!(matches!(
        Fingerprinter::with_idf_model(profile, model),
        Err(Error::IdfModelMismatch { .. })
    ));
}
