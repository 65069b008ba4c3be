//! `ribbon doctor`: why a database's filters are not what its options say,
//! what they cost, and what Ribbon would save (issue 36).
//!
//! [`diagnose`] reads a database directory's MANIFEST ([`crate::db::Version`]),
//! the newest OPTIONS file (or the one given: a configuration about to be
//! deployed, [`config::Config`]) and every live SST's properties and filter
//! ([`crate::SstFile`], [`crate::TableInfo`]), and reports per column
//! family and level:
//!
//! - **what is there**: files, keys, the filter kind each file has, bits
//!   per key, partitioned or not, whole-key or prefix-only, the FP rate the
//!   filter promises and the FP rate measured on absent keys;
//! - **findings**, each with its cause ([`Code`]): the differences from
//!   what the options say (`bloom_before_level`, format_version < 5, the
//!   Bloom fall-back for few keys, Ribbon's fall-back under cache charging,
//!   `optimize_filters_for_hits`, files written under another policy) and
//!   what RocksDB ignores (an incompatible policy name, another prefix
//!   extractor, a prefix-only filter with no prefix extractor configured,
//!   no filter, RocksDB 6.x block-based filters);
//! - **cost**: filter bytes per level and where they live under the table
//!   options (table reader, block cache, pinned), and what RocksDB's
//!   `rocksdb.estimate-table-readers-mem` leaves out;
//! - **what-if**: bytes as `ribbonfilter` or `rust.BalancedRibbon` at each
//!   file's own FP rate ([`whatif`]), and the build-time price from the
//!   project's measured build speeds.
//!
//! The rules are RocksDB 11.8.1's: `table/block_based/filter_policy.cc`
//! (which filter a table gets, through [`ribbon::FilterPolicy`]),
//! `table/block_based/block_based_table_builder.cc` (no filter for the
//! bottommost level under `optimize_filters_for_hits`),
//! `db/version_set.cc` (`Version::IsFilterSkipped`: the last non-empty
//! level's filters are not read under that option) and
//! `table/block_based/block_based_table_reader.cc` (a filter is looked up
//! by the configured policy's compatibility name, and
//! `rocksdb.BuiltinBloomFilter`, which RocksDB 6.x writes to OPTIONS, reads
//! every built-in filter; a prefix filter is used only under the prefix
//! extractor it was built with, by prefix seeks and, when it is
//! prefix-only, by point `Get`s for the key's prefix).
//!
//! What cannot be read is reported as such and never guessed: a file that
//! does not open is listed as unreadable and left out of every sum; a
//! setting the OPTIONS file does not record (cache charging, the bits per
//! key of RocksDB 9.x's `filter_policy=bloomfilter`) is named as unknown.
//! Memory is bounded by one file's filter at a time plus a few numbers per
//! file, whatever the number of keys.

pub mod config;
pub mod whatif;

use crate::db::{DbError, Version};
use crate::{Filter, SstFile, TableInfo};
use config::{CfConfig, Config, ConfiguredPolicy, READ_ONLY_BUILTIN};
use ribbon::rocksdb::policy::{FilterKind, PolicyKind};
use ribbon::rocksdb::standard128;
use ribbon::FilterBuilder;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How to diagnose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DoctorOptions {
    /// Judge this OPTIONS file instead of the database's newest one.
    pub options_file: Option<PathBuf>,
    /// Absent keys queried per file for the measured FP rate (0: none).
    pub samples_per_file: u32,
    /// Seed of the absent keys (the same seed gives the same keys).
    pub seed: u64,
}

impl Default for DoctorOptions {
    fn default() -> Self {
        Self {
            options_file: None,
            samples_per_file: 1000,
            seed: 0x5eed_d0c7_0e11_1a57,
        }
    }
}

/// What a finding is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Code {
    /// Bloom where Ribbon is configured, because of `bloom_before_level`
    /// (flushes count as level -1).
    BloomBeforeLevel,
    /// The legacy Bloom filter: the file's `format_version` is below 5.
    FormatVersionBelow5,
    /// Bloom where Ribbon is configured: too few keys, where RocksDB's
    /// Bloom is smaller.
    BloomFallbackFewKeys,
    /// Bloom where Ribbon is configured with no other cause: Ribbon's
    /// fall-back when filter-construction cache charging refuses the
    /// banding memory (not recorded in OPTIONS), or a `bloom_before_level`
    /// that was higher when the file was written. Reported only when the
    /// configured `bloom_before_level` is known (an OPTIONS file with the
    /// policy's bits and level, such as `--options`); else such a file is
    /// a [`Code::BloomBeforeLevel`] finding whose message names both causes.
    CacheChargingFallback,
    /// `optimize_filters_for_hits`: the last non-empty level has no filter,
    /// or its filters are skipped by `Get`.
    OptimizeFiltersForHits,
    /// A file written under another filter policy or bits per key than
    /// configured.
    PolicyChanged,
    /// A filter RocksDB does not read under the configured policy (its
    /// compatibility name differs, or no policy is configured).
    IncompatiblePolicy,
    /// A filter built under another prefix extractor: prefix seeks skip it,
    /// and point `Get`s too when it is prefix-only.
    OtherPrefixExtractor,
    /// A prefix-only filter (`whole_key_filtering=false`) under no
    /// configured prefix extractor: point `Get`s and prefix seeks skip it.
    /// (Under the extractor it was built with, `Get` asks it for the key's
    /// prefix: no finding; under another one, [`Code::OtherPrefixExtractor`].)
    WholeKeyFilteringFalse,
    /// A file without a filter.
    NoFilter,
    /// RocksDB 6.x's block-based filter, which RocksDB 7 and later ignore.
    BlockBasedIgnored,
    /// The measured FP rate is above the promised one by more than 3 sigma.
    FpAbovePromise,
    /// The filter's bytes disagree with the table's `rocksdb.filter.size`.
    FilterSizeMismatch,
    /// A file or setting that could not be read: left out, not guessed.
    Unreadable,
}

