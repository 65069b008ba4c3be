//! `ribbon big build`: one sharded filter file from a key stream larger
//! than memory, in three restartable phases under one work directory:
//!
//! 1. **bucket**: read the keys block by block (the next block on a thread
//!    of its own), hash them and route them to their shards on every core,
//!    and append each hash to its shard's bucket file (`buckets/bNNNNNN.u64`,
//!    little-endian u64s in input order, so the same bytes whatever the
//!    number of threads) in batches; `buckets/done` records the counts when
//!    the phase is complete;
//! 2. **shards**: build the shards on a rayon pool, as many at once as the
//!    memory budget allows, each written to `shards/sNNNNNN.rbn` through a
//!    temporary file and a rename, so a file there is always complete;
//! 3. **assemble**: verify every shard and write the container
//!    (`ribbon::standalone::sharded`) through a temporary file and a rename.
//!
//! The work directory is the build's own (`super::work`: made by it, or
//! an empty one, never a link; only its files are ever deleted). `job`
//! there describes the input (path and size), key format, shard bits and
//! configuration, and `buckets/done` records the XXH3-128 digest of every
//! byte of the keys bucketed. A rerun with the same job reads the keys
//! again and reuses the finished phase 1 and every finished shard only if
//! their digest is the same; anything else starts over. Standard input
//! cannot be read twice, so its runs always start over.

use super::keys::{estimate_keys, for_each_block_digest, hash_keys, split_keys, InputDigest, KeyFormat};
use super::memory::{peak_rss, Budget};
use super::work::{is_bucket_file, is_shard_file, WorkDir};
use crate::error::{shown, write_error, Error};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;
use ribbon::standalone::sharded::format::SHARD_FILE_HEADER_LEN;
use ribbon::standalone::sharded::{build_shard_file, shard_of, Layout, ShardEntry, MAX_SHARD_BITS};
use ribbon::standalone::Config;
use serde::Serialize;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Estimated bytes of memory per key while a shard is built: its bucket
/// (8), the remixed hashes (8), the builder's copy (8), the banding (a
/// coefficient row and a result row per slot) and the solution. Measured:
/// a process peak of 61 bytes per key of the shards in flight (width 64,
/// Balanced, 3 million keys a shard); width 128 rows are twice as wide.
pub fn shard_bytes_per_key(config: &Config) -> u64 {
    if config.width > 64 {
        96
    } else {
        64
    }
}
/// Keys per shard when memory allows: large enough that per-shard headers
/// cost nothing (under 0.001 bits/key), small enough to build in seconds.
const TARGET_SHARD_KEYS: u64 = 1 << 22;
/// The largest `--expected-keys`: 2^20 shards of [`TARGET_SHARD_KEYS`].
pub const MAX_EXPECTED_KEYS: u64 = TARGET_SHARD_KEYS << MAX_SHARD_BITS;

/// Everything `ribbon big build` needs.
#[derive(Debug, Clone)]
pub struct Params {
    /// The keys (`-`: standard input).
    pub keys: PathBuf,
    /// Their format.
    pub format: KeyFormat,
    /// The container to write.
    pub out: PathBuf,
    /// The work directory.
    pub work: PathBuf,
    /// Memory budget in bytes.
    pub memory: u64,
    /// Threads for hashing and shard builds.
    pub threads: usize,
    /// Shard bits, or None to pick them from the key count.
    pub shard_bits: Option<u32>,
    /// The number of keys expected (for standard input).
    pub expected_keys: Option<u64>,
    /// Each shard's configuration.
    pub config: Config,
    /// Keep the work directory after success.
    pub keep_work: bool,
    /// Progress bars.
    pub progress: bool,
    /// For tests: fail after this many shards were built in this run.
    pub fail_after_shards: Option<usize>,
    /// Stop after a phase, keeping the work directory.
    pub stop_after: Option<Phase>,
}

/// The phases a build can stop after.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Phase {
    /// After the bucket files are complete
    Bucketing,
    /// After every shard file is built
    Shards,
}

