//! The filter blocks of a table, whatever policy wrote them: the reader is
//! chosen by the *family* the blocks are stored under (the policy's
//! compatibility name in the table's metaindex), as RocksDB asks the
//! configured policy for its reader (`BlockBasedTable` looks the filter up
//! by `FilterPolicy::CompatibilityName()` and reads it with that policy's
//! `GetFilterBitsReader`).
//!
//! RocksDB's built-in family is read by RocksDB's own dispatcher
//! ([`FilterReader`], which knows nothing else); the `rust.BalancedRibbon`
//! family by [`balanced_policy::parse_block`], and its blocks that are not
//! Balanced (its Bloom filters, the empty and always-true filters) by
//! RocksDB's dispatcher again.

use crate::core::batch::answer_pipelined;
use crate::core::filter::MayContain;
use crate::core::hash::get_slice_hash64;
use crate::core::prelude::*;
use crate::core::solution::QuerySite;
use crate::plugin::balanced_policy;
use crate::rocksdb::format::{FilterDescription, FilterReader};
use crate::standalone::RibbonRef;
use core::fmt;

/// The family a table stores its filter blocks under, which decides how the
/// blocks read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Family {
    /// `rocksdb.BuiltinBloomFilter`: RocksDB's built-in formats.
    Builtin,
    /// `rust.BalancedRibbon` ([`balanced_policy`]).
    BalancedRibbon,
}

/// RocksDB's built-in policies' compatibility name.
const BUILTIN: &str = "rocksdb.BuiltinBloomFilter";

impl Family {
    /// The family of a compatibility name, if this crate reads it.
    pub fn from_compatibility_name(name: &str) -> Option<Self> {
        match name {
            BUILTIN => Some(Family::Builtin),
            balanced_policy::COMPATIBILITY_NAME => Some(Family::BalancedRibbon),
            _ => None,
        }
    }

    /// The compatibility name.
    pub fn compatibility_name(self) -> &'static str {
        match self {
            Family::Builtin => BUILTIN,
            Family::BalancedRibbon => balanced_policy::COMPATIBILITY_NAME,
        }
    }
}

/// A reader for one filter block of a table, chosen by its family.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum TableFilter<'a> {
    /// A block RocksDB's own dispatcher reads (every block of the built-in
    /// family, and the Bloom, empty and always-true blocks of the others).
    Builtin(FilterReader<'a>),
    /// A Balanced Ribbon block of the `rust.BalancedRibbon` family.
    BalancedRibbon(Box<RibbonRef<'a>>),
}

impl<'a> From<FilterReader<'a>> for TableFilter<'a> {
    fn from(r: FilterReader<'a>) -> Self {
        TableFilter::Builtin(r)
    }
}

impl<'a> TableFilter<'a> {
    /// The reader for a block of `family`: RocksDB's dispatcher
    /// ([`FilterReader::new`]) for the built-in family; in the
    /// `rust.BalancedRibbon` family a block ending with its trailer is a
    /// Balanced Ribbon (opened in O(1): the table's block checksum vouches
    /// for the bytes; one whose header does not parse reads as always
    /// true), and any other block as RocksDB's dispatcher reads it.
    pub fn in_family(family: Family, contents: &'a [u8]) -> Self {
        match family {
            Family::Builtin => TableFilter::Builtin(FilterReader::new(contents)),
            Family::BalancedRibbon => match balanced_policy::parse_block(contents, false) {
                Some(Ok(r)) => TableFilter::BalancedRibbon(Box::new(r)),
                Some(Err(_)) => TableFilter::Builtin(FilterReader::AlwaysTrue),
                None => TableFilter::Builtin(FilterReader::new(contents)),
            },
        }
    }

    /// Whether `key` may be in the set the filter was built from.
    #[inline]
    pub fn may_match(&self, key: impl AsRef<[u8]>) -> bool {
        match self {
            TableFilter::Builtin(r) => r.may_match(key),
            TableFilter::BalancedRibbon(r) => r.contains_hash(get_slice_hash64(key.as_ref())),
        }
    }

