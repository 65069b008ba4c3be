//! `ribbon viz`: one self-contained HTML page that replays a Ribbon
//! construction of the crate's own (the banding and back-substitution of
//! `ribbon::core::alg`, recorded step by step, see [`trace`]), with a query mode
//! and the same keys in RocksDB's Standard128 layout ([`icml`]).

pub mod icml;
mod page;
pub mod trace;

use crate::cli::VizArgs;
use crate::error::Error;
use crate::input::Keys;
use crate::output;
use ribbon::core::hash::{get_slice_hash64, split_mix64};
use ribbon::rocksdb::bloom::math::BloomMath;
use serde::Serialize;

/// The most keys a page draws (one matrix row each).
pub const MAX_KEYS: usize = 256;

/// Everything the page replays.
#[derive(Debug, Serialize)]
struct PageData {
    /// The keys, in input order.
    keys: Vec<ShownKey>,
    /// The construction.
    trace: trace::Trace,
    /// The Standard128 view.
    icml: icml::IcmlView,
    /// The space figure of the drawn settings.
    space: Space,
    /// Other settings of the same keys, for the page's controls: each
    /// traced by the crate as the main one is (see [`variants`]).
    variants: Vec<Variant>,
}

/// The same keys under other settings (columns, width, result bits).
#[derive(Debug, Serialize)]
pub struct Variant {
    /// Slots.
    pub columns: u32,
    /// Ribbon width.
    pub width: u32,
    /// Result bits.
    pub result_bits: u32,
    /// Seeds that failed before one banded (all seeds tried when none did).
    pub failed_seeds: u32,
    /// Whether a seed banded.
    pub banded: bool,
    /// The construction; `None` for the page's main settings (it is
    /// [`PageData::trace`]) and for variants left out to keep the page small.
    pub trace: Option<trace::Trace>,
    /// Space of these settings.
    pub space: Space,
}

/// Why Ribbon: the space of the drawn filter against the information-theoretic
/// bound and a Bloom filter at the same FP rate.
#[derive(Debug, Serialize, PartialEq)]
pub struct Space {
    /// Keys.
    pub keys: u32,
    /// Bits stored: slots times result bits.
    pub bits: u32,
    /// `bits / keys`.
    pub bits_per_key: f64,
    /// The FP rate of `r` result bits, `2^-r`.
    pub fp_rate: f64,
    /// The information-theoretic bound at that FP rate, `log2(1 / fp_rate)`
    /// bits per key.
    pub bound_bits_per_key: f64,
    /// Bits per key of a standard Bloom filter with the best number of probes
    /// reaching `fp_rate` (RocksDB's `BloomMath::StandardFpRate`, solved for the
    /// bits per key by bisection).
    pub bloom_bits_per_key: f64,
    /// Its probes.
    pub bloom_probes: i32,
}

/// Probes tried for the Bloom filter of [`Space`].
pub const BLOOM_MAX_PROBES: i32 = 30;

/// The least FP rate of a standard Bloom filter with `bits_per_key`, over
/// 1..=[`BLOOM_MAX_PROBES`] probes, and the probes that give it.
pub fn best_bloom(bits_per_key: f64) -> (f64, i32) {
    (1..=BLOOM_MAX_PROBES)
        .map(|k| (BloomMath::standard_fp_rate(bits_per_key, k), k))
        .fold((f64::INFINITY, 0), |best, x| if x.0 < best.0 { x } else { best })
}

