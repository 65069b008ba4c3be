//! The `rust.BalancedRibbon:BITS[:BLOOM_BEFORE_LEVEL]` policy: Balanced
//! Ribbon filters ([`ribbon::plugin::balanced_policy`]) with RocksDB's
//! `ribbonfilter` rules, as one more user of [`custom::Policy`].
//!
//! Its blocks are stored under their own family, `rust.BalancedRibbon`, and
//! a Balanced block's marker byte is RocksDB's "zero probes" (always true):
//! a RocksDB without this plugin reads the tables as tables without a
//! filter, never losing a key (see [`ribbon::plugin::balanced_policy`] for why the
//! marker cannot collide). Reading the tables again needs this policy, or
//! any reader of the family (`ribbon-sst`, `ribbon sst`).
//!
//! The builder charges nothing to the block cache and has no
//! `detect_filter_construct_corruption` checks: those are RocksDB's
//! protocol for its own builders ([`custom::Construction`]), which this
//! format does not follow.

use crate::bloom_before_level::{self, BLOOM_BEFORE_LEVEL};
use crate::counters::FILTERS_BUILT;
use crate::custom::{self, Builder, FilterBlock, Policy, Reader};
use crate::family_reader::FamilyReader;
use ribbon::plugin::balanced_policy::{BalancedBuilder, BalancedPolicy, COMPATIBILITY_NAME, NAME};
use ribbon::plugin::Family;
use ribbon::rocksdb::format::ALWAYS_TRUE_FILTER;
use ribbon::rocksdb::policy::BuildContext;
use std::sync::atomic::{AtomicI32, Ordering::Relaxed};
use std::sync::Arc;

/// Registers `rust.BalancedRibbon` (once per process, from
/// [`crate::register`]).
pub(crate) fn register() {
    let factory = Arc::new(|args: Option<&str>| {
        let id = args.map_or_else(|| NAME.to_string(), |a| format!("{NAME}:{a}"));
        BalancedPolicy::parse(&id)
            .map(|p| Arc::new(LivePolicy::new(p)) as Arc<dyn Policy>)
            .map_err(|e| e.to_string())
    });
    custom::register_builtin(NAME, factory).expect("registered once");
}

/// The policy, with `bloom_before_level` changeable on the live policy
/// (`SetOptions`), as on RocksDB's `ribbonfilter`.
struct LivePolicy {
    policy: BalancedPolicy,
    bloom_before_level: AtomicI32,
}

impl LivePolicy {
    fn new(policy: BalancedPolicy) -> Self {
        Self {
            bloom_before_level: AtomicI32::new(policy.bloom_before_level()),
            policy,
        }
    }
    fn current(&self) -> BalancedPolicy {
        self.policy
            .with_bloom_before_level(self.bloom_before_level.load(Relaxed))
    }
}

impl Policy for LivePolicy {
    fn id(&self) -> String {
        self.current().id()
    }
    fn compatibility_name(&self) -> String {
        COMPATIBILITY_NAME.into()
    }
    fn builder(&self, ctx: &BuildContext) -> Option<Box<dyn Builder>> {
        Some(Box::new(BalancedBlockBuilder(BalancedBuilder::new(
            &self.current(),
            ctx,
        )?)))
    }
    fn reader(&self, filter: FilterBlock) -> Box<dyn Reader> {
        Box::new(FamilyReader::new(filter, Family::BalancedRibbon))
    }
    fn always_true_filter(&self) -> Vec<u8> {
        // RocksDB's own, which every reader of the family reads as "may
        // match" (marker 0).
        ALWAYS_TRUE_FILTER.to_vec()
    }
    fn mutable_options(&self) -> Vec<String> {
        vec![BLOOM_BEFORE_LEVEL.into()]
    }
    fn set_option(&self, name: &str, value: &str) -> Result<(), String> {
        if name != BLOOM_BEFORE_LEVEL {
            return Err(format!("{} has no option {name:?}", self.id()));
        }
        self.bloom_before_level
            .store(bloom_before_level::parse(value)?, Relaxed);
        Ok(())
    }
    fn option(&self, name: &str) -> Option<String> {
        (name == BLOOM_BEFORE_LEVEL).then(|| self.bloom_before_level.load(Relaxed).to_string())
    }
}

struct BalancedBlockBuilder(BalancedBuilder);

impl Builder for BalancedBlockBuilder {
    fn add_key(&mut self, key: &[u8]) {
        self.0.add_key(key);
    }
    fn add_key_and_alt(&mut self, key: &[u8], alt: &[u8]) {
        self.0.add_key_and_alt(key, alt);
    }
    fn estimate_entries_added(&self) -> usize {
        self.0.estimate_entries_added()
    }
    fn finish(&mut self) -> Vec<u8> {
        FILTERS_BUILT.fetch_add(1, Relaxed);
        self.0.finish()
    }
    fn calculate_space(&self, num_entries: usize) -> usize {
        self.0.calculate_space(num_entries)
    }
    fn estimated_fp_rate(&self, num_entries: usize, bytes: usize) -> f64 {
        self.0.estimated_fp_rate(num_entries, bytes)
    }
}
