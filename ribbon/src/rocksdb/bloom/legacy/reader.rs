//! Queries (RocksDB's `LegacyBloomBitsReader`).

use super::LegacyLocalityBloomImpl;
use crate::core::batch::answer_in_batches;

/// Queries a legacy Bloom filter (RocksDB's `LegacyBloomBitsReader`).
///
/// Usually made by [`super::parse_trailer`]. Keys are looked up by their 32-bit
/// `BloomHash`. (RocksDB's reader answers `false` to 64-bit hash queries,
/// since this format cannot use them; this type simply has no such method.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LegacyBloomReader<'a> {
    data: &'a [u8],
    num_probes: i32,
    num_lines: u32,
    log2_cache_line_bytes: u32,
}

impl<'a> LegacyBloomReader<'a> {
    /// A reader over `data` (the lines, without trailer). With
    /// `num_lines == 0` or `log2_cache_line_bytes > 31` (never produced by
    /// [`super::parse_trailer`]) every query answers "may match"; so do queries
    /// whose line lies outside `data`. `num_probes <= 0` matches everything.
    #[must_use]
    pub fn new(data: &'a [u8], num_probes: i32, num_lines: u32, log2_cache_line_bytes: u32) -> Self {
        LegacyBloomReader {
            data,
            num_probes,
            num_lines,
            log2_cache_line_bytes,
        }
    }

    // `data` and `num_probes` are twins of FastLocalBloomReader's accessors
    // (each format's reader owns its fields): deliberately alike.

    /// The filter data (without trailer).
    #[must_use]
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// Probes per key.
    #[must_use]
    pub fn num_probes(&self) -> i32 {
        self.num_probes
    }

    /// Number of cache lines.
    #[must_use]
    pub fn num_lines(&self) -> u32 {
        self.num_lines
    }

    /// log2 of the cache line size in bytes.
    #[must_use]
    pub fn log2_cache_line_bytes(&self) -> u32 {
        self.log2_cache_line_bytes
    }

    fn degenerate(&self) -> bool {
        self.num_lines == 0 || self.log2_cache_line_bytes > 31
    }

    /// Whether the key with 32-bit hash `h` (`BloomHash`) may have been
    /// added; `false` means it definitely was not.
    #[inline]
    #[must_use]
    pub fn may_match_hash(&self, h: u32) -> bool {
        if self.degenerate() {
            return true;
        }
        LegacyLocalityBloomImpl::hash_may_match(
            h,
            self.num_lines,
            self.num_probes,
            self.data,
            self.log2_cache_line_bytes,
        )
    }

    /// Whether `key` may have been added (hashes it with
    /// [`crate::core::hash::bloom_hash`]).
    #[must_use]
    pub fn may_match_key(&self, key: impl AsRef<[u8]>) -> bool {
        self.may_match_hash(crate::core::hash::bloom_hash(key.as_ref()))
    }

    /// Batched [`may_match_hash`](Self::may_match_hash) (prepare and prefetch
    /// up to 32, then check). Writes `out[i]` for
    /// `i < min(hashes.len(), out.len())`, leaving the rest unchanged.
    pub fn may_match_hashes(&self, hashes: &[u32], out: &mut [bool]) {
        if self.degenerate() {
            out.iter_mut().zip(hashes).for_each(|(o, _)| *o = true);
            return;
        }
        answer_in_batches(
            hashes,
            out,
            |h| {
                let offset = LegacyLocalityBloomImpl::prepare_hash_may_match(
                    h,
                    self.num_lines,
                    self.data,
                    self.log2_cache_line_bytes,
                );
                (offset, h)
            },
            |(offset, h)| match self.data.get(offset as usize..) {
                Some(line) => LegacyLocalityBloomImpl::hash_may_match_prepared(
                    h,
                    self.num_probes,
                    line,
                    self.log2_cache_line_bytes,
                ),
                None => true,
            },
        );
    }
}
