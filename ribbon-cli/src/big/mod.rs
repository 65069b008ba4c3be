//! `ribbon big`: sharded filter files for key sets larger than memory
//! (`ribbon::standalone::sharded`): `gen` writes synthetic keys, `build` builds a
//! container from a key stream with external bucketing, `query`, `info`
//! and `bench` read one through a memory map.

mod bench;
mod build;
mod gen;
mod keys;
pub(crate) mod memory;
mod work;

use crate::error::{read_error, shown, Error};
use crate::output::{to_json, Stdout};
use clap::{Args, Subcommand, ValueEnum};
use keys::{for_each_hash_block, KeyFormat};
use ribbon::standalone::sharded::ShardedRef;
use ribbon::standalone::Config;
use std::path::{Path, PathBuf};
use std::time::Instant;

const BIG_HELP: &str = "\
Keys are text lines, hex lines (--hex) or fixed-width binary records (--record-bytes 20 for SHA-1s, \
as the Have I Been Pwned download ships them); '-' reads standard input. A key's shard is the top bits \
of its 64-bit hash; each shard is a standalone Ribbon filter (Balanced, width 64, 7 result bits by \
default), and the file is one versioned, checksummed container of them.";

/// `ribbon big ...`.
#[derive(Debug, Subcommand)]
pub enum BigCommand {
    /// Build one sharded filter file from keys far larger than memory (bucketed on disk, shards built in parallel)
    #[command(after_help = BUILD_HELP)]
    Build(Box<BuildArgs>),
    /// Query a sharded filter file: 1 (may match) or 0 (definitely not) per key
    #[command(after_help = BIG_HELP)]
    Query(QueryArgs),
    /// Describe a sharded filter file
    Info(InfoArgs),
    /// Write deterministic synthetic keys: SHA-1 of the counters START.., as 20-byte records or hex lines
    Gen(GenArgs),
    /// Measure a file built from `big gen` keys 0..N: false negatives, FP rate, query time (the report's numbers)
    Bench(BenchArgs),
    /// Build one shard from its bucket file (`build --stop-after bucketing` writes them): one job of a batch runner
    #[command(after_help = SPREAD_HELP)]
    Shard(ShardArgs),
    /// Assemble shard files (shard 0 first) into one sharded filter file
    #[command(after_help = SPREAD_HELP)]
    Assemble(AssembleArgs),
}

const SPREAD_HELP: &str = "\
To build on several machines: 'ribbon big build ... --stop-after bucketing --work DIR' writes \
DIR/buckets/bNNNNNN.u64 (one per shard, little-endian 64-bit key hashes); run 'ribbon big shard --bucket \
DIR/buckets/bNNNNNN.u64 --index NNNNNN --shard-bits B --out DIR/shards/sNNNNNN.rbn' for each shard on \
any machine (same shard settings everywhere), then 'ribbon big assemble --work DIR --shard-bits B --out \
FILE', or rerun the same 'ribbon big build' (it reuses every shard file present).";

/// The settings of every shard.
#[derive(Debug, Args)]
pub struct ShardSettings {
    /// Kind of shard
    #[arg(long, value_enum, default_value_t = ShardKind::Balanced)]
    pub kind: ShardKind,
    /// Ribbon width
    #[arg(long, value_name = "W", default_value = "64", value_parser = ["32", "64", "128"])]
    pub width: String,
    /// Result bits per key: FP rate 2^-R (fractional allowed)
    #[arg(long, value_name = "R", default_value_t = 7.0)]
    pub bits: f64,
}

impl ShardSettings {
    fn config(&self, command: &str) -> Result<Config, Error> {
        let width: u32 = self.width.parse().map_err(|_| Error::usage("bad --width"))?;
        let config = match self.kind {
            ShardKind::Balanced => Config::balanced(width, self.bits),
            ShardKind::Standard => Config::standard(width, self.bits),
            ShardKind::Homogeneous => Config::homogeneous(width, self.bits),
        };
        config
            .validate()
            .map_err(|e| Error::usage(format!("{e} (try 'ribbon big {command} --help')")))?;
        Ok(config)
    }
}