impl Code {
    /// The stable name used in `--json` and the tests.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::BloomBeforeLevel => "bloom_before_level",
            Code::FormatVersionBelow5 => "format_version_below_5",
            Code::BloomFallbackFewKeys => "bloom_fallback_few_keys",
            Code::CacheChargingFallback => "cache_charging_fallback",
            Code::OptimizeFiltersForHits => "optimize_filters_for_hits",
            Code::PolicyChanged => "policy_changed",
            Code::IncompatiblePolicy => "incompatible_policy",
            Code::OtherPrefixExtractor => "other_prefix_extractor",
            Code::WholeKeyFilteringFalse => "whole_key_filtering_false",
            Code::NoFilter => "no_filter",
            Code::BlockBasedIgnored => "block_based_filter_ignored",
            Code::FpAbovePromise => "fp_above_promise",
            Code::FilterSizeMismatch => "filter_size_mismatch",
            Code::Unreadable => "unreadable",
        }
    }

    /// The section of the report: `differs` (why the filter differs from
    /// the options), `ignored` (what RocksDB will not use), `check` (a
    /// measurement that failed) or `unreadable`.
    pub fn section(self) -> &'static str {
        match self {
            Code::BloomBeforeLevel
            | Code::FormatVersionBelow5
            | Code::BloomFallbackFewKeys
            | Code::CacheChargingFallback
            | Code::PolicyChanged => "differs",
            Code::OptimizeFiltersForHits
            | Code::IncompatiblePolicy
            | Code::OtherPrefixExtractor
            | Code::WholeKeyFilteringFalse
            | Code::NoFilter
            | Code::BlockBasedIgnored => "ignored",
            Code::FpAbovePromise | Code::FilterSizeMismatch => "check",
            Code::Unreadable => "unreadable",
        }
    }
}

/// One finding: a code, where (a level, or the column family when
/// `None`), how many files, and one line saying why.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// What.
    pub code: Code,
    /// The level, or `None` for the whole column family.
    pub level: Option<u32>,
    /// Files concerned.
    pub files: u64,
    /// The first few file numbers concerned (at most [`MAX_LISTED_FILES`]).
    pub file_numbers: Vec<u64>,
    /// One line: the cause, and what to do.
    pub message: String,
}

/// How far above the promised FP rate a measurement must be (besides 3
/// sigma) to be a finding: the promise is an estimate.
pub const FP_MODEL_MARGIN: f64 = 1.1;

/// File numbers listed per finding.
pub const MAX_LISTED_FILES: usize = 8;

/// FP-rate measurement: absent keys queried, and how many passed.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Measured {
    /// Absent keys queried.
    pub queries: u64,
    /// Those the filter said "may match" to.
    pub positives: u64,
    /// Sum of the promised FP rates over the queries (expected positives).
    pub expected: f64,
    /// Variance of the positives under the promised rates.
    pub variance: f64,
}

impl Measured {
    /// The measured FP rate.
    pub fn rate(&self) -> Option<f64> {
        (self.queries > 0).then(|| self.positives as f64 / self.queries as f64)
    }
    /// How many sigma the positives are above their expectation.
    pub fn sigma_above(&self) -> f64 {
        let sd = self.variance.sqrt();
        if sd > 0.0 {
            (self.positives as f64 - self.expected) / sd
        } else if self.positives as f64 > self.expected {
            f64::INFINITY
        } else {
            0.0
        }
    }
    fn add(&mut self, o: &Measured) {
        self.queries += o.queries;
        self.positives += o.positives;
        self.expected += o.expected;
        self.variance += o.variance;
    }
}

/// One live SST, as read.
#[derive(Debug, Clone, PartialEq)]
pub struct FileReport {
    /// File number.
    pub number: u64,
    /// Level.
    pub level: u32,
    /// Bytes.
    pub file_size: u64,
    /// `rocksdb.num.entries`.
    pub entries: Option<u64>,
    /// `rocksdb.num.filter_entries` (keys and prefixes added to the filter).
    pub filter_entries: Option<u64>,
    /// The filter family: `Ribbon`, `Bloom` (FastLocalBloom),
    /// `LegacyBloom`, `BlockBasedBloom` (6.x), `BalancedRibbon`, `mixed`,
    /// `none`, `empty`, `unknown`, `obsolete`.
    pub family: String,
    /// Kinds and counts of the filter blocks (`Standard128Ribbon x3, ...`).
    pub kind_detail: String,
    /// `rocksdb.filter.policy`: the policy that wrote it.
    pub policy_name: Option<String>,
    /// The compatibility name the filter is stored under.
    pub compatibility_name: Option<String>,
    /// The table's format_version.
    pub format_version: u32,
    /// Filter bytes (every partition and the partition index).
    pub filter_bytes: u64,
    /// `rocksdb.filter.size`.
    pub filter_size_property: Option<u64>,
    /// Filter bits per filter entry.
    pub bits_per_key: Option<f64>,
    /// Partitions (0: a full filter).
    pub partitions: usize,
    /// Whether whole keys are in the filter.
    pub whole_key_filtering: bool,
    /// The prefix extractor the table was built with.
    pub prefix_extractor: Option<String>,
    /// The FP rate the filter promises (its own estimate).
    pub promised_fp: Option<f64>,
    /// The FP rate measured on absent keys.
    pub measured: Option<Measured>,
    /// Ribbon bytes at the same FP rate (what-if; `None`: not computed).
    pub ribbon_bytes: Option<u64>,
    /// `rust.BalancedRibbon` bytes at the same FP rate.
    pub balanced_bytes: Option<u64>,
    /// Extra build time as RocksDB's Ribbon, in nanoseconds (measured speeds).
    pub ribbon_build_extra_ns: f64,
    /// Extra build time as `rust.BalancedRibbon`, in nanoseconds.
    pub balanced_build_extra_ns: f64,
}

/// Where a level's filter bytes live under the table options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Placement {
    /// Held by the table readers (counted in
    /// `rocksdb.estimate-table-readers-mem`).
    pub table_reader_bytes: u64,
    /// In the block cache and charged to it, not pinned (not counted in
    /// the table-reader estimate).
    pub block_cache_bytes: u64,
    /// In the block cache and pinned (never evicted; not counted in the
    /// table-reader estimate).
    pub pinned_bytes: u64,
    /// Whether the table options were known (else every byte is counted
    /// as held by the readers, RocksDB's default).
    pub known: bool,
}

