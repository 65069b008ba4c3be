//! Standalone Ribbon filter files (`ribbon::standalone`) on the command
//! line: `ribbon build --standalone` builds one from keys (defaults: width
//! 128, 7 result bits, Standard Ribbon, the RocksDB shape) or converts a
//! RocksDB Standard128 Ribbon filter block (`--from-rocksdb`); `query` and
//! `info` read them (see `filter_file`).

use crate::cli::{BuildArgs, StandaloneArgs};
use crate::error::{shown, Error};
use crate::input::{read_all, Keys};
use crate::output::{note, write_file};
use crate::progress;
use ribbon::core::config::ConstructionFailureChance;
use ribbon::core::hash::get_slice_hash64;
use ribbon::rocksdb::format::FilterReader;
use ribbon::standalone::{self as sa, Config, Mode, Precision, Ribbon, RibbonRef};
use serde::Serialize;

/// Key counts from which hashing shows a progress bar.
const PROGRESS_MIN_KEYS: u64 = 100_000;

/// The standalone configuration the arguments describe.
fn config_from(args: &StandaloneArgs) -> Result<Config, Error> {
    let mut config = Config::default();
    if let Some(width) = &args.width {
        config.width = width
            .parse()
            .map_err(|_| Error::usage(format!("--width: cannot parse {width:?}")))?;
    }
    match (args.bits, args.fp_rate) {
        (Some(bits), _) => config.precision = Precision::ResultBits(bits),
        (None, Some(p)) => config.precision = Precision::FpRate(p),
        (None, None) => {}
    }
    if args.homogeneous {
        config.mode = Mode::Homogeneous;
    }
    config.balanced = args.balanced;
    config.low_memory = args.low_memory;
    config.smash = args.smash;
    config.first_coeff_always_one = !args.no_first_coeff_one;
    if let Some(chance) = args.failure_chance.as_deref() {
        config.failure_chance = chance
            .parse()
            .ok()
            .and_then(ConstructionFailureChance::from_one_in)
            .ok_or_else(|| Error::usage(format!("--failure-chance must be 2, 20 or 1000, got {chance:?}")))?;
    }
    config.slot_overhead = args.overhead;
    if let Some(seed) = args.seed {
        config.seed = seed;
    }
    if let Some(max_seeds) = args.max_seeds {
        config.max_seeds = max_seeds;
    }
    config
        .validate()
        .map_err(|e| Error::usage(format!("{e} (try 'ribbon build --help')")))?;
    Ok(config)
}

/// `ribbon build --standalone ...`.
pub fn build(args: &BuildArgs) -> Result<(), Error> {
    let sa_args = &args.standalone;
    if sa_args.num_keys.is_some() && sa_args.from_rocksdb.is_none() {
        return Err(Error::usage(
            "--num-keys goes with --from-rocksdb (try 'ribbon build --help')",
        ));
    }
    let filter = match (&args.keys, &sa_args.from_rocksdb) {
        (Some(keys), None) => build_from_keys(sa_args, keys, args.hex)?,
        (None, Some(path)) => {
            if args.hex {
                return Err(Error::usage(
                    "--hex does not apply to --from-rocksdb (try 'ribbon build --help')",
                ));
            }
            if let Some(o) = configured_option(sa_args) {
                return Err(Error::usage(format!(
                    "{o} does not apply to --from-rocksdb: the filter block fixes the filter"
                )));
            }
            let block = read_all(path)?;
            // The rule `query` reads filter files by: an empty, truncated or
            // foreign file is refused, never imported as a filter that
            // answers every key alike.
            FilterReader::parse(&block).map_err(|e| Error::failed(format!("{}: {e}", shown(path))))?;
            Ribbon::from_rocksdb(&block, sa_args.num_keys.unwrap_or(0))
                .map_err(|e| Error::failed(format!("{}: {e}", shown(path))))?
        }
        _ => {
            return Err(Error::usage(
                "give --keys or --from-rocksdb (try 'ribbon build --help')",
            ))
        }
    };
    let bytes = if sa_args.rocksdb {
        filter.to_rocksdb().map_err(|e| Error::failed(e.to_string()))?
    } else {
        filter.as_bytes().to_vec()
    };
    write_file(&args.out, &bytes)?;
    if !args.quiet {
        let format = if sa_args.rocksdb {
            "a RocksDB Standard128 Ribbon filter block"
        } else if filter.is_balanced() {
            "a standalone Balanced Ribbon filter"
        } else {
            "a standalone Ribbon filter"
        };
        note(&format!(
            "wrote {format}: {} keys, {} bytes, {}, expected FP rate {:.6}",
            filter.num_keys(),
            bytes.len(),
            bits_per_key_text(filter.num_keys(), filter.bits_per_key()),
            filter.expected_fp_rate()
        ));
    }
    Ok(())
}

