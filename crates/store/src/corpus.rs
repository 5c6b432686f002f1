//! Where documents meet the database: every document of a [`Corpus`] checked (and inserted)
//! in input order, in chunks fingerprinted in parallel and committed together. What
//! `neardup index add|check` and `neardup dedup --index` run.

use neardup_ingest::{Corpus, CorpusError, StatsSnapshot};

use crate::db::{NearDupDb, NewDocument};
use crate::error::StoreError;
use crate::verdict::{CheckOutcome, InsertMode};

/// Documents read and checked per chunk (fingerprinted in parallel, committed together).
const CHUNK: usize = 1024;

/// A document of a corpus the database could not check.
#[derive(Debug, thiserror::Error)]
#[error("document {id}")]
pub struct DocumentError {
    /// The document's id.
    pub id: String,
    /// Why.
    #[source]
    pub source: StoreError,
}

impl NearDupDb {
    /// Checks every document of `corpus` (and inserts it as `mode` says), in input order: each
    /// sees the ones before it. Calls `sink` with each document's index (as in
    /// [`Corpus::for_each_document`]) and outcome; returns the read's statistics.
    pub fn check_corpus<E>(
        &self,
        corpus: &Corpus,
        mode: InsertMode,
        mut sink: impl FnMut(usize, CheckOutcome) -> Result<(), E>,
    ) -> Result<StatsSnapshot, E>
    where
        E: From<CorpusError> + From<DocumentError>,
    {
        let mut chunk: Vec<NewDocument> = Vec::with_capacity(CHUNK);
        let mut next = 0usize;
        let mut flush = |chunk: &mut Vec<NewDocument>, next: &mut usize| -> Result<(), E> {
            for (doc, result) in chunk.iter().zip(self.check_and_insert_many(chunk, mode)) {
                let outcome = result.map_err(|source| DocumentError {
                    id: doc.id.clone().unwrap_or_else(|| "?".into()),
                    source,
                })?;
                sink(*next, outcome)?;
                *next += 1;
            }
            chunk.clear();
            Ok(())
        };
        let stats = corpus.for_each_document(
            "checking",
            false,
            |_, _, text| text.to_string(),
            |doc, text| {
                chunk.push(NewDocument {
                    text,
                    id: Some(doc.id),
                    url: doc.url,
                    title: doc.title,
                    fetched_at: doc.fetched_at,
                });
                if chunk.len() == CHUNK {
                    flush(&mut chunk, &mut next)?;
                }
                Ok::<_, E>(())
            },
        )?;
        flush(&mut chunk, &mut next)?;
        Ok(stats)
    }
}