impl Space {
    /// The space of `columns` slots of `result_bits` bits for `keys` keys.
    pub fn new(keys: u32, columns: u32, result_bits: u32) -> Space {
        let fp_rate = 0.5f64.powi(result_bits as i32);
        // The least bits per key whose best Bloom filter reaches fp_rate: the
        // best rate falls as bits per key grow.
        let (mut lo, mut hi) = (0.0f64, 64.0f64);
        for _ in 0..100 {
            let mid = (lo + hi) / 2.0;
            if best_bloom(mid).0 <= fp_rate {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        Space {
            keys,
            bits: columns * result_bits,
            bits_per_key: f64::from(columns * result_bits) / f64::from(keys),
            fp_rate,
            bound_bits_per_key: -fp_rate.log2(),
            bloom_bits_per_key: hi,
            bloom_probes: best_bloom(hi).1,
        }
    }
}

/// A key as the page shows it: its text when it is UTF-8, and its bytes in hex.
#[derive(Debug, Serialize)]
struct ShownKey {
    text: Option<String>,
    hex: String,
}

/// Runs `ribbon viz`.
pub fn run(args: &VizArgs) -> Result<(), Error> {
    let keys = keys(args)?;
    if keys.is_empty() {
        return Err(Error::failed("no keys to draw"));
    }
    if keys.len() > MAX_KEYS {
        return Err(Error::failed(format!(
            "the page draws at most {MAX_KEYS} keys (one row each); got {}",
            keys.len()
        )));
    }
    if args.columns < args.width {
        return Err(Error::usage(format!(
            "--columns {} is below --width {}: a key's {} coefficients must fit (try 'ribbon viz --help')",
            args.columns, args.width, args.width
        )));
    }
    let hashes: Vec<u64> = keys.iter().map(|k| get_slice_hash64(k)).collect();
    let trace = construct(&hashes, args)?;
    let n = keys.len() as u32;
    let data = PageData {
        space: Space::new(n, trace.columns, args.result_bits),
        variants: variants(&hashes, args)?,
        keys: keys
            .iter()
            .map(|k| ShownKey {
                text: String::from_utf8(k.clone()).ok(),
                hex: k.iter().map(|b| format!("{b:02x}")).collect(),
            })
            .collect(),
        trace,
        icml: icml::view(&hashes)?,
    };
    let json =
        serde_json::to_string(&data).map_err(|e| Error::failed(format!("cannot encode the trace: {e}")))?;
    output::write_file(&args.out, page::render(&json).as_bytes())
}

/// The keys: read from `--keys`, or `--random N` (default 48) drawn from `--seed`.
fn keys(args: &VizArgs) -> Result<Vec<Vec<u8>>, Error> {
    if let Some(path) = &args.keys {
        let keys = Keys::read(path, args.hex)?;
        if keys.len() > MAX_KEYS {
            return Err(Error::failed(format!(
                "the page draws at most {MAX_KEYS} keys (one row each); {} has {}",
                crate::error::shown(path),
                keys.len()
            )));
        }
        return Ok(keys.iter().map(<[u8]>::to_vec).collect());
    }
    Ok(random_keys(args.random.unwrap_or(48) as usize, args.seed))
}

/// `n` distinct keys of 6 hex digits from seed `seed`.
pub fn random_keys(n: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut state = seed;
    let mut keys: Vec<Vec<u8>> = Vec::with_capacity(n);
    while keys.len() < n {
        let key = format!("{:06x}", split_mix64(&mut state) >> 40).into_bytes();
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    keys
}

macro_rules! by_width {
    ($w:expr, $hashes:expr, $args:expr, [$($n:literal)*]) => {
        match $w {
            $($n => trace::construct::<$n>($hashes, $args.columns, $args.result_bits, $args.max_seeds),)*
            other => return Err(Error::usage(format!("--width {other} is not in 2..=32"))),
        }
    };
}

macro_rules! all_by_width {
    ($w:expr, $hashes:expr, $m:expr, $r:expr, $seeds:expr, [$($n:literal)*]) => {
        match $w {
            $($n => trace::construct_all::<$n>($hashes, $m, $r, $seeds, KEEP_FAILED),)*
            other => return Err(Error::usage(format!("--width {other} is not in 2..=32"))),
        }
    };
}

/// Failed attempts a variant whose every seed fails keeps (all are counted).
pub const KEEP_FAILED: u32 = 2;

/// The most bytes of JSON the variants may take (the page stays under 1 MB).
pub const VARIANTS_BUDGET: usize = 640 * 1024;

/// The settings grid of the page's controls, for `n` keys and the main
/// settings: columns from `n` (too few: every seed fails) to `1.5 n`, widths
/// 8, 16 and 32, result bits 1, 2 and 4, each with the main value.
pub fn grid(n: u32, columns: u32, width: u32, result_bits: u32) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
    let mut ms: Vec<u32> = [1.0, 1.05, 1.1, 1.2, 1.33, 1.5]
        .iter()
        .map(|f| ((f64::from(n) * f).ceil() as u32).clamp(2, 256))
        .chain([columns])
        .collect();
    let mut ws = vec![8, 16, 32, width];
    let mut rs = vec![1, 2, 4, result_bits];
    for v in [&mut ms, &mut ws, &mut rs] {
        v.sort_unstable();
        v.dedup();
    }
    (ms, ws, rs)
}

/// Every setting of [`grid`] (columns at least the width) constructed by the
/// crate, nearest the main settings first; traces beyond
/// [`VARIANTS_BUDGET`] are left out (their counts and space stay).
fn variants(hashes: &[u64], args: &VizArgs) -> Result<Vec<Variant>, Error> {
    let n = hashes.len() as u32;
    let (ms, ws, rs) = grid(n, args.columns, args.width, args.result_bits);
    let mut settings: Vec<(u32, u32, u32)> = Vec::new();
    for &m in &ms {
        for &w in &ws {
            for &r in &rs {
                if m >= w {
                    settings.push((m, w, r));
                }
            }
        }
    }
    let distance = |&(m, w, r): &(u32, u32, u32)| {
        u32::from(w != args.width) + u32::from(r != args.result_bits) + m.abs_diff(args.columns) / 4
    };
    settings.sort_by_key(distance);
    let mut used = 0usize;
    let mut out = Vec::with_capacity(settings.len());
    for (m, w, r) in settings {
        let main = (m, w, r) == (args.columns, args.width, args.result_bits);
        let trace = all_by_width!(w, hashes, m, r, args.max_seeds, [
            2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32
        ]);
        let size = if main {
            0
        } else {
            serde_json::to_string(&trace)
                .map_err(|e| Error::failed(format!("cannot encode the trace: {e}")))?
                .len()
        };
        let keep = !main && used + size <= VARIANTS_BUDGET;
        if keep {
            used += size;
        }
        out.push(Variant {
            columns: trace.columns,
            width: w,
            result_bits: r,
            failed_seeds: trace.failed_seeds,
            banded: trace.banded,
            space: Space::new(n, trace.columns, r),
            trace: keep.then_some(trace),
        });
    }
    out.sort_by_key(|v| (v.columns, v.width, v.result_bits));
    Ok(out)
}

fn construct(hashes: &[u64], args: &VizArgs) -> Result<trace::Trace, Error> {
    let trace = by_width!(args.width, hashes, args, [
        2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32
    ]);
    trace.ok_or_else(|| {
        Error::failed(format!(
            "none of seeds 0..{} bands {} keys into {} columns of width {}: add columns or seeds (--columns, --max-seeds)",
            args.max_seeds,
            hashes.len(),
            args.columns,
            args.width
        ))
    })
}
