//! Reading any built-in filter block: one dispatcher on the trailer's
//! marker byte, exactly as RocksDB's.
//!
//! Ported from RocksDB's `table/block_based/filter_policy.cc`
//! (`BuiltinFilterPolicy::GetBuiltinFilterBitsReader`). As there, this is
//! the only dispatcher; each format's module parses the rest of its own
//! trailer ([`fast_local::parse_trailer`], [`legacy::parse_trailer`],
//! [`standard128::parse_trailer`]), and [`crate::rocksdb::trailer`] holds the rules
//! every format shares (the marker, blocks of 5 bytes or fewer, RocksDB's
//! `uint32_t` length).
//!
//! | contents                         | reader                                   |
//! |----------------------------------|------------------------------------------|
//! | 5 bytes or fewer                 | always false (a filter of zero keys)     |
//! | trailer byte 0 = `0xFF` (−1)     | FastLocalBloom (see [`crate::rocksdb::bloom`])    |
//! | trailer byte 0 = `0xFE` (−2)     | Standard128 Ribbon; fewer than 2 blocks: always true |
//! | trailer byte 0 = 1..=127         | legacy Bloom with that many probes       |
//! | trailer byte 0 = 0 or other negative | always true (unknown: never a false negative) |
//!
//! Every path takes arbitrary bytes: a truncated or corrupt filter never
//! panics, never reads out of bounds, and answers "may match" wherever the
//! bytes do not describe a filter.
//!
//! Like RocksDB's built-in dispatcher, this one knows no other format: the
//! blocks of a custom policy (this crate's `rust.BalancedRibbon`, say) are
//! read by that policy's own reader, chosen by the table's filter family
//! (`crate::plugin::table_filter`).

use crate::core::filter::MayContain;
use crate::core::hash::{bloom_hash, get_slice_hash64};
use crate::core::prelude::*;
use crate::rocksdb::bloom::{
    fast_local, legacy, FastLocalBloomImpl, FastLocalBloomReader, LegacyBloomReader, LegacyLocalityBloomImpl,
};
use crate::rocksdb::standard128::{self, Standard128Reader};
use crate::rocksdb::trailer::{self, Marker, Parsed, METADATA_LEN};
use core::fmt;

/// A reader for one filter block, chosen by its trailer.
///
/// `#[non_exhaustive]`: RocksDB has added filter formats before (and this
/// enum grew with them), so a `match` on it outside this crate needs a
/// wildcard arm; queries through [`MayContain`] or
/// [`FilterReader::may_match`] need none.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum FilterReader<'a> {
    /// The empty filter: nothing matches.
    AlwaysFalse,
    /// An unknown or degenerate filter: everything may match.
    AlwaysTrue,
    /// FastLocalBloom.
    FastLocalBloom(FastLocalBloomReader<'a>),
    /// Legacy Bloom.
    LegacyBloom(LegacyBloomReader<'a>),
    /// Standard128 Ribbon.
    Standard128Ribbon(Standard128Reader<'a>),
}

fn from_parsed<'a, R>(p: Parsed<R>, wrap: impl FnOnce(R) -> FilterReader<'a>) -> FilterReader<'a> {
    match p {
        Parsed::AlwaysFalse => FilterReader::AlwaysFalse,
        Parsed::Reader(r) => wrap(r),
        Parsed::AlwaysTrue | Parsed::OtherFormat => FilterReader::AlwaysTrue,
    }
}

impl<'a> FilterReader<'a> {
    /// The reader RocksDB would create for these filter block contents
    /// (without the block trailer). Contents of 4 GiB or more are read as
    /// RocksDB reads them, by their first `len mod 2^32` bytes (see
    /// [`crate::rocksdb::trailer`]).
    pub fn new(contents: &'a [u8]) -> Self {
        match trailer::marker(contents) {
            None => FilterReader::AlwaysFalse,
            Some(Marker::NewerBloom) => {
                from_parsed(fast_local::parse_trailer(contents), FilterReader::FastLocalBloom)
            }
            Some(Marker::Standard128Ribbon) => from_parsed(
                standard128::parse_trailer(contents),
                FilterReader::Standard128Ribbon,
            ),
            Some(Marker::LegacyBloom { .. }) => {
                from_parsed(legacy::parse_trailer(contents), FilterReader::LegacyBloom)
            }
            Some(Marker::ZeroProbes | Marker::Reserved(_)) => FilterReader::AlwaysTrue,
        }
    }