/// What a build did, for the summary.
#[derive(Debug, Serialize)]
pub struct Summary {
    /// The container written.
    pub out: String,
    /// Keys read (duplicates included).
    pub num_keys: u64,
    /// Shard bits.
    pub shard_bits: u32,
    /// File length in bytes.
    pub file_len: u64,
    /// File bits per key (everything included).
    pub bits_per_key: f64,
    /// Seconds reading, hashing and bucketing (0 when reused).
    pub bucket_secs: f64,
    /// Seconds building shards.
    pub shard_secs: f64,
    /// Seconds verifying and assembling.
    pub assemble_secs: f64,
    /// Total seconds.
    pub total_secs: f64,
    /// Whether phase 1 was reused from an earlier run.
    pub buckets_reused: bool,
    /// Seconds reading the keys again to prove them unchanged before
    /// reusing phase 1 (0 when there was nothing to reuse).
    pub input_check_secs: f64,
    /// Shards reused from an earlier run.
    pub shards_reused: usize,
    /// The memory budget, bytes.
    pub memory_budget: u64,
    /// Peak resident memory of the process, bytes (Linux).
    pub peak_rss: Option<u64>,
    /// Threads used.
    pub threads: usize,
    /// The phase the build stopped after (`--stop-after`), if any.
    pub stopped_after: Option<String>,
}

/// Picks shard bits for about `n` keys.
pub fn choose_shard_bits(n: u64, memory: u64, threads: usize, bytes_per_key: u64) -> u32 {
    let per_thread = memory / threads.max(1) as u64 / bytes_per_key;
    let target = TARGET_SHARD_KEYS.min(per_thread).max(1 << 12);
    let mut bits = 0;
    while bits < MAX_SHARD_BITS && n.div_ceil(1 << bits) > target {
        bits += 1;
    }
    // Enough shards to keep every thread busy.
    if n >= 1 << 20 {
        let min = (2 * threads.max(1)).next_power_of_two().trailing_zeros();
        bits = bits.max(min.min(MAX_SHARD_BITS));
    }
    bits
}

/// Runs the three phases.
pub fn run(p: &Params) -> Result<Summary, Error> {
    let start = Instant::now();
    if p.keys != Path::new("-") {
        // Refused here (a FIFO, a directory, a missing file), before a
        // work directory is made for it.
        drop(crate::input::open(&p.keys)?);
    }
    if let Some(parent) = p.out.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !parent.is_dir() {
            return Err(Error::failed(format!(
                "cannot write {}: {} is not a directory",
                shown(&p.out),
                shown(parent)
            )));
        }
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(p.threads)
        .build()
        .map_err(|e| Error::failed(format!("cannot start {} threads: {e}", p.threads)))?;
    if let Some(n) = p.expected_keys.filter(|&n| n > MAX_EXPECTED_KEYS) {
        // The shard count follows from it: a wrong one would make up to
        // 2^20 bucket and shard files for a few keys.
        return Err(Error::usage(format!(
            "--expected-keys {n} is more than one sharded file is built for (at most {MAX_EXPECTED_KEYS}: \
             2^{MAX_SHARD_BITS} shards of 2^22 keys) (try 'ribbon big build --help')"
        )));
    }
    let estimate = p.expected_keys.or_else(|| estimate_keys(&p.keys, p.format));
    let bits = p.shard_bits.unwrap_or_else(|| {
        choose_shard_bits(
            estimate.unwrap_or(1 << 30),
            p.memory,
            p.threads,
            shard_bytes_per_key(&p.config),
        )
    });
    let job = job_text(p, bits);
    let work = WorkDir::claim(&p.work, &p.out, &p.keys)?;
    work.subdir("buckets")?;
    work.subdir("shards")?;
    // The finished bucketing of the same job is reused only when the keys
    // are proved the same by their content, read again whole: the same
    // path, size and time say nothing of the bytes (`cp -p`, `touch -r`).
    let t = Instant::now();
    let same_job = resumable(&p.keys) && work.read_job().is_some_and(|j| j == job);
    let mut input_check_secs = 0.0;
    let reused = match read_done(work.path(), bits).filter(|_| same_job) {
        Some((digest, counts)) => {
            let now = InputDigest::of_file(&p.keys)?;
            input_check_secs = t.elapsed().as_secs_f64();
            if now == digest {
                Some(counts)
            } else {
                if p.progress {
                    crate::output::note(&format!(
                        "{}: the keys changed since they were bucketed (their content differs): bucketing again",
                        shown(&p.keys)
                    ));
                }
                None
            }
        }
        None => None,
    };
    if reused.is_none() {
        // Whatever the last run left is of other keys or another job, or
        // incomplete: only the build's own files go, before the new job is
        // recorded.
        work.clear("buckets", is_bucket_file)?;
        work.clear("shards", is_shard_file)?;
    }
    work.write_job(&job)?;

    let t = Instant::now();
    let (counts, buckets_reused) = match reused {
        Some(c) => (c, true),
        None => (pool.install(|| bucket(p, bits))?, false),
    };
    let bucket_secs = if buckets_reused {
        0.0
    } else {
        t.elapsed().as_secs_f64()
    };

    let num_keys: u64 = counts.iter().sum();
    let mut summary = Summary {
        out: shown(&p.out),
        num_keys,
        shard_bits: bits,
        file_len: 0,
        bits_per_key: f64::NAN,
        bucket_secs,
        shard_secs: 0.0,
        assemble_secs: 0.0,
        total_secs: 0.0,
        buckets_reused,
        input_check_secs,
        shards_reused: 0,
        memory_budget: p.memory,
        peak_rss: None,
        threads: p.threads,
        stopped_after: None,
    };
    let stop = |mut summary: Summary, phase: &str| {
        summary.total_secs = start.elapsed().as_secs_f64();
        summary.peak_rss = peak_rss();
        summary.stopped_after = Some(phase.into());
        Ok(summary)
    };
    if p.stop_after == Some(Phase::Bucketing) {
        return stop(summary, "bucketing");
    }

    let t = Instant::now();
    summary.shards_reused = pool.install(|| build_shards(p, bits, &counts))?;
    summary.shard_secs = t.elapsed().as_secs_f64();
    if p.stop_after == Some(Phase::Shards) {
        return stop(summary, "shards");
    }

    let t = Instant::now();
    let shard_files: Vec<PathBuf> = (0..1usize << bits).map(|i| shard_path(work.path(), i)).collect();
    let file_len = pool.install(|| assemble_files(&shard_files, bits, &p.out))?;
    let assemble_secs = t.elapsed().as_secs_f64();
    if !p.keep_work {
        // Only the build's own files, by name; a directory holding others
        // stays (and the build says so).
        if let (Some(kept), true) = (work.remove()?, p.progress) {
            crate::output::note(&kept);
        }
    }
    summary.file_len = file_len;
    summary.bits_per_key = file_len as f64 * 8.0 / num_keys as f64;
    summary.assemble_secs = assemble_secs;
    summary.total_secs = start.elapsed().as_secs_f64();
    summary.peak_rss = peak_rss();
    Ok(summary)
}

