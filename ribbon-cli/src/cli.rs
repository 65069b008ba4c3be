//! The command line, declared with clap: every subcommand has `--help`,
//! options take `--opt VALUE` or `--opt=VALUE`, and `-` names standard input
//! (or standard output for `--out`).

use clap::{ArgAction, Args, Parser, Subcommand, ValueEnum};
use ribbon::rocksdb::policy::FilterPolicy;
use std::path::PathBuf;

pub(crate) const KEYS_HELP: &str = "\
A keys file has one key per line. In text mode a line's bytes are the key, without a trailing \
carriage return (CRLF and LF files give the same keys; use --hex for a key that ends in \\r). \
With --hex each line is the key in hex and an empty line is the empty key. '-' reads standard input.";

const POLICY_HELP: &str = "\
POLICY is a RocksDB filter policy id: ribbonfilter:BITS[:BLOOM_BEFORE_LEVEL], bloomfilter:BITS, \
rocksdb.internal.Standard128RibbonFilter:BITS, rocksdb.internal.FastLocalBloomFilter:BITS, \
rocksdb.internal.LegacyBloomFilter:BITS, or rocks-bridge's rust.RibbonFilter:BITS[:BLOOM_BEFORE_LEVEL] \
and rust.BloomFilter:BITS (the same bytes as ribbonfilter and bloomfilter).";

/// Build, query and inspect RocksDB's filters (Standard128 Ribbon,
/// FastLocalBloom, legacy Bloom) and standalone Ribbon filters, in pure Rust.
#[derive(Debug, Parser)]
#[command(name = "ribbon", version, propagate_version = true, max_term_width = 100)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build the filter block RocksDB writes for a set of keys (or a standalone Ribbon filter, with --standalone)
    #[command(after_help = format!("{POLICY_HELP}\n\n{KEYS_HELP}"))]
    Build(Box<BuildArgs>),
    /// Query a filter file: prints 1 (may match) or 0 (definitely not) per key
    #[command(after_help = KEYS_HELP)]
    Query(QueryArgs),
    /// Describe a filter file (a RocksDB filter block or a standalone Ribbon filter)
    Info(InfoArgs),
    /// Read the filters inside RocksDB SST files
    #[command(subcommand)]
    Sst(SstCommand),
    /// Which keys differ between two key sets (keys files, SST files, databases), from small sketches
    #[command(subcommand)]
    Reconcile(crate::reconcile::ReconcileCommand),
    /// Read a RocksDB database directory (MANIFEST, WAL, SST files) without RocksDB
    #[command(subcommand)]
    Db(crate::db::DbCommand),
    /// Check an implementation of RocksDB's filter formats against the conformance vectors
    #[command(after_help = CONFORMANCE_HELP)]
    Conformance(ConformanceArgs),
    /// Write an HTML page that replays a Ribbon construction step by step (banding, back-substitution, queries)
    #[command(after_help = VIZ_HELP)]
    Viz(VizArgs),
    /// Sharded filter files for key sets larger than memory: build (external bucketing), query, info, gen, bench
    #[command(subcommand)]
    Big(crate::big::BigCommand),
    /// Why a database's filters are not what its options say, what they cost, and what Ribbon would save
    #[command(after_help = crate::doctor::DOCTOR_HELP)]
    Doctor(crate::doctor::DoctorArgs),
}

const VIZ_HELP: &str = "\
The page is one self-contained file (open it from disk, no network). It replays what the ribbon crate's \
banding and back-substitution did for these keys, recorded step by step: each key is one row of the \
coefficient matrix (start, W coefficients, R result bits; first coefficient one, no smash); failed seeds \
are shown and retried. Defaults are the classic drawing: 48 random keys, 64 columns, width 12, 1 result bit.";