    /// Like [`FilterReader::new`], but only for bytes that are a filter block
    /// RocksDB writes: FastLocalBloom, legacy Bloom or Standard128 Ribbon
    /// with a consistent trailer and length, or RocksDB's 6-byte always-true
    /// filter. Anything else (no bytes, too short for a trailer, a reserved
    /// marker or setting, a length the trailer does not fit) is an error that
    /// says why and how RocksDB would read the bytes anyway; RocksDB's own
    /// reader never rejects, it answers "always false" or "always true".
    ///
    /// A reader should use this where the bytes come from outside a table
    /// file (a file on the command line, say), where a truncated or foreign
    /// file must not silently answer every query the same way.
    pub fn parse(contents: &'a [u8]) -> Result<Self, NotAFilter> {
        let reader = Self::new(contents);
        let not = |reason: String| {
            Err(NotAFilter {
                reason,
                rocksdb_reads_as: reader.describe().kind_name(),
            })
        };
        if contents.len() > u32::MAX as usize {
            return not(format!(
                "{} bytes: RocksDB filters are under 4 GiB",
                contents.len()
            ));
        }
        if contents.is_empty() {
            return not("0 bytes (RocksDB writes an empty filter block only for zero keys)".into());
        }
        if contents.len() <= METADATA_LEN {
            return not(format!(
                "{} bytes, too short for a {METADATA_LEN}-byte filter trailer",
                contents.len()
            ));
        }
        let len = contents.len() - METADATA_LEN;
        let trailer = &contents[len..];
        match reader {
            FilterReader::AlwaysTrue if contents == ALWAYS_TRUE_FILTER => Ok(reader),
            FilterReader::AlwaysTrue | FilterReader::AlwaysFalse => not(format!(
                "trailer {} is no filter RocksDB writes (marker byte {} {})",
                hex(trailer),
                trailer[0] as i8,
                match Marker::of(trailer[0]) {
                    Marker::ZeroProbes => "means zero probes",
                    Marker::NewerBloom => "is FastLocalBloom, with reserved settings",
                    Marker::Standard128Ribbon => "is Standard128 Ribbon, with fewer than 2 blocks",
                    Marker::LegacyBloom { .. } =>
                        "is legacy Bloom, with a line count that does not fit the length",
                    Marker::Reserved(_) => "is reserved",
                }
            )),
            FilterReader::FastLocalBloom(_) if !len.is_multiple_of(64) => not(format!(
                "FastLocalBloom of {len} bytes, not a whole number of 64-byte cache lines"
            )),
            // RocksDB sizes a Ribbon solution in whole 16-byte segments
            // that its blocks use up; bytes past them only appear when 32
            // result columns cap the layout.
            FilterReader::Standard128Ribbon(r)
                if !len.is_multiple_of(16)
                    || (len != r.layout().data_len() && r.layout().upper_num_columns() < 32) =>
            {
                not(format!(
                    "Standard128 Ribbon of {len} bytes does not fit its {} blocks of 128 slots",
                    r.layout().num_blocks()
                ))
            }
            _ => Ok(reader),
        }
    }

    /// Whether `key` may be in the set the filter was built from.
    #[inline]
    pub fn may_match(&self, key: impl AsRef<[u8]>) -> bool {
        let key = key.as_ref();
        match self {
            FilterReader::AlwaysFalse => false,
            FilterReader::AlwaysTrue => true,
            FilterReader::FastLocalBloom(r) => r.may_match_hash(get_slice_hash64(key)),
            FilterReader::LegacyBloom(r) => r.may_match_hash(bloom_hash(key)),
            FilterReader::Standard128Ribbon(r) => r.may_match_hash(get_slice_hash64(key)),
        }
    }

