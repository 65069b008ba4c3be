//! Errors: one enum, each with a one-line message that names the block.
//!
//! The messages follow RocksDB's corruption statuses in spirit
//! (`table/format.cc`, `table/block_based/reader_common.cc`,
//! `table/meta_blocks.cc`) but are worded for a person reading a tool's
//! output.

use crate::checksum::{ChecksumType, Mismatch};
use core::fmt;

/// What a block is for, to name it in messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockKind {
    /// The fixed-size footer at the end of the file.
    Footer,
    /// The metaindex block (names of the meta blocks).
    Metaindex,
    /// The table properties block.
    Properties,
    /// The (top-level) index block.
    Index,
    /// A partition of a two-level index.
    IndexPartition,
    /// A full filter block, or one partition of a partitioned filter.
    Filter,
    /// The top-level index of a partitioned filter.
    FilterPartitionIndex,
    /// A data block.
    Data,
    /// The range deletion block.
    RangeDeletion,
    /// The compression dictionary block.
    CompressionDictionary,
    /// Another meta block, by its metaindex name.
    Meta(String),
}

impl fmt::Display for BlockKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlockKind::Footer => f.write_str("footer"),
            BlockKind::Metaindex => f.write_str("metaindex block"),
            BlockKind::Properties => f.write_str("properties block"),
            BlockKind::Index => f.write_str("index block"),
            BlockKind::IndexPartition => f.write_str("index partition block"),
            BlockKind::Filter => f.write_str("filter block"),
            BlockKind::FilterPartitionIndex => f.write_str("filter partition index block"),
            BlockKind::Data => f.write_str("data block"),
            BlockKind::RangeDeletion => f.write_str("range deletion block"),
            BlockKind::CompressionDictionary => f.write_str("compression dictionary block"),
            BlockKind::Meta(name) => write!(f, "meta block {name:?}"),
        }
    }
}

/// Everything that can go wrong reading an SST file. Every variant has a
/// one-line [`Display`](fmt::Display).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be read.
    Io {
        /// The path as given.
        path: String,
        /// The operating system's message.
        message: String,
    },
    /// The file is empty.
    Empty,
    /// The file is shorter than the smallest footer.
    TooShort {
        /// File length in bytes.
        len: u64,
    },
    /// The last 8 bytes are no known table magic number.
    BadMagic {
        /// The number found.
        magic: u64,
    },
    /// A plain-table SST (`PlainTable`): it has no filter blocks to read.
    PlainTable,
    /// A cuckoo-table SST: it has no filter blocks to read.
    CuckooTable,
    /// A block-based footer with a format_version this reader does not know.
    UnsupportedFormatVersion {
        /// The version in the footer.
        version: u32,
    },
    /// A footer checksum type byte that is no known type.
    UnsupportedChecksumType {
        /// The byte.
        byte: u8,
    },
    /// A structurally invalid footer.
    BadFooter {
        /// What is wrong.
        what: String,
    },
    /// A stored checksum differs from the computed one.
    ChecksumMismatch {
        /// The block (or the footer).
        block: BlockKind,
        /// Its offset in the file.
        offset: u64,
        /// The checksum type of the file.
        checksum_type: ChecksumType,
        /// The stored value, context removed.
        stored: u32,
        /// The computed value.
        computed: u32,
    },
    /// A block handle reaches past the end of the file (a truncated file,
    /// or a corrupt handle).
    Truncated {
        /// The block.
        block: BlockKind,
        /// Its offset.
        offset: u64,
        /// Its size with the 5-byte trailer.
        size: u64,
        /// The file length.
        file_len: u64,
    },
    /// A block handle whose offset or size cannot be in this file at all.
    OversizedHandle {
        /// The block.
        block: BlockKind,
        /// Its offset.
        offset: u64,
        /// Its size.
        size: u64,
    },
    /// A varint that does not decode (too long, or cut off).
    BadVarint {
        /// The block holding it.
        block: BlockKind,
        /// The block's offset.
        offset: u64,
        /// What the varint was.
        what: &'static str,
    },
    /// A block whose contents are not what its kind requires.
    BadBlock {
        /// The block.
        block: BlockKind,
        /// Its offset.
        offset: u64,
        /// What is wrong.
        what: String,
    },
    /// A compressed block that does not decompress.
    Decompress {
        /// The block.
        block: BlockKind,
        /// Its offset.
        offset: u64,
        /// The compression name.
        compression: &'static str,
        /// What went wrong.
        what: String,
    },
    /// A block compressed with a method this reader lacks.
    UnsupportedCompression {
        /// The block.
        block: BlockKind,
        /// Its offset.
        offset: u64,
        /// The compression type byte.
        type_byte: u8,
    },
    /// A required meta block or property is missing.
    Missing {
        /// What is missing.
        what: String,
    },
    /// Internal: bytes from `from` on were asked of a buffer that does not
    /// hold them (a footer decoded from too short a tail). The readers
    /// bounds-check every handle first, so [`crate::SstFile`] never
    /// returns it.
    #[doc(hidden)]
    NeedMoreBytes {
        /// First offset needed.
        from: u64,
    },
    /// Reading the file would decompress or copy more bytes than its
    /// read budget allows (see [`crate::budget`]): a hostile or corrupt
    /// file.
    BudgetExceeded {
        /// The block being read when the budget ran out.
        block: BlockKind,
        /// Its offset.
        offset: u64,
        /// The budget, in bytes.
        limit: u64,
    },
    /// A query this table cannot answer (such as a prefix query without a
    /// prefix extractor the reader can reproduce).
    Unsupported {
        /// Why.
        what: String,
    },
}

