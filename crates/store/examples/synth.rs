//! Creates (or extends) a database with N synthetic records, then times a fresh open.
//!
//! `cargo run --release -p neardup-store --example synth -- DIR|URL N [SECONDS]` (a directory:
//! redb; a Redis URL: records written one by one, and the block keys of the index the store
//! holds built by the open that follows). With SECONDS, writing stops after that long even if
//! fewer than N records are written (the count is printed).
//!
//! Records have random 64-bit SimHash fingerprints and digests (a fixed-seed generator), ids
//! `s00000000`, ...: what the open path reads is the same as for real documents.

use std::time::Instant;

use neardup_core::Simhash;
use neardup_dedup::Policy;
use neardup_store::{open_db, open_store, Cursor, Insert, Meta, OpenOptions, Record, StoredText};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(dir), Some(n)) = (args.next(), args.next()) else {
        return Err("usage: synth DIR N".into());
    };
    let n: u64 = n.parse()?;
    let budget = args
        .next()
        .map(|seconds| seconds.parse().map(std::time::Duration::from_secs))
        .transpose()?;
    let started = Instant::now();
    {
        let store = open_store(&dir, &OpenOptions::default())?;
        store.init_meta(&Meta::new(Policy::default()))?;
        let first = store.len()?;
        let mut state = 0x853C_49E6_748F_EA9B_u64 ^ first;
        let mut next = move || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        let mut waiting = Vec::new();
        let mut seen = Cursor::default();
        let mut written = 0;
        for i in first..first + n {
            if budget.is_some_and(|budget| i % 1000 == 0 && started.elapsed() > budget) {
                break;
            }
            written += 1;
            let record = Record {
                id: format!("s{i:08}"),
                url: Some(format!("https://news.example/{i}")),
                title: Some(format!("Story {i}")),
                fetched_at: None,
                simhash: Simhash::B64(next()),
                digest: format!("{:016x}{:016x}{:032x}", next(), next(), 0),
                minhash: None,
                inserted_at: 0,
                slot: 0,
                // What a verifying policy keeps of a short story.
                text: Some(
                    StoredText::compress(&format!(
                        "Story {i}: the council met on day {} and approved item {}.",
                        next() % 365,
                        next() % 1000
                    ))
                    .expect("a short text compresses"),
                ),
            };
            // One writer: the position it was given is the store's (Redis refuses another).
            if let Insert::Accepted {
                durable, cursor, ..
            } = store.insert(record, seen)?
            {
                seen = cursor;
                waiting.push(durable);
            }
            if waiting.len() >= 100_000 {
                waiting.drain(..).try_for_each(|d| d.wait())?;
            }
        }
        waiting.drain(..).try_for_each(|d| d.wait())?;
        println!(
            "wrote {written} records (now {}) in {:.1} s",
            store.len()?,
            started.elapsed().as_secs_f64()
        );
    }
    let opened = Instant::now();
    let db = open_db(&dir, OpenOptions::default())?;
    println!(
        "opened {} documents in {:.2} s",
        db.indexed(),
        opened.elapsed().as_secs_f64()
    );
    Ok(())
}
