//! The filter builder a table builder drives: key hashing and de-duplication,
//! then the chosen format's construction with RocksDB's fall-backs.
//!
//! Ported from RocksDB's `table/block_based/filter_policy.cc`
//! (`XXPH3FilterBitsBuilder`, `LegacyBloomBitsBuilder::AddKey*`,
//! `Standard128RibbonBitsBuilder::Finish`).

use crate::core::hash::{bloom_hash, get_slice_hash64};
use crate::core::prelude::*;
use crate::rocksdb::policy::{BuildContext, FilterKind, FilterPolicy};
use crate::rocksdb::standard128;

/// The key hashes collected so far, in insertion order, with RocksDB's
/// de-duplication of consecutive equal hashes.
#[derive(Debug, Clone, Default)]
struct Entries<H> {
    hashes: Vec<H>,
    prev_alt_hash: Option<H>,
}

impl<H: Copy + PartialEq> Entries<H> {
    fn add(&mut self, hash: H) {
        if self.hashes.last() != Some(&hash) {
            self.hashes.push(hash);
        }
    }

    /// `AddKeyAndAlt`: the alternate (a prefix, with a prefix extractor) is
    /// added unless it equals the previous alternate, this key, or the
    /// previous key; the key is added unless it equals the previous key or
    /// the previous alternate.
    fn add_with_alt(&mut self, key_hash: H, alt_hash: H) {
        let prev_key_hash = self.hashes.last().copied();
        let prev_alt_hash = self.prev_alt_hash;
        if Some(alt_hash) != prev_alt_hash && alt_hash != key_hash && Some(alt_hash) != prev_key_hash {
            self.hashes.push(alt_hash);
        }
        self.prev_alt_hash = Some(alt_hash);
        if Some(key_hash) != prev_key_hash && Some(key_hash) != prev_alt_hash {
            self.hashes.push(key_hash);
        }
    }

    fn take(&mut self) -> Vec<H> {
        self.prev_alt_hash = None;
        core::mem::take(&mut self.hashes)
    }
}

#[derive(Debug, Clone)]
enum Hashes {
    /// 64-bit `GetSliceHash64` values (FastLocalBloom and Ribbon).
    Xxph3(Entries<u64>),
    /// 32-bit `BloomHash` values (legacy Bloom).
    Legacy(Entries<u32>),
}

/// Builds one filter block, as RocksDB's `FilterBitsBuilder` for the same
/// policy and context would.
///
/// ```
/// use ribbon::rocksdb::builder::FilterBuilder;
/// use ribbon::rocksdb::policy::{BuildContext, FilterPolicy};
///
/// let policy: FilterPolicy = "ribbonfilter:10".parse().unwrap();
/// let mut b = FilterBuilder::new(&policy, &BuildContext::default()).unwrap();
/// b.extend((0..1000u32).map(u32::to_le_bytes));
/// b.add_key("apple");
/// let filter = b.finish();
/// let reader = ribbon::rocksdb::format::FilterReader::new(&filter);
/// assert!((0..1000u32).all(|i| reader.may_match(i.to_le_bytes())));
/// assert!(reader.may_match("apple"));
/// ```
#[derive(Debug, Clone)]
pub struct FilterBuilder {
    kind: FilterKind,
    hashes: Hashes,
}

impl FilterBuilder {
    /// The builder `policy` uses for a file written under `ctx`, or `None`
    /// when the policy builds no filter (0 bits per key; see
    /// [`FilterPolicy::builds_filters`] for the two ways of saying "no
    /// filter", both `None`).
    pub fn new(policy: &FilterPolicy, ctx: &BuildContext) -> Option<Self> {
        policy.filter_kind(ctx).map(Self::for_kind)
    }

    /// A builder for an explicit filter kind.
    pub fn for_kind(kind: FilterKind) -> Self {
        let hashes = match kind {
            FilterKind::LegacyBloom(_) => Hashes::Legacy(Entries::default()),
            _ => Hashes::Xxph3(Entries::default()),
        };
        Self { kind, hashes }
    }