    /// Whether the key with 64-bit hash `h` (`GetSliceHash64`) may be in the
    /// set (`HashMayMatch`). The legacy Bloom hashes keys differently and
    /// answers `true` here, never a false negative.
    pub fn may_match_hash(&self, h: u64) -> bool {
        match self {
            FilterReader::AlwaysFalse => false,
            FilterReader::AlwaysTrue | FilterReader::LegacyBloom(_) => true,
            FilterReader::FastLocalBloom(r) => r.may_match_hash(h),
            FilterReader::Standard128Ribbon(r) => r.may_match_hash(h),
        }
    }

    /// [`may_match`](Self::may_match) for many keys (the MultiGet path),
    /// with the memory fetches of a batch overlapped: one answer per key,
    /// in order.
    pub fn may_match_many<K: AsRef<[u8]>>(&self, keys: &[K]) -> Vec<bool> {
        match self {
            // All the hashes first, then one batch over them: the query's
            // prefetching runs on across chunk borders (measured about 8 %
            // faster than `may_match_many_into`'s chunks at 10^5 keys).
            FilterReader::FastLocalBloom(_) | FilterReader::Standard128Ribbon(_) => {
                let hashes: Vec<u64> = keys.iter().map(|k| get_slice_hash64(k.as_ref())).collect();
                self.may_match_many_hashes(&hashes)
            }
            _ => {
                let mut out = vec![false; keys.len()];
                self.may_match_many_into(keys, &mut out);
                out
            }
        }
    }

    /// [`may_match_many`](Self::may_match_many) into a buffer the caller
    /// owns, without allocating: keys are hashed in chunks on the stack
    /// (for small batches, such as MultiGet's 32 keys).
    ///
    /// # Panics
    /// When `out.len() != keys.len()`: every key gets exactly one answer.
    pub fn may_match_many_into<K: AsRef<[u8]>>(&self, keys: &[K], out: &mut [bool]) {
        assert_eq!(keys.len(), out.len(), "one answer slot per key");
        const CHUNK: usize = 256;
        match self {
            FilterReader::AlwaysFalse => out.fill(false),
            FilterReader::AlwaysTrue => out.fill(true),
            FilterReader::LegacyBloom(r) => {
                let mut hashes = [0u32; CHUNK];
                for (keys, out) in keys.chunks(CHUNK).zip(out.chunks_mut(CHUNK)) {
                    for (h, k) in hashes.iter_mut().zip(keys) {
                        *h = bloom_hash(k.as_ref());
                    }
                    r.may_match_hashes(&hashes[..keys.len()], out);
                }
            }
            FilterReader::FastLocalBloom(_) | FilterReader::Standard128Ribbon(_) => {
                let mut hashes = [0u64; CHUNK];
                for (keys, out) in keys.chunks(CHUNK).zip(out.chunks_mut(CHUNK)) {
                    for (h, k) in hashes.iter_mut().zip(keys) {
                        *h = get_slice_hash64(k.as_ref());
                    }
                    self.may_match_many_hashes_into(&hashes[..keys.len()], out);
                }
            }
        }
    }

    /// Whether [`may_match_hash`](Self::may_match_hash) answers from the
    /// 64-bit key hash: every format but the legacy Bloom, which hashes
    /// keys its own way (and answers "may match" to a 64-bit hash).
    pub fn takes_hash64(&self) -> bool {
        !matches!(self, FilterReader::LegacyBloom(_))
    }

    /// [`may_match_hash`](Self::may_match_hash) for many 64-bit key hashes,
    /// batched as [`may_match_many`](Self::may_match_many): one answer per
    /// hash, in order.
    pub fn may_match_many_hashes(&self, hashes: &[u64]) -> Vec<bool> {
        let mut out = vec![false; hashes.len()];
        self.may_match_many_hashes_into(hashes, &mut out);
        out
    }

