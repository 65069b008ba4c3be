//! The standalone file format: version 1 (Standard and Homogeneous Ribbon)
//! and version 2 (Balanced Ribbon).
//!
//! A standalone filter is one self-describing byte string: a header
//! carrying every parameter (64 bytes in version 1, 96 in version 2), the
//! interleaved solution, Balanced Ribbon's thresholds, padding to an 8-byte
//! boundary and a checksum. All integers are little-endian. This crate
//! writes version 1 for every filter that is not Balanced, so readers that
//! know only version 1 keep reading them, and refuses a Balanced file there
//! with "unsupported version 2".
//!
//! Version 1:
//!
//! ```text
//!   offset  size  field
//!        0     8  magic: 89 52 42 4E 0D 0A 1A 0A  ("\x89RBN\r\n\x1a\n")
//!        8     2  format version: 1
//!       10     2  header length in bytes: 64 (the solution's offset)
//!       12     1  ribbon width w: 32, 64 or 128
//!       13     1  flags: bit 0 first coefficient always one, bit 1 smash,
//!                 bit 2 homogeneous; other bits 0
//!       14     1  failure chance the slots were sized for, as RocksDB's
//!                 enum (`ConstructionFailureChance::code`): 0 one in 2,
//!                 1 one in 20, 2 one in 1000, 255 not applicable
//!                 (Homogeneous, explicit overhead, imported); informational
//!       15     1  reserved: 0
//!       16     4  ordinal seed that banded (see `crate::core::hasher`)
//!       20     4  num_blocks: blocks of w slots (0: no keys, matches nothing;
//!                 otherwise at least 1 with smash, 2 without)
//!       24     8  number of keys built from (informational; 0 if unknown)
//!       32     8  solution length in bytes: a multiple of w/8
//!       40     4  upper_num_columns: result columns of the upper blocks, 1..=32
//!       44     4  upper_start_block: first block with upper_num_columns
//!                 columns; earlier blocks have one fewer
//!       48     8  target FP rate (f64; informational)
//!       56     8  header checksum: hash64(bytes[0..56], 0x5242_4E48_4452_0001)
//!       64     L  solution: ICML segments, w/8 bytes each (`crate::core::solution`),
//!                 so every segment is 4-, 8- or 16-byte aligned relative
//!                 to the start of the file
//!     64+L     P  zero padding, P = (8 - L % 8) % 8
//!   64+L+P     8  body checksum: hash64(bytes[64..64+L+P], 0x5242_4E42_4F44_0001)
//! ```
//!
//! Version 2 (Balanced Ribbon, [`super::Config::balanced`]) has the same fields
//! at bytes 0 to 56 except:
//!
//! ```text
//!   offset  size  field
//!        8     2  format version: 2
//!       10     2  header length in bytes: 96
//!       13     1  flags: as version 1; smash (bit 1) and homogeneous
//!                 (bit 2) are never set
//!       14     1  failure chance the last shard was sized for
//!       15     1  shard bits b: 2^b soft shards, 0..=24
//!       56     4  last_starts: starts of the last shard, at least 1
//!       60     2  redirect: α * 2^16, the share of later-level keys sent to
//!                 level 1, at most 2^15
//!       62     2  buckets per shard: 16
//!       64    24  reserved: 0
//!       88     8  header checksum: hash64(bytes[0..88], 0x5242_4E48_4452_0001)
//!       96     L  solution, as version 1
//!     96+L  2*2^b masks: one u16 per shard, bit k set when the shard keeps
//!                 its keys of bucket k (the last shard's: all ones)
//!        …   4*b  level sizes: one u32 per level, the starts of each of its
//!                 shards (at least 1); with last_starts they add up to
//!                 num_blocks * w - w + 1 starts
//!        …     P  zero padding to a multiple of 8
//!        …     8  body checksum: hash64(every byte from 96 to the checksum,
//!                 0x5242_4E42_4F44_0001)
//! ```
//!
//! `hash64` is RocksDB's 64-bit XXPH3 ([`crate::core::hash::hash64`]). The two
//! upper/lower column fields are redundant (they follow from `num_blocks`
//! and the solution length) and are checked on load. A reader rejects
//! another version, a bad checksum, a length other than `64 + L + P + 8`
//! (truncated or trailing bytes) and any inconsistent field with an
//! [`Error`]; it never panics and, for a file it accepts, never gives a
//! false negative.
//!
//! The header checksum is always verified; the body checksum (which reads
//! the whole solution) is verified by [`super::RibbonRef::from_bytes`] and
//! skipped by [`super::RibbonRef::from_bytes_unverified`], for an O(1) open
//! of a memory-mapped file that is trusted.