    /// The format this builder writes (before any fall-back).
    pub fn kind(&self) -> FilterKind {
        self.kind
    }

    /// Reserves room for `additional` more key hashes, fallibly: a caller
    /// about to add a batch whose size it does not control (a binding's
    /// caller) gets an error it can report instead of an abort when the
    /// memory is not there. (Adding keys never needs it; the construction
    /// in [`finish`](Self::finish) allocates in proportion to the keys.)
    pub fn try_reserve(&mut self, additional: usize) -> Result<(), alloc::collections::TryReserveError> {
        match &mut self.hashes {
            Hashes::Xxph3(e) => e.hashes.try_reserve_exact(additional),
            Hashes::Legacy(e) => e.hashes.try_reserve_exact(additional),
        }
    }

    /// Adds a key (`AddKey`). A key equal to the previous one adds nothing.
    pub fn add_key(&mut self, key: impl AsRef<[u8]>) {
        let key = key.as_ref();
        match &mut self.hashes {
            Hashes::Xxph3(e) => e.add(get_slice_hash64(key)),
            Hashes::Legacy(e) => e.add(bloom_hash(key)),
        }
    }

    /// Adds a key by its 64-bit hash (`GetSliceHash64` of the key), for
    /// FastLocalBloom and Ribbon ([`takes_key_hashes`](Self::takes_key_hashes)).
    /// A hash equal to the previous one adds nothing.
    ///
    /// Errors, adding nothing, when this builder writes the legacy Bloom
    /// (`format_version < 5`): it hashes keys to 32 bits its own way, so no
    /// 64-bit hash can stand for a key there; add the key itself.
    pub fn add_key_hash(&mut self, hash: u64) -> Result<(), KeyHashRefused> {
        match &mut self.hashes {
            Hashes::Xxph3(e) => {
                e.add(hash);
                Ok(())
            }
            Hashes::Legacy(_) => Err(KeyHashRefused),
        }
    }

    /// Whether [`add_key_hash`](Self::add_key_hash) takes 64-bit key
    /// hashes: every format but the legacy Bloom.
    pub fn takes_key_hashes(&self) -> bool {
        matches!(self.hashes, Hashes::Xxph3(_))
    }

    /// Adds a key and its alternate, the prefix under a prefix extractor
    /// (`AddKeyAndAlt`).
    pub fn add_key_and_alt(&mut self, key: impl AsRef<[u8]>, alt: impl AsRef<[u8]>) {
        let (key, alt) = (key.as_ref(), alt.as_ref());
        match &mut self.hashes {
            Hashes::Xxph3(e) => e.add_with_alt(get_slice_hash64(key), get_slice_hash64(alt)),
            Hashes::Legacy(e) => e.add_with_alt(bloom_hash(key), bloom_hash(alt)),
        }
    }

    /// Hash entries added so far (`EstimateEntriesAdded`).
    pub fn estimate_entries_added(&self) -> usize {
        match &self.hashes {
            Hashes::Xxph3(e) => e.hashes.len(),
            Hashes::Legacy(e) => e.hashes.len(),
        }
    }

    /// The 64-bit hash entries collected so far, in order (empty for the
    /// legacy Bloom, whose entries are 32-bit). RocksDB's builders checksum
    /// these as they are added (`detect_filter_construct_corruption`) and
    /// keep them to re-read the finished filter (`MaybePostVerify`).
    pub fn hash_entries(&self) -> &[u64] {
        match &self.hashes {
            Hashes::Xxph3(e) => &e.hashes,
            Hashes::Legacy(_) => &[],
        }
    }

    /// Takes the 64-bit hash entries collected so far and resets the
    /// builder, for a caller that builds its own filter from them (empty
    /// for the legacy Bloom).
    pub fn take_hash_entries(&mut self) -> Vec<u64> {
        match &mut self.hashes {
            Hashes::Xxph3(e) => e.take(),
            Hashes::Legacy(e) => {
                e.take();
                Vec::new()
            }
        }
    }

