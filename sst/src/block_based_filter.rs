//! The block-based filter of RocksDB before 7.0 (`filter.` +
//! `rocksdb.BuiltinBloomFilter` in the metaindex): one small Bloom filter
//! per range of data block offsets.
//!
//! Ported from RocksDB 6.x's `table/block_based/block_based_filter_block.cc`
//! (`BlockBasedFilterBlockReader`: the layout and `MayMatch`) and
//! `table/block_based/filter_policy.cc` (`BloomFilterPolicy::KeyMayMatch`
//! for `kDeprecatedBlock`, `LegacyNoLocalityBloomImpl::HashMayMatch`),
//! removed in RocksDB 7.0 (which ignores such filters). The block is
//!
//! ```text
//! filter 0 | filter 1 | ... | offset of filter i (fixed32) ... | array offset (fixed32) | base_lg (1 byte)
//! ```
//!
//! and the filter of the data block at offset `o` is number `o >> base_lg`
//! (`kFilterBaseLg` 11: one filter per 2 KiB of file). Each filter is the
//! classic LevelDB Bloom filter: `bits = 8 × (len − 1)`, its last byte the
//! probe count `k`, `BloomHash` (`Hash(key, 0xbc9f1d34)`) and the delta
//! rotate-right-17.
//!
//! RocksDB 6.x treated a malformed block as "may match" for every key;
//! this reader refuses at open what 6.x never wrote (an array offset or a
//! filter outside the block, offsets that go backwards, `base_lg` over 63),
//! with one line naming the block.

use crate::coding::fixed32;
use crate::error::{BlockKind, Error};

/// The probe count RocksDB reserves for other encodings (a filter with a
/// larger `k` byte matches every key).
const MAX_PROBES: u8 = 30;

/// A parsed block-based filter block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockBasedFilterBlock<'a> {
    data: &'a [u8],
    /// Where the offset array starts (the end of the last filter).
    array_offset: usize,
    /// Filters in the array.
    num: usize,
    base_lg: u8,
}

impl<'a> BlockBasedFilterBlock<'a> {
    /// Parses the contents of the filter block at `offset`, checking every
    /// filter offset (time linear in the number of filters: once, when the
    /// table is opened).
    pub fn parse(data: &'a [u8], offset: u64) -> Result<Self, Error> {
        let block = Self::layout(data, offset)?;
        block.check_offsets(offset)?;
        Ok(block)
    }

    /// The trailer's reading of `data` (array offset, filter count,
    /// `base_lg`) in constant time, for contents [`Self::parse`] accepted
    /// before: queries use it, so a query costs no more than its filter.
    /// On contents `parse` would refuse, filters read as empty (a filter of
    /// no bits matches nothing: callers must have parsed the block first).
    pub(crate) fn layout(data: &'a [u8], offset: u64) -> Result<Self, Error> {
        let bad = |what: String| Error::BadBlock {
            block: BlockKind::Filter,
            offset,
            what,
        };
        let n = data.len();
        if n < 5 {
            return Err(bad(format!(
                "block-based filter of {n} bytes: shorter than its 5-byte trailer"
            )));
        }
        let base_lg = data[n - 1];
        if base_lg > 63 {
            return Err(bad(format!("block-based filter base_lg {base_lg} is over 63")));
        }
        let array_offset = fixed32(&data[n - 5..n - 1]) as usize;
        if array_offset > n - 5 {
            return Err(bad(format!(
                "block-based filter offset array at {array_offset} is past the block's {} bytes",
                n - 5
            )));
        }
        let array_len = n - 5 - array_offset;
        if !array_len.is_multiple_of(4) {
            return Err(bad(format!(
                "block-based filter offset array of {array_len} bytes is not whole 4-byte offsets"
            )));
        }
        let block = Self {
            data,
            array_offset,
            num: array_len / 4,
            base_lg,
        };
        Ok(block)
    }

