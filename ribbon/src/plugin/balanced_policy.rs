//! `rust.BalancedRibbon:BITS[:BLOOM_BEFORE_LEVEL]`: Balanced Ribbon filters
//! ([`crate::standalone`], the paper's section 6) in RocksDB filter blocks,
//! for tables written through `rocks-bridge`.
//!
//! The policy takes RocksDB's `ribbonfilter:BITS[:BLOOM_BEFORE_LEVEL]`
//! rules whole ([`FilterPolicy::filter_kind`]): the same FP-rate target for
//! BITS, FastLocalBloom below `bloom_before_level` and for flushes when it
//! says so, the legacy Bloom where RocksDB's Ribbon policy writes one, and
//! Bloom whenever Bloom is the smaller filter (few keys).
//! Where `ribbonfilter` writes a Standard128 Ribbon, this policy writes a
//! Balanced Ribbon of width 64 with the same FP rate, in about 4 % fewer
//! bits (RocksDB's Ribbon: 7.05 to 7.19 bits/key at BITS = 10; this one:
//! 6.81 to 6.82, the column mix's 6.78 bits for that FP rate and 0.5 %
//! overhead), unless RocksDB's block is smaller (under about 10^4
//! entries, where the Balanced header and shard metadata weigh more).
//!
//! # The block, and why stock RocksDB never loses a key over it
//!
//! A Balanced block is a standalone filter file ([`crate::standalone::file`],
//! format version 2, checksummed) followed by the 5-byte [`TRAILER`]
//! `00 'b' 'a' 'l' 01`. Two things keep a RocksDB without the plugin from
//! reading it as something it is not:
//!
//! 1. The blocks are stored under their own family, [`COMPATIBILITY_NAME`]
//!    (metaindex names `fullfilter.rust.BalancedRibbon` and
//!    `partitionedfilter.rust.BalancedRibbon`). RocksDB looks a table's
//!    filter up by its configured policy's compatibility name only
//!    (`BlockBasedTable::PrefetchIndexAndFilterBlocks`), so its built-in
//!    policies (`rocksdb.BuiltinBloomFilter`) never find these blocks: the
//!    table is read as one without a filter.
//! 2. Should a reader that follows RocksDB's built-in rules read the block
//!    anyway, the trailer's first byte (RocksDB's marker byte) is 0. RocksDB
//!    gives its markers these meanings (`GetBuiltinFilterBitsReader`,
//!    `table/block_based/filter_policy.cc`): 1 to 127 legacy Bloom probes,
//!    −1 FastLocalBloom, −2 Standard128 Ribbon, the other negative values
//!    reserved for future formats, and **0 zero probes: always true**. 0 is
//!    the marker of RocksDB's own always-true filter (the 6 zero bytes of
//!    `FinishAlwaysTrue`), which every RocksDB version writes and must keep
//!    reading as "may match", so it can never be given another meaning; a
//!    reserved negative value could be. The four bytes after it, which
//!    RocksDB ignores under marker 0, name this format and its version.
//!
//! Blocks of the other kinds this policy writes (Bloom) are RocksDB's own
//! bytes, read by their marker as usual.

use crate::core::prelude::*;
use crate::rocksdb::builder::FilterBuilder;
use crate::rocksdb::policy::{BitsPerKey, BuildContext, FilterKind, FilterPolicy, PolicyParseError};
use crate::standalone::{self, Config, Precision, Ribbon, RibbonRef};

/// The policy's name, the `NAME` of its ids.
pub const NAME: &str = "rust.BalancedRibbon";

/// The family its filter blocks are stored under (RocksDB's
/// `FilterPolicy::CompatibilityName`).
pub const COMPATIBILITY_NAME: &str = "rust.BalancedRibbon";

/// The last 5 bytes of a Balanced block: RocksDB's marker byte 0 (always
/// true to RocksDB's own reader), then `bal` and the block format version 1.
pub const TRAILER: [u8; 5] = [0, b'b', b'a', b'l', 1];

/// The ribbon width of the Balanced filters this policy writes: under 1 %
/// space overhead, and construction about as fast as Standard width 128.
pub const WIDTH: u32 = 64;

