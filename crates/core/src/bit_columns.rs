//! Per-bit-column counts of many 64-bit hashes: SimHash's bit counting for a stream of hashes,
//! a block of [`BLOCK`] at a time.
//!
//! Three paths, chosen at run time ([`Path::detect`]) and tested against each other:
//! - **AVX-512** (F and BW): Harley and Seal's carry-save scheme on whole vectors. Sixteen
//!   vectors of eight hashes (one block) go through a tree of fifteen carry-save adders (two
//!   `vpternlogq` each) into bit-sliced counts of weight 1, 2, 4 and 8 kept across blocks;
//!   only the block's weight-16 carry vector is spread into byte counters (one masked byte
//!   subtraction per lane), which are flushed into the 64-bit counts every 255 blocks, before
//!   a byte can overflow. About a third of an instruction per hash.
//! - **AVX2**: each hash becomes a 64-byte mask (byte *i* all ones when bit *i* is set), built
//!   from a byte shuffle and a compare 32 bits at a time, subtracted from 64 byte counters that
//!   are flushed every 255 hashes.
//! - **portable**: one bit at a time, the reference of the others ([`scalar_columns`]);
//!   [`crate::simhash::BitCounter`] keeps its own faster portable scheme and does not use it.
//!
//! A [`ColumnCounter`] buffers hashes until a block is full; the last, partial block is padded
//! with zero hashes, which set no bit and so count nowhere.

/// Hashes per block: sixteen vectors of eight.
pub const BLOCK: usize = 128;

/// Hashes (or blocks, on the AVX-512 path) a byte counter can take before it must be flushed.
const FLUSH_EVERY: usize = u8::MAX as usize;

/// Which kernel a [`ColumnCounter`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    /// Carry-save adders on 512-bit vectors (AVX-512 F and BW).
    Avx512,
    /// Byte counters on 256-bit vectors (AVX2).
    Avx2,
    /// One bit at a time.
    Portable,
}

impl Path {
    /// The fastest path this processor runs.
    pub fn detect() -> Path {
        [Path::Avx512, Path::Avx2]
            .into_iter()
            .find(|path| path.available())
            .unwrap_or(Path::Portable)
    }

    /// Whether this processor runs the path.
    pub fn available(self) -> bool {
        match self {
            #[cfg(target_arch = "x86_64")]
            Path::Avx512 => avx512::available(),
            #[cfg(target_arch = "x86_64")]
            Path::Avx2 => avx2::available(),
            Path::Portable => true,
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }
}

/// Counts, for each of the 64 bit positions, how many of the hashes added have that bit set.
///
/// ```
/// use neardup_core::bit_columns::ColumnCounter;
/// let mut counter = ColumnCounter::new();
/// counter.add(&[0b101, 0b100, 0b001]);
/// counter.add(&[0b100]);
/// let counts = counter.counts();
/// assert_eq!(counts[..3], [2, 0, 3]);
/// assert_eq!(counter.total(), 4);
/// ```
#[derive(Debug, Clone)]
pub struct ColumnCounter {
    path: Path,
    /// Hashes not counted yet, the first `buffered` of them.
    buffer: [u64; BLOCK],
    buffered: usize,
    /// Hashes added.
    total: u64,
    /// 64-bit counts of the hashes counted so far (but for what `partial` holds).
    counts: [u64; 64],
    /// The AVX-512 path's state between blocks.
    partial: Partial,
}

/// The AVX-512 path's counts not yet in the 64-bit counts.
#[derive(Debug, Clone)]
pub(crate) struct Partial {
    /// Bit-sliced counts of weight 1, 2, 4 and 8: bit *i* of word *j* of level *l* is bit *l*
    /// of the count of bit *i* among the hashes counted in lane *j*.
    levels: [[u64; 8]; 4],
    /// Byte counters of weight 16: `sixteens[j][i]` for bit *i* in lane *j*.
    sixteens: [[u8; 64]; 8],
    /// Blocks counted into `sixteens` since they were last flushed.
    pending: usize,
}

impl Partial {
    const EMPTY: Partial = Partial {
        levels: [[0; 8]; 4],
        sixteens: [[0; 64]; 8],
        pending: 0,
    };
}

impl Default for ColumnCounter {
    fn default() -> Self {
        Self::new()
    }
}

impl ColumnCounter {
    /// An empty counter on the fastest path of this processor.
    pub fn new() -> Self {
        Self::on(Path::detect())
    }

