//! Conversion between the standalone format and RocksDB's Standard128 Ribbon
//! filter block (`crate::rocksdb::standard128`): the same solution bytes under another
//! header.
//!
//! RocksDB's block is the solution and the trailer that
//! [`crate::rocksdb::standard128`] writes and parses (`[0xFE][seed][num_blocks:
//! u24]`), with the settings [`Standard128`]. Both formats query the
//! solution through the same [`crate::core::solution::InterleavedLayout`], so
//! answers are identical both ways, and RocksDB → standalone → RocksDB
//! gives back the same bytes (bytes past the last whole 16-byte segment,
//! which RocksDB ignores, are dropped).

use crate::core::prelude::*;
use crate::rocksdb::standard128::{
    self, RibbonTrailer, Standard128, FAILURE_CHANCE, MAX_BLOCKS, METADATA_LEN,
};
use crate::rocksdb::trailer::{self, Parsed};
use crate::standalone::engine::{Engine, QueryState, Shape};
use crate::standalone::file::{file_len, Header, HEADER_LEN};
use crate::standalone::{Decoded, Error, Ribbon, RibbonRef};

/// The standalone shape of RocksDB's format.
const STANDARD128: Shape = Shape::of::<Standard128>();

impl Ribbon {
    /// Imports a RocksDB Standard128 Ribbon filter block (the filter
    /// contents of an SST, without the block trailer) built from `num_keys`
    /// keys (only recorded, for statistics: pass 0 if unknown). Queries
    /// answer exactly as [`crate::rocksdb::format::FilterReader`] does on `block`.
    ///
    /// A block of 5 bytes or fewer is RocksDB's empty filter and imports as
    /// an empty filter, as RocksDB reads it. Bytes from outside a table (a
    /// file, a caller's buffer) are checked with
    /// [`FilterReader::parse`](crate::rocksdb::format::FilterReader::parse)
    /// first, as `ribbon standalone --from-rocksdb` and the Python
    /// package's `Ribbon.from_rocksdb` do: an empty or truncated buffer is
    /// then refused instead of answering "definitely not" for every key.
    ///
    /// Errors ([`Error::NotRocksDbRibbon`]): another filter kind (Bloom), a
    /// Ribbon block of fewer than 2 blocks or without a whole segment
    /// (RocksDB answers "may match" for every key there).
    ///
    /// ```
    /// use ribbon::standalone::Ribbon;
    /// use ribbon::rocksdb::format::FilterReader;
    ///
    /// let hashes: Vec<u64> = (0..5000u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)).collect();
    /// // RocksDB's own construction (with a Bloom fallback size that never wins).
    /// let block = ribbon::rocksdb::standard128::build(hashes.clone(), 100.0, |_| usize::MAX).unwrap();
    /// let filter = Ribbon::from_rocksdb(&block, 5000)?;
    /// let reader = FilterReader::new(&block);
    /// for h in (0..20_000u64).map(|i| i.wrapping_mul(0x2545_F491_4F6C_DD1D)) {
    ///     assert_eq!(filter.contains_hash(h), reader.may_match_hash(h));
    /// }
    /// assert_eq!(filter.to_rocksdb()?, block);
    /// # Ok::<(), ribbon::standalone::Error>(())
    /// ```
    pub fn from_rocksdb(block: &[u8], num_keys: u64) -> Result<Self, Error> {
        let reader = match standard128::parse_trailer(block) {
            Parsed::Reader(reader) => reader,
            Parsed::AlwaysFalse => {
                let header = Header {
                    shape: STANDARD128,
                    failure_chance: Some(FAILURE_CHANCE),
                    seed: 0,
                    num_blocks: 0,
                    num_keys,
                    solution_len: 0,
                    upper_num_columns: 0,
                    upper_start_block: 0,
                    target_fp_rate: 0.0,
                    balanced: None,
                };
                return Ok(seal(header, &[], Engine::Empty));
            }
            Parsed::OtherFormat => {
                let kind = trailer::marker(block).map_or_else(String::new, |m| m.describe());
                return Err(Error::NotRocksDbRibbon(kind));
            }
            Parsed::AlwaysTrue => {
                let num_blocks = trailer::split(block)
                    .and_then(|(_, t)| RibbonTrailer::decode(t))
                    .map_or(0, |t| t.num_blocks);
                return Err(Error::NotRocksDbRibbon(format!(
                    "{num_blocks} blocks (RocksDB answers \"may match\" for every key)"
                )));
            }
        };
        let layout = reader.layout();
        if layout.upper_num_columns() == 0 {
            return Err(Error::NotRocksDbRibbon(
                "no whole solution segment (RocksDB answers \"may match\" for every key)".into(),
            ));
        }
        let solution = &block[..layout.data_len()];
        let header = Header {
            shape: STANDARD128,
            failure_chance: Some(FAILURE_CHANCE),
            seed: reader.seed(),
            num_blocks: layout.num_blocks(),
            num_keys,
            solution_len: solution.len(),
            upper_num_columns: layout.upper_num_columns(),
            upper_start_block: layout.upper_start_block(),
            target_fp_rate: layout.expected_fp_rate(),
            balanced: None,
        };
        let engine =
            QueryState::<Standard128>::new(layout.num_blocks(), solution.len(), reader.seed()).into();
        Ok(seal(header, solution, engine))
    }
}