    /// [`may_match_many_hashes`](Self::may_match_many_hashes) into a
    /// buffer the caller owns, for loops that query batch after batch
    /// without allocating (as RocksDB's MultiGet fills its `may_match`
    /// array).
    ///
    /// # Panics
    /// When `out.len() != hashes.len()`: every hash gets exactly one answer.
    pub fn may_match_many_hashes_into(&self, hashes: &[u64], out: &mut [bool]) {
        assert_eq!(hashes.len(), out.len(), "one answer slot per hash");
        let n = hashes.len();
        match self {
            FilterReader::AlwaysFalse => out[..n].fill(false),
            FilterReader::AlwaysTrue | FilterReader::LegacyBloom(_) => out[..n].fill(true),
            FilterReader::FastLocalBloom(r) => r.may_match_hashes(hashes, out),
            FilterReader::Standard128Ribbon(r) => r.may_match_hashes(hashes, out),
        }
    }

    /// What kind of filter this is, and its parameters.
    pub fn describe(&self) -> FilterDescription {
        match self {
            FilterReader::AlwaysFalse => FilterDescription::AlwaysFalse,
            FilterReader::AlwaysTrue => FilterDescription::AlwaysTrue,
            FilterReader::FastLocalBloom(r) => FilterDescription::FastLocalBloom {
                data_bytes: r.data().len(),
                num_probes: r.num_probes(),
            },
            FilterReader::LegacyBloom(r) => FilterDescription::LegacyBloom {
                data_bytes: r.data().len(),
                num_probes: r.num_probes(),
                num_lines: r.num_lines(),
            },
            FilterReader::Standard128Ribbon(r) => FilterDescription::Standard128Ribbon {
                data_bytes: r.layout().data_len(),
                seed: r.seed(),
                num_blocks: r.layout().num_blocks(),
                upper_num_columns: r.layout().upper_num_columns(),
                upper_start_block: r.layout().upper_start_block(),
                expected_fp_rate: r.layout().expected_fp_rate(),
            },
        }
    }
}

/// The [`MayContain`] of a filter block: [`FilterReader::may_match`], and
/// for batches [`FilterReader::may_match_many`].
impl MayContain for FilterReader<'_> {
    #[inline]
    fn contains_key(&self, key: &[u8]) -> bool {
        self.may_match(key)
    }

    fn contains_keys_into(&self, keys: &[&[u8]], out: &mut [bool]) {
        self.may_match_many_into(keys, out);
    }

    fn contains_many<K: AsRef<[u8]>>(&self, keys: &[K]) -> Vec<bool> {
        self.may_match_many(keys)
    }

    fn contains_many_into<K: AsRef<[u8]>>(&self, keys: &[K], out: &mut [bool]) {
        self.may_match_many_into(keys, out);
    }
}

/// RocksDB's always-true filter block (`FinishAlwaysTrue`): a zero marker
/// (zero probes) in a 6-byte block. RocksDB writes it when a builder cannot
/// build a real filter, and every key may match it.
pub const ALWAYS_TRUE_FILTER: [u8; 6] = [0; 6];

/// Bytes that are not a filter block RocksDB writes ([`FilterReader::parse`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotAFilter {
    reason: String,
    rocksdb_reads_as: &'static str,
}

impl NotAFilter {
    /// Why the bytes are not a filter RocksDB writes.
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// How RocksDB's reader treats them anyway: `AlwaysFalse` (every key
    /// "definitely not") or `AlwaysTrue` (every key "may match"), as
    /// [`FilterDescription::kind_name`] spells them.
    pub fn rocksdb_reads_as(&self) -> &'static str {
        self.rocksdb_reads_as
    }
}

impl fmt::Display for NotAFilter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "not a RocksDB filter block: {} (RocksDB would read it as {}: {})",
            self.reason,
            self.rocksdb_reads_as,
            if self.rocksdb_reads_as == "AlwaysFalse" {
                "\"definitely not\" for every key"
            } else {
                "every key may match"
            }
        )
    }
}