/// One level of a column family.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LevelReport {
    /// Level.
    pub level: u32,
    /// Files read.
    pub files: u64,
    /// Files that could not be read.
    pub unreadable_files: u64,
    /// Entries (`rocksdb.num.entries`).
    pub entries: u64,
    /// Filter entries.
    pub filter_entries: u64,
    /// Filter bytes.
    pub filter_bytes: u64,
    /// Files per filter family.
    pub families: BTreeMap<String, u64>,
    /// Partitioned files.
    pub partitioned_files: u64,
    /// Files whose filter is prefix-only.
    pub prefix_only_files: u64,
    /// The FP rate promised, averaged over filter entries.
    pub promised_fp: Option<f64>,
    /// The measurement on absent keys, summed over the files.
    pub measured: Measured,
    /// Where the bytes live.
    pub placement: Placement,
    /// Bytes as `ribbonfilter` at the same FP rates (files without a
    /// comparable filter are left out of both sides: see
    /// `what_if_bytes_now`).
    pub ribbon_bytes: u64,
    /// Bytes as `rust.BalancedRibbon`.
    pub balanced_bytes: u64,
    /// Today's bytes of the files the what-if covers.
    pub what_if_bytes_now: u64,
    /// Extra build time as Ribbon, milliseconds.
    pub ribbon_build_extra_ms: f64,
    /// Extra build time as Balanced, milliseconds.
    pub balanced_build_extra_ms: f64,
}

impl LevelReport {
    /// Filter bits per filter entry.
    pub fn bits_per_key(&self) -> Option<f64> {
        (self.filter_entries > 0).then(|| self.filter_bytes as f64 * 8.0 / self.filter_entries as f64)
    }
}

/// One column family.
#[derive(Debug, Clone, PartialEq)]
pub struct CfReport {
    /// Name.
    pub name: String,
    /// Its settings in the OPTIONS file judged (`None`: not there).
    pub config: Option<CfConfig>,
    /// Per level, in order (levels with live files only).
    pub levels: Vec<LevelReport>,
    /// Every live file read.
    pub files: Vec<FileReport>,
    /// Findings.
    pub findings: Vec<Finding>,
    /// What could not be known about the configuration (one line each):
    /// not findings, and nothing is guessed in their place.
    pub notes: Vec<String>,
    /// The `bloom_before_level` that keeps flushes and L0 fast (Bloom) and
    /// gives Ribbon below; `None` when the policy is not Bloom-like or
    /// Ribbon.
    pub suggested_bloom_before_level: Option<i32>,
}

impl CfReport {
    /// Findings with `code`.
    pub fn with_code(&self, code: Code) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(move |f| f.code == code)
    }
    /// Sums over the levels.
    pub fn total(&self) -> LevelReport {
        let mut t = LevelReport::default();
        for l in &self.levels {
            t.files += l.files;
            t.unreadable_files += l.unreadable_files;
            t.entries += l.entries;
            t.filter_entries += l.filter_entries;
            t.filter_bytes += l.filter_bytes;
            t.measured.add(&l.measured);
            t.placement.table_reader_bytes += l.placement.table_reader_bytes;
            t.placement.block_cache_bytes += l.placement.block_cache_bytes;
            t.placement.pinned_bytes += l.placement.pinned_bytes;
            t.placement.known = l.placement.known;
            t.ribbon_bytes += l.ribbon_bytes;
            t.balanced_bytes += l.balanced_bytes;
            t.what_if_bytes_now += l.what_if_bytes_now;
            t.ribbon_build_extra_ms += l.ribbon_build_extra_ms;
            t.balanced_build_extra_ms += l.balanced_build_extra_ms;
            t.partitioned_files += l.partitioned_files;
            t.prefix_only_files += l.prefix_only_files;
            for (k, v) in &l.families {
                *t.families.entry(k.clone()).or_default() += v;
            }
        }
        t
    }
}

/// The whole diagnosis.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// The database directory.
    pub dir: PathBuf,
    /// The MANIFEST read.
    pub manifest: PathBuf,
    /// The OPTIONS file judged (`None`: none found).
    pub options_file: Option<PathBuf>,
    /// Whether `options_file` was given rather than the database's own.
    pub options_given: bool,
    /// `rocksdb_version` of the OPTIONS file.
    pub rocksdb_version: Option<String>,
    /// Absent keys per file.
    pub samples_per_file: u32,
    /// Column families, by id.
    pub column_families: Vec<CfReport>,
}

impl Report {
    /// Every finding, with its column family's name.
    pub fn findings(&self) -> impl Iterator<Item = (&str, &Finding)> {
        self.column_families
            .iter()
            .flat_map(|c| c.findings.iter().map(move |f| (c.name.as_str(), f)))
    }
}

/// Diagnoses the database in `dir`. Errors only when the MANIFEST (or the
/// OPTIONS file given) cannot be read; a live file that cannot be read is an
/// [`Code::Unreadable`] finding.
pub fn diagnose(dir: &Path, how: &DoctorOptions) -> Result<Report, DbError> {
    let meta = std::fs::metadata(dir).map_err(|e| DbError::io(dir, &e))?;
    if !meta.is_dir() {
        return Err(DbError::unsupported(format!(
            "{}: not a database directory (for one SST file use `ribbon sst info`)",
            dir.display()
        )));
    }
    let version = Version::read(dir)?;
    let config = match &how.options_file {
        Some(p) => Config::read_file(p)?,
        None => Config::read_dir(dir)?,
    };
    let mut cfs = Vec::new();
    for cf in version.column_families.values() {
        let cfg = config.column_families.get(&cf.name).cloned();
        cfs.push(diagnose_cf(dir, cf, cfg, config.path.is_some(), how));
    }
    Ok(Report {
        dir: dir.to_path_buf(),
        manifest: version.manifest.clone(),
        options_file: config.path.clone(),
        options_given: how.options_file.is_some(),
        rocksdb_version: config.rocksdb_version.clone(),
        samples_per_file: how.samples_per_file,
        column_families: cfs,
    })
}

/// What one file contributes: its report and its per-file causes.
struct FileFacts {
    report: FileReport,
    causes: Vec<(Code, String)>,
}

/// Findings gathered per (code, level).
#[derive(Default)]
struct Gather {
    map: BTreeMap<(Code, Option<u32>), Finding>,
}

impl Gather {
    fn add(&mut self, code: Code, level: Option<u32>, number: Option<u64>, message: String) {
        let f = self.map.entry((code, level)).or_insert_with(|| Finding {
            code,
            level,
            files: 0,
            file_numbers: Vec::new(),
            message,
        });
        if let Some(n) = number {
            f.files += 1;
            if f.file_numbers.len() < MAX_LISTED_FILES {
                f.file_numbers.push(n);
            }
        }
    }
}