    /// The slots [`finish`](Self::finish) would band the current entries
    /// into: non-zero only for a Ribbon filter that will try banding (not
    /// for zero keys, nor when it falls back to Bloom for its size or key
    /// count). RocksDB charges that banding to the block cache first
    /// (`Standard128RibbonBitsBuilder::Finish`).
    pub fn ribbon_banding_slots(&self) -> u32 {
        match (&self.hashes, self.kind) {
            (
                Hashes::Xxph3(e),
                FilterKind::Standard128Ribbon {
                    desired_one_in_fp_rate,
                    bloom,
                },
            ) if !e.hashes.is_empty() => {
                let entropy = standard128::entropy(&e.hashes);
                standard128::space_and_slots(e.hashes.len(), desired_one_in_fp_rate, entropy, |n| {
                    bloom.calculate_space(n)
                })
                .1
            }
            _ => 0,
        }
    }

    /// As [`finish`](Self::finish), except that a Ribbon builder builds its
    /// Bloom fall-back whatever the sizes, as RocksDB does when the block
    /// cache refuses the banding's reservation. Other kinds: `finish`.
    pub fn finish_bloom_fallback(&mut self) -> Vec<u8> {
        match (&mut self.hashes, self.kind) {
            (Hashes::Xxph3(e), FilterKind::Standard128Ribbon { bloom, .. }) => bloom.build(&e.take()),
            _ => self.finish(),
        }
    }

    /// Builds the filter block contents and resets the builder for reuse.
    /// Zero keys give the empty filter, which matches nothing.
    pub fn finish(&mut self) -> Vec<u8> {
        match (&mut self.hashes, self.kind) {
            (Hashes::Legacy(e), FilterKind::LegacyBloom(b)) => b.build(&e.take()),
            (Hashes::Xxph3(e), FilterKind::FastLocalBloom(b)) => b.build(&e.take()),
            (
                Hashes::Xxph3(e),
                FilterKind::Standard128Ribbon {
                    desired_one_in_fp_rate,
                    bloom,
                },
            ) => standard128::build(e.take(), desired_one_in_fp_rate, |n| bloom.calculate_space(n))
                .unwrap_or_else(|hashes| bloom.build(&hashes)),
            _ => unreachable!("hash width always matches the filter kind"),
        }
    }

    /// Filter bytes (trailer included) for `num_entries` keys
    /// (`CalculateSpace`).
    pub fn calculate_space(&self, num_entries: usize) -> usize {
        match self.kind {
            FilterKind::LegacyBloom(b) => b.calculate_space(num_entries),
            FilterKind::FastLocalBloom(b) => b.calculate_space(num_entries),
            FilterKind::Standard128Ribbon {
                desired_one_in_fp_rate,
                bloom,
            } => {
                if num_entries == 0 {
                    return 0;
                }
                let entropy = match &self.hashes {
                    Hashes::Xxph3(e) => standard128::entropy(&e.hashes),
                    Hashes::Legacy(_) => 0,
                };
                standard128::space_and_slots(num_entries, desired_one_in_fp_rate, entropy, |n| {
                    bloom.calculate_space(n)
                })
                .0
            }
        }
    }

    /// Keys that fit in `bytes` of filter (`ApproximateNumEntries`).
    pub fn approximate_num_entries(&self, bytes: usize) -> usize {
        match self.kind {
            FilterKind::LegacyBloom(b) => b.approximate_num_entries(bytes),
            FilterKind::FastLocalBloom(b) => b.approximate_num_entries(bytes),
            FilterKind::Standard128Ribbon {
                desired_one_in_fp_rate,
                bloom,
            } => standard128::approximate_num_entries(bytes, desired_one_in_fp_rate, |b| {
                bloom.approximate_num_entries(b)
            }),
        }
    }

