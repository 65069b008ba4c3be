//! Internal keys and the comparators this reader can reproduce.
//!
//! Ported from RocksDB's `db/dbformat.{h,cc}` (internal key = user key +
//! 8-byte little-endian `seq << 8 | type`; `InternalKeyComparator`: user
//! keys ascending, then that footer descending; `kValueTypeForSeek`,
//! `kMaxSequenceNumber`, `LookupKey`) and `util/comparator.cc`
//! (`BytewiseComparator`, `ReverseBytewiseComparator` and their `.u64ts`
//! variants, which append an 8-byte timestamp ordered newest first).

use core::cmp::Ordering;

/// Length of the sequence/type footer of an internal key.
pub const INTERNAL_FOOTER_LEN: usize = 8;
/// `kMaxSequenceNumber`.
pub const MAX_SEQUENCE_NUMBER: u64 = (1 << 56) - 1;
/// `kValueTypeForSeek` (`kTypeValuePreferredSeqno`).
pub const VALUE_TYPE_FOR_SEEK: u8 = 0x18;

/// The user-key comparator of a table, from `rocksdb.comparator`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UserComparator {
    /// `leveldb.BytewiseComparator`.
    Bytewise,
    /// `rocksdb.ReverseBytewiseComparator`.
    ReverseBytewise,
    /// A comparator this reader cannot reproduce.
    Unknown,
}

/// A comparator plus its timestamp size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Comparator {
    /// How user keys (without timestamp) are ordered.
    pub user: UserComparator,
    /// Bytes of user-defined timestamp at the end of each user key.
    pub timestamp_size: usize,
}

impl Comparator {
    /// From the comparator name in the properties (absent: bytewise, as in
    /// files from before the property existed).
    pub fn from_name(name: Option<&str>) -> Self {
        let name = name.unwrap_or("leveldb.BytewiseComparator");
        let (base, ts) = match name.strip_suffix(".u64ts") {
            Some(b) => (b, 8),
            None => (name, 0),
        };
        let user = match base {
            "leveldb.BytewiseComparator" => UserComparator::Bytewise,
            "rocksdb.ReverseBytewiseComparator" => UserComparator::ReverseBytewise,
            _ => UserComparator::Unknown,
        };
        Comparator {
            user,
            timestamp_size: ts,
        }
    }

    /// Whether this reader can order keys as the table does.
    pub fn is_known(&self) -> bool {
        self.user != UserComparator::Unknown
    }

    /// Compares user keys (with their timestamps, if any). `None` for an
    /// unknown comparator.
    pub fn compare_user(&self, a: &[u8], b: &[u8]) -> Option<Ordering> {
        let ts = self.timestamp_size;
        let (a_key, a_ts) = split_ts(a, ts);
        let (b_key, b_ts) = split_ts(b, ts);
        let ord = match self.user {
            UserComparator::Bytewise => a_key.cmp(b_key),
            UserComparator::ReverseBytewise => b_key.cmp(a_key),
            UserComparator::Unknown => return None,
        };
        Some(ord.then_with(|| {
            if ts == 0 {
                Ordering::Equal
            } else {
                // Newer (larger) timestamps first.
                ts_value(b_ts).cmp(&ts_value(a_ts))
            }
        }))
    }

    /// Compares internal keys: user keys, then the footer descending.
    /// Keys shorter than the footer compare as user keys with footer 0.
    pub fn compare_internal(&self, a: &[u8], b: &[u8]) -> Option<Ordering> {
        let (au, af) = split_internal(a);
        let (bu, bf) = split_internal(b);
        Some(self.compare_user(au, bu)?.then(bf.cmp(&af)))
    }
}

fn split_ts(k: &[u8], ts: usize) -> (&[u8], &[u8]) {
    k.split_at(k.len().saturating_sub(ts))
}

fn ts_value(ts: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    let n = ts.len().min(8);
    a[..n].copy_from_slice(&ts[..n]);
    u64::from_le_bytes(a)
}

/// Splits an internal key into user key and footer (`seq << 8 | type`).
pub fn split_internal(k: &[u8]) -> (&[u8], u64) {
    if k.len() < INTERNAL_FOOTER_LEN {
        return (k, 0);
    }
    let (u, f) = k.split_at(k.len() - INTERNAL_FOOTER_LEN);
    (u, crate::coding::fixed64(f))
}

/// The internal key `Get` looks up for `user_key` (`LookupKey`) when the
/// read sequence number is at least every sequence number in the file and
/// below `kMaxSequenceNumber` (any such read gives the same answers, since
/// file keys carry sequence numbers up to the DB's last one and shortened
/// index separators carry `kMaxSequenceNumber`).
pub fn lookup_key(user_key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(user_key.len() + INTERNAL_FOOTER_LEN);
    k.extend_from_slice(user_key);
    let footer = ((MAX_SEQUENCE_NUMBER - 1) << 8) | u64::from(VALUE_TYPE_FOR_SEEK);
    k.extend_from_slice(&footer.to_le_bytes());
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_order_is_user_then_newest_first() {
        let c = Comparator::from_name(None);
        let ik = |u: &[u8], seq: u64| {
            let mut k = u.to_vec();
            k.extend(((seq << 8) | 1).to_le_bytes());
            k
        };
        assert_eq!(
            c.compare_internal(&ik(b"a", 5), &ik(b"b", 1)),
            Some(Ordering::Less)
        );
        assert_eq!(
            c.compare_internal(&ik(b"a", 5), &ik(b"a", 1)),
            Some(Ordering::Less)
        );
        assert_eq!(
            c.compare_internal(&lookup_key(b"a"), &ik(b"a", 1 << 40)),
            Some(Ordering::Less)
        );
        let r = Comparator::from_name(Some("rocksdb.ReverseBytewiseComparator"));
        assert_eq!(r.compare_user(b"a", b"b"), Some(Ordering::Greater));
        assert_eq!(Comparator::from_name(Some("x")).compare_user(b"a", b"b"), None);
        let t = Comparator::from_name(Some("leveldb.BytewiseComparator.u64ts"));
        assert_eq!(t.timestamp_size, 8);
        let mut a = b"k".to_vec();
        a.extend(5u64.to_le_bytes());
        let mut b = b"k".to_vec();
        b.extend(9u64.to_le_bytes());
        assert_eq!(t.compare_user(&a, &b), Some(Ordering::Greater));
    }
}
