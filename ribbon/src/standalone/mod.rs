//! Ribbon filters beyond RocksDB's format: a general-purpose filter API and a
//! standalone file format.
//!
//! RocksDB builds one Ribbon configuration (width 128, Standard Ribbon,
//! first coefficient always one, no smash) inside its SST files. This module
//! exposes the whole design space of the paper (Dillinger and Walzer, 2021)
//! on top of the same generic core ([`crate::alg`], [`crate::standard`],
//! [`crate::solution`], [`crate::config`]):
//!
//! * ribbon width 32, 64 or 128;
//! * 1 to 32 result bits per slot, fractional through the interleaved
//!   ⌊r⌋/⌈r⌉ column mix, or a target FP rate;
//! * Standard Ribbon (exact FP rate `2^-r`, seed retries) or Homogeneous
//!   Ribbon (never fails; slots from the paper's equation 7);
//! * smash, first-coefficient-always-one, a failure-chance table, a first
//!   seed and a seed budget.
//!
//! A [`Config`] is checked at run time and dispatched to one of 24
//! monomorphised instantiations of the core ([`Settings`]). [`Ribbon`] owns a
//! filter; [`RibbonRef`] borrows one zero-copy from bytes (for example a
//! memory-mapped file); both answer the same queries. The bytes are the
//! versioned, checksummed [file format](mod@file). A filter in RocksDB's format
//! converts both ways ([`Ribbon::from_rocksdb`], [`Ribbon::to_rocksdb`]) with
//! identical answers.
//!
//! Keys are hashed with RocksDB's 64-bit key hash
//! ([`crate::hash::get_slice_hash64`]); a caller with its own 64-bit hashes
//! uses [`Ribbon::from_hashes`] and [`Ribbon::contains_hash`]. There are no
//! false negatives: every key (hash) the filter was built from is reported
//! as contained, by both types and every query method. Duplicate keys are
//! allowed (they band as redundant equations) but count towards the size.
//!
//! See the crate's user guide for which configuration to pick.

mod config;
mod engine;
pub mod file;
mod rocksdb;
pub mod sizing;

pub use config::{Config, Mode, Precision, MAX_SLOT_OVERHEAD, WIDTHS};
pub use engine::Settings;
pub use file::has_magic;
pub use sizing::Plan;

use crate::alg::RibbonSettings;
use crate::config::ConstructionFailureChance;
use crate::hash::get_slice_hash64;
use crate::solution::InterleavedLayout;
use core::fmt;
use engine::{band, dispatch, Engine, Typed, Visitor};
use file::{Header, HEADER_LEN};