    /// Checks that the filters' offsets never go backwards and stay before
    /// the offset array (what [`Self::parse`] adds to [`Self::layout`]).
    fn check_offsets(&self, offset: u64) -> Result<(), Error> {
        let mut prev = 0usize;
        for i in 0..self.num {
            let start = self.entry(i);
            if start < prev || start > self.array_offset {
                return Err(Error::BadBlock {
                    block: BlockKind::Filter,
                    offset,
                    what: format!(
                        "block-based filter {i} starts at {start}, outside {prev}..={}",
                        self.array_offset
                    ),
                });
            }
            prev = start;
        }
        Ok(())
    }

    /// Offset `i` of the array (`i == num` is the array offset itself).
    fn entry(&self, i: usize) -> usize {
        let at = self.array_offset + 4 * i;
        fixed32(&self.data[at..at + 4]) as usize
    }

    /// How many filters the block has.
    pub fn len(&self) -> usize {
        self.num
    }

    /// Whether the block has no filter.
    pub fn is_empty(&self) -> bool {
        self.num == 0
    }

    /// `base_lg`: filter `i` covers data blocks at offsets
    /// `[i << base_lg, (i + 1) << base_lg)`.
    pub fn base_lg(&self) -> u8 {
        self.base_lg
    }

    /// Filter `i`'s bytes (its last byte the probe count; empty for a range
    /// of offsets with no data block).
    pub fn filter(&self, i: usize) -> &'a [u8] {
        // Checked at open (`parse`); never a panic even if not.
        self.data
            .get(self.entry(i)..self.entry(i + 1))
            .unwrap_or_default()
    }

    /// The filter of the data block at `block_offset`, or `None` when the
    /// array has none that far (RocksDB then answers "may match").
    pub fn filter_for(&self, block_offset: u64) -> Option<&'a [u8]> {
        let i = usize::try_from(block_offset >> self.base_lg).ok()?;
        (i < self.num).then(|| self.filter(i))
    }

    /// Whether `entry` (a whole key or a prefix) may be in the data block at
    /// `block_offset`, as RocksDB 6.x's `BlockBasedFilterBlockReader::MayMatch`
    /// answers.
    pub fn may_match(&self, entry: &[u8], block_offset: u64) -> bool {
        self.filter_for(block_offset)
            .is_none_or(|f| bloom_may_match(f, entry))
    }

    /// The bytes of all filters (without the offset array and trailer).
    pub fn filter_bytes(&self) -> usize {
        self.array_offset
    }

    /// The probe counts of the non-empty filters, with how many filters
    /// use each, most used first.
    pub fn probe_counts(&self) -> Vec<(u8, usize)> {
        let mut counts: Vec<(u8, usize)> = Vec::new();
        for f in (0..self.num).map(|i| self.filter(i)).filter(|f| f.len() >= 2) {
            let k = f[f.len() - 1];
            match counts.iter_mut().find(|(c, _)| *c == k) {
                Some((_, n)) => *n += 1,
                None => counts.push((k, 1)),
            }
        }
        counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        counts
    }

    /// Bloom bits of all filters (8 per byte, the probe-count bytes
    /// excluded).
    pub fn bloom_bits(&self) -> u64 {
        (0..self.num)
            .map(|i| self.filter(i).len().saturating_sub(1) as u64 * 8)
            .sum()
    }
}

