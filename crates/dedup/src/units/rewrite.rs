//! The rewrite of decided documents off the deciding thread: the thread that decides (in
//! order) gathers decided documents into batches ([`Batches`]); a writing thread hands each
//! batch to the worker pool, where every document is rewritten ([`Rewritten::new`]) and
//! rendered (the caller's `render`: a JSON line, a report line, ...) in parallel, and calls
//! the caller's `sink` with the rendered documents in input order.
//!
//! Held beyond the reader's own batches: the batch being gathered, one waiting for the
//! writing thread, and up to [`AHEAD`] + 1 being rewritten or written, each of at most
//! [`BATCH_DOCUMENTS`] documents and about [`BATCH_BYTES`] of text (with their records, units
//! and flags, and what they are rendered to): about 30 MB in all on JSON Lines.

use std::collections::VecDeque;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use neardup_ingest::Document;
use rayon::prelude::*;

use super::report::Rewritten;
use super::run::UnitFigures;
use super::split::DocumentUnits;
use crate::error::DedupError;

/// Documents handed to the pool at a time, at most.
const BATCH_DOCUMENTS: usize = 1024;
/// Bytes of text handed to the pool at a time, about (a batch ends at the first document
/// that reaches it).
const BATCH_BYTES: usize = 2 << 20;
/// Batches rewritten while the writing thread writes an earlier one.
const AHEAD: usize = 1;

/// A document decided: its units, the seen flag of each of its keys, and its text when that is
/// not its body (text extracted from HTML).
struct Decided {
    /// The document, as read.
    doc: Document,
    /// Its text, when it is not the body.
    text: Option<String>,
    /// Its units and keys.
    units: DocumentUnits,
    /// Whether each key was seen before.
    flags: Vec<bool>,
}

impl Decided {
    /// The document's text, as its units were cut from.
    fn text(&self) -> &str {
        self.text.as_deref().unwrap_or(self.doc.body.as_str())
    }
}

/// The deciding thread's side: decided documents gathered into batches for the writing thread.
pub(super) struct Batches {
    sender: SyncSender<Vec<Decided>>,
    batch: Vec<Decided>,
    bytes: usize,
}

impl Batches {
    /// Adds a decided document: `doc`, its units and its text when that is not its body (as
    /// the deciding thread split it), and the seen flag of each key; a full batch goes to the
    /// writing thread. An error when the writing thread has stopped (its own error is the
    /// run's).
    pub fn push(
        &mut self,
        doc: Document,
        (units, text): (DocumentUnits, Option<String>),
        flags: Vec<bool>,
    ) -> Result<(), DedupError> {
        let decided = Decided {
            doc,
            text,
            units,
            flags,
        };
        self.bytes += decided.text().len();
        self.batch.push(decided);
        if self.batch.len() >= BATCH_DOCUMENTS || self.bytes >= BATCH_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    /// Sends the batch gathered so far.
    fn flush(&mut self) -> Result<(), DedupError> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH_DOCUMENTS));
        self.bytes = 0;
        self.sender
            .send(batch)
            .map_err(|_| DedupError::InvalidOption("the writing of the output stopped".into()))
    }
}

/// Runs `decide`, which pushes decided documents in input order, while a writing thread
/// rewrites them in parallel (dropped below `min_chars`), renders each with `render` on the
/// pool and calls `sink` with them in input order. Returns what `decide` returns and the
/// figures of the documents rewritten. An error of the writing side is the run's error.
pub(super) fn rewrite_in_order<T, R, E>(
    min_chars: u64,
    render: &(impl Fn(Document, Rewritten) -> Result<R, E> + Sync),
    sink: impl FnMut(R) -> Result<(), E> + Send,
    decide: impl FnOnce(&mut Batches) -> Result<T, E>,
) -> Result<(T, UnitFigures), E>
where
    R: Send,
    E: From<DedupError> + Send,
{
    std::thread::scope(|scope| {
        let (sender, receiver) = sync_channel::<Vec<Decided>>(1);
        let writer = scope.spawn(move || write_batches(receiver, min_chars, render, sink));
        let mut batches = Batches {
            sender,
            batch: Vec::with_capacity(BATCH_DOCUMENTS),
            bytes: 0,
        };
        let decided = decide(&mut batches).and_then(|t| {
            batches.flush()?;
            Ok(t)
        });
        drop(batches);
        let written = writer
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        // The writing side's error first: a failed send only says that it stopped.
        let figures = written?;
        Ok((decided?, figures))
    })
}

/// The writing thread: each batch rewritten and rendered on the pool while the one before is
/// handed to `sink`. A batch whose rewrite panicked hands nothing over: the pool's scope
/// raises the panic again once every batch is done.
fn write_batches<R: Send, E: Send>(
    receiver: Receiver<Vec<Decided>>,
    min_chars: u64,
    render: &(impl Fn(Document, Rewritten) -> Result<R, E> + Sync),
    mut sink: impl FnMut(R) -> Result<(), E>,
) -> Result<UnitFigures, E> {
    let mut figures = UnitFigures::default();
    rayon::in_place_scope(|pool| {
        let mut pending = VecDeque::with_capacity(AHEAD + 1);
        for batch in receiver {
            let (done, rewritten) = sync_channel(1);
            pool.spawn(move |_| {
                let _ = done.send(rewrite_batch(batch, min_chars, render));
            });
            pending.push_back(rewritten);
            while pending.len() > AHEAD {
                hand_over(pending.pop_front(), &mut figures, &mut sink)?;
            }
        }
        while !pending.is_empty() {
            hand_over(pending.pop_front(), &mut figures, &mut sink)?;
        }
        Ok(())
    })?;
    Ok(figures)
}

/// The documents of `batch` rewritten and rendered, in parallel, and their figures.
fn rewrite_batch<R: Send, E: Send>(
    batch: Vec<Decided>,
    min_chars: u64,
    render: &(impl Fn(Document, Rewritten) -> Result<R, E> + Sync),
) -> RenderedBatch<R, E> {
    let counted: Vec<(Result<R, E>, UnitFigures)> = batch
        .into_par_iter()
        .map(|decided| {
            let text = decided.text();
            let rewritten = Rewritten::new(text, &decided.units, &decided.flags, min_chars);
            let mut figures = UnitFigures::default();
            figures.count(text.len(), &rewritten.report);
            (render(decided.doc, rewritten), figures)
        })
        .collect();
    let mut figures = UnitFigures::default();
    let rendered = counted
        .into_iter()
        .map(|(rendered, counts)| {
            figures.add(&counts);
            rendered
        })
        .collect();
    (rendered, figures)
}

/// A batch rewritten and rendered: each document's rendering, and their figures.
type RenderedBatch<R, E> = (Vec<Result<R, E>>, UnitFigures);

/// Waits for a rewritten batch and hands it to `sink` in order.
fn hand_over<R, E>(
    batch: Option<Receiver<RenderedBatch<R, E>>>,
    figures: &mut UnitFigures,
    sink: &mut impl FnMut(R) -> Result<(), E>,
) -> Result<(), E> {
    let Some((rendered, counts)) = batch.and_then(|batch| batch.recv().ok()) else {
        return Ok(());
    };
    figures.add(&counts);
    for rendered in rendered {
        sink(rendered?)?;
    }
    Ok(())
}