/// Everything that can go wrong building, loading or converting a filter.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// A [`Config`] setting is out of range.
    InvalidConfig {
        /// The setting (field of [`Config`]).
        setting: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// More keys (or, with the configured overhead, more slots) than a
    /// standalone filter holds ([`sizing::MAX_KEYS`], [`sizing::MAX_SLOTS`]).
    TooManyKeys {
        /// Keys given.
        num_keys: u64,
        /// The limit on keys.
        max: u64,
    },
    /// Standard Ribbon: banding failed for every seed of the budget. Raise
    /// [`Config::max_seeds`], pick a lower [`Config::failure_chance`] or a
    /// larger [`Config::slot_overhead`], or use Homogeneous Ribbon.
    ConstructionFailed {
        /// Keys given.
        num_keys: u64,
        /// Slots they were banded into.
        num_slots: u32,
        /// The first ordinal seed tried.
        first_seed: u32,
        /// Seeds tried.
        seeds_tried: u32,
    },
    /// The bytes do not start with the standalone magic.
    BadMagic,
    /// A standalone file of another format version.
    UnsupportedVersion {
        /// The file's version.
        found: u16,
        /// The version this crate reads.
        supported: u16,
    },
    /// The bytes end before the file does.
    Truncated {
        /// Bytes the file needs (as far as known).
        needed: u64,
        /// Bytes given.
        len: u64,
    },
    /// The header's checksum does not match: the header is damaged.
    HeaderChecksumMismatch,
    /// The solution's checksum does not match: the solution is damaged.
    ChecksumMismatch,
    /// The header's checksum matches but its fields are inconsistent.
    Corrupt(String),
    /// [`Ribbon::from_rocksdb`]: the block is not a usable Standard128
    /// Ribbon filter.
    NotRocksDbRibbon(String),
    /// [`Ribbon::to_rocksdb`]: RocksDB's format cannot express this filter.
    NotRocksDbCompatible(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidConfig { setting, reason } => write!(f, "invalid configuration: {setting} {reason}"),
            Error::TooManyKeys { num_keys, max } => write!(
                f,
                "too many keys for a standalone Ribbon filter: {num_keys} (at most {max}, and at most 2^32 - 256 slots)"
            ),
            Error::ConstructionFailed {
                num_keys,
                num_slots,
                first_seed,
                seeds_tried,
            } => write!(
                f,
                "Ribbon construction failed: {num_keys} keys did not band into {num_slots} slots \
                 with any of {seeds_tried} seeds from {first_seed}"
            ),
            Error::BadMagic => write!(f, "not a standalone Ribbon filter (bad magic)"),
            Error::UnsupportedVersion { found, supported } => write!(
                f,
                "unsupported standalone Ribbon format version {found} (this build reads version {supported})"
            ),
            Error::Truncated { needed, len } => {
                write!(f, "truncated standalone Ribbon filter: {len} bytes, needs {needed}")
            }
            Error::HeaderChecksumMismatch => write!(f, "standalone Ribbon header checksum mismatch"),
            Error::ChecksumMismatch => write!(f, "standalone Ribbon solution checksum mismatch"),
            Error::Corrupt(what) => write!(f, "corrupt standalone Ribbon filter: {what}"),
            Error::NotRocksDbRibbon(what) => write!(f, "not a RocksDB Standard128 Ribbon filter: {what}"),
            Error::NotRocksDbCompatible(what) => write!(f, "cannot express in RocksDB's format: {what}"),
        }
    }
}

impl std::error::Error for Error {}

/// What a filter knows besides its bytes: every header field and the query
/// engine.
#[derive(Debug, Clone, Copy)]
struct Meta {
    header: Header,
    engine: Engine,
}

/// A standalone Ribbon filter that owns its bytes (the [file format](mod@file)).
///
/// ```
/// use ribbon::standalone::{Config, Ribbon, RibbonRef};
///
/// let keys = ["apple", "banana", "cherry"];
/// let filter = Ribbon::from_keys(&keys, &Config::default())?;
/// assert!(keys.iter().all(|k| filter.contains(k)));
///
/// // Save, then query the bytes in place.
/// let bytes: Vec<u8> = filter.as_bytes().to_vec();
/// let view = RibbonRef::from_bytes(&bytes)?;
/// assert!(view.contains("banana"));
/// # Ok::<(), ribbon::standalone::Error>(())
/// ```
#[derive(Clone)]
pub struct Ribbon {
    meta: Meta,
    bytes: Vec<u8>,
}

/// A standalone Ribbon filter borrowed from bytes in the [file format](mod@file),
/// without copying: the zero-copy twin of [`Ribbon`], with the same queries.
///
/// The bytes need no particular alignment. To serve a filter file from
/// memory without reading it into the heap, map it with your platform's
/// `mmap` (for example with the `memmap2` crate) and pass the mapping's
/// slice; the lifetime ties the filter to the mapping.
///
/// ```
/// use ribbon::standalone::{Config, Ribbon, RibbonRef};
/// use std::io::{Read, Write};
///
/// let keys: Vec<u64> = (0..1000u64).collect();
/// let filter = Ribbon::from_keys(keys.iter().map(|k| k.to_le_bytes()), &Config::default())?;
/// let path = std::env::temp_dir().join(format!("ribbon-doc-{}.rbn", std::process::id()));
/// std::fs::File::create(&path)?.write_all(filter.as_bytes())?;
///
/// // Any byte source works; an mmap avoids the read.
/// let mut bytes = Vec::new();
/// std::fs::File::open(&path)?.read_to_end(&mut bytes)?;
/// let view = RibbonRef::from_bytes(&bytes)?;
/// assert!(keys.iter().all(|k| view.contains(&k.to_le_bytes())));
/// # std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy)]
pub struct RibbonRef<'a> {
    meta: Meta,
    bytes: &'a [u8],
    solution: &'a [u8],
}

struct Build<'a> {
    config: &'a Config,
    hashes: &'a mut [u64],
}