use super::balanced::{
    mask, metadata_len, read_levels, BalancedState, Geometry, BUCKETS, KEEP_ALL, MAX_SHARD_BITS,
};
use super::engine::{dispatch, Engine, QueryState, Shape, Visitor, Width};
use super::Error;
use crate::core::alg::{CoeffRow, RibbonSettings};
use crate::core::config::ConstructionFailureChance;
use crate::core::hash::hash64;
use crate::core::prelude::*;
use crate::core::solution::InterleavedLayout;

/// The file's first 8 bytes.
pub const MAGIC: [u8; 8] = *b"\x89RBN\r\n\x1a\n";
/// The format version of Standard and Homogeneous filters.
pub const VERSION: u16 = 1;
/// The format version of Balanced filters.
pub const VERSION_BALANCED: u16 = 2;
/// Bytes before the solution in version 1.
pub const HEADER_LEN: usize = 64;
/// Bytes before the solution in version 2.
pub const BALANCED_HEADER_LEN: usize = 96;
/// Bytes of the body checksum.
pub const CHECKSUM_LEN: usize = 8;
/// The most slots a standalone filter has (a multiple of every width):
/// a header describing more is refused.
pub const MAX_SLOTS: u64 = (1 << 32) - 256;
const HEADER_CHECKSUM_SEED: u64 = 0x5242_4E48_4452_0001;
const BODY_CHECKSUM_SEED: u64 = 0x5242_4E42_4F44_0001;
const FLAG_FCAO: u8 = 1;
const FLAG_SMASH: u8 = 2;
const FLAG_HOMOGENEOUS: u8 = 4;
const NOT_APPLICABLE: u8 = 255;

/// Whether `bytes` start with the standalone magic (the cheap test for "is
/// this a standalone filter file"; it does not validate anything else).
#[must_use]
pub fn has_magic(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// File length of a version 1 file with a solution of `solution_len` bytes.
pub(crate) fn file_len(solution_len: usize) -> usize {
    HEADER_LEN + solution_len.next_multiple_of(8) + CHECKSUM_LEN
}

/// Every parameter of a filter, as the header stores them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Header {
    pub(crate) shape: Shape,
    pub(crate) failure_chance: Option<ConstructionFailureChance>,
    pub(crate) seed: u32,
    pub(crate) num_blocks: u32,
    pub(crate) num_keys: u64,
    pub(crate) solution_len: usize,
    pub(crate) upper_num_columns: u32,
    pub(crate) upper_start_block: u32,
    pub(crate) target_fp_rate: f64,
    /// The soft shards of a Balanced filter (version 2).
    pub(crate) balanced: Option<Geometry>,
}

impl Header {
    pub(crate) fn width_bits(&self) -> u32 {
        match self.shape.width {
            Width::W32 => 32,
            Width::W64 => 64,
            Width::W128 => 128,
        }
    }

    /// The format version of this filter.
    pub(crate) fn version(&self) -> u16 {
        if self.balanced.is_some() {
            VERSION_BALANCED
        } else {
            VERSION
        }
    }

    /// Bytes before the solution.
    #[inline]
    pub(crate) fn header_len(&self) -> usize {
        if self.balanced.is_some() {
            BALANCED_HEADER_LEN
        } else {
            HEADER_LEN
        }
    }