/// Whether keys read from `keys` can be read again to prove them the same:
/// a regular file (not standard input, as `-` or `/dev/stdin`).
fn resumable(keys: &Path) -> bool {
    keys != Path::new("-") && std::fs::metadata(keys).is_ok_and(|m| m.is_file())
}

/// The job description a rerun must match to reuse the work directory
/// (and then the keys' content must match too: see [`read_done`]).
fn job_text(p: &Params, bits: u32) -> String {
    let input = if !resumable(&p.keys) {
        "stdin".into()
    } else {
        let path = std::fs::canonicalize(&p.keys).unwrap_or_else(|_| p.keys.clone());
        let len = std::fs::metadata(&p.keys).map_or(0, |m| m.len());
        format!("{} {len}", path.display())
    };
    format!(
        "ribbon big build job 3\ninput {input}\nformat {}\nshard_bits {bits}\nconfig {:?}\n",
        p.format.name(),
        p.config
    )
}

fn bucket_path(work: &Path, i: usize) -> PathBuf {
    work.join("buckets").join(format!("b{i:06}.u64"))
}

/// Shard `i`'s file in a work directory.
pub fn shard_path(work: &Path, i: usize) -> PathBuf {
    work.join("shards").join(format!("s{i:06}.rbn"))
}

/// The first line of `buckets/done`, before the digest of the keys.
const DONE_DIGEST: &str = "input_xxh3_128 ";