    /// Whether the key with 64-bit hash `h` (`GetSliceHash64`) may be in
    /// the set; see [`FilterReader::may_match_hash`] for the legacy Bloom.
    #[inline]
    pub fn may_match_hash(&self, h: u64) -> bool {
        match self {
            TableFilter::Builtin(r) => r.may_match_hash(h),
            TableFilter::BalancedRibbon(r) => r.contains_hash(h),
        }
    }

    /// [`may_match`](Self::may_match) for many keys, batched: one answer
    /// per key, in order.
    pub fn may_match_many<K: AsRef<[u8]>>(&self, keys: &[K]) -> Vec<bool> {
        match self {
            TableFilter::Builtin(r) => r.may_match_many(keys),
            TableFilter::BalancedRibbon(r) => {
                let hashes: Vec<u64> = keys.iter().map(|k| get_slice_hash64(k.as_ref())).collect();
                r.contains_many_hashes(&hashes)
            }
        }
    }

    /// [`may_match_many`](Self::may_match_many) into a buffer the caller
    /// owns.
    ///
    /// # Panics
    /// When `out.len() != keys.len()`: every key gets exactly one answer.
    pub fn may_match_many_into<K: AsRef<[u8]>>(&self, keys: &[K], out: &mut [bool]) {
        match self {
            TableFilter::Builtin(r) => r.may_match_many_into(keys, out),
            TableFilter::BalancedRibbon(r) => r.contains_many_into(keys, out),
        }
    }

    /// Whether [`may_match_hash`](Self::may_match_hash) answers from the
    /// 64-bit key hash (all but the legacy Bloom).
    pub fn takes_hash64(&self) -> bool {
        match self {
            TableFilter::Builtin(r) => r.takes_hash64(),
            TableFilter::BalancedRibbon(_) => true,
        }
    }

    /// [`may_match_hash`](Self::may_match_hash) for many hashes, batched:
    /// one answer per hash, in order.
    pub fn may_match_many_hashes(&self, hashes: &[u64]) -> Vec<bool> {
        let mut out = vec![false; hashes.len()];
        self.may_match_many_hashes_into(hashes, &mut out);
        out
    }

    /// [`may_match_many_hashes`](Self::may_match_many_hashes) into a
    /// buffer the caller owns.
    ///
    /// # Panics
    /// When `out.len() != hashes.len()`: every hash gets exactly one answer.
    pub fn may_match_many_hashes_into(&self, hashes: &[u64], out: &mut [bool]) {
        match self {
            TableFilter::Builtin(r) => r.may_match_many_hashes_into(hashes, out),
            TableFilter::BalancedRibbon(r) => {
                assert_eq!(hashes.len(), out.len(), "one answer slot per hash");
                r.contains_many_hashes_into(hashes, out)
            }
        }
    }

