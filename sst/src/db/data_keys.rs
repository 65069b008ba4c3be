//! The internal keys of data blocks, walked for scans that read keys only
//! ([`super::for_each_file_key`], [`super::Db::for_each_live_key`]).
//!
//! The same entry format and checks as [`crate::block_entries::EntryIter`]
//! (ported from RocksDB's `table/block_based/block.{h,cc}`, `DecodeEntry`),
//! with three costs taken out of the per-key path:
//!
//! * a key is rebuilt in one buffer that keeps 32 spare bytes past its end,
//!   so the non-shared bytes of a short key are copied as one fixed 32-byte
//!   move (the bytes past the key are never handed out);
//! * the order of a key's user key against the previous one is decided
//!   from the bytes they do not share (they agree on the shared prefix), so
//!   no copy of the previous key is kept;
//! * values are skipped, not sliced.
//!
//! Blocks with separated key/value storage go through `EntryIter`, with the
//! same checks.

use crate::block_entries::{EntryIter, ValueFormat};
use crate::block_layout::Layout;
use crate::coding::Reader;
use crate::error::{BlockKind, Error};
use crate::handle::BlockHandle;
use crate::key;
use core::cmp::Ordering;

/// Spare bytes kept past the key in the buffer.
const SLACK: usize = 32;

/// One entry handed out by [`KeyWalk::block`].
pub(crate) struct Entry<'a> {
    /// The internal key (at least [`key::INTERNAL_FOOTER_LEN`] bytes).
    pub(crate) ikey: &'a [u8],
    /// Its user key against the previous one of the walk, bytewise
    /// (previous.cmp(this)); `None` for the walk's first key.
    pub(crate) order: Option<Ordering>,
    /// Its value.
    pub(crate) value: &'a [u8],
    offset: u64,
    index: u64,
}

impl Entry<'_> {
    /// An error about this entry, worded as `EntryIter::bad` words it.
    pub(crate) fn bad(&self, what: &str) -> Error {
        bad(self.offset, self.index, what)
    }

    /// The user key and the footer (`seq << 8 | type`).
    #[inline]
    pub(crate) fn split(&self) -> (&[u8], u64) {
        key::split_internal(self.ikey)
    }
}

fn bad(offset: u64, index: u64, what: &str) -> Error {
    Error::BadBlock {
        block: BlockKind::Data,
        offset,
        what: format!("{what} (entry {index})"),
    }
}

/// A walk over the keys of consecutive data blocks (of one file, or of
/// one file after another: the order is compared across blocks).
#[derive(Debug, Default)]
pub(crate) struct KeyWalk {
    /// The current key, then at least [`SLACK`] spare bytes.
    buf: Vec<u8>,
    /// The current key's length (0 before the first).
    len: usize,
    started: bool,
}

impl KeyWalk {
    /// Calls `f` with each entry of `contents`, the data block at `h`
    /// (`restart_interval` is the table's, for separated values); stops at
    /// the first error, of the block or of `f`.
    pub(crate) fn block(
        &mut self,
        contents: &[u8],
        h: BlockHandle,
        restart_interval: u32,
        mut f: impl FnMut(&Entry<'_>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let layout = Layout::of(contents, &BlockKind::Data, h.offset)?;
        if layout.values_section.is_some() {
            return self.separated(contents, h, restart_interval, f);
        }
        let data = &contents[..layout.keys_end];
        let mut pos = 0;
        let mut index = 0u64;
        // The previous key of this block (the first entry shares nothing).
        let mut block_len = 0;
        while pos < data.len() {
            let (shared, non_shared, value_len, start) = match data.get(pos..pos + 3) {
                Some(&[s, n, v]) if (s | n | v) < 0x80 => {
                    (usize::from(s), usize::from(n), usize::from(v), pos + 3)
                }
                _ => {
                    let mut r = Reader::new(&data[pos..]);
                    let varint = |r: &mut Reader<'_>, what| {
                        r.varint32().map(|v| v as usize).ok_or(Error::BadVarint {
                            block: BlockKind::Data,
                            offset: h.offset,
                            what,
                        })
                    };
                    let s = varint(&mut r, "shared key length")?;
                    let n = varint(&mut r, "key length")?;
                    let v = varint(&mut r, "value length")?;
                    (s, n, v, pos + r.position())
                }
            };
            if shared > block_len {
                return Err(bad(
                    h.offset,
                    index,
                    "key shares more bytes than the previous key has",
                ));
            }
            let key_end = start
                .checked_add(non_shared)
                .filter(|&e| e <= data.len())
                .ok_or_else(|| bad(h.offset, index, "key runs past the end of the entries"))?;
            let next = key_end
                .checked_add(value_len)
                .filter(|&e| e <= data.len())
                .ok_or_else(|| bad(h.offset, index, "value runs past the end of the block"))?;
            let new_len = shared + non_shared;
            let Some(user_len) = new_len.checked_sub(key::INTERNAL_FOOTER_LEN) else {
                return Err(bad(h.offset, index, "a key shorter than an internal key"));
            };
            let fresh = &data[start..key_end];
            let order = self.started.then(|| {
                // Both user keys start with the shared bytes.
                let prev_user = self.len - key::INTERNAL_FOOTER_LEN;
                let s = shared.min(prev_user).min(user_len);
                if s < shared {
                    prev_user.cmp(&user_len)
                } else {
                    bytewise(&self.buf[s..prev_user], &fresh[..user_len - s])
                }
            });
            if self.buf.len() < new_len + SLACK {
                self.buf.resize(new_len + SLACK, 0);
            }
            match contents.get(start..start + SLACK) {
                Some(wide) if non_shared <= SLACK => self.buf[shared..shared + SLACK].copy_from_slice(wide),
                _ => self.buf[shared..new_len].copy_from_slice(fresh),
            }
            self.len = new_len;
            self.started = true;
            block_len = new_len;
            f(&Entry {
                ikey: &self.buf[..new_len],
                order,
                value: &data[key_end..next],
                offset: h.offset,
                index,
            })?;
            pos = next;
            index += 1;
        }
        Ok(())
    }

