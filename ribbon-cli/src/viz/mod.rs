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
    let data = PageData {
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
