//! RocksDB's filter-construction machinery seen from outside the builders
//! (`cpp/construction.cc`), for tests that compare what RocksDB's built-in
//! policies and the Rust policy do while they build:
//!
//! - [`install_recording_cache`]: a block cache that records each charge a
//!   builder makes for `CacheEntryRole::kFilterConstruction`
//!   (`cache_usage_options`), in order, with the cache's usage after it;
//! - [`wrap_filter_policy`]: a wrapper around the table's filter policy
//!   that marks in that log the moments a builder returns a finished filter
//!   and RocksDB post-verifies it, and can zero the first 8 bytes of every
//!   finished filter before the post-verification
//!   (`detect_filter_construct_corruption`), as RocksDB's own `TamperFilter`
//!   test sync point does, which release builds compile out.

use rocksdb::{AsRawPtr, Options};

#[cxx::bridge(namespace = "ribbon_compat")]
mod ffi {
    /// What a [`ChargeEvent`] records.
    #[derive(Debug)]
    #[repr(u8)]
    enum ChargeEventKind {
        /// A `kFilterConstruction` dummy entry was inserted.
        Insert,
        /// One was released.
        Release,
        /// A builder returned a finished filter (from `Finish`).
        Finished,
        /// RocksDB is about to post-verify a finished filter.
        PostVerify,
    }

    /// One insert or release of a `kFilterConstruction` dummy entry, or one
    /// moment of a builder's life.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    struct ChargeEvent {
        /// What happened.
        kind: ChargeEventKind,
        /// The entry's charge (0 for a moment).
        charge: usize,
        /// The insert succeeded (always true for a release).
        ok: bool,
        /// The cache's usage right after.
        usage: usize,
    }

    unsafe extern "C++" {
        include!("ribbon-compat/cpp/construction.h");

        type ChargeRecorder;

        fn install_recording_cache(
            options_address: usize,
            capacity: usize,
            strict: bool,
            charge: bool,
        ) -> Result<UniquePtr<ChargeRecorder>>;
        fn events(self: &ChargeRecorder) -> Vec<ChargeEvent>;
        fn usage(self: &ChargeRecorder) -> usize;
        fn clear_events(self: Pin<&mut ChargeRecorder>);
        fn wrap_filter_policy(options_address: usize, tamper: bool) -> Result<()>;
    }
}

pub use ffi::{ChargeEvent, ChargeEventKind};

/// The recording block cache of [`install_recording_cache`]; it stays alive
/// as long as the options (or a DB, or a writer) using it.
pub struct ChargeRecorder(cxx::UniquePtr<ffi::ChargeRecorder>);

impl ChargeRecorder {
    /// Every `kFilterConstruction` insert and release so far, in order.
    pub fn events(&self) -> Vec<ChargeEvent> {
        self.0.events()
    }
    /// The cache's usage now.
    pub fn usage(&self) -> usize {
        self.0.usage()
    }
    /// Forgets the events so far.
    pub fn clear_events(&mut self) {
        self.0.pin_mut().clear_events();
    }
}

// SAFETY: the C++ recorder guards its log with a mutex and the cache is
// thread-safe, as every RocksDB cache.
unsafe impl Send for ChargeRecorder {}

fn address(opts: &Options) -> usize {
    // SAFETY: `opts` is alive and borrowed for the call; the C++ side only
    // replaces its table factory with a new one (as rocks-bridge does).
    (unsafe { opts.as_raw_ptr() }) as usize
}

/// Gives `opts`' block-based table a new one-shard LRU block cache of
/// `capacity` bytes (`strict_capacity_limit` as `strict`) that records the
/// filter-construction charges, and turns the `kFilterConstruction` role of
/// `cache_usage_options` on (`charge`) or off. Call it after the filter
/// policy is set: it copies the table options.
pub fn install_recording_cache(
    opts: &mut Options,
    capacity: usize,
    strict: bool,
    charge: bool,
) -> Result<ChargeRecorder, String> {
    ffi::install_recording_cache(address(opts), capacity, strict, charge)
        .map(ChargeRecorder)
        .map_err(|e| e.what().to_string())
}

/// Wraps the filter policy of `opts`' block-based table: its builders mark
/// [`ChargeEventKind::Finished`] and [`ChargeEventKind::PostVerify`] in the
/// recording cache (call [`install_recording_cache`] first), and with
/// `tamper` every filter they finish has its first 8 bytes zeroed before
/// RocksDB calls `MaybePostVerify` on it. Errors without a filter policy.
pub fn wrap_filter_policy(opts: &mut Options, tamper: bool) -> Result<(), String> {
    ffi::wrap_filter_policy(address(opts), tamper).map_err(|e| e.what().to_string())
}