impl core::error::Error for NotAFilter {}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The parameters of a filter block, as its trailer and length give them.
///
/// With the `serde` feature it serializes as one map: `kind`
/// ([`kind_name`](Self::kind_name)) and the variant's fields.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(tag = "kind"))]
pub enum FilterDescription {
    /// Empty filter: matches nothing.
    AlwaysFalse,
    /// Unknown or degenerate: matches everything.
    AlwaysTrue,
    /// FastLocalBloom.
    FastLocalBloom {
        /// Bytes of bit array (trailer excluded).
        data_bytes: usize,
        /// Probes per key.
        num_probes: i32,
    },
    /// Legacy Bloom.
    LegacyBloom {
        /// Bytes of bit array (trailer excluded).
        data_bytes: usize,
        /// Probes per key.
        num_probes: i32,
        /// Cache lines.
        num_lines: u32,
    },
    /// Standard128 Ribbon.
    Standard128Ribbon {
        /// Bytes of solution (trailer excluded).
        data_bytes: usize,
        /// Ordinal seed.
        seed: u32,
        /// Blocks of 128 slots.
        num_blocks: u32,
        /// Result columns in the upper blocks.
        upper_num_columns: u32,
        /// First block with the upper column count.
        upper_start_block: u32,
        /// Expected FP rate from the layout.
        expected_fp_rate: f64,
    },
}

impl FilterDescription {
    /// A short name: `Standard128Ribbon`, `FastLocalBloom`, `LegacyBloom`,
    /// `AlwaysFalse` or `AlwaysTrue`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            FilterDescription::AlwaysFalse => "AlwaysFalse",
            FilterDescription::AlwaysTrue => "AlwaysTrue",
            FilterDescription::FastLocalBloom { .. } => "FastLocalBloom",
            FilterDescription::LegacyBloom { .. } => "LegacyBloom",
            FilterDescription::Standard128Ribbon { .. } => "Standard128Ribbon",
        }
    }
}

impl FilterDescription {
    /// The false-positive rate this filter is expected to have when it holds
    /// `num_entries` entries: a Ribbon filter's rate follows from its layout
    /// alone; a Bloom filter's from its size, probes and the entry count, by
    /// RocksDB's estimates (`FastLocalBloomImpl::EstimatedFpRate` and
    /// `LegacyLocalityBloomImpl::EstimatedFpRate`, `util/bloom_impl.h`).
    /// The always-false filter gives 0, the always-true filter 1.
    pub fn expected_fp_rate(&self, num_entries: usize) -> f64 {
        match *self {
            FilterDescription::AlwaysFalse => 0.0,
            FilterDescription::AlwaysTrue => 1.0,
            FilterDescription::FastLocalBloom {
                data_bytes,
                num_probes,
            } => FastLocalBloomImpl::estimated_fp_rate(num_entries, data_bytes, num_probes, 64),
            FilterDescription::LegacyBloom {
                data_bytes,
                num_probes,
                ..
            } => LegacyLocalityBloomImpl::estimated_fp_rate(num_entries, data_bytes, num_probes),
            FilterDescription::Standard128Ribbon { expected_fp_rate, .. } => expected_fp_rate,
        }
    }
}