/// The digest of the keys bucketed and the bucket counts of a finished
/// phase 1 (`buckets/done`: the digest's line, then one count a line).
fn read_done(work: &Path, bits: u32) -> Option<(InputDigest, Vec<u64>)> {
    let path = work.join("buckets").join("done");
    // A regular file (not a link) of at most 2^20 counts.
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if !meta.file_type().is_file() || meta.len() > 64 << 20 {
        return None;
    }
    let text = String::from_utf8(crate::input::read_regular(&path).ok()?).ok()?;
    let mut lines = text.lines();
    let digest = lines.next()?.strip_prefix(DONE_DIGEST)?;
    let digest = InputDigest(u128::from_str_radix(digest, 16).ok()?);
    let counts: Vec<u64> = lines.map(str::parse).collect::<Result<_, _>>().ok()?;
    (counts.len() == 1 << bits).then_some((digest, counts))
}

/// Phase 1: reads the keys block by block (the next block is read while
/// this one is worked on), then on every core: hashes and routes each
/// piece of the block to its shards ([`route`]), and appends each shard's
/// hashes, piece after piece so in input order, to its buffer, writing a
/// buffer to its bucket file when full. Bucket files (and so the container)
/// are the same bytes whatever the number of threads.
fn bucket(p: &Params, bits: u32) -> Result<Vec<u64>, Error> {
    let n = 1usize << bits;
    // At most half the budget for the buffers (the rest holds the input
    // blocks and their hashes), and no more than 512 KiB a bucket: larger
    // writes gain nothing.
    let cap = (p.memory / 2 / 8 / n as u64).clamp(64, 1 << 16) as usize;
    // (The caller removed an earlier run's bucket files.)
    let mut buffers: Vec<Vec<u64>> = vec![Vec::new(); n];
    let mut counts = vec![0u64; n];
    let total_bytes = std::fs::metadata(&p.keys)
        .map(|m| m.len())
        .ok()
        .filter(|_| p.keys != Path::new("-"));
    let bar = bytes_bar(total_bytes, p.progress);
    let t = Instant::now();
    let mut keys = 0u64;
    let threads = rayon::current_num_threads();
    let digest = for_each_block_digest(&p.keys, p.format, |data, first_line, consumed| {
        // Pieces for every core (four each, to even out their speeds), but
        // no more than keep the per-piece shard tables (4 bytes a shard)
        // within about four times the block's own hashes.
        let per_record = match p.format {
            KeyFormat::Binary(r) => r,
            _ => 16,
        };
        let max_pieces = (4 * data.len() / per_record / n).max(1);
        let pieces = split_keys(data, p.format, (4 * threads).min(max_pieces));
        let routed = pieces
            .par_iter()
            .map(|&(piece, before)| {
                hash_keys(piece, p.format, &p.keys, first_line + before).map(|h| route(h, bits))
            })
            .collect::<Vec<_>>()
            .into_iter()
            // The first error in input order.
            .collect::<Result<Vec<Routed>, Error>>()?;
        buffers
            .par_iter_mut()
            .zip(counts.par_iter_mut())
            .enumerate()
            .try_for_each(|(s, (buf, count))| -> Result<(), Error> {
                for r in &routed {
                    let mut part = r.shard(s);
                    *count += part.len() as u64;
                    while !part.is_empty() {
                        if buf.capacity() == 0 {
                            buf.reserve_exact(cap);
                        }
                        let take = (cap - buf.len()).min(part.len());
                        buf.extend_from_slice(&part[..take]);
                        part = &part[take..];
                        if buf.len() == cap {
                            flush(&bucket_path(&p.work, s), buf)?;
                        }
                    }
                }
                Ok(())
            })?;
        let in_block: u64 = routed.iter().map(|r| r.hashes.len() as u64).sum();
        keys += in_block;
        bar.set_position(consumed);
        let rate = keys as f64 / t.elapsed().as_secs_f64().max(1e-9);
        bar.set_message(format!("bucketing {keys} keys, {:.1} M keys/s", rate / 1e6));
        Ok(in_block)
    })?;
    buffers
        .par_iter_mut()
        .enumerate()
        .try_for_each(|(i, buf)| flush(&bucket_path(&p.work, i), buf))?;
    bar.finish_and_clear();
    let mut done = format!("{DONE_DIGEST}{digest}\n");
    done.extend(counts.iter().map(|c| format!("{c}\n")));
    let path = p.work.join("buckets").join("done");
    crate::output::write_file(&path, done.as_bytes())?;
    Ok(counts)
}