/// The first standalone-only option given, if any (they need
/// `--standalone`).
pub fn standalone_option(a: &StandaloneArgs) -> Option<&'static str> {
    configured_option(a).or_else(|| {
        [
            (a.from_rocksdb.is_some(), "--from-rocksdb"),
            (a.num_keys.is_some(), "--num-keys"),
            (a.rocksdb, "--rocksdb"),
        ]
        .into_iter()
        .find_map(|(given, name)| given.then_some(name))
    })
}

/// The first filter-configuring option given, which `--from-rocksdb` does
/// not take.
fn configured_option(a: &StandaloneArgs) -> Option<&'static str> {
    [
        (a.width.is_some(), "--width"),
        (a.bits.is_some(), "--bits"),
        (a.fp_rate.is_some(), "--fp-rate"),
        (a.homogeneous, "--homogeneous"),
        (a.balanced, "--balanced"),
        (a.low_memory, "--low-memory"),
        (a.smash, "--smash"),
        (a.no_first_coeff_one, "--no-first-coeff-one"),
        (a.failure_chance.is_some(), "--failure-chance"),
        (a.overhead.is_some(), "--overhead"),
        (a.seed.is_some(), "--seed"),
        (a.max_seeds.is_some(), "--max-seeds"),
    ]
    .into_iter()
    .find_map(|(given, name)| given.then_some(name))
}

fn build_from_keys(args: &StandaloneArgs, path: &std::path::Path, hex: bool) -> Result<Ribbon, Error> {
    let config = config_from(args)?;
    let keys = Keys::read(path, hex)?;
    let bar = progress::bar(keys.len() as u64, PROGRESS_MIN_KEYS, "hashing keys");
    let mut hashes = Vec::with_capacity(keys.len());
    for key in keys.iter() {
        hashes.push(get_slice_hash64(key));
        if hashes.len() % 65_536 == 0 {
            bar.set_position(hashes.len() as u64);
        }
    }
    bar.finish_and_clear();
    drop(keys);
    Ribbon::from_hashes(&hashes, &config).map_err(|e| match e {
        sa::Error::InvalidConfig { .. } => Error::usage(e.to_string()),
        _ => Error::failed(e.to_string()),
    })
}

/// `7.123 bits/key`, or `no keys` for an empty filter (never NaN).
fn bits_per_key_text(num_keys: u64, bits_per_key: f64) -> String {
    if num_keys == 0 || !bits_per_key.is_finite() {
        "no keys".into()
    } else {
        format!("{bits_per_key:.3} bits/key")
    }
}

fn failure_chance_text(f: &RibbonRef<'_>) -> String {
    f.failure_chance()
        .map_or_else(|| "n/a".into(), |c| format!("1/{}", c.one_in()))
}

/// One line describing a standalone filter.
pub fn describe(f: &RibbonRef<'_>) -> String {
    let upper = f.upper_num_columns();
    let columns = match f.upper_start_block() {
        0 => format!("{upper} columns"),
        b => format!(
            "{} columns in blocks 0..{b}, {upper} after",
            upper.saturating_sub(1)
        ),
    };
    let kind = if f.is_balanced() {
        format!(
            "Balanced {:?} ({} shards, {} starts per level-1 shard, last shard {} starts)",
            f.mode(),
            f.num_shards(),
            f.shard_slots(),
            f.last_shard_starts()
        )
    } else {
        format!("{:?}", f.mode())
    };
    format!(
        "standalone Ribbon v{}: {kind}, width {}, first_coeff_always_one {}, smash {}, failure chance {}, \
         seed {}, {} keys, {} slots ({} blocks), {columns}, \
         {} bytes ({} solution{}), {}, expected FP rate {:.6}",
        f.format_version(),
        f.width(),
        f.first_coeff_always_one(),
        f.smash(),
        failure_chance_text(f),
        f.seed(),
        f.num_keys(),
        f.num_slots(),
        f.num_blocks(),
        f.as_bytes().len(),
        f.solution_len(),
        match f.thresholds_len() {
            0 => String::new(),
            m => format!(", {m} metadata"),
        },
        bits_per_key_text(f.num_keys(), f.bits_per_key()),
        f.expected_fp_rate()
    )
}