fn diagnose_cf(
    dir: &Path,
    cf: &crate::db::ColumnFamily,
    cfg: Option<CfConfig>,
    have_options: bool,
    how: &DoctorOptions,
) -> CfReport {
    let mut gather = Gather::default();
    let mut notes = Vec::new();
    if cfg.is_none() {
        notes.push(if have_options {
            format!("the OPTIONS file has no section for column family {:?}: its configured filter is unknown, only what is there is reported", cf.name)
        } else {
            "no OPTIONS file: the configured filter is unknown, only what is there is reported".to_string()
        });
    }
    if let Some(c) = &cfg {
        match &c.filter_policy {
            None => notes.push(
                "the OPTIONS file does not say filter_policy: the configured filter is unknown".to_string(),
            ),
            Some(ConfiguredPolicy::NameOnly(n)) => notes.push(format!(
                "filter_policy={n}: the OPTIONS file records the policy's name only (as RocksDB 9.x to 11.x write it), not its bits per key nor bloom_before_level; bits per key are compared between files instead (give --options FILE with filter_policy=NAME:BITS[:LEVEL] to judge against a configuration)"
            )),
            Some(ConfiguredPolicy::Unknown(n)) => notes.push(format!(
                "filter_policy={n} is not a policy this tool knows (an application's own): RocksDB reads the filters stored under its compatibility name, taken here to be its name (RocksDB's default), and this tool cannot query them, so their FP rate is not measured"
            )),
            Some(ConfiguredPolicy::ReadOnlyBuiltin) => notes.push(format!(
                "filter_policy={READ_ONLY_BUILTIN}: what RocksDB 6.x writes for any built-in Bloom policy set in code (its bits per key are not recorded); RocksDB 7 and later, loading these options as they are, read every built-in filter and build none for new files"
            )),
            _ => {}
        }
    }
    let empty = CfConfig::default();
    let c = cfg.as_ref().unwrap_or(&empty);
    let last_level = cf.files.values().map(|f| f.level).max();
    let mut levels: BTreeMap<u32, LevelReport> = BTreeMap::new();
    let mut files = Vec::new();
    let mut changed = Vec::new();
    for f in cf.files.values() {
        let level = levels.entry(f.level).or_insert_with(|| LevelReport {
            level: f.level,
            ..LevelReport::default()
        });
        match read_file(dir, f, c, last_level, how) {
            Ok(facts) => {
                let r = &facts.report;
                level.files += 1;
                level.entries += r.entries.unwrap_or(0);
                let fe = r.filter_entries.or(r.entries).unwrap_or(0);
                if r.filter_bytes > 0 {
                    level.filter_entries += fe;
                }
                level.filter_bytes += r.filter_bytes;
                *level.families.entry(r.family.clone()).or_default() += 1;
                if r.partitions > 0 {
                    level.partitioned_files += 1;
                }
                if r.filter_bytes > 0 && !r.whole_key_filtering {
                    level.prefix_only_files += 1;
                }
                if let Some(m) = &r.measured {
                    level.measured.add(m);
                }
                place(&mut level.placement, r, c, cfg.is_some());
                if let (Some(rb), Some(bb)) = (r.ribbon_bytes, r.balanced_bytes) {
                    level.ribbon_bytes += rb;
                    level.balanced_bytes += bb;
                    level.what_if_bytes_now += r.filter_bytes;
                    level.ribbon_build_extra_ms += r.ribbon_build_extra_ns / 1e6;
                    level.balanced_build_extra_ms += r.balanced_build_extra_ns / 1e6;
                }
                for (code, msg) in facts.causes {
                    if code == Code::PolicyChanged {
                        changed.push(f.number);
                    }
                    gather.add(code, Some(f.level), Some(f.number), msg);
                }
                files.push(facts.report);
            }
            Err(e) => {
                level.unreadable_files += 1;
                gather.add(
                    Code::Unreadable,
                    Some(f.level),
                    Some(f.number),
                    format!("left out of every number (not guessed): {e}"),
                );
            }
        }
    }
    // Promised FP averaged by filter entries; the 3-sigma check per level.
    for level in levels.values_mut() {
        let (mut sum, mut weight) = (0.0, 0.0);
        for r in files.iter().filter(|r| r.level == level.level) {
            if let (Some(fp), Some(n)) = (r.promised_fp, r.filter_entries.or(r.entries)) {
                sum += fp * n as f64;
                weight += n as f64;
            }
        }
        level.promised_fp = (weight > 0.0).then(|| sum / weight);
        let m = level.measured;
        // 3 sigma of the binomial, and 10 % above the promise: the promise is
        // an estimate (RocksDB's formulas), and with millions of queries on
        // one filter the binomial sigma is smaller than its error.
        if m.queries > 0 && m.sigma_above() > 3.0 && m.positives as f64 > FP_MODEL_MARGIN * m.expected {
            gather.add(
                Code::FpAbovePromise,
                Some(level.level),
                None,
                format!(
                    "measured FP rate {:.4}% on {} absent keys, above the filters' promise {:.4}% by {:.1} sigma (more than 3)",
                    100.0 * m.rate().unwrap_or(0.0),
                    m.queries,
                    100.0 * m.expected / m.queries as f64,
                    m.sigma_above()
                ),
            );
        }
    }
    let suggested_bloom_before_level = match c.filter_policy.as_ref().and_then(|p| p.rules()) {
        Some(p) => match p.kind() {
            PolicyKind::Bloom | PolicyKind::FastLocalBloom | PolicyKind::LegacyBloom => Some(1),
            PolicyKind::Ribbon { bloom_before_level } if bloom_before_level < 0 => Some(0),
            PolicyKind::Ribbon { bloom_before_level } => Some(bloom_before_level),
            PolicyKind::Standard128Ribbon => Some(0),
        },
        None => None,
    };
    if c.filter_policy.as_ref().is_none_or(|p| p.rules().is_none()) {
        bits_between_files(&files, &changed, &mut gather);
    }
    let mut findings: Vec<Finding> = gather.map.into_values().collect();
    findings.sort_by_key(|f| (f.level.map_or(-1, i64::from), f.code));
    CfReport {
        name: cf.name.clone(),
        config: cfg,
        levels: levels.into_values().collect(),
        files,
        findings,
        notes,
        suggested_bloom_before_level,
    }
}

