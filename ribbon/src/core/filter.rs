//! One way to ask any filter: [`MayContain`].
//!
//! Every reader of this workspace answers "may this key be in the set?"
//! with no false negatives: RocksDB's filter blocks
//! ([`FilterReader`](crate::FilterReader),
//! [`TableFilter`](crate::TableFilter)), the standalone filters
//! ([`Ribbon`](crate::Ribbon), [`RibbonRef`](crate::RibbonRef)), the
//! sharded container
//! ([`ShardedRef`](crate::standalone::sharded::ShardedRef)) and, in
//! `ribbon-sst`, a whole SST file (`SstFile`, as RocksDB's `Get` asks its
//! filter). Code written against the trait takes any of them.
//!
//! # Why this shape
//!
//! The two required methods take keys as `&[u8]`, so the trait is object
//! safe: `&dyn MayContain` and `Box<dyn MayContain>` work, for a list of
//! filters of different kinds. The generic helpers (`contains`,
//! `contains_many`, `contains_many_into`, keys as anything `AsRef<[u8]>`)
//! are provided methods bounded by `Self: Sized`, which keeps them out of
//! the vtable. `&F` and `Box<F>` implement the trait for any
//! `F: MayContain + ?Sized`, so generic code takes `&dyn MayContain` and
//! `Box<dyn MayContain>`, and a trait object has the helpers through them:
//! `boxed.contains(key)` on a `Box<dyn MayContain>`, `(&filter).contains(key)`
//! on a `filter: &dyn MayContain` (where `filter.contains(key)` names the
//! unavailable method of `dyn MayContain` itself; `filter.contains_key`
//! needs no detour). The batched path goes through
//! [`contains_keys_into`](MayContain::contains_keys_into), which every
//! reader implements with its own batched query (hashes first, memory
//! fetches overlapped), so a batch through the trait is as fast as the
//! reader's inherent batch.
//!
//! The readers keep their inherent methods (`may_match`, `contains`,
//! `key_may_match`, ...), with the same answers: an inherent method of the
//! same name as a trait method (`Ribbon::contains`) takes precedence and
//! answers identically.

use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;

/// Keys passed per call of [`MayContain::contains_keys_into`] by the
/// generic batch helpers (on the stack, no allocation).
const KEY_CHUNK: usize = 64;