/// The filter a table file gets under this policy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BlockKind {
    /// A RocksDB filter (Bloom), as `ribbonfilter` would write it.
    Rocksdb(FilterKind),
    /// A Balanced Ribbon with this FP-rate target, or Bloom where Bloom is
    /// smaller.
    Balanced {
        /// One false positive in this many queries (`ribbonfilter`'s
        /// target for the same BITS).
        desired_one_in_fp_rate: f64,
        /// RocksDB's Bloom settings for the same BITS (`ribbonfilter`'s
        /// fall-back, which its own block uses when smaller). When Balanced
        /// banding fails (no seed of 256 bands: never seen), the block is
        /// RocksDB's always-true filter instead: the hashes went to
        /// construction, which frees them early.
        bloom: crate::rocksdb::bloom::FastLocalBloomBuilder,
    },
}

/// `rust.BalancedRibbon:BITS[:BLOOM_BEFORE_LEVEL]`.
///
/// ```
/// use ribbon::plugin::balanced_policy::BalancedPolicy;
///
/// let p = BalancedPolicy::parse("rust.BalancedRibbon:10").unwrap();
/// assert_eq!(p.id(), "rust.BalancedRibbon:10:0");
/// assert!(BalancedPolicy::parse("rust.BalancedRibbon:x").is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BalancedPolicy {
    /// `ribbonfilter` with the same settings: the rules this policy follows.
    rules: FilterPolicy,
}

impl BalancedPolicy {
    /// The policy for `bits_per_key` (sanitised as RocksDB's) and
    /// `bloom_before_level`.
    pub fn new(bits_per_key: f64, bloom_before_level: i32) -> Self {
        Self {
            rules: FilterPolicy::ribbon(bits_per_key, bloom_before_level),
        }
    }

    /// Parses `rust.BalancedRibbon:BITS[:BLOOM_BEFORE_LEVEL]` by
    /// `ribbonfilter`'s grammar.
    pub fn parse(id: &str) -> Result<Self, PolicyParseError> {
        let trimmed = id.trim();
        let rest = trimmed
            .strip_prefix(NAME)
            .and_then(|r| r.strip_prefix(':'))
            .ok_or_else(|| {
                PolicyParseError::new(id, "expected rust.BalancedRibbon:BITS[:BLOOM_BEFORE_LEVEL]")
            })?;
        match FilterPolicy::parse_optional(&format!("ribbonfilter:{rest}")) {
            Ok(Some(rules)) => Ok(Self { rules }),
            Ok(None) => Err(PolicyParseError::new(id, "expected rust.BalancedRibbon:BITS")),
            Err(e) => Err(e.for_input(id)),
        }
    }

    /// The canonical id, which parses back to this policy:
    /// `rust.BalancedRibbon:10:0`.
    pub fn id(&self) -> String {
        format!(
            "{NAME}{}:{}",
            self.rules.bits_per_key().suffix(),
            self.bloom_before_level()
        )
    }

    /// Bits per key, sanitised.
    pub fn bits_per_key(&self) -> BitsPerKey {
        self.rules.bits_per_key()
    }

    /// Levels below this one get Bloom filters (`ribbonfilter`'s rule).
    pub fn bloom_before_level(&self) -> i32 {
        match self.rules.kind() {
            crate::rocksdb::policy::PolicyKind::Ribbon { bloom_before_level } => bloom_before_level,
            _ => unreachable!("built from ribbonfilter"),
        }
    }

    /// This policy with another `bloom_before_level` (RocksDB's mutable
    /// option of the same name).
    #[must_use]
    pub fn with_bloom_before_level(self, level: i32) -> Self {
        let bits = f64::from(self.bits_per_key().millibits_per_key()) / 1000.0;
        Self::new(bits, level)
    }

    /// Whether the policy builds filters at all (BITS of 0.5 or more).
    pub fn builds_filters(&self) -> bool {
        self.rules.builds_filters()
    }

    /// The filter a table file written under `ctx` gets; `None` for no
    /// filter.
    pub fn block_kind(&self, ctx: &BuildContext) -> Option<BlockKind> {
        Some(match self.rules.filter_kind(ctx)? {
            FilterKind::Standard128Ribbon {
                desired_one_in_fp_rate,
                bloom,
            } => BlockKind::Balanced {
                desired_one_in_fp_rate,
                bloom,
            },
            other => BlockKind::Rocksdb(other),
        })
    }
}