impl Visitor for Build<'_> {
    type Output = Result<Ribbon, Error>;
    fn visit<S: RibbonSettings>(self) -> Self::Output
    where
        Typed<S>: Into<Engine>,
    {
        let Build { config, hashes } = self;
        let num_keys = hashes.len() as u64;
        let plan = sizing::plan_typed::<S>(config, num_keys)?;
        let mut seed = config.seed;
        let mut engine = Engine::Empty;
        // The file is allocated once banding has succeeded (a failed
        // construction allocates none).
        let mut bytes;
        if plan.num_blocks == 0 {
            bytes = vec![0u8; plan.file_len];
        } else {
            let max_seeds = if S::HOMOGENEOUS { 1 } else { config.max_seeds };
            let (found, banding) =
                band::<S>(hashes, plan.num_slots, config.seed, max_seeds).map_err(|tried| {
                    Error::ConstructionFailed {
                        num_keys,
                        num_slots: plan.num_slots,
                        first_seed: config.seed,
                        seeds_tried: tried,
                    }
                })?;
            seed = found;
            bytes = vec![0u8; plan.file_len];
            let layout = InterleavedLayout::<S>::for_num_slots(plan.num_slots, plan.solution_len);
            layout.back_subst(&banding, &mut bytes[HEADER_LEN..HEADER_LEN + plan.solution_len]);
            engine = Typed::<S>::new(plan.num_blocks, plan.solution_len, seed).into();
        }
        let shape = config.shape()?;
        let header = Header {
            shape,
            failure_chance: (config.mode == Mode::Standard && config.slot_overhead.is_none())
                .then_some(config.failure_chance),
            seed,
            num_blocks: plan.num_blocks,
            num_keys,
            solution_len: plan.solution_len,
            upper_num_columns: plan.upper_num_columns,
            upper_start_block: plan.upper_start_block,
            target_fp_rate: config.precision.target_fp_rate(),
        };
        header.seal(&mut bytes);
        Ok(Ribbon {
            meta: Meta { header, engine },
            bytes,
        })
    }
}

impl Ribbon {
    /// Builds a filter of `keys`, each hashed with
    /// [`crate::hash::get_slice_hash64`].
    ///
    /// Errors: an invalid `config`, too many keys, or (Standard Ribbon) no
    /// seed of the budget banding.
    pub fn from_keys<I>(keys: I, config: &Config) -> Result<Self, Error>
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        config.validate()?;
        let mut hashes: Vec<u64> = keys.into_iter().map(|k| get_slice_hash64(k.as_ref())).collect();
        Self::build(&mut hashes, config)
    }

    /// Builds a filter of keys given as 64-bit hashes (query them with
    /// [`Ribbon::contains_hash`]). The hashes should be uniformly
    /// distributed; equal hashes are allowed. The hashes are copied (8
    /// bytes per key until the function returns), since large sets are
    /// banded in start order.
    ///
    /// Errors: as [`Ribbon::from_keys`].
    pub fn from_hashes(hashes: &[u64], config: &Config) -> Result<Self, Error> {
        config.validate()?;
        Self::build(&mut hashes.to_vec(), config)
    }

    /// Builds from hashes it may reorder (a valid `config`).
    fn build(hashes: &mut [u64], config: &Config) -> Result<Self, Error> {
        dispatch(config.shape()?, Build { config, hashes })
    }

    /// Loads a filter from bytes in the [file format](mod@file), copying them
    /// (see [`RibbonRef::from_bytes`] for the checks and a zero-copy load).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        RibbonRef::from_bytes(bytes).map(|r| r.to_ribbon())
    }

    /// A zero-copy view of this filter.
    #[must_use]
    pub fn as_ribbon_ref(&self) -> RibbonRef<'_> {
        RibbonRef {
            meta: self.meta,
            bytes: &self.bytes,
            solution: self.solution(),
        }
    }

    /// The whole file: header, solution, padding, checksum. Its length is
    /// the exact size of the filter in bytes.
    #[must_use]
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The file bytes, for saving.
    #[must_use]
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }

    #[inline]
    fn solution(&self) -> &[u8] {
        &self.bytes[HEADER_LEN..HEADER_LEN + self.meta.header.solution_len]
    }
}

