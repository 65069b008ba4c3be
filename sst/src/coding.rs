//! Little-endian fixed-width integers and varints, read from byte slices
//! without ever reading past their end.
//!
//! Ported from RocksDB's `util/coding.h` and `util/coding_lean.h`
//! (`DecodeFixed32`, `DecodeFixed64`, `GetVarint32Ptr`, `GetVarint64Ptr`,
//! `GetVarsignedint64`).

/// A cursor over a byte slice. Every read either succeeds and advances, or
/// returns `None` and leaves the cursor where it was.
#[derive(Debug, Clone, Copy)]
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// A cursor at the start of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0 }
    }

    /// Bytes consumed so far.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The bytes not yet consumed.
    pub fn remaining(&self) -> &'a [u8] {
        self.data.get(self.pos..).unwrap_or(&[])
    }

    /// Whether everything has been consumed.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    /// The next `n` bytes.
    pub fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let out = self.data.get(self.pos..end)?;
        self.pos = end;
        Some(out)
    }

    /// A little-endian `u32`.
    pub fn fixed32(&mut self) -> Option<u32> {
        self.bytes(4).map(fixed32)
    }

    /// A little-endian `u64`.
    pub fn fixed64(&mut self) -> Option<u64> {
        self.bytes(8).map(fixed64)
    }

    /// A varint of at most 5 bytes whose value fits in 32 bits (RocksDB's
    /// `GetVarint32Ptr`: bits past the 32nd in the fifth byte are dropped).
    pub fn varint32(&mut self) -> Option<u32> {
        let mut result: u32 = 0;
        let mut p = self.pos;
        for shift in (0..=28).step_by(7) {
            let byte = *self.data.get(p)?;
            p += 1;
            result |= u32::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                self.pos = p;
                return Some(result);
            }
        }
        None
    }

    /// A varint of at most 10 bytes (RocksDB's `GetVarint64Ptr`).
    pub fn varint64(&mut self) -> Option<u64> {
        let mut result: u64 = 0;
        let mut p = self.pos;
        for shift in (0..=63).step_by(7) {
            let byte = *self.data.get(p)?;
            p += 1;
            result |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                self.pos = p;
                return Some(result);
            }
        }
        None
    }

    /// A zigzag-encoded signed varint (`GetVarsignedint64`).
    pub fn varsigned64(&mut self) -> Option<i64> {
        let u = self.varint64()?;
        Some(((u >> 1) as i64) ^ -((u & 1) as i64))
    }

    /// A varint32 length followed by that many bytes.
    pub fn length_prefixed(&mut self) -> Option<&'a [u8]> {
        let save = self.pos;
        let len = self.varint32()?;
        match self.bytes(len as usize) {
            Some(b) => Some(b),
            None => {
                self.pos = save;
                None
            }
        }
    }
}

/// Decodes a little-endian `u32` from the first 4 bytes.
/// Precondition: `b.len() >= 4` (callers slice exactly 4 bytes).
pub fn fixed32(b: &[u8]) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[..4]);
    u32::from_le_bytes(a)
}

/// Decodes a little-endian `u64` from the first 8 bytes.
/// Precondition: `b.len() >= 8`.
pub fn fixed64(b: &[u8]) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    u64::from_le_bytes(a)
}

/// Appends `v` as a varint (used by tests and by the legacy footer search).
pub fn put_varint64(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_reject_truncation() {
        for v in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut b = Vec::new();
            put_varint64(&mut b, v);
            assert_eq!(Reader::new(&b).varint64(), Some(v));
            assert_eq!(Reader::new(&b[..b.len() - 1]).varint64(), None);
            if v <= u32::MAX as u64 {
                assert_eq!(Reader::new(&b).varint32(), Some(v as u32));
            }
        }
        // Eleven continuation bytes: never a value.
        assert_eq!(Reader::new(&[0xff; 11]).varint64(), None);
        assert_eq!(Reader::new(&[0xff; 6]).varint32(), None);
        for v in [0i64, -1, 1, i64::MIN, i64::MAX] {
            let mut b = Vec::new();
            put_varint64(&mut b, ((v << 1) ^ (v >> 63)) as u64);
            assert_eq!(Reader::new(&b).varsigned64(), Some(v));
        }
    }

    #[test]
    fn reads_leave_cursor_on_failure() {
        let mut r = Reader::new(&[5, 1, 2]);
        assert_eq!(r.length_prefixed(), None);
        assert_eq!(r.position(), 0);
        assert_eq!(r.fixed32(), None);
        assert_eq!(r.bytes(3), Some(&[5u8, 1, 2][..]));
        assert!(r.is_empty());
    }
}