    /// [`KeyWalk::block`] for a block whose values are stored apart.
    fn separated(
        &mut self,
        contents: &[u8],
        h: BlockHandle,
        restart_interval: u32,
        mut f: impl FnMut(&Entry<'_>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        let mut it = EntryIter::new(
            contents,
            BlockKind::Data,
            h.offset,
            ValueFormat::Plain,
            restart_interval,
        )?;
        while it.advance()? {
            let ikey = it.key();
            let index = it.entries_read() - 1;
            let Some(user_len) = ikey.len().checked_sub(key::INTERNAL_FOOTER_LEN) else {
                return Err(bad(h.offset, index, "a key shorter than an internal key"));
            };
            let order = self.started.then(|| {
                bytewise(
                    &self.buf[..self.len - key::INTERNAL_FOOTER_LEN],
                    &ikey[..user_len],
                )
            });
            self.buf.clear();
            self.buf.extend_from_slice(ikey);
            self.buf.resize(ikey.len() + SLACK, 0);
            self.len = ikey.len();
            self.started = true;
            f(&Entry {
                ikey: &self.buf[..self.len],
                order,
                value: it.value(),
                offset: h.offset,
                index,
            })?;
        }
        Ok(())
    }
}

/// `a.cmp(b)` for byte strings, eight bytes at a time, inline (the keys
/// compared are short: a library call costs more than the comparison).
#[inline]
pub(crate) fn bytewise(a: &[u8], b: &[u8]) -> Ordering {
    let word = |s: &[u8]| u64::from_be_bytes(s[..8].try_into().unwrap_or([0; 8]));
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n {
        let (x, y) = (word(&a[i..]), word(&b[i..]));
        if x != y {
            return x.cmp(&y);
        }
        i += 8;
    }
    a[i..n].cmp(&b[i..n]).then(a.len().cmp(&b.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A data block of `entries` (shared, non-shared bytes, value), one
    /// restart point.
    fn block(entries: &[(usize, &[u8], &[u8])]) -> Vec<u8> {
        let mut b = Vec::new();
        for &(shared, fresh, value) in entries {
            b.extend([shared as u8, fresh.len() as u8, value.len() as u8]);
            b.extend_from_slice(fresh);
            b.extend_from_slice(value);
        }
        b.extend(0u32.to_le_bytes());
        b.extend(1u32.to_le_bytes());
        b
    }

    /// Each key handed out, with its order against the previous one.
    type Walked = Vec<(Vec<u8>, Option<Ordering>)>;

    fn walk(blocks: &[Vec<u8>]) -> Result<Walked, Error> {
        let mut w = KeyWalk::default();
        let mut out = Vec::new();
        for b in blocks {
            w.block(b, BlockHandle::new(0, b.len() as u64), 16, |e| {
                out.push((e.ikey.to_vec(), e.order));
                Ok(())
            })?;
        }
        Ok(out)
    }

    const F: &[u8; 8] = b"\x01\0\0\0\0\0\0\x05";

    #[test]
    fn keys_are_rebuilt_and_ordered_across_blocks() {
        let k = |u: &[u8]| [u, F].concat();
        let a = block(&[
            (0, &k(b"apple"), b"v"),
            (3, &k(b"ly")[..], b""),
            (5, &k(b"")[..], b"x"),
            (4, &k(b"e")[..], b""),
        ]);
        let b = block(&[(0, &k(b"apples"), b""), (0, &k(b"b"), b"")]);
        let got = walk(&[a, b]).unwrap();
        let keys: Vec<_> = got.iter().map(|(k, _)| k[..k.len() - 8].to_vec()).collect();
        assert_eq!(
            keys,
            [&b"apple"[..], b"apply", b"apply", b"apple", b"apples", b"b"]
        );
        use Ordering::*;
        let orders: Vec<_> = got.iter().map(|(_, o)| *o).collect();
        assert_eq!(
            orders,
            [
                None,
                Some(Less),
                Some(Equal),
                Some(Greater),
                Some(Less),
                Some(Less)
            ]
        );
        // Long keys (past the 32-byte fast copy) too.
        let long = vec![b'z'; 100];
        let c = block(&[(0, &k(&long), b""), (99, &k(b"y")[..], b"")]);
        let got = walk(&[c]).unwrap();
        assert_eq!(&got[1].0[..100], &[&long[..99], b"y"].concat()[..]);
        assert_eq!(got[1].1, Some(Greater));
    }

    #[test]
    fn malformed_entries_are_errors() {
        let k = [&b"k"[..], F].concat();
        // Shares bytes with no previous key, runs past the end, too short.
        for b in [
            block(&[(1, &k, b"")]),
            block(&[(0, &k, b""), (20, &k, b"")]),
            block(&[(0, b"short", b"")]),
        ] {
            assert!(walk(&[b]).is_err());
        }
        let mut b = block(&[(0, &k, b"")]);
        b[1] = 60;
        assert!(walk(&[b]).is_err());
    }
}
