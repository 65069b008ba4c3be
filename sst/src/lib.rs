//! Reading the filters out of RocksDB block-based SST files, in pure Rust.
//!
//! [`SstFile`] opens a block-based table as far as its filter needs: the
//! footer (every format_version RocksDB 11.8 reads, 2 to 7, plus the
//! legacy footer and format_version 1), the metaindex, the table
//! properties, and the filter — full, or partitioned with its top-level
//! partition index and every partition — with every block's checksum
//! verified (none, CRC-32C, xxHash, xxHash64, XXH3; with the per-block
//! context of format_version 6 and later) and compressed blocks
//! decompressed (Snappy, zlib, BZip2, LZ4/LZ4HC, ZSTD, with the table's
//! compression dictionary where it has one). The block-based filter of
//! RocksDB before 7.0 is read and queried as RocksDB 6.x did
//! ([`block_based_filter`]). Queries answer as
//! RocksDB's `Get` asks that table's filter: see
//! [`SstFile::key_may_match`] and [`SstFile::prefix_may_match`]. An
//! `SstFile` is also a [`ribbon::MayContain`], the trait every filter
//! reader of this workspace implements (whole keys, as `key_may_match`).
//! [`SstFile::verify_filter`] walks the index and data blocks and checks
//! that every key passes.
//!
//! [`SstFile::open`] reads only the blocks it needs (the footer, meta
//! blocks and filter follow the data blocks, and the last 256 KiB are read
//! in one go), so `info` on a large table reads little; the walks over the
//! data blocks read one block at a time.
//!
//! Every entry point takes arbitrary bytes: a corrupt, truncated or hostile
//! file gives an [`Error`] (one line, naming the block), never a panic, and
//! bounded work. The reader checks what RocksDB guarantees when it writes
//! a table instead of trusting it: the handles of an index follow one
//! another in the file ([`handle::HandleOrder`]), meta block names are
//! unique, a decompressed size fits what its compression format can
//! produce, and what one operation decompresses or copies stays within a
//! budget proportional to the file's size ([`budget`]).
//!
//! ```
//! // A table RocksDB 11.8 wrote (the corpus of this crate's tests).
//! let sst = ribbon_sst::SstFile::open("tests/corpus/full_bloom_fv5_snappy_crc32c.sst")?;
//! println!("{}", sst.filter().summary().kind_label());
//! // Every key the table holds passes its filter (no false negative) ...
//! let mut keys = Vec::new();
//! sst.for_each_data_key(|internal_key, _| keys.push(internal_key[..internal_key.len() - 8].to_vec()))?;
//! assert!(!keys.is_empty());
//! assert!(keys.iter().all(|k| sst.key_may_match(k)));
//! // ... and a key it does not hold is "definitely not" here, as RocksDB's
//! // own Get answered (recorded in the corpus).
//! assert!(!sst.key_may_match(b"e3ccdeec43ceb45dx"));
//! # Ok::<(), ribbon_sst::Error>(())
//! ```
//!
//! Ported from RocksDB 11.8.1; each module names the files it follows.

#![warn(missing_docs)]
pub mod block_based_filter;
pub mod block_entries;
pub mod block_fetch;
mod block_layout;
pub mod budget;
pub mod checksum;
pub mod coding;
pub mod compression;
mod compression_type;
pub mod db;
pub mod doctor;
pub mod error;
mod file_reader;
pub mod filter;
mod filter_loading;
pub mod footer;
pub mod fs;
pub mod handle;
mod index_walk;
pub mod info;
pub mod key;
pub mod metaindex;
mod partition_seek;
pub mod prefix;
pub mod properties;
pub mod table;
pub mod verify;

pub use checksum::ChecksumType;
pub use error::{BlockKind, Error};
pub use filter::{Filter, FilterSummary, Partition};
pub use footer::Footer;
pub use handle::BlockHandle;
pub use info::{TableInfo, TableReport};
pub use prefix::PrefixExtractor;
pub use properties::{IndexType, TableProperties};
pub use table::{ReaderVersion, SstFile};
pub use verify::{FilterMiss, VerifyReport};
