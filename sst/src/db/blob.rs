//! Blob indexes: where a value kept in a blob file is, and the checks a
//! `Get` that ends at one makes before it reads the blob.
//!
//! Ported from RocksDB's `db/blob/blob_index.h` (`BlobIndex::DecodeFrom`:
//! a type byte, then for `kBlob` the blob file number, offset and size as
//! varints and one compression byte; `kInlinedTTL` and `kBlobTTL` carry an
//! expiration first) and `db/version_set.cc` (`Version::GetBlob`: a TTL or
//! inlined index is "Unexpected TTL/inlined blob index", a blob file the
//! version does not list is "Invalid blob file number", both corruption; a
//! listed blob file that is gone fails the read). File number 0 is a blob
//! kept in the SST itself (RocksDB 11's embedded blobs), which the table
//! reader resolves.

use crate::coding::Reader;

/// What an entry's value refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlobRef {
    /// The entry is no blob index.
    None,
    /// A blob in blob file number N (`NNNNNN.blob`).
    File(u64),
    /// A blob kept in the SST itself (blob file number 0).
    SameFile,
    /// A blob index RocksDB's `Get` refuses, and why.
    Bad(&'static str),
}

/// The value type byte of a blob index (`kTypeBlobIndex`).
pub const BLOB_INDEX_TYPE: u8 = 0x11;

/// Decodes `value`, the value of a blob index entry.
pub fn decode(value: &[u8]) -> BlobRef {
    let Some((&kind, rest)) = value.split_first() else {
        return BlobRef::Bad("an empty blob index");
    };
    match kind {
        1 => {}
        0 | 2 => return BlobRef::Bad(
            "a blob index with a TTL or an inlined value (the stacked BlobDB's), which RocksDB's Get refuses",
        ),
        _ => return BlobRef::Bad("a blob index of an unknown type"),
    }
    let mut r = Reader::new(rest);
    match (r.varint64(), r.varint64(), r.varint64(), r.remaining().len()) {
        (Some(0), Some(_), Some(_), 1) => BlobRef::SameFile,
        (Some(n), Some(_), Some(_), 1) => BlobRef::File(n),
        _ => BlobRef::Bad("a corrupt blob index (its blob offset)"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coding::put_varint64;

    fn index(kind: u8, file: u64, tail: &[u8]) -> Vec<u8> {
        let mut v = vec![kind];
        for x in [file, 100, 42] {
            put_varint64(&mut v, x);
        }
        v.extend_from_slice(tail);
        v
    }

    #[test]
    fn blob_indexes_decode_as_rocksdb_decodes_them() {
        assert_eq!(decode(&index(1, 12, &[0])), BlobRef::File(12));
        assert_eq!(decode(&index(1, 0, &[1])), BlobRef::SameFile);
        for bad in [
            vec![],
            index(1, 12, &[]),
            index(1, 12, &[0, 0]),
            index(0, 12, &[0]),
            index(2, 12, &[0]),
            index(3, 12, &[0]),
            vec![1, 0x80],
        ] {
            assert!(matches!(decode(&bad), BlobRef::Bad(_)), "{bad:?}");
        }
    }

    #[test]
    fn any_bytes_decode_without_a_panic() {
        let mut state = 7u64;
        for _ in 0..20_000 {
            let r = ribbon::core::hash::split_mix64(&mut state);
            let len = (r % 24) as usize;
            let v: Vec<u8> = (0..len)
                .map(|i| (ribbon::core::hash::split_mix64(&mut state) >> (i % 8)) as u8)
                .collect();
            if let BlobRef::File(n) = decode(&v) {
                assert!(n > 0 && v[0] == 1);
            }
        }
    }
}