/// Files at least this large (filter entries) have bits per key close
/// enough to their policy's to be compared between files.
const MIN_KEYS_TO_COMPARE_BITS: u64 = 1000;

/// When the configured bits per key are unknown (the OPTIONS file names
/// the policy only): a full Bloom filter whose bits per key differ by more
/// than 15 % from the newest file's of the same policy and kind was written
/// under other bits per key.
fn bits_between_files(files: &[FileReport], changed: &[u64], gather: &mut Gather) {
    let comparable = |r: &&FileReport| {
        matches!(r.family.as_str(), "Bloom" | "LegacyBloom")
            && r.partitions == 0
            && r.filter_entries.or(r.entries).unwrap_or(0) >= MIN_KEYS_TO_COMPARE_BITS
            && r.bits_per_key.is_some()
            && r.policy_name.is_some()
    };
    let mut newest: BTreeMap<(String, String), &FileReport> = BTreeMap::new();
    for r in files.iter().filter(comparable) {
        let k = (r.policy_name.clone().unwrap_or_default(), r.family.clone());
        if newest.get(&k).is_none_or(|n| r.number > n.number) {
            newest.insert(k, r);
        }
    }
    for r in files.iter().filter(comparable) {
        if changed.contains(&r.number) {
            continue;
        }
        let k = (r.policy_name.clone().unwrap_or_default(), r.family.clone());
        let Some(reference) = newest.get(&k) else { continue };
        let (a, b) = (
            r.bits_per_key.unwrap_or(0.0),
            reference.bits_per_key.unwrap_or(0.0),
        );
        if b > 0.0 && ((a - b) / b).abs() > 0.15 {
            gather.add(
                Code::PolicyChanged,
                Some(r.level),
                Some(r.number),
                format!(
                    "{a:.2} bits/key, but the newest {} file ({:06}) has {b:.2}: written under other bits per key",
                    r.policy_name.as_deref().unwrap_or("?"),
                    reference.number
                ),
            );
        }
    }
}

/// Where a file's filter lives: RocksDB's `BlockBasedTable::Open`
/// (`PrefetchIndexAndFilterBlocks`) and `metadata_cache_options`.
fn place(p: &mut Placement, r: &FileReport, c: &CfConfig, known: bool) {
    p.known = known;
    if r.filter_bytes == 0 {
        return;
    }
    let cache = c.cache_index_and_filter_blocks.unwrap_or(false) && !c.no_block_cache.unwrap_or(false);
    let l0 = r.level == 0;
    let pinning = |tier: Option<&str>, legacy: bool| match tier.unwrap_or("kFallback") {
        "kAll" => true,
        "kFlushedAndSimilar" => l0,
        "kNone" => false,
        _ => legacy,
    };
    if r.partitions > 0 {
        // Partitions always go through the block cache (unless there is
        // none); the top-level index is small and left with the reader.
        if c.no_block_cache.unwrap_or(false) {
            p.table_reader_bytes += r.filter_bytes;
        } else if pinning(
            c.partition_pinning.as_deref(),
            l0 && c.pin_l0_filter_and_index_blocks_in_cache.unwrap_or(false),
        ) {
            p.pinned_bytes += r.filter_bytes;
        } else {
            p.block_cache_bytes += r.filter_bytes;
        }
    } else if !cache {
        p.table_reader_bytes += r.filter_bytes;
    } else if pinning(
        c.unpartitioned_pinning.as_deref(),
        l0 && c.pin_l0_filter_and_index_blocks_in_cache.unwrap_or(false),
    ) {
        p.pinned_bytes += r.filter_bytes;
    } else {
        p.block_cache_bytes += r.filter_bytes;
    }
}

/// Deterministic absent keys: 16 pseudo-random bytes each (SplitMix64),
/// with a marker no RocksDB key of this tool's tests has; a key of the
/// database matching one is a 2^-128 event.
pub fn absent_keys(seed: u64, count: u32) -> Vec<[u8; 20]> {
    let mut s = seed;
    let mut next = || {
        s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    (0..count)
        .map(|_| {
            let mut k = [0u8; 20];
            k[..8].copy_from_slice(&next().to_le_bytes());
            k[8..16].copy_from_slice(&next().to_le_bytes());
            k[16..].copy_from_slice(b"\xffrdx");
            k
        })
        .collect()
}

fn read_file(
    dir: &Path,
    f: &crate::db::FileMeta,
    c: &CfConfig,
    last_level: Option<u32>,
    how: &DoctorOptions,
) -> Result<FileFacts, String> {
    if f.path_id != 0 {
        return Err(format!(
            "file {} is in db_paths[{}], which is not the database directory",
            f.number, f.path_id
        ));
    }
    let path = crate::db::sst_path(dir, f.number);
    let len = crate::db::check_regular_file(&path).map_err(|e| e.to_string())?;
    if len != f.file_size {
        return Err(format!(
            "{}: {len} bytes, but the MANIFEST says {}",
            path.display(),
            f.file_size
        ));
    }
    let sst = SstFile::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let info = TableInfo::new(&sst);
    let family = family(&sst, &info);
    let compatibility_name = sst.filter_block_name().map(|n| {
        n.trim_start_matches(crate::filter::FULL_FILTER_PREFIX)
            .trim_start_matches(crate::filter::PARTITIONED_FILTER_PREFIX)
            .trim_start_matches(crate::filter::OBSOLETE_FILTER_PREFIX)
            .to_string()
    });
    let filter_entries = info.num_filter_entries.filter(|&n| n > 0).or(info.num_entries);
    let measured = (how.samples_per_file > 0
        && info.whole_key_filtering
        && matches!(sst.filter(), Filter::Full { .. } | Filter::Partitioned { .. })
        && info.expected_fp_rate.is_some())
    .then(|| {
        let fp = info.expected_fp_rate.unwrap_or(0.0);
        let keys = absent_keys(
            how.seed ^ f.number.wrapping_mul(0x2545_f491_4f6c_dd1d),
            how.samples_per_file,
        );
        let positives = sst.key_may_match_many(&keys).iter().filter(|&&b| b).count() as u64;
        let q = keys.len() as f64;
        Measured {
            queries: keys.len() as u64,
            positives,
            expected: q * fp,
            variance: q * fp * (1.0 - fp),
        }
    });
    let mut report = FileReport {
        number: f.number,
        level: f.level,
        file_size: f.file_size,
        entries: info.num_entries,
        filter_entries: info.num_filter_entries,
        family: family.to_string(),
        kind_detail: info.filter_kind.clone(),
        policy_name: info.policy_name.clone().filter(|n| !n.is_empty()),
        compatibility_name,
        format_version: info.format_version,
        filter_bytes: info.filter_bytes,
        filter_size_property: info.filter_size_property,
        bits_per_key: info.bits_per_filter_entry.or(info.bits_per_table_entry),
        partitions: info.partitions,
        whole_key_filtering: info.whole_key_filtering,
        prefix_extractor: info.prefix_extractor.clone(),
        promised_fp: info.expected_fp_rate,
        measured,
        ribbon_bytes: None,
        balanced_bytes: None,
        ribbon_build_extra_ns: 0.0,
        balanced_build_extra_ns: 0.0,
    };
    what_if(&mut report, filter_entries);
    let causes = causes(&report, &sst, c, last_level);
    Ok(FileFacts { report, causes })
}

/// The filter family of a table (`TableInfo::family`, plus Balanced).
fn family(sst: &SstFile, info: &TableInfo) -> &'static str {
    if sst.filter().family() == ribbon::Family::BalancedRibbon && matches!(info.family(), "empty" | "mixed") {
        return "BalancedRibbon";
    }
    info.family()
}