    /// The expected FP rate of a filter of `bytes` (trailer included) for
    /// `num_entries` keys (`EstimatedFpRate`).
    pub fn estimated_fp_rate(&self, num_entries: usize, bytes: usize) -> f64 {
        match self.kind {
            FilterKind::LegacyBloom(b) => b.estimated_fp_rate(num_entries, bytes),
            FilterKind::FastLocalBloom(b) => b.estimated_fp_rate(num_entries, bytes),
            FilterKind::Standard128Ribbon { bloom, .. } => {
                standard128::estimated_fp_rate(num_entries, bytes, |n, len| bloom.estimated_fp_rate(n, len))
            }
        }
    }
}

/// Adds every key in order, as [`FilterBuilder::add_key`] does.
impl<K: AsRef<[u8]>> Extend<K> for FilterBuilder {
    fn extend<I: IntoIterator<Item = K>>(&mut self, keys: I) {
        for key in keys {
            self.add_key(key);
        }
    }
}

/// A 64-bit key hash offered to a builder of the legacy Bloom
/// ([`FilterBuilder::add_key_hash`]), which takes keys only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyHashRefused;

impl core::fmt::Display for KeyHashRefused {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(
            "the legacy Bloom filter (format_version < 5) hashes keys to 32 bits itself: add the keys, not 64-bit hashes",
        )
    }
}

impl core::error::Error for KeyHashRefused {}

/// Builds one filter from `keys` under `policy` and `ctx`; `None` when the
/// policy writes no filter.
pub fn build_filter<K: AsRef<[u8]>>(
    policy: &FilterPolicy,
    ctx: &BuildContext,
    keys: &[K],
) -> Option<Vec<u8>> {
    let mut b = FilterBuilder::new(policy, ctx)?;
    b.extend(keys);
    Some(b.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 64-bit hash is refused, not dropped, where the filter is the
    /// legacy Bloom (issue #30: two hashes gave a 0-byte filter answering
    /// "definitely not" for both).
    #[test]
    fn the_legacy_bloom_refuses_key_hashes_and_keeps_nothing() {
        let policy: FilterPolicy = "bloomfilter:10".parse().unwrap();
        let mut legacy = FilterBuilder::new(&policy, &BuildContext::sst_file_writer(4)).unwrap();
        assert!(!legacy.takes_key_hashes());
        assert_eq!(legacy.add_key_hash(1), Err(KeyHashRefused));
        assert_eq!(legacy.estimate_entries_added(), 0);
        assert!(KeyHashRefused.to_string().contains("add the keys"));
        for fv in [5, 7] {
            for id in ["bloomfilter:10", "ribbonfilter:10"] {
                let policy: FilterPolicy = id.parse().unwrap();
                let mut b = FilterBuilder::new(&policy, &BuildContext::sst_file_writer(fv)).unwrap();
                assert!(b.takes_key_hashes(), "{id} fv {fv}");
                b.add_key_hash(get_slice_hash64(b"a")).unwrap();
                assert_eq!(b.hash_entries(), [get_slice_hash64(b"a")]);
            }
        }
    }

    /// A builder exactly where the policy names a filter kind.
    #[test]
    fn a_builder_exactly_where_the_policy_builds_filters() {
        let ids = [
            "bloomfilter:0",
            "ribbonfilter:0.4:3",
            "rust.BloomFilter:0.2",
            "rocksdb.internal.LegacyBloomFilter:0",
            "bloomfilter:0.5",
            "ribbonfilter:1",
            "ribbonfilter:10:2",
            "rust.RibbonFilter:10",
        ];
        let contexts = [
            BuildContext::default(),
            BuildContext::sst_file_writer(4),
            BuildContext::at_level(4, None),
            BuildContext::at_level(7, Some(3)),
        ];
        let mut built = 0;
        for id in ids {
            let p = FilterPolicy::parse_optional(id).unwrap().unwrap();
            for ctx in &contexts {
                let b = FilterBuilder::new(&p, ctx);
                assert_eq!(b.is_some(), p.filter_kind(ctx).is_some(), "{id} {ctx:?}");
                built += usize::from(b.is_some());
            }
        }
        assert_eq!(
            built,
            4 * 4,
            "the last four ids build everywhere, the first four nowhere"
        );
    }
}