/// `ribbon big shard`.
#[derive(Debug, Args)]
pub struct ShardArgs {
    /// The shard's bucket file (little-endian 64-bit key hashes)
    #[arg(long, value_name = "FILE")]
    pub bucket: PathBuf,
    /// The shard's index
    #[arg(long, value_name = "I")]
    pub index: usize,
    /// 2^B shards in all
    #[arg(long, value_name = "B", value_parser = clap::value_parser!(u32).range(0..=20))]
    pub shard_bits: u32,
    #[command(flatten)]
    pub settings: ShardSettings,
    /// The shard file to write
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

/// `ribbon big assemble`.
#[derive(Debug, Args)]
pub struct AssembleArgs {
    /// 2^B shards
    #[arg(long, value_name = "B", value_parser = clap::value_parser!(u32).range(0..=20))]
    pub shard_bits: u32,
    /// A build's work directory: its shards/sNNNNNN.rbn files
    #[arg(
        long,
        value_name = "DIR",
        required_unless_present = "shards",
        conflicts_with = "shards"
    )]
    pub work: Option<PathBuf>,
    /// The shard files, shard 0 first
    #[arg(value_name = "SHARD")]
    pub shards: Vec<PathBuf>,
    /// The filter file to write
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

const BUILD_HELP: &str = "\
Work happens in --work DIR (default OUT.work): bucket files of 8 bytes per key, then one file per shard. \
DIR must be absent (the build creates it), empty, or an earlier build's work directory (it holds the \
.ribbon-big-build marker); anything else, a symbolic link included, is refused, and neither the output nor \
the keys may be inside it. A rerun with the same input file, format, shard bits and settings reads the keys \
once more and, if their content is unchanged (XXH3-128 of every byte), reuses the finished bucketing and \
every finished shard, so an interrupted build restarts where it stopped; keys from standard input are never \
reused. On success the build deletes the files it wrote there, by name, and the directories it made, unless \
--keep-work. Building twice from the same keys with the same --shard-bits gives the same bytes, \
whatever --threads (the default shard bits depend on --threads and --memory). \
Shards are independent: --stop-after bucketing, then 'ribbon big shard' per bucket on any machine and \
'ribbon big assemble' (see 'ribbon big shard --help').";

/// The key format options.
#[derive(Debug, Args)]
pub struct KeyArgs {
    /// The keys ('-': standard input)
    #[arg(long, value_name = "FILE")]
    pub keys: PathBuf,
    /// Keys are hex, one per line
    #[arg(long, conflicts_with = "record_bytes")]
    pub hex: bool,
    /// Keys are binary records of N bytes each (20 for SHA-1s)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_048_576))]
    pub record_bytes: Option<u32>,
}

impl KeyArgs {
    fn format(&self) -> KeyFormat {
        KeyFormat::from_args(self.hex, self.record_bytes.map(|n| n as usize))
    }
}

/// The kinds of shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ShardKind {
    /// Balanced Ribbon (least space)
    Balanced,
    /// Standard Ribbon
    Standard,
    /// Homogeneous Ribbon (never fails; higher FP rate)
    Homogeneous,
}

/// `ribbon big build`.
#[derive(Debug, Args)]
pub struct BuildArgs {
    #[command(flatten)]
    pub keys: KeyArgs,
    /// The filter file to write
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Work directory for buckets and shards [default: OUT.work]
    #[arg(long, value_name = "DIR")]
    pub work: Option<PathBuf>,
    /// Memory budget, e.g. 2G or 512M [default: half of the machine's memory]
    #[arg(long, value_name = "SIZE", value_parser = memory::parse_size)]
    pub memory: Option<u64>,
    /// Threads [default: every core]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: Option<u32>,
    /// 2^B shards [default: from the key count and the memory budget]
    #[arg(long, value_name = "B", value_parser = clap::value_parser!(u32).range(0..=20))]
    pub shard_bits: Option<u32>,
    /// Keys expected (to size shards when reading standard input)
    #[arg(long, value_name = "N")]
    pub expected_keys: Option<u64>,
    #[command(flatten)]
    pub settings: ShardSettings,
    /// Stop after this phase, keeping the work directory
    #[arg(long, value_enum, value_name = "PHASE")]
    pub stop_after: Option<build::Phase>,
    /// Keep the work directory after success
    #[arg(long)]
    pub keep_work: bool,
    /// Print the summary as one JSON document on standard output
    #[arg(long)]
    pub json: bool,
    /// Print nothing on standard error on success
    #[arg(long, short)]
    pub quiet: bool,
    /// Testing: fail after building this many shards
    #[arg(long, hide = true, value_name = "N")]
    pub fail_after_shards: Option<usize>,
}

/// `ribbon big query`.
#[derive(Debug, Args)]
pub struct QueryArgs {
    /// The sharded filter file
    #[arg(long, value_name = "FILE")]
    pub filter: PathBuf,
    #[command(flatten)]
    pub keys: KeyArgs,
    /// Do not verify each shard's checksum the first time it is used (for a file verified once with 'ribbon big info --verify' and trusted since)
    #[arg(long)]
    pub no_verify: bool,
}