/// Fills the what-if for one file: Ribbon and Balanced bytes at the file's
/// own promised FP rate, for the Bloom and Ribbon filters RocksDB reads.
fn what_if(r: &mut FileReport, filter_entries: Option<u64>) {
    let (Some(n), Some(fp)) = (filter_entries, r.promised_fp) else {
        return;
    };
    if n == 0 || r.filter_bytes == 0 {
        return;
    }
    let speed = whatif::speed_for(n);
    let balanced_ns = whatif::balanced_speed_for(n);
    match r.family.as_str() {
        "Bloom" | "LegacyBloom" => {
            r.ribbon_bytes = whatif::ribbon_bytes(n, fp);
            r.balanced_bytes = whatif::balanced_bytes(n, fp);
            r.ribbon_build_extra_ns = n as f64 * (speed.ribbon_ns - speed.bloom_ns);
            r.balanced_build_extra_ns = n as f64 * (balanced_ns - speed.bloom_ns);
        }
        "Ribbon" | "mixed" => {
            r.ribbon_bytes = Some(r.filter_bytes);
            r.balanced_bytes = whatif::balanced_bytes(n, fp).map(|b| b.min(r.filter_bytes));
            r.balanced_build_extra_ns = n as f64 * (balanced_ns - speed.ribbon_ns);
        }
        _ => {}
    }
    if r.ribbon_bytes.is_none() || r.balanced_bytes.is_none() {
        r.ribbon_bytes = None;
        r.balanced_bytes = None;
        r.ribbon_build_extra_ns = 0.0;
        r.balanced_build_extra_ns = 0.0;
    }
}

/// The family a [`FilterKind`] writes for `n` filter entries: `Some(fam)`
/// when certain, with Ribbon's few-keys fall-back decided for both
/// extremes of the key-set entropy (`None`: it depends on the keys).
fn written_family(kind: FilterKind, n: u64) -> Option<&'static str> {
    match kind {
        FilterKind::LegacyBloom(_) => Some("LegacyBloom"),
        FilterKind::FastLocalBloom(_) => Some("Bloom"),
        FilterKind::Standard128Ribbon {
            desired_one_in_fp_rate,
            bloom,
        } => {
            let falls_back = |entropy| {
                standard128::space_and_slots(n as usize, desired_one_in_fp_rate, entropy, |k| {
                    bloom.calculate_space(k)
                })
                .1 == 0
            };
            match (falls_back(0), falls_back(u32::MAX)) {
                (true, true) => Some("Bloom"),
                (false, false) => Some("Ribbon"),
                _ => None,
            }
        }
    }
}

/// Whether RocksDB, under the configured `policy`, reads a filter stored
/// under `compatibility_name` that this tool does not know, written by the
/// policy named `written_by` (`rocksdb.filter.policy`). A known policy
/// reads its own family only; an application's own policy is taken to read
/// the family of its name (RocksDB's default `CompatibilityName()` is
/// `Name()`), or the one it wrote itself.
fn reads_custom_family(
    policy: &ConfiguredPolicy,
    compatibility_name: &str,
    written_by: Option<&str>,
) -> bool {
    match policy {
        ConfiguredPolicy::Unknown(_) => policy
            .name()
            .is_some_and(|ours| ours == compatibility_name || written_by == Some(ours.as_str())),
        p => p.compatibility_name() == Some(compatibility_name),
    }
}

fn policy_name_eq(a: &str, b: &str) -> bool {
    let norm = |s: &str| match s {
        "rocksdb.BloomFilter" => "bloomfilter".to_string(),
        "rocksdb.RibbonFilter" => "ribbonfilter".to_string(),
        s => s.to_string(),
    };
    norm(a) == norm(b)
}