    /// Bytes of Balanced Ribbon's metadata: masks and level sizes (0
    /// otherwise).
    #[inline]
    pub(crate) fn thresholds_len(&self) -> usize {
        self.balanced.as_ref().map_or(0, metadata_len)
    }

    /// Where the payload (solution, then thresholds) lies in the file.
    #[inline]
    pub(crate) fn payload_range(&self) -> core::ops::Range<usize> {
        let start = self.header_len();
        start..start + self.solution_len + self.thresholds_len()
    }

    /// The whole file's length.
    pub(crate) fn file_len(&self) -> usize {
        self.payload_range().end.next_multiple_of(8) + CHECKSUM_LEN
    }

    /// Writes the header, padding and both checksums into `file`, whose
    /// payload (`file[payload_range()]`) is already in place.
    /// Precondition: `file.len() == self.file_len()`.
    pub(crate) fn seal(&self, file: &mut [u8]) {
        let s = self.shape;
        let header_len = self.header_len();
        let h = &mut file[..header_len];
        h.fill(0);
        h[0..8].copy_from_slice(&MAGIC);
        h[8..10].copy_from_slice(&self.version().to_le_bytes());
        h[10..12].copy_from_slice(&(header_len as u16).to_le_bytes());
        h[12] = self.width_bits() as u8;
        let flag = |on: bool, bit: u8| if on { bit } else { 0 };
        h[13] = flag(s.first_coeff_always_one, FLAG_FCAO)
            | flag(s.smash, FLAG_SMASH)
            | flag(s.homogeneous, FLAG_HOMOGENEOUS);
        h[14] = self
            .failure_chance
            .map_or(NOT_APPLICABLE, ConstructionFailureChance::code);
        h[16..20].copy_from_slice(&self.seed.to_le_bytes());
        h[20..24].copy_from_slice(&self.num_blocks.to_le_bytes());
        h[24..32].copy_from_slice(&self.num_keys.to_le_bytes());
        h[32..40].copy_from_slice(&(self.solution_len as u64).to_le_bytes());
        h[40..44].copy_from_slice(&self.upper_num_columns.to_le_bytes());
        h[44..48].copy_from_slice(&self.upper_start_block.to_le_bytes());
        h[48..56].copy_from_slice(&self.target_fp_rate.to_le_bytes());
        if let Some(g) = self.balanced {
            h[15] = g.shard_bits as u8;
            h[56..60].copy_from_slice(&g.last_starts.to_le_bytes());
            h[60..62].copy_from_slice(&(g.redirect as u16).to_le_bytes());
            h[62..64].copy_from_slice(&(BUCKETS as u16).to_le_bytes());
        }
        let sum_at = header_len - 8;
        let header_sum = hash64(&h[..sum_at], HEADER_CHECKSUM_SEED);
        h[sum_at..].copy_from_slice(&header_sum.to_le_bytes());
        let body_end = file.len() - CHECKSUM_LEN;
        file[self.payload_range().end..body_end].fill(0);
        let body_sum = hash64(&file[header_len..body_end], BODY_CHECKSUM_SEED);
        file[body_end..].copy_from_slice(&body_sum.to_le_bytes());
    }
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut v = [0u8; 8];
    v.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(v)
}

fn corrupt(what: impl Into<String>) -> Error {
    Error::Corrupt(what.into())
}

