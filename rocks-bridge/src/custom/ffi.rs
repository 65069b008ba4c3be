//! The cxx bridge between the C++ policy of `cpp/custom_filter_policy.cc`
//! and the [`Policy`](super::Policy) objects users register.
//!
//! Every function here catches panics (see the failure rules in the
//! [module](super) docs): nothing unwinds into C++.

use super::{FilterBlock, Policy, ALWAYS_TRUE_FILTER};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

#[cxx::bridge(namespace = "rocks_bridge")]
pub(crate) mod bridge {
    extern "Rust" {
        type CustomPolicy;
        type CustomBuilder;
        type CustomReader;

        fn make_custom_policy(id: &str) -> Result<Box<CustomPolicy>>;
        fn id(self: &CustomPolicy) -> &str;
        fn compatibility_name(self: &CustomPolicy) -> &str;
        fn new_builder(self: &CustomPolicy, ctx: &BuildContext) -> Box<CustomBuilder>;
        fn new_reader(self: &CustomPolicy, contents: &[u8]) -> Box<CustomReader>;

        fn builds_filter(self: &CustomBuilder) -> bool;
        fn add_key(self: &mut CustomBuilder, key: &[u8]);
        fn add_key_and_alt(self: &mut CustomBuilder, key: &[u8], alt: &[u8]);
        fn estimate_entries_added(self: &CustomBuilder) -> usize;
        fn finish(self: &mut CustomBuilder) -> Vec<u8>;
        fn calculate_space(self: &CustomBuilder, num_entries: usize) -> usize;
        fn approximate_num_entries(self: &CustomBuilder, bytes: usize) -> usize;
        fn estimated_fp_rate(self: &CustomBuilder, num_entries: usize, bytes: usize) -> f64;

        fn may_match(self: &CustomReader, key: &[u8]) -> bool;
        /// Keys as (address, length) pairs of memory C++ keeps alive for the
        /// call; `out` gets 0 or 1 per key.
        unsafe fn may_match_batch(
            self: &CustomReader,
            addresses: &[usize],
            lengths: &[usize],
            out: &mut [u8],
        );
    }

    unsafe extern "C++" {
        include!("cpp/custom_filter_policy.h");
        include!("rocks-bridge/src/ffi.rs.h");

        /// The build context of the bridge's own policies (one definition).
        type BuildContext = crate::ffi::bridge::BuildContext;

        fn register_custom_policy_name(name: &str);
    }
}

/// A registered policy as the C++ policy holds it, with the strings RocksDB
/// asks for by pointer computed once.
pub struct CustomPolicy {
    policy: Arc<dyn Policy>,
    id: String,
    compatibility_name: String,
}

fn make_custom_policy(id: &str) -> Result<Box<CustomPolicy>, String> {
    let policy = super::registry::make_policy(id)?;
    let compatibility_name = catch_unwind(AssertUnwindSafe(|| policy.compatibility_name()))
        .map_err(|_| format!("filter policy {id:?}: compatibility_name() panicked"))?;
    if compatibility_name.is_empty() {
        return Err(format!("filter policy {id:?} has an empty compatibility name"));
    }
    let id = policy.id();
    Ok(Box::new(CustomPolicy {
        policy,
        id,
        compatibility_name,
    }))
}

impl CustomPolicy {
    fn id(&self) -> &str {
        &self.id
    }
    fn compatibility_name(&self) -> &str {
        &self.compatibility_name
    }
    fn new_builder(&self, ctx: &bridge::BuildContext) -> Box<CustomBuilder> {
        let ctx = crate::ffi::to_context(ctx);
        match catch_unwind(AssertUnwindSafe(|| self.policy.builder(&ctx))) {
            Ok(inner) => Box::new(CustomBuilder { inner, failed: false }),
            Err(_) => Box::new(CustomBuilder {
                inner: None,
                failed: true,
            }),
        }
    }
    fn new_reader(&self, contents: &[u8]) -> Box<CustomReader> {
        if contents == ALWAYS_TRUE_FILTER {
            return Box::new(CustomReader { inner: None });
        }
        // SAFETY: RocksDB's `GetFilterBitsReader` contract: the filter block
        // behind `contents` stays alive and unchanged for the lifetime of the
        // reader made over it; the C++ reader owns the returned Box (and so
        // the block handle) and is destroyed before RocksDB releases the block.
        let block = unsafe { FilterBlock::borrowed(contents) };
        let inner = catch_unwind(AssertUnwindSafe(|| self.policy.reader(block))).ok();
        Box::new(CustomReader { inner })
    }
}