impl Ribbon {
    /// The filter in RocksDB's Standard128 Ribbon format (solution
    /// and 5-byte trailer, the contents of a filter block), giving
    /// identical answers through [`crate::rocksdb::format::FilterReader`].
    /// An empty filter gives RocksDB's empty filter (no bytes).
    ///
    /// Errors ([`Error::NotRocksDbCompatible`]): settings other than
    /// width 128, Standard Ribbon, first coefficient always one and
    /// no smash; a seed above 255; fewer than 2 or 2^24 or more
    /// blocks.
    pub fn to_rocksdb(&self) -> Result<Vec<u8>, Error> {
        export(&self.decoded.header, self.solution())
    }
}

impl RibbonRef<'_> {
    /// [`Ribbon::to_rocksdb`] of a borrowed filter.
    pub fn to_rocksdb(&self) -> Result<Vec<u8>, Error> {
        export(&self.decoded.header, self.solution())
    }
}

fn seal(header: Header, solution: &[u8], engine: Engine) -> Ribbon {
    let mut bytes = vec![0u8; file_len(solution.len())];
    bytes[HEADER_LEN..HEADER_LEN + solution.len()].copy_from_slice(solution);
    header.seal(&mut bytes);
    Ribbon {
        decoded: Decoded { header, engine },
        bytes,
    }
}

/// RocksDB's block for a filter with `header` and `solution` (the payload,
/// which is only the solution for a filter that is not Balanced).
fn export(header: &Header, solution: &[u8]) -> Result<Vec<u8>, Error> {
    if header.num_blocks == 0 {
        return Ok(Vec::new());
    }
    let incompatible = |what: String| Err(Error::NotRocksDbCompatible(what));
    if let Some(g) = header.balanced {
        return incompatible(format!(
            "RocksDB has no Balanced Ribbon; this filter has {} soft shards",
            g.num_shards()
        ));
    }
    if header.shape != STANDARD128 {
        let s = header.shape;
        return incompatible(format!(
            "RocksDB stores width 128, Standard Ribbon, first coefficient always one, no smash; \
             this filter has width {}, {}, first coefficient always one {}, smash {}",
            header.width_bits(),
            if s.homogeneous { "Homogeneous" } else { "Standard" },
            s.first_coeff_always_one,
            s.smash
        ));
    }
    let Ok(seed) = u8::try_from(header.seed) else {
        return incompatible(format!("seed {} does not fit RocksDB's seed byte", header.seed));
    };
    if header.num_blocks > MAX_BLOCKS {
        return incompatible(format!("{} blocks exceed RocksDB's 24 bits", header.num_blocks));
    }
    let mut block = Vec::with_capacity(solution.len() + METADATA_LEN);
    block.extend_from_slice(solution);
    block.extend_from_slice(
        &RibbonTrailer {
            seed,
            num_blocks: header.num_blocks,
        }
        .encode(),
    );
    Ok(block)
}