/// One legacy (LevelDB) Bloom filter: RocksDB 6.x's
/// `BloomFilterPolicy::KeyMayMatch` for the deprecated block-based format.
pub fn bloom_may_match(filter: &[u8], key: &[u8]) -> bool {
    let len = filter.len();
    if len < 2 {
        return false;
    }
    // A filter of 512 MiB or more has more bits than 32-bit arithmetic
    // (RocksDB's) holds: no 6.x table has one; "may match", never a panic.
    let Some(bits) = u32::try_from(len - 1).ok().and_then(|n| n.checked_mul(8)) else {
        return true;
    };
    let k = filter[len - 1];
    if k > MAX_PROBES {
        return true;
    }
    let mut h = ribbon::core::hash::bloom_hash(key);
    let delta = h.rotate_right(17);
    for _ in 0..k {
        let bit = h % bits;
        if filter[(bit / 8) as usize] & (1 << (bit % 8)) == 0 {
            return false;
        }
        h = h.wrapping_add(delta);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A filter built as RocksDB 6.x's `BloomFilterPolicy::CreateFilter`
    /// (deprecated block-based) does: bits = max(64, n × bits_per_key)
    /// rounded up to bytes, k = bits_per_key × 0.69 clamped to 1..=30.
    fn build(keys: &[&[u8]], bits_per_key: usize) -> Vec<u8> {
        let bits = (keys.len() * bits_per_key).max(64).div_ceil(8) * 8;
        let k = ((bits_per_key as f64 * 0.69) as u8).clamp(1, 30);
        let mut f = vec![0u8; bits / 8];
        for key in keys {
            let mut h = ribbon::core::hash::bloom_hash(key);
            let delta = h.rotate_right(17);
            for _ in 0..k {
                let b = h as usize % bits;
                f[b / 8] |= 1 << (b % 8);
                h = h.wrapping_add(delta);
            }
        }
        f.push(k);
        f
    }

    fn block(filters: &[Vec<u8>], base_lg: u8) -> Vec<u8> {
        let mut out = Vec::new();
        let mut offsets = Vec::new();
        for f in filters {
            offsets.push(out.len() as u32);
            out.extend(f);
        }
        let array = out.len() as u32;
        for o in offsets {
            out.extend(o.to_le_bytes());
        }
        out.extend(array.to_le_bytes());
        out.push(base_lg);
        out
    }

    fn refs(v: &[Vec<u8>]) -> Vec<&[u8]> {
        v.iter().map(Vec::as_slice).collect()
    }

    #[test]
    fn picks_the_filter_by_offset_and_has_no_false_negatives() {
        let a: Vec<Vec<u8>> = (0..50).map(|i| format!("a{i}").into_bytes()).collect();
        let b: Vec<Vec<u8>> = (0..50).map(|i| format!("b{i}").into_bytes()).collect();
        let bytes = block(&[build(&refs(&a), 10), Vec::new(), build(&refs(&b), 10)], 11);
        let f = BlockBasedFilterBlock::parse(&bytes, 0).unwrap();
        assert_eq!((f.len(), f.base_lg()), (3, 11));
        assert!(a.iter().all(|k| f.may_match(k, 100)));
        assert!(b.iter().all(|k| f.may_match(k, 2 * 2048 + 5)));
        // The empty filter (no data block starts in 2048..4096) says no.
        assert!(!f.may_match(b"a1", 2048));
        // Past the array: may match.
        assert!(f.may_match(b"zzz", 3 * 2048));
        // Few of b's keys pass a's filter.
        assert!(b.iter().filter(|k| f.may_match(k, 0)).count() < 10);
        assert_eq!(f.probe_counts(), vec![(6, 2)]);
    }

    #[test]
    fn malformed_blocks_are_one_line_errors() {
        let good = block(&[build(&[b"x"], 10)], 11);
        let mut past = good.clone();
        let n = past.len();
        past[n - 5..n - 1].copy_from_slice(&(n as u32).to_le_bytes());
        let mut outside = good.clone();
        outside[9..13].copy_from_slice(&1000u32.to_le_bytes());
        let mut lg = good.clone();
        *lg.last_mut().unwrap() = 64;
        for (bytes, what) in [
            (&past[..], "past the block"),
            (&outside[..], "starts at 1000"),
            (&lg[..], "base_lg 64"),
            (&good[..3], "shorter than"),
        ] {
            let e = BlockBasedFilterBlock::parse(bytes, 7).unwrap_err().to_string();
            assert!(e.contains(what) && !e.contains('\n'), "{e}");
        }
        assert!(BlockBasedFilterBlock::parse(&good, 0).is_ok());
    }

    /// A filter whose bit count does not fit 32 bits (512 MiB and more):
    /// "may match", never a division by zero. The zeroed allocation is
    /// mapped lazily; only its last byte is read.
    #[test]
    #[cfg(all(target_pointer_width = "64", not(miri)))]
    fn a_filter_too_large_for_32_bit_arithmetic_may_match() {
        for len in [(1usize << 29) + 1, (1 << 30) + 1] {
            let mut f = vec![0u8; len];
            f[len - 1] = 6;
            assert!(bloom_may_match(&f, b"key"), "{len}");
        }
    }
}