impl fmt::Display for FilterDescription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FilterDescription::AlwaysFalse | FilterDescription::AlwaysTrue => f.write_str(self.kind_name()),
            FilterDescription::FastLocalBloom {
                data_bytes,
                num_probes,
            } => {
                write!(f, "FastLocalBloom bytes={data_bytes} probes={num_probes}")
            }
            FilterDescription::LegacyBloom {
                data_bytes,
                num_probes,
                num_lines,
            } => write!(
                f,
                "LegacyBloom bytes={data_bytes} probes={num_probes} lines={num_lines}"
            ),
            FilterDescription::Standard128Ribbon {
                data_bytes,
                seed,
                num_blocks,
                upper_num_columns,
                upper_start_block,
                expected_fp_rate,
            } => write!(
                f,
                "Standard128Ribbon bytes={data_bytes} seed={seed} blocks={num_blocks} \
                 columns={}..{upper_num_columns} upper_start_block={upper_start_block} \
                 expected_fp_rate={expected_fp_rate:.6}",
                upper_num_columns.saturating_sub(1)
            ),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::rocksdb::builder::FilterBuilder;
    use crate::rocksdb::policy::{BuildContext, FilterPolicy};

    /// The filter `policy` builds of keys `0..n` (`u32` little endian).
    pub(crate) fn built(policy: &str, format_version: i32, n: u32) -> Vec<u8> {
        let policy: FilterPolicy = policy.parse().unwrap();
        let mut b = FilterBuilder::new(&policy, &BuildContext::sst_file_writer(format_version)).unwrap();
        for i in 0..n {
            b.add_key(i.to_le_bytes());
        }
        b.finish()
    }

    fn rejected(bytes: &[u8]) -> NotAFilter {
        match FilterReader::parse(bytes) {
            Err(e) => e,
            Ok(r) => panic!("{bytes:02x?} parsed as {}", r.describe()),
        }
    }

    /// Filters built from 64-bit key hashes (`FilterBuilder::add_key_hash`)
    /// answer for the keys: FastLocalBloom and Ribbon.
    #[test]
    fn filters_built_from_key_hashes_answer_for_the_keys() {
        for fv in [5, 7] {
            for id in ["bloomfilter:10", "ribbonfilter:10"] {
                let policy: FilterPolicy = id.parse().unwrap();
                let mut b = FilterBuilder::new(&policy, &BuildContext::sst_file_writer(fv)).unwrap();
                for key in ["a", "b"] {
                    b.add_key_hash(get_slice_hash64(key.as_bytes())).unwrap();
                }
                let filter = b.finish();
                let reader = FilterReader::new(&filter);
                assert!(reader.may_match("a") && reader.may_match("b"), "{id} fv {fv}");
            }
        }
    }

    #[test]
    fn parse_accepts_every_filter_rocksdb_writes() {
        for (policy, fv, kind) in [
            ("ribbonfilter:10", 7, "Standard128Ribbon"),
            ("bloomfilter:10", 7, "FastLocalBloom"),
            ("bloomfilter:10", 4, "LegacyBloom"),
            ("ribbonfilter:3.3", 5, "Standard128Ribbon"),
            ("ribbonfilter:23", 6, "Standard128Ribbon"),
        ] {
            for n in [1000, 5000] {
                let f = built(policy, fv, n);
                let r = FilterReader::parse(&f).unwrap_or_else(|e| panic!("{policy} n={n}: {e}"));
                assert_eq!(r.describe().kind_name(), kind, "{policy} n={n}");
            }
        }
        // Few keys: Ribbon falls back to FastLocalBloom, also a real filter.
        let small = built("ribbonfilter:10", 7, 3);
        assert_eq!(
            FilterReader::parse(&small).unwrap().describe().kind_name(),
            "FastLocalBloom"
        );
        let always_true = FilterReader::parse(&ALWAYS_TRUE_FILTER).unwrap();
        assert!(matches!(always_true, FilterReader::AlwaysTrue));
    }

    #[test]
    fn parse_rejects_what_rocksdb_never_writes_and_says_how_rocksdb_reads_it() {
        let e = rejected(&[]);
        assert_eq!(e.rocksdb_reads_as(), "AlwaysFalse");
        assert!(e.reason().contains("0 bytes"), "{e}");
        for short in 1..=METADATA_LEN {
            assert_eq!(rejected(&vec![0xFF; short]).rocksdb_reads_as(), "AlwaysFalse");
        }
        // Zero probes other than RocksDB's 6-byte always-true filter.
        assert_eq!(rejected(&[0u8; 7]).rocksdb_reads_as(), "AlwaysTrue");
        // Reserved markers -3..=-128.
        for marker in [0xFDu8, 0x80] {
            let e = rejected(&[1, 2, 3, marker, 0, 0, 0, 0]);
            assert_eq!(e.rocksdb_reads_as(), "AlwaysTrue");
            assert!(e.reason().contains("reserved"), "{e}");
        }
        // Ribbon with fewer than 2 blocks.
        assert!(rejected(&[0u8, 0, 0, 0, 0xFE, 0, 1, 0, 0])
            .reason()
            .contains("fewer than 2 blocks"));
        // FastLocalBloom with a reserved probe count, or a ragged length.
        let mut fast = built("bloomfilter:10", 7, 1000);
        let n = fast.len();
        fast[n - 3] = 0; // zero probes
        assert_eq!(rejected(&fast).rocksdb_reads_as(), "AlwaysTrue");
        let mut ragged = built("bloomfilter:10", 7, 1000);
        ragged.insert(0, 0);
        assert!(rejected(&ragged).reason().contains("64-byte"));
        // Ribbon with a length its blocks do not fit.
        let mut ribbon = built("ribbonfilter:10", 7, 1000);
        ribbon.insert(0, 0);
        assert!(rejected(&ribbon).reason().contains("does not fit"));
        // Legacy Bloom whose line count does not fit the length.
        let mut legacy = built("bloomfilter:10", 4, 1000);
        let n = legacy.len();
        legacy[n - 4..].copy_from_slice(&7u32.to_le_bytes());
        assert_eq!(rejected(&legacy).rocksdb_reads_as(), "AlwaysTrue");
        // Text is no filter.
        assert!(FilterReader::parse(b"hello world, this is not a filter\n").is_err());
    }

    /// One API shape: string keys, `Extend`, and the batch queries by key,
    /// by hash and into a buffer agree with the single ones.
    #[test]
    fn batch_queries_have_one_shape() {
        for (policy, fv) in [
            ("ribbonfilter:10", 7),
            ("bloomfilter:10", 7),
            ("bloomfilter:10", 4),
        ] {
            let policy: FilterPolicy = policy.parse().unwrap();
            let mut b = FilterBuilder::new(&policy, &BuildContext::sst_file_writer(fv)).unwrap();
            b.extend((0..2000u32).map(|i| format!("key{i}")));
            b.add_key("apple");
            b.add_key_and_alt(String::from("banana"), "ban");
            let filter = b.finish();
            let r = FilterReader::new(&filter);
            assert!(r.may_match("apple") && r.may_match("banana") && r.may_match("ban"));
            let keys: Vec<String> = (0..3000u32).map(|i| format!("key{i}")).collect();
            let many = r.may_match_many(&keys);
            assert_eq!(many.len(), keys.len());
            for (k, &m) in keys.iter().zip(&many) {
                assert_eq!(r.may_match(k), m, "{k}");
            }
            assert!(many[..2000].iter().all(|&m| m), "false negative");
            let hashes: Vec<u64> = keys.iter().map(|k| get_slice_hash64(k.as_bytes())).collect();
            let by_hash = r.may_match_many_hashes(&hashes);
            for (&h, &m) in hashes.iter().zip(&by_hash) {
                assert_eq!(r.may_match_hash(h), m);
            }
            // Into a buffer, batch after batch.
            let mut out = [false; 32];
            for (chunk, want) in hashes.chunks(32).zip(by_hash.chunks(32)) {
                r.may_match_many_hashes_into(chunk, &mut out[..chunk.len()]);
                assert_eq!(&out[..chunk.len()], want);
            }
            for always in [FilterReader::AlwaysTrue, FilterReader::AlwaysFalse] {
                let mut out = [!matches!(always, FilterReader::AlwaysTrue); 2];
                always.may_match_many_hashes_into(&hashes[..2], &mut out);
                assert_eq!(out, [matches!(always, FilterReader::AlwaysTrue); 2]);
            }
        }
    }

    /// Each format parses only its own marker; the dispatcher alone decides
    /// the rest, as RocksDB's `GetBuiltinFilterBitsReader`.
    #[test]
    fn each_format_claims_only_its_marker() {
        let fast = built("bloomfilter:10", 7, 1000);
        let old = built("bloomfilter:10", 4, 1000);
        let ribbon = built("ribbonfilter:10", 7, 1000);
        assert!(matches!(fast_local::parse_trailer(&fast), Parsed::Reader(_)));
        assert!(matches!(legacy::parse_trailer(&old), Parsed::Reader(_)));
        assert!(matches!(standard128::parse_trailer(&ribbon), Parsed::Reader(_)));
        for other in [&old, &ribbon] {
            assert_eq!(fast_local::parse_trailer(other), Parsed::OtherFormat);
        }
        for other in [&fast, &ribbon] {
            assert_eq!(legacy::parse_trailer(other), Parsed::OtherFormat);
        }
        for other in [&fast, &old] {
            assert!(matches!(standard128::parse_trailer(other), Parsed::OtherFormat));
        }
        // Zero probes and reserved markers belong to no format: the
        // dispatcher answers "may match".
        for marker in [0u8, 0xFD, 0x80] {
            let bytes = [7u8, 7, 7, marker, 1, 0, 0, 0];
            assert_eq!(legacy::parse_trailer(&bytes), Parsed::OtherFormat);
            assert_eq!(fast_local::parse_trailer(&bytes), Parsed::OtherFormat);
            assert!(matches!(standard128::parse_trailer(&bytes), Parsed::OtherFormat));
            assert!(matches!(FilterReader::new(&bytes), FilterReader::AlwaysTrue));
        }
        // Five bytes or fewer are always false for every parser.
        for short in 0..=METADATA_LEN {
            let v = vec![0xFEu8; short];
            assert_eq!(legacy::parse_trailer(&v), Parsed::AlwaysFalse);
            assert_eq!(fast_local::parse_trailer(&v), Parsed::AlwaysFalse);
            assert!(matches!(standard128::parse_trailer(&v), Parsed::AlwaysFalse));
            assert!(matches!(FilterReader::new(&v), FilterReader::AlwaysFalse));
        }
        // Ribbon with fewer than 2 blocks: always true.
        assert!(matches!(
            FilterReader::new(&[0u8, 0, 0, 0, 0xFE, 0, 1, 0, 0]),
            FilterReader::AlwaysTrue
        ));
    }

    /// One rule for contents of 4 GiB or more: RocksDB's `uint32_t` length,
    /// so a block of 2^32 + n bytes answers as its first n bytes. The
    /// zeroed allocation is mapped lazily; only its first page is written.
    #[test]
    #[cfg(all(target_pointer_width = "64", not(miri)))]
    fn contents_of_4_gib_or_more_answer_as_rocksdb_reads_them() {
        let small = built("bloomfilter:10", 7, 50);
        let mut big = vec![0u8; (1usize << 32) + small.len()];
        big[..small.len()].copy_from_slice(&small);
        let (r_big, r_small) = (FilterReader::new(&big), FilterReader::new(&small));
        assert_eq!(r_big.describe(), r_small.describe());
        assert_eq!(r_big.describe().kind_name(), "FastLocalBloom");
        for k in 0u32..2000 {
            assert_eq!(
                r_big.may_match(k.to_le_bytes()),
                r_small.may_match(k.to_le_bytes())
            );
        }
        let e = rejected(&big);
        assert!(e.reason().contains("4 GiB"), "{e}");
        assert_eq!(e.rocksdb_reads_as(), "FastLocalBloom");
    }

    #[test]
    #[should_panic(expected = "one answer slot per hash")]
    fn a_buffer_of_another_length_is_refused() {
        let filter = built("bloomfilter:10", 7, 100);
        FilterReader::new(&filter).may_match_many_hashes_into(&[1, 2, 3], &mut [false; 2]);
    }

    #[test]
    fn parse_answers_as_new_where_it_accepts() {
        let mut state = 0x1234_5678_9abc_def0u64;
        for len in 0..200usize {
            for _ in 0..20 {
                let bytes: Vec<u8> = (0..len)
                    .map(|_| {
                        state = state
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        (state >> 56) as u8
                    })
                    .collect();
                if let Ok(strict) = FilterReader::parse(&bytes) {
                    let lenient = FilterReader::new(&bytes);
                    for k in 0u32..64 {
                        assert_eq!(
                            strict.may_match(k.to_le_bytes()),
                            lenient.may_match(k.to_le_bytes())
                        );
                    }
                }
            }
        }
    }
}
