//! [`CorpusFeatures`]: the shingle sets verification needs, computed only for the documents in
//! candidate pairs by reading a [`Corpus`] again (what `neardup dedup` verifies with, so that a
//! big corpus never holds its shingle sets).

use neardup_core::measure::FeatureSet;
use neardup_core::Fingerprinter;
use neardup_ingest::Corpus;

use crate::engine::FeatureSource;
use crate::error::DedupError;

/// A [`FeatureSource`] that reads its corpus again for the shingle sets.
pub struct CorpusFeatures<'a, F: FnMut(bool)> {
    corpus: &'a Corpus,
    fingerprinter: &'a Fingerprinter,
    around_read: F,
}

impl<'a, F: FnMut(bool)> CorpusFeatures<'a, F> {
    /// Reads `corpus` (read once before, in the same order) again and makes the sets with
    /// `fingerprinter`; `around_read(true)` is called before each read and
    /// `around_read(false)` after it (e.g. to stop and start a spinner).
    pub fn new(corpus: &'a Corpus, fingerprinter: &'a Fingerprinter, around_read: F) -> Self {
        CorpusFeatures {
            corpus,
            fingerprinter,
            around_read,
        }
    }
}

impl<F: FnMut(bool)> FeatureSource for CorpusFeatures<'_, F> {
    fn feature_sets(
        &mut self,
        positions: &[u32],
        sink: &mut dyn FnMut(FeatureSet) -> Result<(), DedupError>,
    ) -> Result<(), DedupError> {
        let wanted = |i: usize| positions.binary_search(&(i as u32)).is_ok();
        (self.around_read)(true);
        let mut handed = 0;
        self.corpus
            .map_each_document(
                "verifying: reading shingle sets",
                false,
                |index, _, text| wanted(index).then(|| self.fingerprinter.feature_set(text)),
                |set| {
                    if let Some(set) = set {
                        handed += 1;
                        sink(set).map_err(ReadError::Engine)?;
                    }
                    Ok(())
                },
            )
            .map_err(|e: ReadError| match e {
                ReadError::Engine(e) => e,
                ReadError::Corpus(e) => DedupError::Reread(e),
            })?;
        if handed != positions.len() {
            return Err(DedupError::MissingData(
                "the inputs changed while deduplicating (a second read found other documents)"
                    .into(),
            ));
        }
        (self.around_read)(false);
        Ok(())
    }
}

/// What stops the second read: the inputs, or the engine refusing a set (e.g. a full disk).
#[derive(Debug, thiserror::Error)]
enum ReadError {
    #[error(transparent)]
    Corpus(#[from] neardup_ingest::CorpusError),
    #[error(transparent)]
    Engine(DedupError),
}