impl<'a> RibbonRef<'a> {
    /// Borrows a filter from bytes in the [file format](mod@file), checking the
    /// magic, the version, both checksums (which reads every byte once),
    /// the length and every header field.
    ///
    /// Errors: [`Error::BadMagic`], [`Error::UnsupportedVersion`],
    /// [`Error::Truncated`], [`Error::HeaderChecksumMismatch`],
    /// [`Error::ChecksumMismatch`] or [`Error::Corrupt`].
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::parse(bytes, true)
    }

    /// As [`RibbonRef::from_bytes`] but without the solution checksum, for an
    /// O(1) open of bytes known to be intact (the header, its checksum and
    /// the length are still checked). A damaged solution is then not
    /// detected and may give false negatives; queries never panic.
    pub fn from_bytes_unverified(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::parse(bytes, false)
    }

    fn parse(bytes: &'a [u8], verify: bool) -> Result<Self, Error> {
        let (header, engine) = file::parse(bytes, verify)?;
        Ok(Self {
            meta: Meta { header, engine },
            bytes,
            solution: &bytes[HEADER_LEN..HEADER_LEN + header.solution_len],
        })
    }

    /// An owned copy.
    #[must_use]
    pub fn to_ribbon(&self) -> Ribbon {
        Ribbon {
            meta: self.meta,
            bytes: self.bytes.to_vec(),
        }
    }

    /// The whole file: header, solution, padding, checksum (with the
    /// borrowed lifetime). Its length is the exact size of the filter.
    #[must_use]
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    #[inline]
    fn solution(&self) -> &'a [u8] {
        self.solution
    }
}