/// A builder for RocksDB. `inner` is `None` when the policy writes no filter
/// for this file, or when making the builder panicked (`failed`: the filter
/// is then [`ALWAYS_TRUE_FILTER`]).
pub struct CustomBuilder {
    inner: Option<Box<dyn super::Builder>>,
    failed: bool,
}

impl CustomBuilder {
    fn guarded<T>(&mut self, fallback: T, f: impl FnOnce(&mut dyn super::Builder) -> T) -> T {
        if self.failed {
            return fallback;
        }
        let Some(b) = self.inner.as_mut() else {
            return fallback;
        };
        match catch_unwind(AssertUnwindSafe(|| f(b.as_mut()))) {
            Ok(v) => v,
            Err(_) => {
                self.failed = true;
                fallback
            }
        }
    }
    fn asked<T>(&self, fallback: T, f: impl FnOnce(&dyn super::Builder) -> T) -> T {
        match self.inner.as_deref() {
            Some(b) if !self.failed => catch_unwind(AssertUnwindSafe(|| f(b))).unwrap_or(fallback),
            _ => fallback,
        }
    }
    fn builds_filter(&self) -> bool {
        self.inner.is_some() || self.failed
    }
    fn add_key(&mut self, key: &[u8]) {
        self.guarded((), |b| b.add_key(key))
    }
    fn add_key_and_alt(&mut self, key: &[u8], alt: &[u8]) {
        self.guarded((), |b| b.add_key_and_alt(key, alt))
    }
    fn estimate_entries_added(&self) -> usize {
        self.asked(0, |b| b.estimate_entries_added())
    }
    /// The filter; after a panic, the always-true filter, and this builder
    /// keeps writing it (a panicked builder's state is not trusted again).
    fn finish(&mut self) -> Vec<u8> {
        let out = self.guarded(Vec::new(), |b| b.finish());
        if self.failed {
            return ALWAYS_TRUE_FILTER.to_vec();
        }
        out
    }
    fn calculate_space(&self, num_entries: usize) -> usize {
        self.asked(ALWAYS_TRUE_FILTER.len(), |b| b.calculate_space(num_entries))
    }
    fn approximate_num_entries(&self, bytes: usize) -> usize {
        self.asked(0, |b| b.approximate_num_entries(bytes))
    }
    fn estimated_fp_rate(&self, num_entries: usize, bytes: usize) -> f64 {
        self.asked(1.0, |b| b.estimated_fp_rate(num_entries, bytes))
    }
}

/// A reader for RocksDB; `None` inside answers "may match" (the
/// always-true filter, or a reader that could not be made).
pub struct CustomReader {
    inner: Option<Box<dyn super::Reader>>,
}

impl CustomReader {
    fn may_match(&self, key: &[u8]) -> bool {
        self.inner
            .as_ref()
            .is_none_or(|r| catch_unwind(AssertUnwindSafe(|| r.may_match(key))).unwrap_or(true))
    }
    /// # Safety
    /// Each `(addresses[i], lengths[i])` is a readable byte range that stays
    /// valid for the call (C++ passes the `Slice`s of RocksDB's batch).
    unsafe fn may_match_batch(&self, addresses: &[usize], lengths: &[usize], out: &mut [u8]) {
        let Some(r) = self.inner.as_ref() else {
            out.fill(1);
            return;
        };
        // SAFETY: forwarded from this function's contract.
        let keys = unsafe { crate::ffi::keys_from_raw(addresses, lengths) };
        let mut answers = vec![true; keys.len()];
        if catch_unwind(AssertUnwindSafe(|| r.may_match_many(&keys, &mut answers))).is_err() {
            answers.fill(true);
        }
        for (o, m) in out.iter_mut().zip(answers) {
            *o = u8::from(m);
        }
    }
}