/// Appends `buf`'s hashes (little-endian) to the bucket file `path` and
/// empties `buf`; an empty `buf` still creates the file.
fn flush(path: &Path, buf: &mut Vec<u64>) -> Result<(), Error> {
    let mut bytes = Vec::with_capacity(buf.len() * 8);
    for h in buf.iter() {
        bytes.extend_from_slice(&h.to_le_bytes());
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| f.write_all(&bytes))
        .map_err(|e| write_error(&shown(path), e))?;
    buf.clear();
    Ok(())
}

/// One piece's hashes grouped by shard, in input order within each shard
/// (a stable counting sort on the shard).
struct Routed {
    /// The hashes, shard 0's first.
    hashes: Vec<u64>,
    /// Where each shard's hashes start in `hashes`, and the end (2^bits + 1
    /// entries).
    starts: Vec<u32>,
}

impl Routed {
    /// Shard `s`'s hashes, in input order.
    fn shard(&self, s: usize) -> &[u64] {
        &self.hashes[self.starts[s] as usize..self.starts[s + 1] as usize]
    }
}

/// Groups `hashes` (fewer than 2^32) by their shard of `2^bits`, keeping
/// input order within each shard.
fn route(hashes: Vec<u64>, bits: u32) -> Routed {
    let n = 1usize << bits;
    if bits == 0 {
        let starts = vec![0, hashes.len() as u32];
        return Routed { hashes, starts };
    }
    let mut starts = vec![0u32; n + 1];
    for &h in &hashes {
        starts[shard_of(h, bits) + 1] += 1;
    }
    for s in 0..n {
        starts[s + 1] += starts[s];
    }
    let mut next = starts[..n].to_vec();
    let mut grouped = vec![0u64; hashes.len()];
    for &h in &hashes {
        let s = shard_of(h, bits);
        grouped[next[s] as usize] = h;
        next[s] += 1;
    }
    Routed {
        hashes: grouped,
        starts,
    }
}

