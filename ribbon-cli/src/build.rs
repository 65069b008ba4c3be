//! `ribbon build` for RocksDB's formats: the filter block RocksDB writes
//! for a set of keys, and one line on standard error that says what was
//! written and, when it is not the filter the policy names, why.

use crate::cli::{BuildArgs, CompactionStyleArg};
use crate::error::Error;
use crate::input::Keys;
use crate::output::{note, write_file};
use crate::progress;
use ribbon::core::hash::get_slice_hash64;
use ribbon::rocksdb::builder::FilterBuilder;
use ribbon::rocksdb::format::{FilterDescription, FilterReader};
use ribbon::rocksdb::policy::{BuildContext, CompactionStyle, FilterKind, FilterPolicy, PolicyKind};
use ribbon::rocksdb::standard128;

/// Key counts from which hashing shows a progress bar.
const PROGRESS_MIN_KEYS: u64 = 1_000_000;

/// `ribbon build --policy ...`.
pub fn build(args: &BuildArgs) -> Result<(), Error> {
    // clap's `requires` does not see a flag that is absent but defaulted,
    // so the standalone-only options are checked here.
    if let Some(option) = crate::standalone::standalone_option(&args.standalone) {
        return Err(Error::usage(format!(
            "{option} needs --standalone (try 'ribbon build --help')"
        )));
    }
    let policy = args
        .policy
        .ok_or_else(|| Error::usage("--policy is required (try 'ribbon build --help')"))?;
    let ctx = context(args);
    let keys_path = args
        .keys
        .as_deref()
        .ok_or_else(|| Error::usage("--keys is required (try 'ribbon build --help')"))?;
    let mut builder = FilterBuilder::new(&policy, &ctx).ok_or_else(|| {
        Error::failed(format!(
            "policy {} builds no filter (bits per key below 0.5 mean no filter)",
            policy.id()
        ))
    })?;
    let keys = Keys::read(keys_path, args.hex)?;
    let bar = progress::bar(keys.len() as u64, PROGRESS_MIN_KEYS, "hashing keys");
    for (i, key) in keys.iter().enumerate() {
        builder.add_key(key);
        if i % 65_536 == 0 {
            bar.set_position(i as u64);
        }
    }
    bar.finish_and_clear();
    let entries = builder.estimate_entries_added();
    let planned = builder.kind();
    let filter = builder.finish();
    write_file(&args.out, &filter)?;
    if !args.quiet {
        let first_hash: Vec<u64> = keys.iter().take(1).map(get_slice_hash64).collect();
        let entropy = standard128::entropy(&first_hash);
        note(&summary(
            &policy,
            &ctx,
            planned,
            &filter,
            keys.len(),
            entries,
            entropy,
        ));
    }
    Ok(())
}

/// The build context the arguments describe.
fn context(args: &BuildArgs) -> BuildContext {
    let mut ctx = match (args.flush, args.level) {
        (true, _) => BuildContext::at_level(args.format_version, None),
        (false, Some(level)) if level >= 0 => BuildContext::at_level(args.format_version, Some(level)),
        (false, _) => BuildContext::sst_file_writer(args.format_version),
    };
    ctx.compaction_style = match args.compaction_style {
        CompactionStyleArg::Level => CompactionStyle::Level,
        CompactionStyleArg::Universal => CompactionStyle::Universal,
        CompactionStyleArg::Fifo => CompactionStyle::Fifo,
        CompactionStyleArg::None => CompactionStyle::None,
    };
    ctx.optimize_filters_for_memory = args.optimize_filters_for_memory;
    ctx
}

/// `wrote KIND (POLICY): N keys, E entries, B bytes, X bits/key, expected
/// FP rate F[; why it is not the kind the policy names]`.
fn summary(
    policy: &FilterPolicy,
    ctx: &BuildContext,
    planned: FilterKind,
    filter: &[u8],
    keys: usize,
    entries: usize,
    entropy: u32,
) -> String {
    let written = FilterReader::new(filter).describe();
    let fp = written.expected_fp_rate(entries);
    let mut s = format!("wrote {} ({}): {keys} keys", written.kind_name(), policy.id());
    if entries != keys {
        s += &format!(" ({entries} after collapsing adjacent duplicates, as RocksDB does)");
    }
    s += &format!(", {} bytes", filter.len());
    if entries > 0 {
        s += &format!(", {:.2} bits/key", filter.len() as f64 * 8.0 / entries as f64);
    }
    s += &format!(", expected FP rate {}", fp_rate(fp));
    if let Some(why) = why_not_named(policy, ctx, planned, &written, entries, entropy) {
        s += &format!("; {why}");
    }
    s
}

/// `0.00952 (1 in 105)`, `2.1e-9 (1 in 476190476)`.
fn fp_rate(fp: f64) -> String {
    match fp {
        f if f >= 1e-4 => format!("{f:.5} (1 in {:.0})", 1.0 / f),
        f if f > 0.0 => format!("{f:.2e} (1 in {:.0})", 1.0 / f),
        f => format!("{f}"),
    }
}

/// Why the filter written is not the one the policy names, if it is not.
fn why_not_named(
    policy: &FilterPolicy,
    ctx: &BuildContext,
    planned: FilterKind,
    written: &FilterDescription,
    entries: usize,
    entropy: u32,
) -> Option<String> {
    let wrote = written.kind_name();
    if entries == 0 {
        return Some("no keys: RocksDB writes the empty filter, which matches nothing".into());
    }
    match (policy.kind(), planned, wrote) {
        (PolicyKind::Bloom, FilterKind::LegacyBloom(_), _) => Some(format!(
            "format_version {} is below 5, where RocksDB writes the legacy Bloom filter",
            ctx.format_version
        )),
        (PolicyKind::Ribbon { bloom_before_level }, FilterKind::FastLocalBloom(_), _) => {
            Some(if bloom_before_level == i32::MAX {
                "FastLocalBloom, not Ribbon: bloom_before_level INT_MAX means always Bloom".into()
            } else if ctx.levelish() == -1 {
                format!(
                    "FastLocalBloom, not Ribbon: a flush counts as level -1, below bloom_before_level \
                     {bloom_before_level}"
                )
            } else {
                format!(
                    "FastLocalBloom, not Ribbon: level {} is below bloom_before_level {bloom_before_level}",
                    ctx.levelish()
                )
            })
        }
        (
            _,
            FilterKind::Standard128Ribbon {
                desired_one_in_fp_rate,
                bloom,
            },
            "FastLocalBloom",
        ) => Some(if entries > standard128::MAX_RIBBON_ENTRIES {
            format!(
                "FastLocalBloom, not Ribbon: RocksDB's Ribbon takes at most {} entries",
                standard128::MAX_RIBBON_ENTRIES
            )
        } else if standard128::space_and_slots(entries, desired_one_in_fp_rate, entropy, |n| {
            bloom.calculate_space(n)
        })
        .1 == 0
        {
            format!(
                "FastLocalBloom, not Ribbon: with {entries} entries a Bloom filter is smaller, and \
                 RocksDB writes the smaller of the two"
            )
        } else {
            "FastLocalBloom, not Ribbon: no seed gave a solvable banding, and RocksDB falls back \
             to Bloom"
                .into()
        }),
        _ => None,
    }
}