/// `ribbon big info`.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// The sharded filter file
    #[arg(long, value_name = "FILE")]
    pub filter: PathBuf,
    /// Also read every byte and check every checksum
    #[arg(long)]
    pub verify: bool,
    /// Print one JSON document
    #[arg(long)]
    pub json: bool,
}

/// `ribbon big gen`.
#[derive(Debug, Args)]
pub struct GenArgs {
    /// Number of keys
    #[arg(long, value_name = "N")]
    pub count: u64,
    /// First counter
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub start: u64,
    /// Hex lines instead of 20-byte records
    #[arg(long)]
    pub hex: bool,
    /// Output file ('-': standard output)
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

/// `ribbon big bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The sharded filter file, built from `big gen --count N` keys
    #[arg(long, value_name = "FILE")]
    pub filter: PathBuf,
    /// N: the filter holds keys 0..N of `big gen`
    #[arg(long, value_name = "N")]
    pub members: u64,
    /// Random members to check for false negatives (the first million are timed)
    #[arg(long, value_name = "N", default_value_t = 10_000_000)]
    pub sample: u64,
    /// Non-members to measure the FP rate on
    #[arg(long, value_name = "N", default_value_t = 10_000_000)]
    pub non_members: u64,
}

/// Runs a `ribbon big` subcommand.
pub fn run(cmd: BigCommand) -> Result<(), Error> {
    match cmd {
        BigCommand::Build(args) => build_cmd(&args),
        BigCommand::Query(args) => query(&args),
        BigCommand::Info(args) => info(&args),
        BigCommand::Gen(args) => gen::write(&args.out, args.start, args.count, args.hex),
        BigCommand::Shard(args) => {
            let config = args.settings.config("shard")?;
            if args.index >> args.shard_bits != 0 {
                return Err(Error::usage(format!(
                    "--index {} is not below 2^{} shards (try 'ribbon big shard --help')",
                    args.index, args.shard_bits
                )));
            }
            build::build_one_shard(
                &args.bucket,
                None,
                args.index,
                args.shard_bits,
                &config,
                &args.out,
            )
        }
        BigCommand::Assemble(args) => {
            let shards = match &args.work {
                Some(dir) => (0..1usize << args.shard_bits)
                    .map(|i| build::shard_path(dir, i))
                    .collect(),
                None => args.shards.clone(),
            };
            build::assemble_files(&shards, args.shard_bits, &args.out).map(|_| ())
        }
        BigCommand::Bench(args) => {
            let t = Instant::now();
            let map = map_file(&args.filter)?;
            let view = open(&args.filter, &map)?;
            let open_ms = t.elapsed().as_secs_f64() * 1e3;
            // Every checksum first, so the timed queries verify none.
            view.verify()
                .map_err(|e| Error::failed(format!("{}: sharded filter file: {e}", shown(&args.filter))))?;
            let result = bench::run(&view, open_ms, args.members, args.sample, args.non_members.max(1));
            let mut out = Stdout::new();
            out.line(&to_json(&result)?)?;
            out.finish()
        }
    }
}

fn build_cmd(args: &BuildArgs) -> Result<(), Error> {
    let config = args.settings.config("build")?;
    let threads = args.threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |t| t as usize,
    );
    let work = args.work.clone().unwrap_or_else(|| {
        let mut name = args.out.file_name().map(|n| n.to_os_string()).unwrap_or_default();
        name.push(".work");
        args.out.with_file_name(name)
    });
    if args.out == Path::new("-") {
        return Err(Error::usage(
            "--out must be a file (try 'ribbon big build --help')",
        ));
    }
    let params = build::Params {
        keys: args.keys.keys.clone(),
        format: args.keys.format(),
        out: args.out.clone(),
        work,
        memory: args.memory.unwrap_or_else(memory::default_budget),
        threads,
        shard_bits: args.shard_bits,
        expected_keys: args.expected_keys,
        config,
        keep_work: args.keep_work,
        progress: !args.quiet,
        fail_after_shards: args.fail_after_shards,
        stop_after: args.stop_after,
    };
    let s = build::run(&params)?;
    if args.json {
        let mut out = Stdout::new();
        out.line(&to_json(&s)?)?;
        out.finish()?;
    }
    if let (Some(phase), false) = (&s.stopped_after, args.quiet) {
        crate::output::note(&format!(
            "{} keys in {} shards: stopped after {phase}; work directory kept: {}",
            s.num_keys,
            1u64 << s.shard_bits,
            shown(&params.work)
        ));
    } else if !args.quiet {
        crate::output::note(&format!(
            "{}: {} keys in {} shards, {} bytes, {:.4} bits/key; {:.1} s (bucketing {:.1} s, shards {:.1} s, \
             assembly {:.1} s); peak memory {}; {} shards reused{}",
            s.out,
            s.num_keys,
            1u64 << s.shard_bits,
            s.file_len,
            s.bits_per_key,
            s.total_secs,
            s.bucket_secs,
            s.shard_secs,
            s.assemble_secs,
            s.peak_rss.map_or("unknown".into(), |b| format!("{} MiB", b >> 20)),
            s.shards_reused,
            if s.buckets_reused { ", bucketing reused" } else { "" },
        ));
    }
    Ok(())
}