/// SplitMix64, for sampling non-member hashes.
fn split_mix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

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
            pub fn contains<K: AsRef<[u8]> + ?Sized>(&self, key: &K) -> bool {
                self.contains_hash(get_slice_hash64(key.as_ref()))
            }

            /// Whether the key with 64-bit hash `key_hash` may be in the set.
            #[inline]
            pub fn contains_hash(&self, key_hash: u64) -> bool {
                self.meta.engine.contains_hash(self.solution(), key_hash)
            }

            /// [`contains`](Self::contains) for many keys, with the memory
            /// reads of a batch overlapped (faster for filters larger than
            /// the CPU caches). Answers are in the order of `keys`.
            pub fn contains_many<K: AsRef<[u8]>>(&self, keys: &[K]) -> Vec<bool> {
                let mut out = vec![false; keys.len()];
                let mut hashes = [0u64; HASH_BATCH];
                for (keys, out) in keys.chunks(HASH_BATCH).zip(out.chunks_mut(HASH_BATCH)) {
                    for (h, k) in hashes.iter_mut().zip(keys) {
                        *h = get_slice_hash64(k.as_ref());
                    }
                    self.meta
                        .engine
                        .contains_hashes(self.solution(), &hashes[..keys.len()], out);
                }
                out
            }

            /// [`contains_hash`](Self::contains_hash) for many hashes,
            /// batched as [`contains_many`](Self::contains_many).
            pub fn contains_many_hashes(&self, hashes: &[u64]) -> Vec<bool> {
                let mut out = vec![false; hashes.len()];
                self.meta
                    .engine
                    .contains_hashes(self.solution(), hashes, &mut out);
                out
            }

            /// Ribbon width `w` in bits.
            pub fn width(&self) -> u32 {
                self.meta.header.width_bits()
            }
            /// Standard or Homogeneous Ribbon.
            pub fn mode(&self) -> Mode {
                if self.meta.header.shape.homogeneous {
                    Mode::Homogeneous
                } else {
                    Mode::Standard
                }
            }
            /// Whether starts are smashed.
            pub fn smash(&self) -> bool {
                self.meta.header.shape.smash
            }
            /// Whether the first coefficient is always one.
            pub fn first_coeff_always_one(&self) -> bool {
                self.meta.header.shape.first_coeff_always_one
            }
            /// The failure chance the slots were sized for (`None` for
            /// Homogeneous Ribbon, an explicit overhead or an imported
            /// filter).
            pub fn failure_chance(&self) -> Option<ConstructionFailureChance> {
                self.meta.header.failure_chance
            }
            /// The ordinal seed that banded.
            pub fn seed(&self) -> u32 {
                self.meta.header.seed
            }
            /// Keys the filter was built from (duplicates included; 0 when
            /// imported without a count).
            pub fn num_keys(&self) -> u64 {
                self.meta.header.num_keys
            }
            /// Slots `m` (0 for an empty filter).
            pub fn num_slots(&self) -> u64 {
                u64::from(self.meta.header.num_blocks) * u64::from(self.width())
            }
            /// Blocks of `w` slots.
            pub fn num_blocks(&self) -> u32 {
                self.meta.header.num_blocks
            }
            /// Result columns of the upper blocks (lower blocks have one
            /// fewer).
            pub fn upper_num_columns(&self) -> u32 {
                self.meta.header.upper_num_columns
            }
            /// First block with [`upper_num_columns`](Self::upper_num_columns)
            /// columns.
            pub fn upper_start_block(&self) -> u32 {
                self.meta.header.upper_start_block
            }
            /// The FP rate the configuration aimed at (the configured
            /// precision; for an imported filter, its expected rate).
            pub fn target_fp_rate(&self) -> f64 {
                self.meta.header.target_fp_rate
            }
            /// Bytes of solution: the filter's payload.
            pub fn solution_len(&self) -> usize {
                self.meta.header.solution_len
            }
            /// Average result bits per slot (solution bits / slots; NaN for
            /// an empty filter).
            pub fn result_bits(&self) -> f64 {
                self.solution_len() as f64 * 8.0 / self.num_slots() as f64
            }
            /// Solution bits per key (not finite when
            /// [`num_keys`](Self::num_keys) is 0). The file adds a fixed 72
            /// to 79 bytes.
            pub fn bits_per_key(&self) -> f64 {
                self.solution_len() as f64 * 8.0 / self.num_keys() as f64
            }
            /// The FP rate the solution's columns give a non-member key:
            /// `2^-r` for whole `r`, the mix's average for fractional `r`
            /// (RocksDB's `ExpectedFpRate`); 0 for an empty filter. Exact in
            /// expectation for Standard Ribbon; Homogeneous Ribbon's actual
            /// rate is somewhat higher (see
            /// [`measure_fp_rate`](Self::measure_fp_rate)).
            pub fn expected_fp_rate(&self) -> f64 {
                self.meta.engine.expected_fp_rate()
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
                        .for_each(|h| *h = split_mix(&mut state));
                    self.meta
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
            /// The filter in RocksDB's Standard128 Ribbon format (solution
            /// and 5-byte trailer, the contents of a filter block), giving
            /// identical answers through [`crate::format::FilterReader`].
            /// An empty filter gives RocksDB's empty filter (no bytes).
            ///
            /// Errors ([`Error::NotRocksDbCompatible`]): settings other than
            /// width 128, Standard Ribbon, first coefficient always one and
            /// no smash; a seed above 255; fewer than 2 or 2^24 or more
            /// blocks.
            pub fn to_rocksdb(&self) -> Result<Vec<u8>, Error> {
                rocksdb::export(&self.meta.header, self.solution())
            }
        }
    };
}

filter_api!(Ribbon);
filter_api!(RibbonRef<'_>);

/// Every parameter, without the solution bytes.
fn debug_fields(f: &mut fmt::Formatter<'_>, name: &str, h: &Header, len: usize) -> fmt::Result {
    f.debug_struct(name)
        .field("width", &h.width_bits())
        .field("first_coeff_always_one", &h.shape.first_coeff_always_one)
        .field("smash", &h.shape.smash)
        .field("homogeneous", &h.shape.homogeneous)
        .field("failure_chance", &h.failure_chance)
        .field("seed", &h.seed)
        .field("num_keys", &h.num_keys)
        .field("num_blocks", &h.num_blocks)
        .field("upper_num_columns", &h.upper_num_columns)
        .field("upper_start_block", &h.upper_start_block)
        .field("target_fp_rate", &h.target_fp_rate)
        .field("solution_len", &h.solution_len)
        .field("file_len", &len)
        .finish()
}

impl fmt::Debug for Ribbon {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_fields(f, "Ribbon", &self.meta.header, self.bytes.len())
    }
}

impl fmt::Debug for RibbonRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_fields(f, "RibbonRef", &self.meta.header, self.bytes.len())
    }
}