    /// Hashes asked of several filters: `out[i] = readers[r].may_match_hash(h)`
    /// for `queries[i] = (r, h)`, with the memory fetches of a batch
    /// overlapped across the filters ([`FilterReader::may_match_hashes_across`]
    /// for blocks of any family).
    ///
    /// # Panics
    /// When `out.len() != queries.len()`, or a query names a reader past
    /// `readers`.
    pub fn may_match_hashes_across(readers: &[TableFilter<'_>], queries: &[(usize, u64)], out: &mut [bool]) {
        assert_eq!(queries.len(), out.len(), "one answer slot per query");
        // Balanced readers in the loop slow the others' queries (measured 7 %
        // on partitioned Ribbon filters): a loop of their own.
        if readers
            .iter()
            .any(|r| matches!(r, TableFilter::BalancedRibbon(_)))
        {
            answer_across::<true>(readers, queries, out);
        } else {
            answer_across::<false>(readers, queries, out);
        }
    }

    /// What kind of filter this is, and its parameters.
    pub fn describe(&self) -> Description {
        match self {
            TableFilter::Builtin(r) => Description::Builtin(r.describe()),
            TableFilter::BalancedRibbon(r) => Description::BalancedRibbon(BalancedDescription {
                data_bytes: r.as_bytes().len(),
                width: r.width(),
                num_keys: r.num_keys(),
                num_shards: r.num_shards(),
                result_bits: r.result_bits(),
                expected_fp_rate: r.expected_fp_rate(),
            }),
        }
    }
}

/// The batch of [`TableFilter::may_match_hashes_across`]; Balanced readers
/// are prepared only when `BALANCED`.
#[inline(always)]
fn answer_across<const BALANCED: bool>(
    readers: &[TableFilter<'_>],
    queries: &[(usize, u64)],
    out: &mut [bool],
) {
    answer_pipelined(
        queries,
        out,
        |(r, h)| match &readers[r] {
            TableFilter::Builtin(FilterReader::Standard128Ribbon(rr)) => (r, rr.prepare_hash(h)),
            TableFilter::BalancedRibbon(rr) if BALANCED => (r, rr.prepare_hash(h)),
            TableFilter::Builtin(FilterReader::FastLocalBloom(b)) => {
                b.prefetch_hash(h);
                (r, (h, QuerySite::default()))
            }
            _ => (r, (h, QuerySite::default())),
        },
        |(r, (h, site))| match &readers[r] {
            TableFilter::Builtin(FilterReader::Standard128Ribbon(rr)) => rr.answer_prepared((h, site)),
            TableFilter::BalancedRibbon(rr) if BALANCED => rr.answer_prepared((h, site)),
            other => other.may_match_hash(h),
        },
    );
}

/// The [`MayContain`] of a table's filter block: [`TableFilter::may_match`],
/// and for batches [`TableFilter::may_match_many`].
impl MayContain for TableFilter<'_> {
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

/// The parameters of a table's filter block.
///
/// With the `serde` feature it serializes as [`FilterDescription`] does:
/// one map of `kind` ([`kind_name`](Self::kind_name)) and the fields.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Description {
    /// A block RocksDB's dispatcher reads.
    Builtin(FilterDescription),
    /// Balanced Ribbon (`rust.BalancedRibbon`).
    BalancedRibbon(BalancedDescription),
}

/// The parameters of a Balanced Ribbon block.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct BalancedDescription {
    /// Bytes of the standalone filter (block trailer excluded).
    pub data_bytes: usize,
    /// Ribbon width.
    pub width: u32,
    /// Keys it was built from.
    pub num_keys: u64,
    /// Soft shards.
    pub num_shards: u32,
    /// Result bits per slot (fractional: the column mix).
    pub result_bits: f64,
    /// Expected FP rate from the layout.
    pub expected_fp_rate: f64,
}

#[cfg(feature = "serde")]
impl serde::Serialize for Description {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        /// A Balanced description under its `kind`, as the built-in ones
        /// serialize (`#[serde(tag = "kind")]`).
        #[derive(serde::Serialize)]
        struct Tagged<'a> {
            kind: &'static str,
            #[serde(flatten)]
            fields: &'a BalancedDescription,
        }
        match self {
            Description::Builtin(d) => d.serialize(s),
            Description::BalancedRibbon(fields) => Tagged {
                kind: self.kind_name(),
                fields,
            }
            .serialize(s),
        }
    }
}

impl Description {
    /// A short name: [`FilterDescription::kind_name`]'s, or `BalancedRibbon`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Description::Builtin(d) => d.kind_name(),
            Description::BalancedRibbon(_) => "BalancedRibbon",
        }
    }

    /// The false-positive rate expected with `num_entries` entries
    /// ([`FilterDescription::expected_fp_rate`]; a Balanced Ribbon's follows
    /// from its layout alone).
    pub fn expected_fp_rate(&self, num_entries: usize) -> f64 {
        match self {
            Description::Builtin(d) => d.expected_fp_rate(num_entries),
            Description::BalancedRibbon(d) => d.expected_fp_rate,
        }
    }

    /// The built-in description, when RocksDB's dispatcher reads the block.
    pub fn builtin(&self) -> Option<&FilterDescription> {
        match self {
            Description::Builtin(d) => Some(d),
            Description::BalancedRibbon(_) => None,
        }
    }
}

impl fmt::Display for Description {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Description::Builtin(d) => d.fmt(f),
            Description::BalancedRibbon(d) => d.fmt(f),
        }
    }
}