/// Writes through to a formatter, escaping control characters: a file's
/// bytes reach some messages (names, a decompressor's words), and every
/// message stays on one line.
struct OneLine<'a, 'b>(&'a mut fmt::Formatter<'b>);

impl fmt::Write for OneLine<'_, '_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for c in s.chars() {
            if c.is_control() {
                write!(self.0, "{}", c.escape_default())?;
            } else {
                fmt::Write::write_char(self.0, c)?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_message(&mut OneLine(f))
    }
}

impl Error {
    fn write_message(&self, f: &mut impl fmt::Write) -> fmt::Result {
        match self {
            Error::Io { path, message } => write!(f, "cannot read {path}: {message}"),
            Error::Empty => f.write_str("empty file: not an SST file"),
            Error::TooShort { len } => write!(
                f,
                "truncated file: {len} bytes is too short for an SST footer (at least 48 bytes)"
            ),
            Error::BadMagic { magic } => write!(
                f,
                "wrong magic number {magic:#018x} in footer: not an SST file, or a truncated one"
            ),
            Error::PlainTable => f.write_str(
                "plain-table SST file (PlainTable magic number): it has no filter blocks; \
                 only block-based tables are supported",
            ),
            Error::CuckooTable => f.write_str(
                "cuckoo-table SST file (CuckooTable magic number): it has no filter blocks; \
                 only block-based tables are supported",
            ),
            Error::UnsupportedFormatVersion { version } => write!(
                f,
                "unsupported or corrupt format_version {version} in footer (RocksDB 11.8 reads 2 to 7)"
            ),
            Error::UnsupportedChecksumType { byte } => {
                write!(f, "unsupported or corrupt checksum type {byte} in footer")
            }
            Error::BadFooter { what } => write!(f, "corrupt footer: {what}"),
            Error::ChecksumMismatch {
                block,
                offset,
                checksum_type,
                stored,
                computed,
            } => write!(
                f,
                "checksum mismatch in {block} at offset {offset} ({checksum_type}: stored {stored:#010x}, \
                 computed {computed:#010x})"
            ),
            Error::Truncated {
                block,
                offset,
                size,
                file_len,
            } => write!(
                f,
                "truncated file: {block} at offset {offset} ({size} bytes with trailer) ends past \
                 the end of the file ({file_len} bytes)"
            ),
            Error::OversizedHandle { block, offset, size } => write!(
                f,
                "oversized handle for {block}: offset {offset}, size {size} cannot be in this file"
            ),
            Error::BadVarint { block, offset, what } => {
                write!(f, "bad varint ({what}) in {block} at offset {offset}")
            }
            Error::BadBlock { block, offset, what } => {
                write!(f, "corrupt {block} at offset {offset}: {what}")
            }
            Error::Decompress {
                block,
                offset,
                compression,
                what,
            } => write!(
                f,
                "cannot decompress {block} at offset {offset} ({compression}): {what}"
            ),
            Error::UnsupportedCompression {
                block,
                offset,
                type_byte,
            } => write!(
                f,
                "unsupported compression type {type_byte:#04x} ({}) in {block} at offset {offset}",
                crate::compression_type::name(*type_byte)
            ),
            Error::Missing { what } => write!(f, "missing {what}"),
            Error::NeedMoreBytes { from } => write!(f, "the file's bytes from offset {from} are needed"),
            Error::BudgetExceeded { block, offset, limit } => write!(
                f,
                "read budget exceeded in {block} at offset {offset}: the file asks to decompress or \
                 copy more than {limit} bytes, far more than a file of its size holds (corrupt or hostile)"
            ),
            Error::Unsupported { what } => f.write_str(what),
        }
    }
}

impl std::error::Error for Error {}

impl Error {
    /// The error for a checksum [`Mismatch`] in `block` at `offset`.
    pub fn checksum_mismatch(block: &BlockKind, offset: u64, m: Mismatch) -> Self {
        Error::ChecksumMismatch {
            block: block.clone(),
            offset,
            checksum_type: m.checksum_type,
            stored: m.stored,
            computed: m.computed,
        }
    }

    /// Whether this is a checksum mismatch (of a block or the footer).
    pub fn is_checksum_mismatch(&self) -> bool {
        matches!(self, Error::ChecksumMismatch { .. })
    }

    /// The block the error is in, when it is about one block.
    pub fn block(&self) -> Option<&BlockKind> {
        match self {
            Error::ChecksumMismatch { block, .. }
            | Error::Truncated { block, .. }
            | Error::OversizedHandle { block, .. }
            | Error::BadVarint { block, .. }
            | Error::BadBlock { block, .. }
            | Error::Decompress { block, .. }
            | Error::UnsupportedCompression { block, .. }
            | Error::BudgetExceeded { block, .. } => Some(block),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_stay_on_one_line() {
        let e = Error::Unsupported {
            what: "prefix extractor nu\n\0ptr is not one this reader can reproduce".into(),
        };
        assert_eq!(
            e.to_string(),
            "prefix extractor nu\\n\\u{0}ptr is not one this reader can reproduce"
        );
        let e = Error::BadBlock {
            block: BlockKind::Meta("a\rb".into()),
            offset: 3,
            what: "x\ty".into(),
        };
        assert_eq!(e.to_string(), "corrupt meta block \"a\\rb\" at offset 3: x\\ty");
    }
}
