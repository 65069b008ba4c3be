//! The queries and statistics of a standalone filter, written once for
//! both [`Ribbon`] and [`RibbonRef`].

use super::{Mode, Ribbon, RibbonRef};
use crate::core::config::ConstructionFailureChance;
use crate::core::filter::MayContain;
#[cfg(not(any(feature = "std", test)))]
use crate::core::float::Float as _;
use crate::core::hash::{get_slice_hash64, split_mix64};
use crate::core::prelude::*;

/// Keys hashed per batch in [`Ribbon::contains_many`].
const HASH_BATCH: usize = 64;

/// The query and statistics methods, written once for both [`Ribbon`] and
/// [`RibbonRef`].
macro_rules! filter_api {
    ($ty:ty) => {
        impl $ty {
            /// Whether `key` may be in the set: always `true` for a key the
            /// filter was built from, `true` with about the FP rate for any
            /// other.
            #[inline]
            pub fn contains(&self, key: impl AsRef<[u8]>) -> bool {
                self.contains_hash(get_slice_hash64(key.as_ref()))
            }

            /// Whether the key with 64-bit hash `key_hash` may be in the set.
            #[inline]
            pub fn contains_hash(&self, key_hash: u64) -> bool {
                self.decoded.engine.contains_hash(self.solution(), key_hash)
            }

            /// [`contains`](Self::contains) for many keys, with the memory
            /// reads of a batch overlapped (faster for filters larger than
            /// the CPU caches). Answers are in the order of `keys`.
            pub fn contains_many<K: AsRef<[u8]>>(&self, keys: &[K]) -> Vec<bool> {
                let mut out = vec![false; keys.len()];
                self.contains_many_into(keys, &mut out);
                out
            }

            /// [`contains_many`](Self::contains_many) into a buffer the
            /// caller owns, without allocating (keys are hashed in chunks
            /// on the stack).
            ///
            /// # Panics
            /// When `out.len() != keys.len()`.
            pub fn contains_many_into<K: AsRef<[u8]>>(&self, keys: &[K], out: &mut [bool]) {
                assert_eq!(keys.len(), out.len(), "one answer slot per key");
                let mut hashes = [0u64; HASH_BATCH];
                for (keys, out) in keys.chunks(HASH_BATCH).zip(out.chunks_mut(HASH_BATCH)) {
                    for (h, k) in hashes.iter_mut().zip(keys) {
                        *h = get_slice_hash64(k.as_ref());
                    }
                    self.decoded
                        .engine
                        .contains_hashes(self.solution(), &hashes[..keys.len()], out);
                }
            }

            /// [`contains_hash`](Self::contains_hash) for many hashes,
            /// batched as [`contains_many`](Self::contains_many).
            pub fn contains_many_hashes(&self, hashes: &[u64]) -> Vec<bool> {
                let mut out = vec![false; hashes.len()];
                self.contains_many_hashes_into(hashes, &mut out);
                out
            }

            /// [`contains_many_hashes`](Self::contains_many_hashes) into a
            /// buffer the caller owns, without allocating.
            ///
            /// # Panics
            /// When `out.len() != hashes.len()`.
            pub fn contains_many_hashes_into(&self, hashes: &[u64], out: &mut [bool]) {
                assert_eq!(hashes.len(), out.len(), "one answer slot per hash");
                self.decoded
                    .engine
                    .contains_hashes(self.solution(), hashes, out);
            }

            /// Ribbon width `w` in bits.
            pub fn width(&self) -> u32 {
                self.decoded.header.width_bits()
            }
            /// Standard or Homogeneous Ribbon.
            pub fn mode(&self) -> Mode {
                if self.decoded.header.shape.homogeneous {
                    Mode::Homogeneous
                } else {
                    Mode::Standard
                }
            }
            /// Whether starts are smashed.
            pub fn smash(&self) -> bool {
                self.decoded.header.shape.smash
            }
            /// Whether the first coefficient is always one.
            pub fn first_coeff_always_one(&self) -> bool {
                self.decoded.header.shape.first_coeff_always_one
            }
            /// The failure chance the slots were sized for (`None` for
            /// Homogeneous Ribbon, an explicit overhead or an imported
            /// filter).
            pub fn failure_chance(&self) -> Option<ConstructionFailureChance> {
                self.decoded.header.failure_chance
            }
            /// The ordinal seed that banded.
            pub fn seed(&self) -> u32 {
                self.decoded.header.seed
            }
            /// Keys the filter was built from (duplicates included; 0 when
            /// imported without a count).
            pub fn num_keys(&self) -> u64 {
                self.decoded.header.num_keys
            }
            /// Slots `m` (0 for an empty filter).
            pub fn num_slots(&self) -> u64 {
                u64::from(self.decoded.header.num_blocks) * u64::from(self.width())
            }
            /// Blocks of `w` slots.
            pub fn num_blocks(&self) -> u32 {
                self.decoded.header.num_blocks
            }
            /// Result columns of the upper blocks (lower blocks have one
            /// fewer).
            pub fn upper_num_columns(&self) -> u32 {
                self.decoded.header.upper_num_columns
            }
            /// First block with [`upper_num_columns`](Self::upper_num_columns)
            /// columns.
            pub fn upper_start_block(&self) -> u32 {
                self.decoded.header.upper_start_block
            }
            /// The FP rate the configuration aimed at (the configured
            /// precision; for an imported filter, its expected rate).
            pub fn target_fp_rate(&self) -> f64 {
                self.decoded.header.target_fp_rate
            }
            /// Bytes of solution: the filter's payload.
            pub fn solution_len(&self) -> usize {
                self.decoded.header.solution_len
            }
            /// Average result bits per slot (solution bits / slots; NaN for
            /// an empty filter).
            pub fn result_bits(&self) -> f64 {
                self.solution_len() as f64 * 8.0 / self.num_slots() as f64
            }
            /// Bytes of Balanced Ribbon's metadata (2 per shard and 4 per
            /// level; 0 for a filter that is not Balanced).
            pub fn thresholds_len(&self) -> usize {
                self.decoded.header.thresholds_len()
            }
            /// Solution and threshold bits per key (not finite when
            /// [`num_keys`](Self::num_keys) is 0). The file adds a fixed 72
            /// to 79 bytes (104 to 111 for a Balanced filter).
            pub fn bits_per_key(&self) -> f64 {
                (self.solution_len() + self.thresholds_len()) as f64 * 8.0 / self.num_keys() as f64
            }
            /// Whether this is a Balanced Ribbon filter (format version 2).
            pub fn is_balanced(&self) -> bool {
                self.decoded.header.balanced.is_some()
            }
            /// The format version of the bytes: 1, or 2 for Balanced Ribbon.
            pub fn format_version(&self) -> u16 {
                self.decoded.header.version()
            }
            /// Balanced Ribbon's soft shards (the last one included; 0 for a
            /// filter that is not Balanced).
            pub fn num_shards(&self) -> u32 {
                self.decoded.header.balanced.map_or(0, |g| g.num_shards())
            }
            /// Balanced Ribbon: starts of each shard of level 1, half of
            /// all shards (0 otherwise; later levels are sized for the
            /// keys that reached them).
            pub fn shard_slots(&self) -> u32 {
                self.decoded.header.balanced.map_or(0, |g| g.level_slots[0])
            }
            /// Balanced Ribbon: starts of the last shard, sized for the keys
            /// that reached it (0 otherwise).
            pub fn last_shard_starts(&self) -> u32 {
                self.decoded.header.balanced.map_or(0, |g| g.last_starts)
            }
            /// The FP rate the solution's columns give a non-member key:
            /// `2^-r` for whole `r`, the mix's average for fractional `r`
            /// (RocksDB's `ExpectedFpRate`); 0 for an empty filter. Exact in
            /// expectation for Standard Ribbon; Homogeneous Ribbon's actual
            /// rate is somewhat higher (see
            /// [`measure_fp_rate`](Self::measure_fp_rate)).
            pub fn expected_fp_rate(&self) -> f64 {
                self.decoded.engine.expected_fp_rate()
            }
            /// Space overhead against the information-theoretic minimum
            /// for the expected FP rate: `bits_per_key / log2(1 / fp) - 1`
            /// (not finite without keys).
            pub fn space_overhead(&self) -> f64 {
                self.space_overhead_at(self.expected_fp_rate())
            }
            /// Space overhead against the minimum for FP rate `fp_rate`:
            /// `bits_per_key / log2(1 / fp_rate) - 1`.
            pub fn space_overhead_at(&self, fp_rate: f64) -> f64 {
                self.bits_per_key() / (-fp_rate.log2()) - 1.0
            }
            /// Measures the FP rate with `num_queries` pseudo-random 64-bit
            /// hashes from `seed` (non-members except with probability
            /// about `num_keys / 2^64` each); NaN for no queries.
            pub fn measure_fp_rate(&self, num_queries: u64, seed: u64) -> f64 {
                let mut state = seed;
                let mut hashes = [0u64; 1024];
                let mut out = [false; 1024];
                let mut left = num_queries;
                let mut positives = 0u64;
                while left > 0 {
                    let n = left.min(hashes.len() as u64) as usize;
                    hashes[..n]
                        .iter_mut()
                        .for_each(|h| *h = split_mix64(&mut state));
                    self.decoded
                        .engine
                        .contains_hashes(self.solution(), &hashes[..n], &mut out[..n]);
                    positives += out[..n].iter().filter(|&&o| o).count() as u64;
                    left -= n as u64;
                }
                positives as f64 / num_queries as f64
            }
            /// [`space_overhead_at`](Self::space_overhead_at) the
            /// [measured](Self::measure_fp_rate) FP rate.
            pub fn measured_space_overhead(&self, num_queries: u64, seed: u64) -> f64 {
                self.space_overhead_at(self.measure_fp_rate(num_queries, seed))
            }
        }

        /// The [`MayContain`] of a standalone filter: its inherent
        /// `contains` and `contains_many_into`.
        impl MayContain for $ty {
            #[inline]
            fn contains_key(&self, key: &[u8]) -> bool {
                self.contains_hash(get_slice_hash64(key))
            }

            fn contains_keys_into(&self, keys: &[&[u8]], out: &mut [bool]) {
                <$ty>::contains_many_into(self, keys, out);
            }

            fn contains_many_into<K: AsRef<[u8]>>(&self, keys: &[K], out: &mut [bool]) {
                <$ty>::contains_many_into(self, keys, out);
            }
        }
    };
}