impl fmt::Display for BalancedDescription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "BalancedRibbon bytes={} width={} keys={} shards={} result_bits={:.3} expected_fp_rate={:.6}",
            self.data_bytes,
            self.width,
            self.num_keys,
            self.num_shards,
            self.result_bits,
            self.expected_fp_rate
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::hash::get_slice_hash64;
    use crate::plugin::balanced_policy::tests::{build, keys};
    use crate::plugin::balanced_policy::{parse_block, BalancedBuilder, BalancedPolicy, TRAILER};
    use crate::rocksdb::format::tests::built;
    use crate::rocksdb::policy::{BuildContext, CreationReason};

    #[test]
    fn families_round_trip_their_compatibility_names() {
        for family in [Family::Builtin, Family::BalancedRibbon] {
            assert_eq!(
                Family::from_compatibility_name(family.compatibility_name()),
                Some(family)
            );
        }
        assert_eq!(Family::from_compatibility_name("rocksdb.Other"), None);
    }

    /// Hashes asked across readers of every kind, in an order that jumps
    /// between them: each answer is its own reader's single answer, and
    /// each member is found.
    #[test]
    fn hashes_asked_across_readers_answer_as_each_reader() {
        let mut blocks: Vec<(Family, Vec<u8>)> = [
            ("ribbonfilter:10", 7, 3000),
            ("bloomfilter:10", 7, 2000),
            ("bloomfilter:10", 4, 500),
            ("ribbonfilter:10", 7, 0),
            ("ribbonfilter:8", 6, 50),
        ]
        .iter()
        .map(|&(policy, fv, n)| (Family::Builtin, built(policy, fv, n)))
        .collect();
        let mut b =
            BalancedBuilder::new(&BalancedPolicy::new(10.0, -1), &BuildContext::sst_file_writer(7)).unwrap();
        for i in 0..40_000u32 {
            b.add_key(&i.to_le_bytes());
        }
        blocks.push((Family::BalancedRibbon, b.finish()));
        blocks.push((Family::Builtin, vec![0; 5]));
        let mut readers: Vec<TableFilter<'_>> = blocks
            .iter()
            .map(|(family, block)| TableFilter::in_family(*family, block))
            .collect();
        readers.push(TableFilter::Builtin(FilterReader::AlwaysTrue));
        let kinds: Vec<&str> = readers.iter().map(|r| r.describe().kind_name()).collect();
        for kind in [
            "Standard128Ribbon",
            "FastLocalBloom",
            "LegacyBloom",
            "BalancedRibbon",
            "AlwaysFalse",
            "AlwaysTrue",
        ] {
            assert!(kinds.contains(&kind), "{kind} not among {kinds:?}");
        }
        let queries: Vec<(usize, u64)> = (0..200_000u32)
            .map(|i| {
                let r = (i.wrapping_mul(2_654_435_761) >> 7) as usize % readers.len();
                let key = (i % 50_000).to_le_bytes();
                (r, get_slice_hash64(&key))
            })
            .collect();
        let member = |r: usize, i: usize| (i % 50_000) < [3000, 2000, 500, 0, 50, 40_000][r.min(5)];
        // With a Balanced reader, and without (its place taken by an
        // always-true reader): the two loops of the batch.
        assert_eq!(kinds[5], "BalancedRibbon");
        let mut without_balanced = readers.clone();
        without_balanced[5] = TableFilter::Builtin(FilterReader::AlwaysTrue);
        for readers in [&readers, &without_balanced] {
            let mut out = vec![false; queries.len()];
            TableFilter::may_match_hashes_across(readers, &queries, &mut out);
            let mut found = 0;
            for (i, (&(r, h), &got)) in queries.iter().zip(&out).enumerate() {
                let kind = readers[r].describe().kind_name();
                assert_eq!(
                    got,
                    readers[r].may_match_hash(h),
                    "query {i}: reader {r} ({kind})"
                );
                if r < 6 && member(r, i) {
                    assert!(got, "query {i}: member of reader {r} ({kind}) lost");
                }
                found += usize::from(got);
            }
            assert!(found < queries.len(), "some answers are no");
        }
    }

    #[test]
    #[should_panic(expected = "one answer slot per query")]
    fn hashes_asked_across_readers_need_one_slot_each() {
        TableFilter::may_match_hashes_across(&[FilterReader::AlwaysTrue.into()], &[(0, 1)], &mut []);
    }

    // Blocks of the rust.BalancedRibbon family, as its builder writes them.

    #[test]
    fn balanced_blocks_have_ribbonfilters_fp_rate_in_fewer_bits() {
        let policy = BalancedPolicy::parse("rust.BalancedRibbon:10").unwrap();
        let ctx = BuildContext::at_level(6, Some(1));
        let n = 200_000u64;
        let members = keys(n, 1);
        let block = build(&policy, &ctx, &members);
        assert_eq!(block[block.len() - 5..], TRAILER);
        let reader = TableFilter::in_family(Family::BalancedRibbon, &block);
        assert!(matches!(reader, TableFilter::BalancedRibbon(_)));
        assert!(members.iter().all(|k| reader.may_match(k)), "false negative");
        // ribbonfilter:10 writes 7.05 bits/key here, this one 6.82
        // (the column mix's 6.78 bits for this FP rate, 0.6 % overhead).
        let ribbonfilter =
            crate::rocksdb::builder::build_filter(&"ribbonfilter:10".parse().unwrap(), &ctx, &members)
                .unwrap();
        let bits_per_key = block.len() as f64 * 8.0 / n as f64;
        let ribbon_bits_per_key = ribbonfilter.len() as f64 * 8.0 / n as f64;
        assert!(
            bits_per_key <= 6.83 && bits_per_key < 0.975 * ribbon_bits_per_key,
            "{bits_per_key} bits/key against ribbonfilter's {ribbon_bits_per_key}"
        );
        // ribbonfilter:10's target, within 4 sigma over 10^6 non-members.
        let target = 1.0 / policy.bits_per_key().desired_one_in_fp_rate();
        let probes = 1_000_000u64;
        let fp = keys(probes, 2).iter().filter(|k| reader.may_match(k)).count() as f64 / probes as f64;
        let sigma = (target * (1.0 - target) / probes as f64).sqrt();
        assert!((fp - target).abs() < 4.0 * sigma, "FP {fp} against {target}");
        // Batched and by-hash answers agree with single ones.
        let probe: Vec<Vec<u8>> = keys(1000, 3).into_iter().chain(keys(1000, 1)).collect();
        let single: Vec<bool> = probe.iter().map(|k| reader.may_match(k)).collect();
        assert_eq!(reader.may_match_many(&probe), single);
        let hashes: Vec<u64> = probe.iter().map(|k| get_slice_hash64(k)).collect();
        assert_eq!(reader.may_match_many_hashes(&hashes), single);
        // Verified open of the same block.
        assert!(parse_block(&block, true).unwrap().is_ok());
    }

    #[test]
    fn bloom_where_ribbonfilter_writes_bloom_or_bloom_is_smaller() {
        let policy = BalancedPolicy::new(10.0, 1);
        let flush = BuildContext {
            reason: CreationReason::Flush,
            ..BuildContext::at_level(6, Some(0))
        };
        for (ctx, n) in [(flush, 10_000), (BuildContext::at_level(6, Some(3)), 50)] {
            let members = keys(n, 5);
            let block = build(&policy, &ctx, &members);
            let reader = TableFilter::in_family(Family::BalancedRibbon, &block);
            assert!(
                matches!(reader, TableFilter::Builtin(FilterReader::FastLocalBloom(_))),
                "{n} keys"
            );
            assert!(members.iter().all(|k| reader.may_match(k)));
        }
        // Zero entries: the empty filter.
        let block = build(&policy, &BuildContext::at_level(6, Some(3)), &[]);
        assert!(matches!(
            TableFilter::in_family(Family::BalancedRibbon, &block),
            TableFilter::Builtin(FilterReader::AlwaysFalse)
        ));
    }

    #[test]
    fn damaged_blocks_never_panic_and_verify_catches_them() {
        let policy = BalancedPolicy::new(10.0, 0);
        let members = keys(20_000, 7);
        let block = build(&policy, &BuildContext::at_level(6, Some(2)), &members);
        for i in (0..block.len() - TRAILER.len()).step_by(97) {
            let mut bad = block.clone();
            bad[i] ^= 0x20;
            let reader = TableFilter::in_family(Family::BalancedRibbon, &bad);
            for k in &members[..50] {
                let _ = reader.may_match(k);
            }
            assert!(parse_block(&bad, true).unwrap().is_err(), "byte {i}");
        }
        for len in 0..block.len() {
            let reader = TableFilter::in_family(Family::BalancedRibbon, &block[..len]);
            let _ = reader.may_match(&members[0]);
        }
    }
}
