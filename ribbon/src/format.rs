//! Reading any built-in filter block: dispatch on the 5-byte trailer exactly
//! as RocksDB does.
//!
//! Ported from RocksDB's `table/block_based/filter_policy.cc`
//! (`BuiltinFilterPolicy::GetBuiltinFilterBitsReader`, `GetRibbonBitsReader`).
//!
//! | contents                         | reader                                   |
//! |----------------------------------|------------------------------------------|
//! | 5 bytes or fewer                 | always false (a filter of zero keys)     |
//! | trailer byte 0 = `0xFF` (−1)     | FastLocalBloom (see [`crate::bloom`])    |
//! | trailer byte 0 = `0xFE` (−2)     | Standard128 Ribbon; fewer than 2 blocks: always true |
//! | trailer byte 0 = 1..=127         | legacy Bloom with that many probes       |
//! | trailer byte 0 = 0 or other negative | always true (unknown: never a false negative) |
//!
//! Every path takes arbitrary bytes: a truncated or corrupt filter never
//! panics, never reads out of bounds, and answers "may match" wherever the
//! bytes do not describe a filter.

use crate::bloom::{fast_local, legacy, FastLocalBloomReader, LegacyBloomReader, Parsed};
use crate::hash::{bloom_hash, get_slice_hash64};
use crate::standard128::{Standard128Reader, METADATA_LEN};
use core::fmt;

/// A reader for one filter block, chosen by its trailer.
#[derive(Debug, Clone, Copy)]
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
    /// (without the block trailer).
    pub fn new(contents: &'a [u8]) -> Self {
        // RocksDB takes the length as a u32; past that, rather than mimic a
        // wrapped length, answer "may match" (never a false negative).
        if contents.len() > u32::MAX as usize {
            return FilterReader::AlwaysTrue;
        }
        if contents.len() <= METADATA_LEN {
            return FilterReader::AlwaysFalse;
        }
        let len = contents.len() - METADATA_LEN;
        let marker = contents[len] as i8;
        match marker {
            // The legacy parser owns the rest of RocksDB's top-level rules:
            // 1..=127 probes is legacy Bloom, 0 and other negative markers
            // are always true.
            -1 => from_parsed(fast_local::parse_trailer(contents), FilterReader::FastLocalBloom),
            -2 => {
                let t = &contents[len..];
                let seed = u32::from(t[1]);
                let num_blocks = u32::from_le_bytes([t[2], t[3], t[4], 0]);
                if num_blocks < 2 {
                    FilterReader::AlwaysTrue
                } else {
                    FilterReader::Standard128Ribbon(Standard128Reader::new(
                        &contents[..len],
                        num_blocks,
                        seed,
                    ))
                }
            }
            _ => from_parsed(legacy::parse_trailer(contents), FilterReader::LegacyBloom),
        }
    }

    /// Whether `key` may be in the set the filter was built from.
    #[inline]
    pub fn may_match(&self, key: &[u8]) -> bool {
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

    /// Batched queries (the MultiGet path): the same answers as
    /// [`FilterReader::may_match`], with memory fetches overlapped.
    pub fn may_match_batch<K: AsRef<[u8]>>(&self, keys: &[K]) -> Vec<bool> {
        let mut out = vec![false; keys.len()];
        match self {
            FilterReader::AlwaysFalse => {}
            FilterReader::AlwaysTrue => out.fill(true),
            FilterReader::LegacyBloom(r) => {
                let hashes: Vec<u32> = keys.iter().map(|k| bloom_hash(k.as_ref())).collect();
                r.may_match_hashes(&hashes, &mut out);
            }
            FilterReader::FastLocalBloom(_) | FilterReader::Standard128Ribbon(_) => {
                let hashes: Vec<u64> = keys.iter().map(|k| get_slice_hash64(k.as_ref())).collect();
                self.may_match_hashes(&hashes, &mut out);
            }
        }
        out
    }

    /// Batched [`FilterReader::may_match_hash`].
    /// Precondition: `out.len() >= hashes.len()`.
    pub fn may_match_hashes(&self, hashes: &[u64], out: &mut [bool]) {
        match self {
            FilterReader::AlwaysFalse => out[..hashes.len()].fill(false),
            FilterReader::AlwaysTrue | FilterReader::LegacyBloom(_) => out[..hashes.len()].fill(true),
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

/// The parameters of a filter block, as its trailer and length give them.
#[derive(Debug, Clone, PartialEq)]
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