/// Parses and validates a whole file. Returns the header and the query
/// engine; the payload is `bytes[header.payload_range()]`.
pub(crate) fn parse(bytes: &[u8], verify_body: bool) -> Result<(Header, Engine), Error> {
    let truncated = |needed: usize| Error::Truncated {
        needed: needed as u64,
        len: bytes.len() as u64,
    };
    if !bytes.starts_with(&MAGIC) {
        return Err(if MAGIC.starts_with(bytes) {
            truncated(HEADER_LEN)
        } else {
            Error::BadMagic
        });
    }
    if bytes.len() < 10 {
        return Err(truncated(HEADER_LEN));
    }
    let version = u16_at(bytes, 8);
    let header_len = match version {
        VERSION => HEADER_LEN,
        VERSION_BALANCED => BALANCED_HEADER_LEN,
        _ => {
            return Err(Error::UnsupportedVersion {
                found: version,
                supported: VERSION_BALANCED,
            })
        }
    };
    if bytes.len() < header_len {
        return Err(truncated(header_len));
    }
    let h = &bytes[..header_len];
    let sum_at = header_len - 8;
    if u64_at(h, sum_at) != hash64(&h[..sum_at], HEADER_CHECKSUM_SEED) {
        return Err(Error::HeaderChecksumMismatch);
    }
    // The checksum matched: from here on a bad field means a bad writer (or a
    // forged checksum), not a damaged file.
    let stored_header_len = u16_at(h, 10);
    if usize::from(stored_header_len) != header_len {
        return Err(corrupt(format!(
            "header length {stored_header_len}, expected {header_len} for version {version}"
        )));
    }
    let width =
        Width::from_bits(u32::from(h[12])).ok_or_else(|| corrupt(format!("ribbon width {}", h[12])))?;
    let flags = h[13];
    if flags & !(FLAG_FCAO | FLAG_SMASH | FLAG_HOMOGENEOUS) != 0 {
        return Err(corrupt(format!("unknown flags {flags:#04x}")));
    }
    let failure_chance = match h[14] {
        NOT_APPLICABLE => None,
        code => Some(
            ConstructionFailureChance::from_code(code)
                .ok_or_else(|| corrupt(format!("failure chance code {code}")))?,
        ),
    };
    let balanced = if version == VERSION_BALANCED {
        Some(parse_geometry(h, flags)?)
    } else {
        if h[15] != 0 {
            return Err(corrupt("reserved byte is not zero"));
        }
        None
    };
    let solution_len = u64_at(h, 32);
    let header = Header {
        shape: Shape {
            width,
            first_coeff_always_one: flags & FLAG_FCAO != 0,
            smash: flags & FLAG_SMASH != 0,
            homogeneous: flags & FLAG_HOMOGENEOUS != 0,
        },
        failure_chance,
        seed: u32_at(h, 16),
        num_blocks: u32_at(h, 20),
        num_keys: u64_at(h, 24),
        solution_len: usize::try_from(solution_len)
            .ok()
            .filter(|&l| l <= isize::MAX as usize - BALANCED_HEADER_LEN - (1 << 26))
            .ok_or_else(|| corrupt(format!("solution length {solution_len}")))?,
        upper_num_columns: u32_at(h, 40),
        upper_start_block: u32_at(h, 44),
        target_fp_rate: f64::from_bits(u64_at(h, 48)),
        balanced,
    };
    if !(0.0..=1.0).contains(&header.target_fp_rate) {
        return Err(corrupt(format!("target FP rate {}", header.target_fp_rate)));
    }
    let expected_len = header.file_len();
    if bytes.len() < expected_len {
        return Err(truncated(expected_len));
    }
    if bytes.len() > expected_len {
        return Err(corrupt(format!(
            "{} bytes after the checksum",
            bytes.len() - expected_len
        )));
    }
    if verify_body {
        let body_end = bytes.len() - CHECKSUM_LEN;
        if u64_at(bytes, body_end) != hash64(&bytes[header_len..body_end], BODY_CHECKSUM_SEED) {
            return Err(Error::ChecksumMismatch);
        }
    }
    // Balanced Ribbon's level sizes are in the body: read (and checked)
    // after its checksum, so that damage there reads as damage.
    let mut header = header;
    let meta = &bytes[header.payload_range()][header.solution_len..];
    if let Some(g) = header.balanced.as_mut() {
        read_levels(g, meta).ok_or_else(|| corrupt("a level of no starts, or more than 2^32 starts"))?;
        g.set_last_starts(g.last_starts);
        check_masks(g, meta)?;
    }
    let engine = check_layout(&header)?;
    Ok((header, engine))
}