/// Every cause that applies to one file.
fn causes(r: &FileReport, sst: &SstFile, c: &CfConfig, last_level: Option<u32>) -> Vec<(Code, String)> {
    let mut out = Vec::new();
    let has_filter = r.filter_bytes > 0 || !matches!(sst.filter(), Filter::None);
    let n = r.filter_entries.filter(|&n| n > 0).or(r.entries).unwrap_or(0);
    let is_last = Some(r.level) == last_level;
    let ofh = c.optimize_filters_for_hits == Some(true);
    if r.filter_bytes > 0 && r.filter_size_property.is_some_and(|p| p != r.filter_bytes) && r.partitions == 0
    {
        out.push((
            Code::FilterSizeMismatch,
            format!(
                "filter block of {} bytes, but rocksdb.filter.size says {}",
                r.filter_bytes,
                r.filter_size_property.unwrap_or(0)
            ),
        ));
    }
    if !has_filter {
        if r.entries == Some(0) || sst.properties().num_data_blocks() == Some(0) {
            // Nothing to filter (range deletions only): RocksDB writes no filter.
            return out; // A file of range deletions only: nothing to filter.
        }
        if ofh && is_last {
            out.push((
                Code::OptimizeFiltersForHits,
                "no filter on the last level: optimize_filters_for_hits=true skips filters for the bottommost level (Gets of absent keys read its index and data)".to_string(),
            ));
        } else {
            let why = match c.filter_policy.as_ref() {
                Some(ConfiguredPolicy::None) => " (filter_policy=nullptr)".to_string(),
                Some(ConfiguredPolicy::ReadOnlyBuiltin) => {
                    format!(" (filter_policy={READ_ONLY_BUILTIN} reads filters but builds none)")
                }
                Some(p) if p.rules().is_some() => format!(
                    " though filter_policy={} builds one: written before it was set",
                    p.id()
                ),
                _ => String::new(),
            };
            out.push((
                Code::NoFilter,
                format!("no filter{why}: every Get and prefix seek reads the index and a data block"),
            ));
        }
        return out;
    }
    // L0's filters are skipped only for the last L0 file: L0 is not flagged.
    if ofh && is_last && r.level > 0 {
        out.push((
            Code::OptimizeFiltersForHits,
            "optimize_filters_for_hits=true: Get skips the filters of the last non-empty level (Version::IsFilterSkipped): their memory buys nothing".to_string(),
        ));
    }
    match r.family.as_str() {
        "BlockBasedBloom" => {
            out.push((
                Code::BlockBasedIgnored,
                "RocksDB 6.x block-based filter: RocksDB 7 and later ignore it (read as no filter) until the file is compacted".to_string(),
            ));
            return out;
        }
        "obsolete" => {
            out.push((
                Code::IncompatiblePolicy,
                format!(
                    "filter stored as {:?}, a block-based filter of a policy other than the built-in one, which RocksDB 7 and later do not read",
                    r.compatibility_name.as_deref().unwrap_or("?")
                ),
            ));
            return out;
        }
        "unknown" => {
            // A family of an application's own policy: RocksDB reads it
            // when the configured policy's compatibility name is the one it
            // is stored under, which this tool can only judge for the
            // policies it knows, and for an unknown one by its name.
            let theirs = r.compatibility_name.as_deref().unwrap_or("?");
            match c.filter_policy.as_ref() {
                Some(p) if reads_custom_family(p, theirs, r.policy_name.as_deref()) => {}
                Some(p) => out.push((
                    Code::IncompatiblePolicy,
                    format!(
                        "filter stored as {theirs:?}, but filter_policy={} reads {}: RocksDB ignores it",
                        p.id(),
                        p.compatibility_name()
                            .map_or("no filter".to_string(), |n| format!("{n:?}"))
                    ),
                )),
                None => {}
            }
            return out;
        }
        _ => {}
    }
    // What RocksDB reads under the configured policy.
    if let Some(p) = &c.filter_policy {
        match (p.compatibility_name(), r.compatibility_name.as_deref()) {
            (None, Some(theirs)) if matches!(p, ConfiguredPolicy::None) => {
                out.push((
                    Code::IncompatiblePolicy,
                    format!(
                        "filter_policy=nullptr: RocksDB reads no filter, so this {theirs} filter is ignored"
                    ),
                ));
                return out;
            }
            (Some(ours), Some(theirs)) if ours != theirs => {
                out.push((
                    Code::IncompatiblePolicy,
                    format!(
                        "filter stored as {theirs:?}, but filter_policy={} reads {ours:?}: RocksDB ignores it",
                        p.id()
                    ),
                ));
                return out;
            }
            _ => {}
        }
    }
    // RocksDB's Get (BlockBasedTable::FullFilterKeyMayMatch) asks a
    // prefix-only filter for the key's prefix when the configured prefix
    // extractor is the one the table was built with (and the key is in its
    // domain); a prefix seek uses any filter only under that extractor.
    let theirs = r
        .prefix_extractor
        .as_deref()
        .filter(|p| !p.is_empty() && *p != "nullptr");
    // `None`: the OPTIONS file does not say; `Some(None)`: no extractor.
    let configured = c
        .prefix_extractor
        .as_deref()
        .map(|p| Some(p).filter(|p| !p.is_empty() && *p != "nullptr"));
    match configured {
        Some(None) if !r.whole_key_filtering => out.push((
            Code::WholeKeyFilteringFalse,
            "whole_key_filtering=false and no prefix_extractor configured: point Gets and prefix seeks skip this prefix-only filter".to_string(),
        )),
        Some(Some(ours)) if theirs != Some(ours) => {
            let skipped_by = if r.whole_key_filtering {
                "prefix seeks do not use this filter"
            } else {
                "point Gets and prefix seeks skip this prefix-only filter"
            };
            out.push((
                Code::OtherPrefixExtractor,
                format!(
                    "built under prefix extractor {}, configured {ours}: {skipped_by}",
                    theirs.unwrap_or("none")
                ),
            ));
        }
        _ => {}
    }
    // Why it differs from what the options say.
    let Some(policy) = c.filter_policy.as_ref() else {
        return out;
    };
    // Under the read-only policy the one that wrote the files was set in
    // code and is not recorded: nothing to compare the files with.
    let written_name = r
        .policy_name
        .as_deref()
        .filter(|_| *policy != ConfiguredPolicy::ReadOnlyBuiltin);
    if let (Some(theirs), Some(ours)) = (written_name, policy.name()) {
        if !policy_name_eq(theirs, &ours) {
            out.push((
                Code::PolicyChanged,
                format!(
                    "written by policy {theirs}, configured {}: it keeps its {} filter until compacted",
                    policy.id(),
                    r.family
                ),
            ));
            return out;
        }
    }
    if r.family == "LegacyBloom" && r.format_version < 5 {
        out.push((
            Code::FormatVersionBelow5,
            format!(
                "format_version={} < 5: the legacy Bloom filter (slower, and a higher FP rate than FastLocalBloom at the same bits/key); set format_version >= 5",
                r.format_version
            ),
        ));
        return out;
    }
    // The rules: the configured ones, or, when the OPTIONS file names the
    // policy only, its kind with the file's own bits per key (for the
    // few-keys rule) and RocksDB's default bloom_before_level (0), both
    // marked unknown: no size is judged and the messages say so.
    let (rules, known) = match policy.rules() {
        Some(p) => (p, true),
        None => {
            let kind = match policy.name().as_deref() {
                Some("bloomfilter") | Some("rust.BloomFilter") => PolicyKind::Bloom,
                Some("ribbonfilter")
                | Some("rust.RibbonFilter")
                | Some(ribbon::plugin::balanced_policy::NAME) => PolicyKind::Ribbon {
                    bloom_before_level: 0,
                },
                _ => return out,
            };
            let bits = r
                .bits_per_key
                .filter(|b| b.is_finite())
                .unwrap_or(10.0)
                .clamp(1.0, 99.0);
            (ribbon::FilterPolicy::new(kind, bits), false)
        }
    };
    // The contexts that could have written a file now at this level: a
    // flush, or a compaction at this level or above (then moved down).
    let mut contexts = vec![(None, c.build_context(None))];
    for l in 0..=r.level as i32 {
        contexts.push((Some(l), c.build_context(Some(l))));
    }
    let here = if r.level == 0 {
        contexts[0].1
    } else {
        c.build_context(Some(r.level as i32))
    };
    let Some(kind_here) = rules.filter_kind(&here) else {
        return out;
    };
    let expected_here = written_family(kind_here, n);
    let is_bloom = r.family == "Bloom";
    let ribbon_like = matches!(r.family.as_str(), "Ribbon" | "mixed" | "BalancedRibbon");
    let ribbon_policy = matches!(
        rules.kind(),
        PolicyKind::Ribbon { .. } | PolicyKind::Standard128Ribbon
    );
    if is_bloom && ribbon_policy {
        let bbl = policy.bloom_before_level().unwrap_or(0);
        let by_level = contexts
            .iter()
            .find(|(_, ctx)| matches!(rules.filter_kind(ctx), Some(FilterKind::FastLocalBloom(_))));
        let ribbon_kind = FilterKind::Standard128Ribbon {
            desired_one_in_fp_rate: rules.bits_per_key().desired_one_in_fp_rate(),
            bloom: ribbon::rocksdb::bloom::FastLocalBloomBuilder::new(
                rules.bits_per_key().millibits_per_key(),
            ),
        };
        if written_family(ribbon_kind, n) != Some("Ribbon") {
            // Bloom whatever bloom_before_level says.
            out.push((
                Code::BloomFallbackFewKeys,
                format!("Bloom, not Ribbon: {n} keys are too few, and RocksDB's Bloom is the smaller filter for them"),
            ));
        } else if !known {
            let message = if r.level == 0 {
                "Bloom, not Ribbon: flushes get FastLocalBloom under bloom_before_level >= 0 (RocksDB's default 0; the OPTIONS file does not record it), unless Ribbon fell back under filter-construction cache charging (give --options with filter_policy=ribbonfilter:BITS:LEVEL to tell them apart)".to_string()
            } else {
                format!(
                    "Bloom, not Ribbon, for {n} keys at level {}: flushed as Bloom (bloom_before_level >= 0, RocksDB's default) and moved down, or written when bloom_before_level was above {} (the OPTIONS file does not record it), or Ribbon fell back under filter-construction cache charging (give --options with filter_policy=ribbonfilter:BITS:LEVEL to tell them apart)",
                    r.level, r.level
                )
            };
            out.push((Code::BloomBeforeLevel, message));
        } else if let Some((l, _)) = by_level {
            let at = match l {
                None => "flushes (level -1)".to_string(),
                Some(l) if *l == r.level as i32 => format!("level {l}"),
                Some(l) => format!("level {l}, moved down since"),
            };
            out.push((
                Code::BloomBeforeLevel,
                format!(
                    "Bloom, not Ribbon: bloom_before_level={bbl} gives FastLocalBloom to files written at {at} (fast flushes; Ribbon from level {bbl} down)"
                ),
            ));
        } else {
            out.push((
                Code::CacheChargingFallback,
                format!(
                    "Bloom, not Ribbon, for {n} keys at level {}: Ribbon's fall-back when filter-construction cache charging (cache_usage_options, not recorded in OPTIONS) refuses the banding memory, or bloom_before_level was higher when it was written",
                    r.level
                ),
            ));
        }
        return out;
    }
    if ribbon_like && !ribbon_policy {
        out.push((
            Code::PolicyChanged,
            format!(
                "a Ribbon filter, but filter_policy={} writes {}: written under another policy",
                policy.id(),
                expected_here.unwrap_or("Bloom")
            ),
        ));
        return out;
    }
    if known && r.family == "Ribbon" && expected_here == Some("Bloom") && ribbon_policy {
        // Ribbon where the rules say Bloom now: bloom_before_level was
        // lower when it was written (it is a mutable option).
        let ribbon_anywhere = contexts
            .iter()
            .any(|(_, ctx)| rules.filter_kind(ctx).and_then(|k| written_family(k, n)) != Some("Bloom"));
        if !ribbon_anywhere {
            out.push((
                Code::PolicyChanged,
                format!(
                    "Ribbon, though filter_policy={} gives this level Bloom: written under a lower bloom_before_level",
                    policy.id()
                ),
            ));
            return out;
        }
    }
    // Same kind: compare the size with what the configured bits per key give.
    if known && r.partitions == 0 && n > 0 && expected_here == Some(r.family.as_str()) {
        let expected = FilterBuilder::for_kind(kind_here).calculate_space(n as usize) as f64;
        let actual = r.filter_bytes as f64;
        if (actual - expected).abs() > (expected * 0.03).max(64.0) {
            out.push((
                Code::PolicyChanged,
                format!(
                    "{} bytes for {n} keys ({:.2} bits/key), but filter_policy={} gives {} ({:.2} bits/key): written under other bits per key",
                    r.filter_bytes,
                    actual * 8.0 / n as f64,
                    policy.id(),
                    expected as u64,
                    expected * 8.0 / n as f64
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_keys_are_deterministic_and_distinct() {
        let a = absent_keys(1, 100);
        assert_eq!(a, absent_keys(1, 100));
        assert_ne!(a, absent_keys(2, 100));
        let mut s = a.clone();
        s.sort();
        s.dedup();
        assert_eq!(s.len(), 100);
    }

    #[test]
    fn ribbon_falls_back_to_bloom_for_few_keys_only() {
        let p = ribbon::FilterPolicy::ribbon(10.0, -1);
        let k = p.filter_kind(&ribbon::BuildContext::default()).unwrap();
        assert_eq!(written_family(k, 10), Some("Bloom"));
        assert_eq!(written_family(k, 100_000), Some("Ribbon"));
    }

    #[test]
    fn measured_sigma() {
        let m = Measured {
            queries: 10_000,
            positives: 100,
            expected: 100.0,
            variance: 99.0,
        };
        assert_eq!(m.sigma_above(), 0.0);
        let m = Measured { positives: 140, ..m };
        assert!(m.sigma_above() > 3.0);
    }
}
