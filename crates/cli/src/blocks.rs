//! Input read in blocks of whole lines on a read-ahead thread, for the caller to work on each
//! block's lines in parallel (`neardup fingerprint --input-format jsonl`).
//!
//! Nothing here knows JSON: a line is a record of any line-oriented format.

use std::io::Read;
use std::sync::mpsc;

/// The lines of a block with their 1-based numbers (the block's first line is `first_line`);
/// newlines are found with `memchr`.
pub fn lines(block: &[u8], first_line: u64) -> impl Iterator<Item = (u64, &[u8])> {
    let mut start = 0;
    let ends = memchr::memchr_iter(b'\n', block).chain(std::iter::once(block.len()));
    ends.enumerate().filter_map(move |(i, end)| {
        if start > block.len() {
            return None;
        }
        let line = &block[start..end];
        start = end + 1;
        Some((first_line + i as u64, line))
    })
}

/// Reads `input` in blocks of whole lines (about `block_bytes` each), calling `handle` with each
/// block and the 1-based number of its first line. A final line without a newline is included.
///
/// A reader thread reads the next block while `handle` works on the current one; the buffers
/// of handled blocks go back to the reader, so that a long input reuses a few buffers instead
/// of faulting in fresh memory for every block.
pub fn for_each_block(
    input: impl Read + Send,
    block_bytes: usize,
    mut handle: impl FnMut(&[u8], u64) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    std::thread::scope(|scope| {
        let (sender, receiver) = mpsc::sync_channel::<std::io::Result<(Vec<u8>, u64)>>(1);
        let (recycle, recycled) = mpsc::sync_channel::<Vec<u8>>(2);
        scope.spawn(move || read_blocks(input, block_bytes, &sender, &recycled));
        for block in receiver {
            let (block, first_line) = block?;
            handle(&block, first_line)?;
            // The reader may have finished: then the buffer is simply dropped.
            let _ = recycle.try_send(block);
        }
        Ok(())
    })
}

/// The reader side of [`for_each_block`]: sends blocks of whole lines until the input ends,
/// an error occurs, or the receiver hangs up.
fn read_blocks(
    mut input: impl Read,
    block_bytes: usize,
    sender: &mpsc::SyncSender<std::io::Result<(Vec<u8>, u64)>>,
    recycled: &mpsc::Receiver<Vec<u8>>,
) {
    // The unfinished last line of the previous block.
    let mut carry: Vec<u8> = Vec::new();
    let mut first_line = 1u64;
    loop {
        let mut block = match recycled.try_recv() {
            Ok(mut buffer) if carry.len() < block_bytes => {
                buffer.clear();
                buffer.extend_from_slice(&carry);
                carry.clear();
                buffer
            }
            // No buffer to reuse, or a line longer than a block still being read.
            _ => std::mem::take(&mut carry),
        };
        block.reserve(block_bytes);
        // `read_to_end` fills the spare capacity without zeroing it first.
        let read = match input
            .by_ref()
            .take(block_bytes as u64)
            .read_to_end(&mut block)
        {
            Ok(read) => read,
            Err(error) => {
                let _ = sender.send(Err(error));
                return;
            }
        };
        let at_end = read == 0;
        if !at_end {
            match memchr::memrchr(b'\n', &block) {
                Some(last) => {
                    carry.extend_from_slice(&block[last + 1..]);
                    block.truncate(last + 1);
                }
                // A line longer than the block: keep reading until it ends.
                None => {
                    carry = block;
                    continue;
                }
            }
        }
        if !block.is_empty() {
            let lines = memchr::memchr_iter(b'\n', &block).count() as u64;
            if sender.send(Ok((block, first_line))).is_err() {
                return;
            }
            first_line += lines;
        }
        if at_end {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recycled_buffers_keep_every_byte_and_line_number() {
        // Lines of 0 to 300 bytes through 64-byte blocks: many blocks, some lines longer than
        // a block, buffers handed back and reused.
        let input: Vec<u8> = (0..5000u32)
            .flat_map(|i| {
                let len = (i * 7919 % 301) as usize;
                let mut line = vec![b'a' + (i % 26) as u8; len];
                line.push(b'\n');
                line
            })
            .chain(*b"last line without a newline")
            .collect();
        let mut joined = Vec::new();
        for_each_block(&input[..], 64, |block, first| {
            let lines_before = memchr::memchr_iter(b'\n', &joined).count() as u64;
            assert_eq!(first, lines_before + 1);
            assert!(block.ends_with(b"\n") || block.ends_with(b"newline"));
            joined.extend_from_slice(block);
            Ok(())
        })
        .unwrap();
        assert_eq!(joined, input);
    }

    #[test]
    fn blocks_hold_whole_lines_with_their_numbers() {
        let input = b"one\ntwo\nthree\nfour-is-long\nfive";
        let mut seen = Vec::new();
        for_each_block(&input[..], 6, |block, first| {
            seen.push((String::from_utf8(block.to_vec()).unwrap(), first));
            Ok(())
        })
        .unwrap();
        let joined: String = seen.iter().map(|(b, _)| b.as_str()).collect();
        assert_eq!(joined, String::from_utf8(input.to_vec()).unwrap());
        for (block, first) in &seen {
            let expected = input[..]
                .split(|&b| b == b'\n')
                .position(|l| block.as_bytes().starts_with(l) && !l.is_empty())
                .unwrap() as u64
                + 1;
            assert_eq!(*first, expected);
        }
    }
}
