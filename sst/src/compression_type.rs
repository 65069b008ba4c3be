//! The compression type byte of a block trailer (`CompressionType` in
//! `include/rocksdb/compression_type.h`): the values this crate names.
//! A leaf module: the errors name a type by it, and
//! [`crate::compression`] decompresses by it.

/// `kNoCompression`.
pub const NO_COMPRESSION: u8 = 0;

/// RocksDB's name for a compression type byte.
pub fn name(type_byte: u8) -> &'static str {
    match type_byte {
        0x00 => "NoCompression",
        0x01 => "Snappy",
        0x02 => "Zlib",
        0x03 => "BZip2",
        0x04 => "LZ4",
        0x05 => "LZ4HC",
        0x06 => "Xpress",
        0x07 | 0x40 => "ZSTD",
        0x80..=0xfe => "custom",
        _ => "unknown",
    }
}