/// `ribbon viz`.
#[derive(Debug, Args)]
pub struct VizArgs {
    /// The keys, one per line ('-': standard input; at most 256) [default: --random 48]
    #[arg(long, value_name = "FILE", conflicts_with_all = ["random", "seed"])]
    pub keys: Option<PathBuf>,
    /// Keys are hex, one per line
    #[arg(long, requires = "keys")]
    pub hex: bool,
    /// Draw N random keys (6 hex digits each)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=256))]
    pub random: Option<u32>,
    /// Seed of the random keys
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub seed: u64,
    /// Slots: columns of the matrix (at least the width)
    #[arg(long, value_name = "M", default_value_t = 64, value_parser = clap::value_parser!(u32).range(2..=256))]
    pub columns: u32,
    /// Ribbon width: coefficients per key
    #[arg(long, value_name = "W", default_value_t = 12, value_parser = clap::value_parser!(u32).range(2..=32))]
    pub width: u32,
    /// Result (fingerprint) bits per key: FP rate 2^-R
    #[arg(long, value_name = "R", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=8))]
    pub result_bits: u32,
    /// Hashing seeds to try (0, 1, ...) before giving up
    #[arg(long, value_name = "N", default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub max_seeds: u32,
    /// Where to write the page ('-': standard output)
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

const CONFORMANCE_HELP: &str = "\
COMMAND runs as `sh -c 'COMMAND \"$@\"' sh ARGS...` with the arguments of `ribbon build`, `ribbon query` \
and `ribbon sst query`: build --policy P --format-version N (--level L | --flush) \
[--optimize-filters-for-memory false] --keys FILE --hex --out FILTER; query --filter FILTER --keys FILE --hex \
(one 1 or 0 per line); sst query FILE.sst --keys FILE --hex. Built filters must be RocksDB's bytes and \
answers RocksDB's answers. Exit code 1 when any check fails. conformance/v1/README.md describes the vectors.";

/// `ribbon conformance`.
#[derive(Debug, Args)]
pub struct ConformanceArgs {
    /// The implementation under test: a shell command (it may hold arguments), e.g. 'ribbon' or 'java -jar my.jar'
    #[arg(long = "impl", value_name = "COMMAND")]
    pub implementation: String,
    /// Only read: query RocksDB's filter blocks and SST files, build nothing
    #[arg(long)]
    pub reader_only: bool,
    /// Skip the SST files (for implementations without `sst query`)
    #[arg(long)]
    pub no_sst: bool,
    /// Only these features (repeat or separate with commas): hash, bloom, legacy-bloom, ribbon or ribbon-BITS, fallback, policy, sst, sst-rocksdb6
    #[arg(long, value_name = "FEATURE", value_delimiter = ',')]
    pub only: Vec<String>,
    /// The vectors directory [default: conformance/v1 of the checkout ribbon was built from]
    #[arg(long, value_name = "DIR")]
    pub vectors: Option<PathBuf>,
    /// Seconds each call of COMMAND may take before it is killed and fails
    #[arg(long, value_name = "SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,
}

/// `ribbon build`.
#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The RocksDB filter policy id (see below)
    #[arg(long, value_name = "POLICY", value_parser = parse_policy,
          required_unless_present = "standalone", conflicts_with = "standalone")]
    pub policy: Option<FilterPolicy>,
    /// The table's format_version (legacy Bloom before 5)
    #[arg(long, value_name = "N", default_value_t = 7, value_parser = parse_format_version,
          conflicts_with = "standalone")]
    pub format_version: i32,
    /// The output level of a compaction (-1: an SstFileWriter file)
    #[arg(long, value_name = "L", allow_negative_numbers = true, conflicts_with_all = ["flush", "standalone"])]
    pub level: Option<i32>,
    /// Build as for a memtable flush (level -1 for bloom_before_level)
    #[arg(long, conflicts_with = "standalone")]
    pub flush: bool,
    /// The column family's compaction style (FIFO and none have no levels: always Ribbon)
    #[arg(long, value_enum, value_name = "STYLE", default_value_t = CompactionStyleArg::Level,
          conflicts_with = "standalone")]
    pub compaction_style: CompactionStyleArg,
    /// BlockBasedTableOptions::optimize_filters_for_memory (true from RocksDB 9.2 on; false reproduces older RocksDB)
    #[arg(long, value_name = "BOOL", default_value_t = true, action = ArgAction::Set, conflicts_with = "standalone")]
    pub optimize_filters_for_memory: bool,
    /// The keys, one per line ('-': standard input)
    #[arg(long, value_name = "FILE", required_unless_present = "from_rocksdb")]
    pub keys: Option<PathBuf>,
    /// Keys are hex, one per line
    #[arg(long)]
    pub hex: bool,
    /// Where to write the filter ('-': standard output)
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Print nothing on standard error on success
    #[arg(long, short)]
    pub quiet: bool,
    /// Standalone Ribbon filter settings.
    #[command(flatten)]
    pub standalone: StandaloneArgs,
}

