//! Plugin filter policies end to end (`tests/util/round_trip.rs`,
//! [`policy::round_trip_policy`]): options string, fill, OPTIONS file,
//! partitioned filters, reads during compactions, and what stock RocksDB
//! does with the files. To cover a new id, add a test calling
//! `round_trip_policy(ID, MIN_USEFUL, Degradation::…)`.

#[path = "util/round_trip.rs"]
mod round_trip;

use round_trip::policy::{round_trip_policy, Degradation};

/// xorf's BinaryFuse8 (FP rate about 1/256: about 99.6 % of absent keys
/// ruled out), its own family: stock RocksDB ignores its filters.
#[test]
fn xorf_binary_fuse8() {
    ribbon_compat::binary_fuse::register();
    let f = round_trip_policy("example.BinaryFuse8", 0.98, Degradation::NoFilterUsed);
    eprintln!("example.BinaryFuse8: least useful {:.4}, {f:?}", f.min());
}

/// The control: the built-in-compatible Rust Ribbon (FP rate about 1 %),
/// whose filters stock RocksDB reads.
#[test]
fn rust_ribbon_filter_control() {
    let f = round_trip_policy("rust.RibbonFilter:10", 0.98, Degradation::NativeReads);
    eprintln!("rust.RibbonFilter:10: least useful {:.4}, {f:?}", f.min());
}

/// `rust.BalancedRibbon` (ribbonfilter's FP rate, about 1 %), its own
/// family: stock RocksDB reads its tables as tables without a filter.
/// `bloom_before_level` -1: Balanced for flushes too.
#[test]
fn rust_balanced_ribbon() {
    let f = round_trip_policy("rust.BalancedRibbon:10:-1", 0.98, Degradation::NoFilterUsed);
    eprintln!("rust.BalancedRibbon:10:-1: least useful {:.4}, {f:?}", f.min());
}