/// The standalone configuration of a Balanced block with this FP target,
/// built in bounded memory ([`Config::low_memory`]): a table's filter is
/// built while RocksDB holds the table's other blocks, and construction
/// memory is what users of Ribbon filters in RocksDB watch.
fn config(desired_one_in_fp_rate: f64) -> Config {
    Config {
        precision: Precision::FpRate(1.0 / desired_one_in_fp_rate),
        low_memory: true,
        ..Config::balanced(WIDTH, 7.0)
    }
}

/// The bytes of a Balanced block for `num_entries` entries (the plan's
/// estimate: the last shard is sized at construction, within a fraction
/// of a shard), or `None` when the standalone format cannot hold them.
fn balanced_block_len(num_entries: usize, desired_one_in_fp_rate: f64) -> Option<usize> {
    let plan = config(desired_one_in_fp_rate).plan(num_entries as u64).ok()?;
    Some(plan.file_len + TRAILER.len())
}

/// Builds one filter block under [`BalancedPolicy`] (what the bridge's
/// builder drives): entries are collected with RocksDB's rules for
/// consecutive duplicates and prefixes ([`FilterBuilder`]).
#[derive(Debug, Clone)]
pub struct BalancedBuilder {
    kind: BlockKind,
    entries: FilterBuilder,
}

impl BalancedBuilder {
    /// The builder for a table written under `ctx`; `None` for no filter.
    pub fn new(policy: &BalancedPolicy, ctx: &BuildContext) -> Option<Self> {
        let kind = policy.block_kind(ctx)?;
        let entries = match kind {
            BlockKind::Rocksdb(k) => FilterBuilder::for_kind(k),
            BlockKind::Balanced {
                desired_one_in_fp_rate,
                bloom,
            } => FilterBuilder::for_kind(FilterKind::Standard128Ribbon {
                desired_one_in_fp_rate,
                bloom,
            }),
        };
        Some(Self { kind, entries })
    }

    /// The filter this builder writes (before any fall-back to Bloom).
    pub fn kind(&self) -> BlockKind {
        self.kind
    }

    /// Adds a key (`AddKey`).
    pub fn add_key(&mut self, key: &[u8]) {
        self.entries.add_key(key);
    }

    /// Adds a key and its prefix (`AddKeyAndAlt`).
    pub fn add_key_and_alt(&mut self, key: &[u8], alt: &[u8]) {
        self.entries.add_key_and_alt(key, alt);
    }

    /// Entries added since the last `finish`.
    pub fn estimate_entries_added(&self) -> usize {
        self.entries.estimate_entries_added()
    }

    /// The filter block; the builder is then empty. Zero entries give
    /// RocksDB's empty filter (matches nothing).
    pub fn finish(&mut self) -> Vec<u8> {
        let BlockKind::Balanced {
            desired_one_in_fp_rate,
            ..
        } = self.kind
        else {
            return self.entries.finish();
        };
        if self.balanced_len(self.entries.estimate_entries_added()).is_none() {
            // Few entries: RocksDB's own choice (its Ribbon, or Bloom when
            // smaller) is smaller; the Balanced header and shard metadata
            // weigh more than the space Balanced saves.
            return self.entries.finish();
        }
        let hashes = self.entries.take_hash_entries();
        // The hashes go to construction, which frees them before banding.
        match Ribbon::from_hash_vec(hashes, &config(desired_one_in_fp_rate)) {
            Ok(filter) => {
                let mut block = filter.into_bytes();
                block.extend_from_slice(&TRAILER);
                block
            }
            // No seed of 256 banded (for sizes the plan accepts, never
            // seen): RocksDB's always-true filter, which loses filtering,
            // never a key.
            Err(_) => crate::rocksdb::format::ALWAYS_TRUE_FILTER.to_vec(),
        }
    }

    /// The size of the Balanced block this builder writes for `n` entries,
    /// or `None` when it writes `ribbonfilter`'s own block for them (not a
    /// Balanced kind, no entries, or a Balanced block no smaller than
    /// `ribbonfilter`'s Ribbon, or Bloom when that is smaller).
    fn balanced_len(&self, n: usize) -> Option<usize> {
        let BlockKind::Balanced {
            desired_one_in_fp_rate,
            ..
        } = self.kind
        else {
            return None;
        };
        if n == 0 {
            return None;
        }
        balanced_block_len(n, desired_one_in_fp_rate).filter(|&len| len < self.entries.calculate_space(n))
    }