    /// An empty counter on `path`, if this processor runs it.
    pub fn with_path(path: Path) -> Option<Self> {
        path.available().then(|| Self::on(path))
    }

    fn on(path: Path) -> Self {
        ColumnCounter {
            path,
            buffer: [0; BLOCK],
            buffered: 0,
            total: 0,
            counts: [0; 64],
            partial: Partial::EMPTY,
        }
    }

    /// The kernel this counter runs.
    pub fn path(&self) -> Path {
        self.path
    }

    /// How many hashes were added.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Adds `hashes`: whole blocks straight from the slice, the rest through the buffer.
    pub fn add(&mut self, mut hashes: &[u64]) {
        self.total += hashes.len() as u64;
        if self.buffered > 0 {
            let taken = (BLOCK - self.buffered).min(hashes.len());
            self.buffer[self.buffered..self.buffered + taken].copy_from_slice(&hashes[..taken]);
            self.buffered += taken;
            hashes = &hashes[taken..];
            if self.buffered < BLOCK {
                return;
            }
            self.count_buffer();
        }
        let whole = hashes.len() - hashes.len() % BLOCK;
        count_blocks(
            self.path,
            &hashes[..whole],
            &mut self.counts,
            &mut self.partial,
        );
        let rest = &hashes[whole..];
        self.buffer[..rest.len()].copy_from_slice(rest);
        self.buffered = rest.len();
    }

    /// The free end of the block buffer, never empty: hashes written there and then announced
    /// by [`ColumnCounter::commit`] are counted as [`ColumnCounter::add`] would count them,
    /// without being copied.
    ///
    /// ```
    /// use neardup_core::bit_columns::ColumnCounter;
    /// let mut counter = ColumnCounter::new();
    /// counter.spare()[..2].copy_from_slice(&[0b11, 0b01]);
    /// counter.commit(2);
    /// assert_eq!(counter.counts()[..2], [2, 1]);
    /// ```
    pub fn spare(&mut self) -> &mut [u64] {
        &mut self.buffer[self.buffered..]
    }

    /// Adds the first `n` hashes written into [`ColumnCounter::spare`] (at most its length).
    pub fn commit(&mut self, n: usize) {
        let n = n.min(BLOCK - self.buffered);
        self.total += n as u64;
        self.buffered += n;
        if self.buffered == BLOCK {
            self.count_buffer();
        }
    }

    /// The count of each bit position over every hash added so far (bit 0 first).
    pub fn counts(&mut self) -> [u64; 64] {
        if self.buffered > 0 {
            // Zero hashes set no bit: padding the block changes no count.
            self.buffer[self.buffered..].fill(0);
            self.count_buffer();
        }
        #[cfg(target_arch = "x86_64")]
        if self.path == Path::Avx512 {
            // SAFETY: a counter is only made on a path the processor runs (`with_path`).
            unsafe { avx512::drain(&mut self.partial, &mut self.counts) };
        }
        self.counts
    }

