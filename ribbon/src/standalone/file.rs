//! The standalone file format, version 1.
//!
//! A standalone filter is one self-describing byte string: a 64-byte header
//! carrying every parameter, the interleaved solution, padding to an 8-byte
//! boundary and a checksum. All integers are little-endian.
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
//!       16     4  ordinal seed that banded (see `crate::standard`)
//!       20     4  num_blocks: blocks of w slots (0: no keys, matches nothing;
//!                 otherwise at least 1 with smash, 2 without)
//!       24     8  number of keys built from (informational; 0 if unknown)
//!       32     8  solution length in bytes: a multiple of w/8
//!       40     4  upper_num_columns: result columns of the upper blocks, 1..=32
//!       44     4  upper_start_block: first block with upper_num_columns
//!                 columns; earlier blocks have one fewer
//!       48     8  target FP rate (f64; informational)
//!       56     8  header checksum: hash64(bytes[0..56], 0x5242_4E48_4452_0001)
//!       64     L  solution: ICML segments, w/8 bytes each (`crate::solution`),
//!                 so every segment is 4-, 8- or 16-byte aligned relative
//!                 to the start of the file
//!     64+L     P  zero padding, P = (8 - L % 8) % 8
//!   64+L+P     8  body checksum: hash64(bytes[64..64+L+P], 0x5242_4E42_4F44_0001)
//! ```
//!
//! `hash64` is RocksDB's 64-bit XXPH3 ([`crate::hash::hash64`]). The two
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

use super::engine::{dispatch, Engine, QueryState, Shape, Visitor, Width};
use super::Error;
use crate::alg::{CoeffRow, RibbonSettings};
use crate::config::ConstructionFailureChance;
use crate::hash::hash64;
use crate::solution::InterleavedLayout;

/// The file's first 8 bytes.
pub const MAGIC: [u8; 8] = *b"\x89RBN\r\n\x1a\n";
/// The format version this crate writes and reads.
pub const VERSION: u16 = 1;
/// Bytes before the solution.
pub const HEADER_LEN: usize = 64;
/// Bytes of the body checksum.
pub const CHECKSUM_LEN: usize = 8;
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

/// File length for a solution of `solution_len` bytes.
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
}

impl Header {
    pub(crate) fn width_bits(&self) -> u32 {
        match self.shape.width {
            Width::W32 => 32,
            Width::W64 => 64,
            Width::W128 => 128,
        }
    }

    /// Writes the header, padding and both checksums into `file`, whose
    /// solution (`file[64..64 + solution_len]`) is already in place.
    /// Precondition: `file.len() == file_len(self.solution_len)`.
    pub(crate) fn seal(&self, file: &mut [u8]) {
        let s = self.shape;
        let h = &mut file[..HEADER_LEN];
        h[0..8].copy_from_slice(&MAGIC);
        h[8..10].copy_from_slice(&VERSION.to_le_bytes());
        h[10..12].copy_from_slice(&(HEADER_LEN as u16).to_le_bytes());
        h[12] = self.width_bits() as u8;
        let flag = |on: bool, bit: u8| if on { bit } else { 0 };
        h[13] = flag(s.first_coeff_always_one, FLAG_FCAO)
            | flag(s.smash, FLAG_SMASH)
            | flag(s.homogeneous, FLAG_HOMOGENEOUS);
        h[14] = self
            .failure_chance
            .map_or(NOT_APPLICABLE, ConstructionFailureChance::code);
        h[15] = 0;
        h[16..20].copy_from_slice(&self.seed.to_le_bytes());
        h[20..24].copy_from_slice(&self.num_blocks.to_le_bytes());
        h[24..32].copy_from_slice(&self.num_keys.to_le_bytes());
        h[32..40].copy_from_slice(&(self.solution_len as u64).to_le_bytes());
        h[40..44].copy_from_slice(&self.upper_num_columns.to_le_bytes());
        h[44..48].copy_from_slice(&self.upper_start_block.to_le_bytes());
        h[48..56].copy_from_slice(&self.target_fp_rate.to_le_bytes());
        let header_sum = hash64(&h[..56], HEADER_CHECKSUM_SEED);
        h[56..64].copy_from_slice(&header_sum.to_le_bytes());
        let body_end = file.len() - CHECKSUM_LEN;
        file[HEADER_LEN + self.solution_len..body_end].fill(0);
        let body_sum = hash64(&file[HEADER_LEN..body_end], BODY_CHECKSUM_SEED);
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
/// engine; the solution is `bytes[64..64 + header.solution_len]`.
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
    if version != VERSION {
        return Err(Error::UnsupportedVersion {
            found: version,
            supported: VERSION,
        });
    }
    if bytes.len() < HEADER_LEN {
        return Err(truncated(HEADER_LEN));
    }
    let h = &bytes[..HEADER_LEN];
    if u64_at(h, 56) != hash64(&h[..56], HEADER_CHECKSUM_SEED) {
        return Err(Error::HeaderChecksumMismatch);
    }
    // The checksum matched: from here on a bad field means a bad writer (or a
    // forged checksum), not a damaged file.
    let header_len = u16_at(h, 10);
    if usize::from(header_len) != HEADER_LEN {
        return Err(corrupt(format!(
            "header length {header_len}, expected {HEADER_LEN}"
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
    if h[15] != 0 {
        return Err(corrupt("reserved byte is not zero"));
    }
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
            .filter(|&l| l <= isize::MAX as usize - HEADER_LEN - 16)
            .ok_or_else(|| corrupt(format!("solution length {solution_len}")))?,
        upper_num_columns: u32_at(h, 40),
        upper_start_block: u32_at(h, 44),
        target_fp_rate: f64::from_bits(u64_at(h, 48)),
    };
    if !(0.0..=1.0).contains(&header.target_fp_rate) {
        return Err(corrupt(format!("target FP rate {}", header.target_fp_rate)));
    }
    let expected_len = file_len(header.solution_len);
    if bytes.len() < expected_len {
        return Err(truncated(expected_len));
    }
    if bytes.len() > expected_len {
        return Err(corrupt(format!(
            "{} bytes after the checksum",
            bytes.len() - expected_len
        )));
    }
    let engine = check_layout(&header)?;
    if verify_body {
        let body_end = bytes.len() - CHECKSUM_LEN;
        if u64_at(bytes, body_end) != hash64(&bytes[HEADER_LEN..body_end], BODY_CHECKSUM_SEED) {
            return Err(Error::ChecksumMismatch);
        }
    }
    Ok((header, engine))
}

/// Checks the solution fields against each other and builds the engine.
fn check_layout(header: &Header) -> Result<Engine, Error> {
    struct Check<'a>(&'a Header);
    impl Visitor for Check<'_> {
        type Output = Result<Engine, Error>;
        fn visit<S: RibbonSettings>(self) -> Self::Output
        where
            QueryState<S>: Into<Engine>,
        {
            let h = self.0;
            let w = S::CoeffRow::BITS;
            if h.num_blocks == 0 {
                return if h.solution_len == 0 && h.upper_num_columns == 0 && h.upper_start_block == 0 {
                    Ok(Engine::Empty)
                } else {
                    Err(corrupt("a filter of no blocks has solution fields"))
                };
            }
            let min_blocks = if S::USE_SMASH { 1 } else { 2 };
            if h.num_blocks < min_blocks || u64::from(h.num_blocks) * u64::from(w) > super::sizing::MAX_SLOTS
            {
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
            Ok(QueryState::<S>::new(h.num_blocks, h.solution_len, h.seed).into())
        }
    }
    dispatch(header.shape, Check(header))
}
