//! `ribbon query` and `ribbon info`: a filter file is a RocksDB filter block
//! (as `ribbon build` or `ribbon sst dump-filter` write it) or a standalone
//! Ribbon filter file. Anything else is refused with one line that says what
//! the bytes are, never read as a filter that answers every key alike: a
//! 0-byte file, an SST file, a standalone file with a bad header, and bytes
//! whose trailer is no filter RocksDB writes (the message says how RocksDB
//! itself would read them).

use crate::cli::{InfoArgs, QueryArgs};
use crate::error::{shown, Error};
use crate::input::{at_most_one_stdin, read_all, Keys};
use crate::output::{to_json, write_answers_by_chunk, Stdout};
use crate::standalone;
use ribbon::plugin::table_filter::{Description, TableFilter};
use ribbon::rocksdb::format::FilterReader;
use ribbon::standalone::{file::has_magic, RibbonRef};
use ribbon_sst::footer::{
    BLOCK_BASED_MAGIC, CUCKOO_TABLE_MAGIC, LEGACY_BLOCK_BASED_MAGIC, LEGACY_PLAIN_TABLE_MAGIC,
    PLAIN_TABLE_MAGIC,
};
use serde::Serialize;
use std::path::Path;

/// A filter file, read.
pub enum FilterFile<'a> {
    /// A RocksDB filter block (of RocksDB's built-in family, or of
    /// `rust.BalancedRibbon`).
    RocksDb(TableFilter<'a>),
    /// A standalone Ribbon filter file (boxed: a Balanced filter's level
    /// table makes the view a few hundred bytes).
    Standalone(Box<RibbonRef<'a>>),
}

/// Recognises the filter in `bytes` (read from `path`), or says what the
/// bytes are instead.
pub fn load<'a>(path: &Path, bytes: &'a [u8]) -> Result<FilterFile<'a>, Error> {
    let name = shown(path);
    if bytes.is_empty() {
        return Err(Error::failed(format!(
            "{name}: empty file, not a filter (RocksDB reads an empty filter block as a filter of \
             zero keys: \"definitely not\" for every key)"
        )));
    }
    if ribbon::standalone::sharded::has_magic(bytes) {
        return Err(Error::failed(format!(
            "{name}: this is a sharded Ribbon filter file: use 'ribbon big query' or 'ribbon big info'"
        )));
    }
    if has_magic(bytes) {
        return RibbonRef::from_bytes(bytes)
            .map(|f| FilterFile::Standalone(Box::new(f)))
            .map_err(|e| Error::failed(format!("{name}: standalone Ribbon filter file: {e}")));
    }
    if let Some(table) = table_kind(bytes) {
        return Err(Error::failed(format!(
            "{name}: this is an SST file ({table}), not a filter block: use 'ribbon sst query' or \
             'ribbon sst info', or 'ribbon sst dump-filter' to extract its filter"
        )));
    }
    // A block of rocks-bridge's rust.BalancedRibbon (as `ribbon sst
    // dump-filter` writes it): checked whole, checksum included.
    if let Some(parsed) = ribbon::plugin::balanced_policy::parse_block(bytes, true) {
        return parsed
            .map(|f| FilterFile::RocksDb(TableFilter::BalancedRibbon(Box::new(f))))
            .map_err(|e| Error::failed(format!("{name}: rust.BalancedRibbon filter block: {e}")));
    }
    FilterReader::parse(bytes)
        .map(|r| FilterFile::RocksDb(r.into()))
        .map_err(|e| Error::failed(format!("{name}: {e}")))
}

/// The table format whose magic number ends `bytes`, if any.
fn table_kind(bytes: &[u8]) -> Option<&'static str> {
    let tail: [u8; 8] = bytes.get(bytes.len().checked_sub(8)?..)?.try_into().ok()?;
    match u64::from_le_bytes(tail) {
        BLOCK_BASED_MAGIC | LEGACY_BLOCK_BASED_MAGIC => Some("block-based table"),
        PLAIN_TABLE_MAGIC | LEGACY_PLAIN_TABLE_MAGIC => Some("plain table"),
        CUCKOO_TABLE_MAGIC => Some("cuckoo table"),
        _ => None,
    }
}

/// `ribbon query`.
pub fn query(args: &QueryArgs) -> Result<(), Error> {
    at_most_one_stdin(&[&args.filter, &args.keys])?;
    let bytes = read_all(&args.filter)?;
    let filter = load(&args.filter, &bytes)?;
    let keys = Keys::read(&args.keys, args.hex)?;
    write_answers_by_chunk(&keys, |chunk| {
        Ok(match (&filter, args.batch) {
            (FilterFile::RocksDb(r), true) => r.may_match_many(chunk),
            (FilterFile::RocksDb(r), false) => chunk.iter().map(|k| r.may_match(k)).collect(),
            (FilterFile::Standalone(f), true) => f.contains_many(chunk),
            (FilterFile::Standalone(f), false) => chunk.iter().map(|k| f.contains(k)).collect(),
        })
    })
}

/// `ribbon info`.
pub fn info(args: &InfoArgs) -> Result<(), Error> {
    let bytes = read_all(&args.filter)?;
    let mut out = Stdout::new();
    match load(&args.filter, &bytes)? {
        FilterFile::RocksDb(r) if args.json => {
            out.line(&to_json(&RocksDbFilterInfo::new(&r, bytes.len()))?)?;
        }
        FilterFile::RocksDb(r) => out.line(&r.describe().to_string())?,
        FilterFile::Standalone(f) if args.json => out.line(&to_json(&standalone::Info::new(&f))?)?,
        FilterFile::Standalone(f) => out.line(&standalone::describe(&f))?,
    }
    out.finish()
}

/// `ribbon info --json` for a RocksDB filter block: its format, its size,
/// and its description as the library serializes it (`kind` and the
/// kind's fields).
#[derive(Debug, Serialize)]
struct RocksDbFilterInfo {
    format: &'static str,
    /// Bytes of the whole block, trailer included.
    bytes: usize,
    #[serde(flatten)]
    description: Description,
}

impl RocksDbFilterInfo {
    fn new(r: &TableFilter<'_>, bytes: usize) -> Self {
        RocksDbFilterInfo {
            format: "rocksdb",
            bytes,
            description: r.describe(),
        }
    }
}