/// A filter that answers "may this key be in the set?": `true` for every
/// key the filter was built from (no false negatives), `true` with about
/// the filter's false-positive rate for any other key.
///
/// ```
/// use ribbon::standalone::{sharded, Config, Ribbon};
/// use ribbon::{BuildContext, FilterBuilder, FilterPolicy, FilterReader, MayContain};
///
/// let keys = ["apple", "banana", "cherry"];
///
/// // RocksDB's filter block, as RocksDB writes it for "ribbonfilter:10".
/// let policy: FilterPolicy = "ribbonfilter:10".parse()?;
/// let mut builder = FilterBuilder::new(&policy, &BuildContext::default()).expect("this policy builds filters");
/// builder.extend(keys);
/// let block = builder.finish();
/// let reader = FilterReader::new(&block);
///
/// // A standalone Ribbon filter, owned and borrowed.
/// let owned = Ribbon::from_keys(&keys, &Config::default())?;
/// let borrowed = owned.as_ribbon_ref();
///
/// // A sharded container of two shards.
/// let hashes: Vec<u64> = keys.iter().map(|k| ribbon::core::hash::get_slice_hash64(k.as_bytes())).collect();
/// let shard_files: Vec<Vec<u8>> = (0..2)
///     .map(|i| {
///         let mine: Vec<u64> = hashes.iter().copied().filter(|&h| sharded::shard_of(h, 1) == i).collect();
///         sharded::build_shard_file(&mine, i, 1, &Config::default())
///     })
///     .collect::<Result<_, _>>()?;
/// let container = sharded::assemble(1, &[&shard_files[0], &shard_files[1]])?;
/// let sharded = sharded::ShardedRef::from_bytes(&container)?;
///
/// // One verb for all of them, generic or through `dyn`.
/// fn all_present(filter: &impl MayContain, keys: &[&str]) -> bool {
///     filter.contains_many(keys).iter().all(|&yes| yes)
/// }
/// assert!(all_present(&reader, &keys));
/// assert!(all_present(&owned, &keys));
/// let filters: [&dyn MayContain; 4] = [&reader, &owned, &borrowed, &sharded];
/// for f in filters {
///     assert!(f.contains_key(b"banana"));
///     assert!(all_present(&f, &keys));
///     assert_eq!((&f).contains_many(&keys), [true, true, true]);
/// }
/// // A filter of three keys at about 1 % says "no" to most others.
/// let others: Vec<String> = (0..1000).map(|i| format!("other{i}")).collect();
/// for f in filters {
///     let fps = (&f).contains_many(&others).iter().filter(|&&yes| yes).count();
///     assert!(fps < 100, "{fps} false positives of 1000");
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait MayContain {
    /// Whether `key` may be in the set.
    fn contains_key(&self, key: &[u8]) -> bool;

    /// [`contains_key`](Self::contains_key) for each of `keys`, into
    /// `out` (one answer per key, in order), with the reader's batched
    /// query where it has one.
    ///
    /// # Panics
    /// When `out.len() != keys.len()`: every key gets exactly one answer.
    fn contains_keys_into(&self, keys: &[&[u8]], out: &mut [bool]) {
        assert_eq!(keys.len(), out.len(), "one answer slot per key");
        for (o, k) in out.iter_mut().zip(keys) {
            *o = self.contains_key(k);
        }
    }

    /// Whether `key` (anything `AsRef<[u8]>`: `&str`, `String`, `Vec<u8>`,
    /// `[u8; N]`, ...) may be in the set.
    #[inline]
    fn contains(&self, key: impl AsRef<[u8]>) -> bool
    where
        Self: Sized,
    {
        self.contains_key(key.as_ref())
    }

    /// [`contains`](Self::contains) for many keys: one answer per key, in
    /// order, through the batched query.
    fn contains_many<K: AsRef<[u8]>>(&self, keys: &[K]) -> Vec<bool>
    where
        Self: Sized,
    {
        let mut out = vec![false; keys.len()];
        self.contains_many_into(keys, &mut out);
        out
    }

    /// [`contains_many`](Self::contains_many) into a buffer the caller
    /// owns, without allocating (keys are passed on in chunks on the
    /// stack).
    ///
    /// # Panics
    /// When `out.len() != keys.len()`: every key gets exactly one answer.
    fn contains_many_into<K: AsRef<[u8]>>(&self, keys: &[K], out: &mut [bool])
    where
        Self: Sized,
    {
        assert_eq!(keys.len(), out.len(), "one answer slot per key");
        let mut refs: [&[u8]; KEY_CHUNK] = [&[]; KEY_CHUNK];
        for (keys, out) in keys.chunks(KEY_CHUNK).zip(out.chunks_mut(KEY_CHUNK)) {
            for (r, k) in refs.iter_mut().zip(keys) {
                *r = k.as_ref();
            }
            self.contains_keys_into(&refs[..keys.len()], out);
        }
    }
}

impl<F: MayContain + ?Sized> MayContain for &F {
    #[inline]
    fn contains_key(&self, key: &[u8]) -> bool {
        (**self).contains_key(key)
    }

    fn contains_keys_into(&self, keys: &[&[u8]], out: &mut [bool]) {
        (**self).contains_keys_into(keys, out);
    }
}

impl<F: MayContain + ?Sized> MayContain for Box<F> {
    #[inline]
    fn contains_key(&self, key: &[u8]) -> bool {
        (**self).contains_key(key)
    }

    fn contains_keys_into(&self, keys: &[&[u8]], out: &mut [bool]) {
        (**self).contains_keys_into(keys, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers `true` for keys of even length, and counts nothing: the
    /// default methods over the simplest reader.
    struct EvenLength;

    impl MayContain for EvenLength {
        fn contains_key(&self, key: &[u8]) -> bool {
            key.len().is_multiple_of(2)
        }
    }

    #[test]
    fn provided_methods_answer_as_contains_key_across_chunks() {
        let keys: Vec<Vec<u8>> = (0..(3 * KEY_CHUNK + 5)).map(|n| vec![7u8; n]).collect();
        let want: Vec<bool> = keys.iter().map(|k| k.len() % 2 == 0).collect();
        assert_eq!(EvenLength.contains_many(&keys), want);
        let boxed: Box<dyn MayContain> = Box::new(EvenLength);
        assert_eq!(boxed.contains_many(&keys), want);
        let by_ref: &dyn MayContain = &EvenLength;
        assert_eq!((&by_ref).contains_many(&keys), want);
        assert!((&by_ref).contains("ab") && !(&by_ref).contains("abc"));
        assert!(by_ref.contains_key(b"ab") && !by_ref.contains_key(b"abc"));
        let mut out = vec![true; keys.len()];
        EvenLength.contains_many_into(&keys, &mut out);
        assert_eq!(out, want);
    }

    #[test]
    #[should_panic(expected = "one answer slot per key")]
    fn a_short_buffer_is_refused() {
        EvenLength.contains_many_into(&["a", "b"], &mut [false]);
    }
}
