//! The generic Ribbon core: everything a Ribbon filter of any format is made
//! of, and nothing that belongs to one format.
//!
//! Layered as RocksDB's `util/ribbon_alg.h`, `util/ribbon_impl.h` and
//! `util/ribbon_config.{h,cc}`, with the hashes and the arithmetic they
//! share:
//!
//! | module | holds | RocksDB |
//! |---|---|---|
//! | [`hash`] | the key hashes (XXPH3's `GetSliceHash64`, the legacy `BloomHash`) | `util/hash.h`, `util/xxph3.h` |
//! | [`math`] | `fast_range`, prefix sums | `util/fastrange.h`, `util/math.h` |
//! | [`alg`] | banding and back-substitution, generic over the settings | `util/ribbon_alg.h` |
//! | [`hasher`] | the standard hasher: start, coefficient row and result row from a key hash and a seed | `StandardHasher` in `util/ribbon_impl.h` |
//! | [`solution`] | the interleaved solution and its queries | `SerializableInterleavedSolution` |
//! | [`bounded`] | construction in bounded memory: banding segment by segment, banded again during back-substitution | (RocksDB keeps a full banding) |
//! | [`filter`] | [`MayContain`](filter::MayContain), the one trait every reader implements | (RocksDB's `FilterBitsReader`) |
//! | [`config`] | slots for a number of keys, and its tuned tables | `util/ribbon_config.{h,cc}` |
//!
//! Dependencies point into this module, never out of it: RocksDB's formats
//! ([`crate::rocksdb`]) and this crate's own filters
//! ([`crate::standalone`]) are both built on it, and it names neither.
//!
//! Internals of the formats: public for tests, tools and experiments; their
//! API may change with any release.

pub mod alg;
pub(crate) mod arch;
pub(crate) mod batch;
pub mod bounded;
pub mod config;
pub mod filter;
pub(crate) mod float;
pub mod hash;
pub mod hasher;
pub mod math;
pub(crate) mod prelude;
pub mod solution;