/// `ribbon build --standalone` settings.
#[derive(Debug, Args)]
#[command(next_help_heading = "Standalone Ribbon filter (--standalone)")]
pub struct StandaloneArgs {
    /// Build a standalone Ribbon filter file instead of a RocksDB filter block
    #[arg(long)]
    pub standalone: bool,
    /// Ribbon width (coefficient bits)
    #[arg(long, value_name = "W", requires = "standalone", value_parser = ["32", "64", "128"])]
    pub width: Option<String>,
    /// Result bits per key (fractional allowed), default 7
    #[arg(long, value_name = "R", requires = "standalone", conflicts_with = "fp_rate")]
    pub bits: Option<f64>,
    /// Target false-positive rate instead of --bits
    #[arg(long, value_name = "P", requires = "standalone")]
    pub fp_rate: Option<f64>,
    /// Homogeneous Ribbon (never fails to build; slightly higher FP rate)
    #[arg(long, requires = "standalone")]
    pub homogeneous: bool,
    /// Balanced Ribbon: soft shards with bumping, under 1% space overhead at
    /// width 64 (format version 2; Standard Ribbon, no smash)
    #[arg(long, requires = "standalone", conflicts_with_all = ["homogeneous", "smash"])]
    pub balanced: bool,
    /// With --balanced: build in bounded memory (the key hashes, the filter
    /// and a few bits per key, for about 1.5x the build time; same bytes)
    #[arg(long, requires = "balanced")]
    pub low_memory: bool,
    /// Smash the starts towards the middle
    #[arg(long, requires = "standalone")]
    pub smash: bool,
    /// Do not force the first coefficient to 1
    #[arg(long, requires = "standalone")]
    pub no_first_coeff_one: bool,
    /// Target chance of a failed seed: one in 2, 20 or 1000
    #[arg(long, value_name = "N", requires = "standalone", value_parser = ["2", "20", "1000"])]
    pub failure_chance: Option<String>,
    /// Slot overhead over the key count (instead of the table's)
    #[arg(long, value_name = "E", requires = "standalone")]
    pub overhead: Option<f64>,
    /// First seed to try
    #[arg(long, value_name = "N", requires = "standalone")]
    pub seed: Option<u32>,
    /// Seeds to try before giving up
    #[arg(long, value_name = "N", requires = "standalone")]
    pub max_seeds: Option<u32>,
    /// Convert a RocksDB Standard128 Ribbon filter block instead of building from keys
    #[arg(long, value_name = "FILTER", requires = "standalone", conflicts_with = "keys")]
    pub from_rocksdb: Option<PathBuf>,
    /// Key count to record with --from-rocksdb
    #[arg(long, value_name = "N", requires = "from_rocksdb")]
    pub num_keys: Option<u64>,
    /// Write RocksDB's filter block format (only for the RocksDB shape: width 128, Standard)
    #[arg(long, requires = "standalone")]
    pub rocksdb: bool,
}

/// The compaction styles `bloom_before_level` distinguishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompactionStyleArg {
    /// Leveled compaction (RocksDB's default)
    Level,
    /// Universal compaction
    Universal,
    /// FIFO compaction (no levels)
    Fifo,
    /// No compaction (no levels)
    None,
}

/// `ribbon query`.
#[derive(Debug, Args)]
pub struct QueryArgs {
    /// The filter file: a RocksDB filter block or a standalone Ribbon filter ('-': standard input)
    #[arg(long, value_name = "FILE")]
    pub filter: PathBuf,
    /// The keys to query, one per line ('-': standard input)
    #[arg(long, value_name = "FILE")]
    pub keys: PathBuf,
    /// Keys are hex, one per line
    #[arg(long)]
    pub hex: bool,
    /// Query in batches (RocksDB's MultiGet path; same answers)
    #[arg(long)]
    pub batch: bool,
}

/// `ribbon info`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// The filter file ('-': standard input)
    #[arg(long, value_name = "FILE")]
    pub filter: PathBuf,
    /// Print one JSON document
    #[arg(long)]
    pub json: bool,
}

/// `ribbon sst ...`.
#[derive(Debug, Subcommand)]
pub enum SstCommand {
    /// Describe the filter of each SST file (a directory: its *.sst files)
    Info {
        /// SST files or directories
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
        /// Print one JSON document (an array with one object per file)
        #[arg(long)]
        json: bool,
    },
    /// Query an SST file's filter as RocksDB's Get does: 1 (may match) or 0 (definitely not) per key
    #[command(after_help = KEYS_HELP)]
    Query {
        /// The SST file
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// The keys (user keys), one per line ('-': standard input)
        #[arg(long, value_name = "FILE")]
        keys: PathBuf,
        /// Keys are hex, one per line
        #[arg(long)]
        hex: bool,
        /// Answer as a prefix seek does (the table's prefix extractor)
        #[arg(long)]
        prefix: bool,
        /// Answer as this RocksDB major version does where versions differ (a block-based filter,
        /// RocksDB before 7.0): 6 asks it per data block as RocksDB 6.x's Get did (the default),
        /// 7 or later ignores it (every key may match)
        #[arg(long, value_name = "VERSION", conflicts_with = "prefix",
              value_parser = clap::value_parser!(u32).range(6..))]
        as_rocksdb: Option<u32>,
        /// Print one JSON object per key, {"key", "may_match"} (JSON Lines)
        #[arg(long)]
        json: bool,
    },
    /// Write an SST file's filter block(s) to files that `ribbon query` reads
    DumpFilter {
        /// The SST file
        #[arg(value_name = "FILE")]
        file: PathBuf,
        /// Output file (partitions: FILE.0, FILE.1, ...; '-': standard output, full filters only)
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Check every block checksum and that every key in the file passes its filter
    Verify {
        /// SST files or directories
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
        /// Print one JSON document (an array with one object per file)
        #[arg(long)]
        json: bool,
    },
}

fn parse_policy(s: &str) -> Result<FilterPolicy, String> {
    s.parse::<FilterPolicy>().map_err(|e| e.to_string())
}

/// A `--format-version`: what `ribbon::check_format_version` accepts (the
/// one owner of the range, shared with the C library and Python).
fn parse_format_version(s: &str) -> Result<i32, String> {
    let v: i64 = s.parse().map_err(|e| format!("{s:?}: {e}"))?;
    ribbon::check_format_version(v).map_err(|e| e.to_string())
}