    /// Counts the full buffer.
    fn count_buffer(&mut self) {
        count_blocks(self.path, &self.buffer, &mut self.counts, &mut self.partial);
        self.buffered = 0;
    }
}

/// Counts `hashes` (whole blocks) on `path` into `counts`, or into `partial` on AVX-512.
fn count_blocks(path: Path, hashes: &[u64], counts: &mut [u64; 64], partial: &mut Partial) {
    if hashes.is_empty() {
        return;
    }
    #[cfg(target_arch = "x86_64")]
    match path {
        // SAFETY (both): a counter is only made on a path the processor runs.
        Path::Avx512 => return unsafe { avx512::add_blocks(hashes, partial, counts) },
        Path::Avx2 => return unsafe { avx2::add_columns(hashes, counts) },
        Path::Portable => {}
    }
    let _ = (path, partial);
    scalar_columns(hashes, counts)
}

/// Adds to `counts[i]` how many of `hashes` have bit *i* set, one bit at a time: the portable
/// path of [`ColumnCounter`] and the reference of the others.
pub fn scalar_columns(hashes: &[u64], counts: &mut [u64; 64]) {
    for hash in hashes {
        for (i, count) in counts.iter_mut().enumerate() {
            *count += (hash >> i) & 1;
        }
    }
}

/// Adds 64 byte counters (in bit order), each worth `weight`, to the 64-bit counts.
fn flush(bytes: &[u8; 64], weight: u64, counts: &mut [u64; 64]) {
    for (count, &byte) in counts.iter_mut().zip(bytes) {
        *count += weight * u64::from(byte);
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512 {
    //! Harley–Seal on 512-bit vectors: eight hashes a vector, one lane each, so a vector of
    //! bit-sliced counts holds the counts of lane *j* in its word *j*.

    use std::arch::x86_64::*;

    use super::{flush, Partial, BLOCK, FLUSH_EVERY};

    /// Whether this processor runs [`add_blocks`].
    pub fn available() -> bool {
        is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw")
    }

    /// A carry-save adder on every bit of three vectors: (carries, sums).
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn carry_save(a: __m512i, b: __m512i, c: __m512i) -> (__m512i, __m512i) {
        (
            _mm512_ternarylogic_epi64(a, b, c, 0xe8),
            _mm512_ternarylogic_epi64(a, b, c, 0x96),
        )
    }

    /// Counts whole blocks of `hashes` into `partial` (flushing its byte counters into
    /// `counts` every 255 blocks); a last partial block is left out.
    ///
    /// # Safety
    /// The processor must have AVX-512 F and BW ([`available`]).
    #[target_feature(enable = "avx512f,avx512bw")]
    pub unsafe fn add_blocks(hashes: &[u64], partial: &mut Partial, counts: &mut [u64; 64]) {
        // SAFETY (whole block): the caller guarantees the features. Every load reads eight
        // words inside `partial` or inside a whole block `hashes[b..b + BLOCK]`, every store
        // writes 64 bytes inside `partial` or `lanes`; all are unaligned accesses.
        unsafe {
            let load = |words: *const u64| _mm512_loadu_si512(words.cast());
            // Loops, not `array::map`: the state is loaded for every call (often one block)
            // and `map` was left out of line.
            let [mut ones, mut twos, mut fours, mut eights] = [_mm512_setzero_si512(); 4];
            for (vector, level) in [&mut ones, &mut twos, &mut fours, &mut eights]
                .into_iter()
                .zip(&partial.levels)
            {
                *vector = load(level.as_ptr());
            }
            let mut rows = [_mm512_setzero_si512(); 8];
            for (vector, row) in rows.iter_mut().zip(&partial.sixteens) {
                *vector = _mm512_loadu_si512(row.as_ptr().cast());
            }
            let minus_one = _mm512_set1_epi8(-1);
            let mut lanes = [0u64; 8];
            for block in hashes.chunks_exact(BLOCK) {
                let x = |i: usize| load(block.as_ptr().add(8 * i));
                let (twos_a, o) = carry_save(ones, x(0), x(1));
                let (twos_b, o) = carry_save(o, x(2), x(3));
                let (fours_a, t) = carry_save(twos, twos_a, twos_b);
                let (twos_a, o) = carry_save(o, x(4), x(5));
                let (twos_b, o) = carry_save(o, x(6), x(7));
                let (fours_b, t) = carry_save(t, twos_a, twos_b);
                let (eights_a, f) = carry_save(fours, fours_a, fours_b);
                let (twos_a, o) = carry_save(o, x(8), x(9));
                let (twos_b, o) = carry_save(o, x(10), x(11));
                let (fours_a, t) = carry_save(t, twos_a, twos_b);
                let (twos_a, o) = carry_save(o, x(12), x(13));
                let (twos_b, o) = carry_save(o, x(14), x(15));
                let (fours_b, t) = carry_save(t, twos_a, twos_b);
                let (eights_b, f) = carry_save(f, fours_a, fours_b);
                let (sixteens, e) = carry_save(eights, eights_a, eights_b);
                (ones, twos, fours, eights) = (o, t, f, e);
                // Lane j's weight-16 carries: one byte counter row, bit i in byte i.
                _mm512_storeu_si512(lanes.as_mut_ptr().cast(), sixteens);
                for (row, &carries) in rows.iter_mut().zip(&lanes) {
                    // Subtracting -1 in the bytes whose bit is set adds one there.
                    *row = _mm512_mask_sub_epi8(*row, carries, *row, minus_one);
                }
                partial.pending += 1;
                if partial.pending == FLUSH_EVERY {
                    let mut bytes = [0u8; 64];
                    for row in &mut rows {
                        _mm512_storeu_si512(bytes.as_mut_ptr().cast(), *row);
                        flush(&bytes, 16, counts);
                        *row = _mm512_setzero_si512();
                    }
                    partial.pending = 0;
                }
            }
            for (level, vector) in partial.levels.iter_mut().zip([ones, twos, fours, eights]) {
                _mm512_storeu_si512(level.as_mut_ptr().cast(), vector);
            }
            for (row, vector) in partial.sixteens.iter_mut().zip(rows) {
                _mm512_storeu_si512(row.as_mut_ptr().cast(), vector);
            }
        }
    }

    /// Moves everything `partial` holds into `counts`, leaving it empty: the byte counters
    /// and the bit-sliced levels summed in 16-bit lanes (at most 16 × 8 × 255 + 120 = 32,760
    /// a column), then added to the 64-bit counts once.
    ///
    /// # Safety
    /// The processor must have AVX-512 F and BW ([`available`]).
    #[target_feature(enable = "avx512f,avx512bw")]
    pub unsafe fn drain(partial: &mut Partial, counts: &mut [u64; 64]) {
        // The bit-sliced levels as byte counters: at most 8 lanes × (1 + 2 + 4 + 8) = 120.
        let mut low = _mm512_setzero_si512();
        for (level, words) in partial.levels.iter().enumerate() {
            let weight = _mm512_set1_epi8(1 << level);
            for &word in words {
                low = _mm512_mask_add_epi8(low, word, low, weight);
            }
        }
        let mut sums = [0u16; 64];
        // SAFETY: the caller guarantees the features; each load reads one 64-byte row of
        // `partial.sixteens` and each store writes 32 lanes of `sums` (64 bytes), unaligned.
        unsafe {
            let widen = |bytes: __m512i| {
                (
                    _mm512_cvtepu8_epi16(_mm512_castsi512_si256(bytes)),
                    _mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64::<1>(bytes)),
                )
            };
            let (mut first, mut second) = (_mm512_setzero_si512(), _mm512_setzero_si512());
            for row in &partial.sixteens {
                let (a, b) = widen(_mm512_loadu_si512(row.as_ptr().cast()));
                first = _mm512_add_epi16(first, a);
                second = _mm512_add_epi16(second, b);
            }
            let (low_first, low_second) = widen(low);
            first = _mm512_add_epi16(_mm512_slli_epi16::<4>(first), low_first);
            second = _mm512_add_epi16(_mm512_slli_epi16::<4>(second), low_second);
            _mm512_storeu_si512(sums.as_mut_ptr().cast(), first);
            _mm512_storeu_si512(sums.as_mut_ptr().add(32).cast(), second);
        }
        for (count, &sum) in counts.iter_mut().zip(&sums) {
            *count += u64::from(sum);
        }
        *partial = Partial::EMPTY;
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2 {
    //! Two 32-byte masks per hash: each half of the hash broadcast, every byte given the hash
    //! byte its bit is in (an in-lane shuffle), then tested against its own bit.

    use std::arch::x86_64::*;

    use super::{flush, FLUSH_EVERY};

    /// Whether this processor runs [`add_columns`].
    pub fn available() -> bool {
        is_x86_feature_detected!("avx2")
    }

    /// [`super::scalar_columns`] with AVX2.
    ///
    /// # Safety
    /// The processor must have AVX2 ([`available`]).
    #[target_feature(enable = "avx2")]
    pub unsafe fn add_columns(hashes: &[u64], counts: &mut [u64; 64]) {
        // Byte `b` of a 32-bit half reads hash byte `b / 8` and tests bit `b % 8` of it.
        let spread = _mm256_setr_epi8(
            0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3,
            3, 3, 3,
        );
        let bit = _mm256_set1_epi64x(0x8040_2010_0804_0201_u64 as i64);
        let mask = |half: u32| {
            let bytes = _mm256_shuffle_epi8(_mm256_set1_epi32(half as i32), spread);
            _mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), bit)
        };
        let mut bytes = [0u8; 64];
        for chunk in hashes.chunks(FLUSH_EVERY) {
            let (mut low, mut high) = (_mm256_setzero_si256(), _mm256_setzero_si256());
            for &hash in chunk {
                // A set bit's byte is -1: subtracting it adds one.
                low = _mm256_sub_epi8(low, mask(hash as u32));
                high = _mm256_sub_epi8(high, mask((hash >> 32) as u32));
            }
            // SAFETY: `bytes` is 64 bytes long; both stores are unaligned and inside it.
            unsafe {
                _mm256_storeu_si256(bytes.as_mut_ptr().cast(), low);
                _mm256_storeu_si256(bytes.as_mut_ptr().add(32).cast(), high);
            }
            flush(&bytes, 1, counts);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Hashes with columns biased towards one or zero, so that counts of every size occur.
    fn hashes(max: usize) -> impl Strategy<Value = Vec<u64>> {
        (any::<u64>(), any::<u64>(), 0..max).prop_flat_map(|(ones, zeros, len)| {
            proptest::collection::vec(any::<u64>(), len)
                .prop_map(move |v| v.into_iter().map(|h| (h | ones) & !zeros).collect())
        })
    }

    /// The counts of `hashes` added in slices of the given lengths (cycled) on `path`, every
    /// other slice by `add` and the others written in place (`spare`, then `commit`).
    fn counted(path: Path, hashes: &[u64], slices: &[usize]) -> [u64; 64] {
        let mut counter = ColumnCounter::with_path(path).expect("an available path");
        let mut rest = hashes;
        for (i, &len) in slices.iter().cycle().enumerate() {
            if rest.is_empty() {
                break;
            }
            let mut len = len.min(rest.len());
            if i % 2 == 1 {
                let spare = counter.spare();
                assert!(!spare.is_empty(), "the buffer always has room");
                len = len.min(spare.len());
                spare[..len].copy_from_slice(&rest[..len]);
                counter.commit(len);
            } else {
                counter.add(&rest[..len]);
            }
            rest = &rest[len..];
        }
        assert_eq!(counter.total(), hashes.len() as u64);
        counter.counts()
    }

    fn available_paths() -> Vec<Path> {
        let paths: Vec<Path> = [Path::Avx512, Path::Avx2, Path::Portable]
            .into_iter()
            .filter(|path| path.available())
            .collect();
        eprintln!("column counting paths on this processor: {paths:?}");
        paths
    }

    proptest! {
        #[test]
        fn every_path_counts_every_column(
            hashes in hashes(1200),
            slices in proptest::collection::vec(1..300usize, 1..6),
        ) {
            let mut reference = [0u64; 64];
            scalar_columns(&hashes, &mut reference);
            for path in available_paths() {
                prop_assert_eq!(counted(path, &hashes, &slices), reference, "{:?}", path);
            }
        }
    }

    #[test]
    fn a_column_of_all_ones_survives_many_flushes() {
        // Past 255 whole blocks (the AVX-512 path's flush) and 255 hashes (AVX2's), with a
        // partial block at the end.
        // Also just short of the flush, where the AVX-512 path's drain sums the fullest
        // byte counters.
        for hashes in [
            vec![u64::MAX; (FLUSH_EVERY + 3) * BLOCK + 5],
            vec![u64::MAX; FLUSH_EVERY * BLOCK - 1],
        ] {
            all_ones_counted(&hashes);
        }
    }

    fn all_ones_counted(hashes: &[u64]) {
        for path in available_paths() {
            for slices in [[hashes.len()], [77]] {
                assert_eq!(
                    counted(path, hashes, &slices),
                    [hashes.len() as u64; 64],
                    "{path:?}"
                );
            }
        }
    }

    #[test]
    fn counts_can_be_read_between_additions() {
        for path in available_paths() {
            let mut counter = ColumnCounter::with_path(path).unwrap();
            counter.add(&[1; 200]);
            assert_eq!(counter.counts()[0], 200);
            counter.add(&[3; 100]);
            assert_eq!(counter.counts()[..2], [300, 100], "{path:?}");
        }
    }
}