/// The Balanced fields of a version 2 header (`flags` already checked).
fn parse_geometry(h: &[u8], flags: u8) -> Result<Geometry, Error> {
    if flags & (FLAG_SMASH | FLAG_HOMOGENEOUS) != 0 {
        return Err(corrupt("a Balanced filter with smash or Homogeneous Ribbon"));
    }
    let shard_bits = u32::from(h[15]);
    if shard_bits > MAX_SHARD_BITS {
        return Err(corrupt(format!("{shard_bits} shard bits")));
    }
    let redirect = u32::from(u16_at(h, 60));
    let buckets = u32::from(u16_at(h, 62));
    if buckets != BUCKETS {
        return Err(corrupt(format!("{buckets} buckets per shard")));
    }
    if h[64..88].iter().any(|&b| b != 0) {
        return Err(corrupt("reserved bytes are not zero"));
    }
    if redirect > 1 << 15 {
        return Err(corrupt(format!("redirect {redirect} above 2^15")));
    }
    let mut g = Geometry::new(shard_bits, redirect);
    g.last_starts = u32_at(h, 56);
    Ok(g)
}

/// The last shard keeps all of its keys (every mask of the others is
/// valid).
fn check_masks(g: &Geometry, meta: &[u8]) -> Result<(), Error> {
    if mask(meta, g.last_shard()) == KEEP_ALL {
        Ok(())
    } else {
        Err(corrupt("the last shard does not keep all of its keys"))
    }
}

/// Checks the solution fields against each other and builds the engine.
fn check_layout(header: &Header) -> Result<Engine, Error> {
    struct Check<'a>(&'a Header);
    impl Visitor for Check<'_> {
        type Output = Result<Engine, Error>;
        fn visit<S: RibbonSettings>(self) -> Self::Output
        where
            QueryState<S>: Into<Engine>,
            BalancedState<S>: Into<Engine>,
        {
            let h = self.0;
            let w = S::CoeffRow::BITS;
            if h.num_blocks == 0 {
                return if h.solution_len == 0
                    && h.upper_num_columns == 0
                    && h.upper_start_block == 0
                    && h.balanced.is_none()
                {
                    Ok(Engine::Empty)
                } else {
                    Err(corrupt("a filter of no blocks has solution fields"))
                };
            }
            let min_blocks = if S::USE_SMASH { 1 } else { 2 };
            if h.num_blocks < min_blocks || u64::from(h.num_blocks) * u64::from(w) > MAX_SLOTS {
                return Err(corrupt(format!("{} blocks of width {w}", h.num_blocks)));
            }
            let layout = InterleavedLayout::<S>::for_num_blocks(h.num_blocks, h.solution_len);
            let consistent = layout.data_len() == h.solution_len
                && (1..=32).contains(&layout.upper_num_columns())
                && layout.upper_num_columns() == h.upper_num_columns
                && layout.upper_start_block() == h.upper_start_block;
            if !consistent {
                return Err(corrupt(format!(
                    "solution of {} bytes does not fit {} blocks with {} columns from block {}",
                    h.solution_len, h.num_blocks, h.upper_num_columns, h.upper_start_block
                )));
            }
            let Some(g) = h.balanced else {
                return Ok(QueryState::<S>::new(h.num_blocks, h.solution_len, h.seed).into());
            };
            // Every start of every shard is a valid start of the ribbon.
            let num_starts = u64::from(h.num_blocks) * u64::from(w) - u64::from(w) + 1;
            if g.last_starts == 0 || g.num_starts() != num_starts {
                return Err(corrupt(format!(
                    "{} shards with a last shard of {} starts do not make {num_starts} starts",
                    g.num_shards(),
                    g.last_starts
                )));
            }
            Ok(BalancedState::<S>::new(h.num_blocks, h.solution_len, h.seed, g).into())
        }
    }
    dispatch(header.shape, Check(header))
}