/// `ribbon info --json` for a standalone filter.
#[derive(Debug, Serialize)]
pub struct Info {
    format: &'static str,
    version: u32,
    mode: String,
    width: u32,
    first_coeff_always_one: bool,
    smash: bool,
    failure_chance: String,
    seed: u32,
    num_keys: u64,
    num_slots: u64,
    num_blocks: u64,
    upper_num_columns: u32,
    upper_start_block: u64,
    bytes: usize,
    solution_bytes: usize,
    /// Balanced Ribbon (format version 2).
    balanced: bool,
    /// Balanced Ribbon's soft shards (0 otherwise).
    num_shards: u32,
    /// Balanced Ribbon's mask and level bytes (0 otherwise).
    metadata_bytes: usize,
    /// `null` for a filter of no keys.
    bits_per_key: Option<f64>,
    expected_fp_rate: Option<f64>,
}

impl Info {
    /// Describes `f`.
    pub fn new(f: &RibbonRef<'_>) -> Self {
        Info {
            format: "standalone",
            version: u32::from(f.format_version()),
            mode: format!("{:?}", f.mode()),
            width: f.width(),
            first_coeff_always_one: f.first_coeff_always_one(),
            smash: f.smash(),
            failure_chance: failure_chance_text(f),
            seed: f.seed(),
            num_keys: f.num_keys(),
            num_slots: f.num_slots(),
            num_blocks: u64::from(f.num_blocks()),
            upper_num_columns: f.upper_num_columns(),
            upper_start_block: u64::from(f.upper_start_block()),
            bytes: f.as_bytes().len(),
            solution_bytes: f.solution_len(),
            balanced: f.is_balanced(),
            num_shards: f.num_shards(),
            metadata_bytes: f.thresholds_len(),
            bits_per_key: Some(f.bits_per_key()).filter(|b| f.num_keys() > 0 && b.is_finite()),
            expected_fp_rate: Some(f.expected_fp_rate()).filter(|p| p.is_finite()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn config(s: &str) -> Result<Config, Error> {
        let argv = format!("ribbon build --standalone --keys k --out o {s}");
        let Command::Build(args) = Cli::try_parse_from(argv.split_whitespace())
            .map_err(|e| Error::usage(e.to_string()))?
            .command
        else {
            unreachable!("a build command line")
        };
        config_from(&args.standalone)
    }

    #[test]
    fn parses_every_setting() {
        let c = config(
            "--width 64 --bits 7.5 --homogeneous --smash --no-first-coeff-one --failure-chance 1000 \
             --overhead 0.2 --seed 9 --max-seeds=3",
        )
        .unwrap();
        assert_eq!(
            c,
            Config {
                width: 64,
                precision: Precision::ResultBits(7.5),
                mode: Mode::Homogeneous,
                smash: true,
                first_coeff_always_one: false,
                failure_chance: ConstructionFailureChance::OneIn1000,
                slot_overhead: Some(0.2),
                seed: 9,
                max_seeds: 3,
                balanced: false,
                low_memory: false,
            }
        );
        let c = config("--balanced --width 64 --bits 7").unwrap();
        assert!(c.balanced && c.width == 64 && !c.low_memory);
        assert!(config("--balanced --low-memory").unwrap().low_memory);
        assert_eq!(config("").unwrap(), Config::default());
        assert_eq!(
            config("--fp-rate 0.01").unwrap().precision,
            Precision::FpRate(0.01)
        );
    }

    #[test]
    fn rejects_bad_settings_as_usage_errors() {
        for bad in [
            "--width 16",
            "--width x",
            "--bits 0.5",
            "--bits 7 --fp-rate 0.1",
            "--fp-rate 0.9",
            "--failure-chance 7",
            "--overhead -1",
            "--max-seeds 0",
            "--seed -1",
            "--balanced --homogeneous",
            "--balanced --smash",
        ] {
            assert!(matches!(config(bad), Err(Error::Usage(_))), "{bad}");
        }
    }

    #[test]
    fn empty_filters_have_no_bits_per_key() {
        assert_eq!(bits_per_key_text(0, f64::NAN), "no keys");
        assert_eq!(bits_per_key_text(3, 7.25), "7.250 bits/key");
    }
}