/// Maps `path` read-only.
fn map_file(path: &Path) -> Result<memmap2::Mmap, Error> {
    let file = crate::input::open_regular(path)?;
    // SAFETY: the map is read-only and private to this process; the file
    // is not changed by this process while mapped. Another process
    // truncating it could fault a read (SIGBUS), as with any mmap; the
    // container's checks cannot rule that out and the docs say so.
    unsafe { memmap2::Mmap::map(&file) }.map_err(|e| read_error(path, e))
}

fn open<'a>(path: &Path, bytes: &'a [u8]) -> Result<ShardedRef<'a>, Error> {
    ShardedRef::from_bytes(bytes)
        .map_err(|e| Error::failed(format!("{}: sharded filter file: {e}", shown(path))))
}

fn query(args: &QueryArgs) -> Result<(), Error> {
    if args.filter == Path::new("-") {
        return Err(Error::usage(
            "--filter must be a file (it is memory-mapped) (try 'ribbon big query --help')",
        ));
    }
    let map = map_file(&args.filter)?;
    let view = if args.no_verify {
        ShardedRef::from_bytes_unverified(&map)
            .map_err(|e| Error::failed(format!("{}: sharded filter file: {e}", shown(&args.filter))))?
    } else {
        open(&args.filter, &map)?
    };
    let mut out = Stdout::new();
    let mut text = Vec::new();
    for_each_hash_block(&args.keys.keys, args.keys.format(), |hashes, _| {
        text.clear();
        for &h in hashes {
            // A shard's checksum is verified the first time it is used.
            let found = view
                .try_contains_hash(h)
                .map_err(|e| Error::failed(format!("{}: sharded filter file: {e}", shown(&args.filter))))?;
            text.extend_from_slice(if found { b"1\n" } else { b"0\n" });
        }
        out.bytes(&text)
    })?;
    out.finish()
}

#[derive(serde::Serialize)]
struct Info {
    file: String,
    format_version: u16,
    num_keys: u64,
    shard_bits: u32,
    num_shards: usize,
    file_len: u64,
    bits_per_key: f64,
    expected_fp_rate: f64,
    shard_width: u32,
    shard_balanced: bool,
    min_shard_keys: u64,
    max_shard_keys: u64,
    verified: bool,
}

fn info(args: &InfoArgs) -> Result<(), Error> {
    let map = map_file(&args.filter)?;
    let view = open(&args.filter, &map)?;
    if args.verify {
        view.verify()
            .map_err(|e| Error::failed(format!("{}: sharded filter file: {e}", shown(&args.filter))))?;
    }
    let shards = (0..view.num_shards()).filter_map(|i| view.shard(i));
    let keys: Vec<u64> = shards.clone().map(|s| s.num_keys()).collect();
    let first = view.shard(0);
    let info = Info {
        file: shown(&args.filter),
        format_version: ribbon::standalone::sharded::format::VERSION,
        num_keys: view.num_keys(),
        shard_bits: view.shard_bits(),
        num_shards: view.num_shards(),
        file_len: view.file_len(),
        bits_per_key: view.bits_per_key(),
        expected_fp_rate: view.expected_fp_rate(),
        shard_width: first.map_or(0, |s| s.width()),
        shard_balanced: first.is_some_and(|s| s.is_balanced()),
        min_shard_keys: keys.iter().copied().min().unwrap_or(0),
        max_shard_keys: keys.iter().copied().max().unwrap_or(0),
        verified: args.verify,
    };
    let mut out = Stdout::new();
    if args.json {
        out.line(&to_json(&info)?)?;
    } else {
        out.line(&format!(
            "sharded Ribbon filter (format {}): {} keys, {} shards (width {}{}), {} bytes, {:.4} bits/key, \
             expected FP rate {:.6}, keys per shard {}..{}{}",
            info.format_version,
            info.num_keys,
            info.num_shards,
            info.shard_width,
            if info.shard_balanced { ", Balanced" } else { "" },
            info.file_len,
            info.bits_per_key,
            info.expected_fp_rate,
            info.min_shard_keys,
            info.max_shard_keys,
            if info.verified {
                "; every checksum verified"
            } else {
                ""
            }
        ))?;
    }
    out.finish()
}