    /// Block bytes for `num_entries` entries (`CalculateSpace`).
    pub fn calculate_space(&self, num_entries: usize) -> usize {
        self.balanced_len(num_entries)
            .unwrap_or_else(|| self.entries.calculate_space(num_entries))
    }

    /// The expected FP rate of a block of `bytes` for `num_entries`
    /// entries (statistics only).
    pub fn estimated_fp_rate(&self, num_entries: usize, bytes: usize) -> f64 {
        match self.kind {
            BlockKind::Balanced {
                desired_one_in_fp_rate,
                ..
            } if self.balanced_len(num_entries).is_some() => 1.0 / desired_one_in_fp_rate,
            _ => self.entries.estimated_fp_rate(num_entries, bytes),
        }
    }
}

/// The Balanced filter in a block of this family, borrowed zero-copy, when
/// the block ends with [`TRAILER`]; `None` for every other block. With
/// `verify`, the filter's checksum is checked too (one pass over the
/// block); without it the open is O(1), for blocks whose integrity the
/// table's block checksums already vouch for.
///
/// Errors: a block with the trailer whose filter does not parse.
pub fn parse_block(contents: &[u8], verify: bool) -> Option<Result<RibbonRef<'_>, standalone::Error>> {
    let file = contents.strip_suffix(&TRAILER)?;
    Some(if verify {
        RibbonRef::from_bytes(file)
    } else {
        RibbonRef::from_bytes_unverified(file)
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::rocksdb::format::FilterReader;

    pub(crate) fn keys(n: u64, salt: u64) -> Vec<Vec<u8>> {
        (0..n).map(|i| format!("key-{salt}-{i}").into_bytes()).collect()
    }

    pub(crate) fn build(policy: &BalancedPolicy, ctx: &BuildContext, keys: &[Vec<u8>]) -> Vec<u8> {
        let mut b = BalancedBuilder::new(policy, ctx).unwrap();
        for k in keys {
            b.add_key(k);
        }
        b.finish()
    }

    #[test]
    fn ids_follow_ribbonfilters_grammar() {
        for (id, canonical) in [
            ("rust.BalancedRibbon:10", "rust.BalancedRibbon:10:0"),
            ("rust.BalancedRibbon:6.5:-1", "rust.BalancedRibbon:6.5:-1"),
            (" rust.BalancedRibbon:10:3 ", "rust.BalancedRibbon:10:3"),
        ] {
            let p = BalancedPolicy::parse(id).unwrap();
            assert_eq!(p.id(), canonical);
            assert_eq!(BalancedPolicy::parse(&p.id()).unwrap(), p);
        }
        for bad in [
            "rust.BalancedRibbon",
            "rust.BalancedRibbon:",
            "rust.BalancedRibbon:x",
            "rust.BalancedRibbon:10:x",
            "rust.BalancedRibbon:10:1:2",
            "rust.BalancedRibbonX:10",
            "ribbonfilter:10",
        ] {
            let e = BalancedPolicy::parse(bad).unwrap_err();
            assert!(e.to_string().contains(bad.trim()), "{e}");
        }
    }

    #[test]
    fn rocksdbs_own_reader_reads_balanced_blocks_as_always_true() {
        let policy = BalancedPolicy::new(10.0, 0);
        let block = build(&policy, &BuildContext::at_level(6, Some(1)), &keys(10_000, 4));
        // The built-in dispatcher: marker 0, zero probes.
        assert!(matches!(FilterReader::new(&block), FilterReader::AlwaysTrue));
    }

    #[test]
    fn calculate_space_matches_what_finish_writes() {
        let policy = BalancedPolicy::new(10.0, 0);
        let ctx = BuildContext::at_level(6, Some(2));
        for n in [1u64, 100, 1000, 5000, 40_000] {
            let b = BalancedBuilder::new(&policy, &ctx).unwrap();
            let planned = b.calculate_space(n as usize);
            let written = build(&policy, &ctx, &keys(n, 6)).len();
            // Within one shard's worth of the plan (the last shard is sized
            // at construction).
            let slack = planned / 50 + 64;
            assert!(
                planned.abs_diff(written) <= slack,
                "n={n}: planned {planned}, wrote {written}"
            );
        }
    }
}