filter_api!(Ribbon);
filter_api!(RibbonRef<'_>);

impl RibbonRef<'_> {
    /// The first half of a batched query of `key_hash` (the site it reads,
    /// prefetched), for [`RibbonRef::answer_prepared`]: the filter's part
    /// in [`crate::FilterReader::may_match_hashes_across`].
    #[inline]
    pub(crate) fn prepare_hash(&self, key_hash: u64) -> (u64, crate::core::solution::QuerySite) {
        self.decoded.engine.prepare_hash(self.solution(), key_hash)
    }

    /// The answer of [`RibbonRef::contains_hash`] for what
    /// [`RibbonRef::prepare_hash`] returned.
    #[inline]
    pub(crate) fn answer_prepared(&self, prepared: (u64, crate::core::solution::QuerySite)) -> bool {
        self.decoded.engine.answer_prepared(self.solution(), prepared)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Config, Ribbon};
    use crate::core::prelude::*;

    /// The two halves of a batched query answer as the single query, for
    /// every width, Standard, Homogeneous, smash and Balanced filters, and
    /// the empty filter.
    #[test]
    fn prepared_queries_answer_as_single_ones() {
        let mut state = 0x5eed_u64;
        let hashes: Vec<u64> = (0..6000)
            .map(|_| crate::core::hash::split_mix64(&mut state))
            .collect();
        let probes: Vec<u64> = hashes[..1500]
            .iter()
            .copied()
            .chain((0..1500).map(|_| crate::core::hash::split_mix64(&mut state)))
            .collect();
        for width in [32, 64, 128] {
            for (name, config) in [
                ("standard", Config::standard(width, 7.0)),
                ("homogeneous", Config::homogeneous(width, 5.5)),
                (
                    "smash",
                    Config {
                        smash: true,
                        ..Config::standard(width, 3.0)
                    },
                ),
                ("balanced", Config::balanced(width, 6.5)),
                ("empty", Config::standard(width, 7.0)),
            ] {
                let keys = if name == "empty" {
                    &hashes[..0]
                } else {
                    &hashes[..]
                };
                let filter = Ribbon::from_hashes(keys, &config).expect("builds");
                let view = filter.as_ribbon_ref();
                for &h in &probes {
                    assert_eq!(
                        view.answer_prepared(view.prepare_hash(h)),
                        view.contains_hash(h),
                        "{name} w {width} hash {h:#x}"
                    );
                }
            }
        }
    }
}