fn bytes_bar(total: Option<u64>, show: bool) -> ProgressBar {
    if !show || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = match total {
        Some(t) => ProgressBar::with_draw_target(Some(t), ProgressDrawTarget::stderr()),
        None => ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
    };
    let template = if total.is_some() {
        "{msg} [{bar:30}] {bytes}/{total_bytes} (ETA {eta})"
    } else {
        "{msg} {bytes} read"
    };
    bar.set_style(
        ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar
}

/// Phase 2: returns the number of shards reused.
fn build_shards(p: &Params, bits: u32, counts: &[u64]) -> Result<usize, Error> {
    let budget_bytes = p.memory;
    let per_key = shard_bytes_per_key(&p.config);
    if let Some((i, &c)) = counts.iter().enumerate().max_by_key(|(_, &c)| c) {
        let need = c * per_key;
        if need > budget_bytes {
            return Err(Error::failed(format!(
                "shard {i} holds {c} keys, about {} MiB to build, over the memory budget of {} MiB: \
                 use more --shard-bits (now {bits}) or a larger --memory",
                need >> 20,
                budget_bytes >> 20
            )));
        }
    }
    let budget = Budget::new(budget_bytes);
    let total: u64 = counts.iter().sum();
    let bar = crate::progress::bar(total, 1, "building shards");
    if !p.progress {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    let reused = AtomicUsize::new(0);
    let built = AtomicUsize::new(0);
    (0..counts.len())
        .into_par_iter()
        .try_for_each(|i| -> Result<(), Error> {
            let out = shard_path(&p.work, i);
            if out.exists() {
                reused.fetch_add(1, Ordering::Relaxed);
                bar.inc(counts[i]);
                return Ok(());
            }
            if let Some(limit) = p.fail_after_shards {
                if built.load(Ordering::SeqCst) >= limit {
                    return Err(Error::failed(format!(
                        "stopped after {limit} shards (--fail-after-shards)"
                    )));
                }
            }
            let _reservation = budget.take(counts[i] * per_key)?;
            build_one_shard(
                &bucket_path(&p.work, i),
                Some(counts[i]),
                i,
                bits,
                &p.config,
                &out,
            )?;
            built.fetch_add(1, Ordering::SeqCst);
            bar.inc(counts[i]);
            Ok(())
        })?;
    bar.finish_and_clear();
    Ok(reused.into_inner())
}

/// Builds shard `i` of `2^bits` from the bucket file `bucket` (checked to
/// hold `count` hashes when given) and writes it to `out` through a
/// temporary file and a rename: `ribbon big shard`, and phase 2 for each
/// shard.
pub fn build_one_shard(
    bucket: &Path,
    count: Option<u64>,
    i: usize,
    bits: u32,
    config: &Config,
    out: &Path,
) -> Result<(), Error> {
    let hashes = read_bucket(bucket, count)?;
    let file = build_shard_file(&hashes, i, bits, config)
        .map_err(|e| Error::failed(format!("{}: {e}", shown(bucket))))?;
    drop(hashes);
    crate::output::write_file(out, &file)
}

/// A bucket file's hashes (little-endian u64s), checking it holds `count`
/// of them when given.
fn read_bucket(path: &Path, count: Option<u64>) -> Result<Vec<u64>, Error> {
    // A regular file: a FIFO given as --bucket is refused, not waited on.
    let bytes = crate::input::read_regular(path)?;
    if !bytes.len().is_multiple_of(8) {
        return Err(Error::failed(format!(
            "{}: {} bytes, not a bucket file of 8-byte hashes",
            shown(path),
            bytes.len()
        )));
    }
    if let Some(count) = count.filter(|&c| bytes.len() as u64 != c * 8) {
        return Err(Error::failed(format!(
            "{}: {} bytes, {} expected (damaged work directory: delete it and rerun)",
            shown(path),
            bytes.len(),
            count * 8
        )));
    }
    Ok(bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect())
}

/// Phase 3 and `ribbon big assemble`: verifies every shard file (shard
/// `i` at index `i`, `2^bits` of them) and writes the container to `out`
/// through a temporary file and a rename; returns its length.
///
/// Each shard file must say it is shard `i` of `2^bits` (a file of another
/// position or built with other shard bits is refused); it is read twice
/// (verified, then copied), and checked again the second time.
pub fn assemble_files(shards: &[PathBuf], bits: u32, out_path: &Path) -> Result<u64, Error> {
    if shards.len() != 1usize << bits {
        return Err(Error::failed(format!(
            "{} shards given for {bits} shard bits ({} expected)",
            shards.len(),
            1u64 << bits
        )));
    }
    let entry = |i: usize, path: &Path, bytes: &[u8]| {
        ShardEntry::of_file(i, bits, bytes)
            .map(|(e, _)| e)
            .map_err(|e| Error::failed(format!("{}: {e}", shown(path))))
    };
    let entries = shards
        .par_iter()
        .enumerate()
        .map(|(i, path)| entry(i, path, &read_shard(path)?))
        .collect::<Result<Vec<_>, _>>()?;
    let layout = Layout::new(bits, &entries).map_err(|e| Error::failed(e.to_string()))?;
    let mut out = crate::output::OutputFile::create(out_path)?;
    out.write_all(&layout.head())
        .map_err(|e| write_error(&shown(out_path), e))?;
    for (i, path) in shards.iter().enumerate() {
        let bytes = read_shard(path)?;
        if entry(i, path, &bytes)? != entries[i] {
            return Err(Error::failed(format!(
                "{}: changed while the shards were assembled",
                shown(path)
            )));
        }
        out.write_all(&bytes[SHARD_FILE_HEADER_LEN..])
            .and_then(|()| out.write_all(&vec![0u8; layout.padding_after(i)]))
            .map_err(|e| write_error(&shown(out_path), e))?;
    }
    out.commit()?;
    Ok(layout.file_len())
}

/// A shard file's bytes (a regular file, read whole).
fn read_shard(path: &Path) -> Result<Vec<u8>, Error> {
    crate::input::read_regular(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routing_groups_by_shard_and_keeps_input_order() {
        // A fixed pseudo-random stream (splitmix64 steps).
        let hashes: Vec<u64> = (1..=5000u64)
            .map(|i| {
                let z = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
                (z ^ (z >> 31)).wrapping_mul(0xbf58_476d_1ce4_e5b9)
            })
            .collect();
        for bits in [0, 1, 3, 9] {
            let r = route(hashes.clone(), bits);
            assert_eq!(r.starts.len(), (1 << bits) + 1);
            for s in 0..1usize << bits {
                let naive: Vec<u64> = hashes
                    .iter()
                    .copied()
                    .filter(|&h| shard_of(h, bits) == s)
                    .collect();
                assert_eq!(r.shard(s), naive, "bits {bits} shard {s}");
            }
            assert_eq!(r.hashes.len(), hashes.len());
        }
    }
}
