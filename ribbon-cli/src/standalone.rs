//! Standalone Ribbon filter files (`ribbon::standalone`) on the command line.
//!
//! ```text
//! ribbon build --standalone [--width 32|64|128] [--bits R | --fp-rate P]
//!              [--homogeneous] [--smash] [--no-first-coeff-one]
//!              [--failure-chance 2|20|1000] [--overhead E] [--seed N] [--max-seeds N]
//!              (--keys FILE [--hex] | --from-rocksdb FILTER [--num-keys N])
//!              [--rocksdb] --out FILE
//! ribbon query --filter FILE --keys FILE [--hex] [--batch]   (FILE in the standalone format)
//! ribbon info --filter FILE                                  (FILE in the standalone format)
//! ```
//!
//! `build --standalone` builds a standalone filter file from a keys file
//! (defaults: width 128, 7 result bits, Standard Ribbon, the RocksDB shape),
//! or converts a RocksDB Standard128 Ribbon filter block (`--from-rocksdb`).
//! With `--rocksdb` it writes RocksDB's filter block format instead (only for
//! the RocksDB shape). For key files of 100 000 keys or more it reports
//! progress on stderr when stderr is a terminal.
//!
//! `query` and `info` recognise a standalone file by its magic
//! ([`is_standalone_file`]).

use crate::args::Args;
use crate::keys::read_keys;
use crate::Error;
use ribbon::config::ConstructionFailureChance;
use ribbon::hash::get_slice_hash64;
use ribbon::standalone::{self as sa, Config, Mode, Precision, Ribbon, RibbonRef};
use std::io::{IsTerminal, Read};

/// Usage lines for the main usage text.
pub const USAGE: &str = "  \
ribbon build --standalone [--width 32|64|128] [--bits R | --fp-rate P] [--homogeneous] [--smash]
               [--no-first-coeff-one] [--failure-chance 2|20|1000] [--overhead E] [--seed N]
               [--max-seeds N] (--keys FILE [--hex] | --from-rocksdb FILTER [--num-keys N])
               [--rocksdb] --out FILE
  (query and info also read standalone filter files)";

/// Key files at least this large get a progress indicator.
const PROGRESS_MIN_KEYS: usize = 100_000;

/// Whether `argv` (after `build`) asks for a standalone filter.
pub fn is_standalone_build(argv: &[String]) -> bool {
    argv.iter().any(|a| a == "--standalone")
}

/// Whether `path` holds a standalone filter (starts with its magic). Reads
/// only the first bytes; unreadable files answer `false` (the caller's own
/// read then reports the error).
pub fn is_standalone_file(path: &str) -> bool {
    let mut head = [0u8; 8];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| sa::has_magic(&head))
}

/// The `--filter` argument of `query`/`info` arguments, if any.
pub fn filter_path(argv: &[String]) -> Option<&str> {
    argv.iter()
        .position(|a| a == "--filter")
        .and_then(|i| argv.get(i + 1))
        .map(String::as_str)
}

fn parse_number<T: std::str::FromStr>(args: &Args, name: &str) -> Result<Option<T>, Error> {
    args.optional(name)
        .map(|v| {
            v.parse()
                .map_err(|_| Error::Usage(format!("{name}: cannot parse {v:?}")))
        })
        .transpose()
}

fn config_from(args: &Args) -> Result<Config, Error> {
    let mut config = Config::default();
    if let Some(width) = parse_number(args, "--width")? {
        config.width = width;
    }
    match (
        parse_number::<f64>(args, "--bits")?,
        parse_number::<f64>(args, "--fp-rate")?,
    ) {
        (Some(_), Some(_)) => return Err(Error::Usage("--bits and --fp-rate exclude each other".into())),
        (Some(bits), None) => config.precision = Precision::ResultBits(bits),
        (None, Some(p)) => config.precision = Precision::FpRate(p),
        (None, None) => {}
    }
    if args.flag("--homogeneous") {
        config.mode = Mode::Homogeneous;
    }
    config.smash = args.flag("--smash");
    config.first_coeff_always_one = !args.flag("--no-first-coeff-one");
    if let Some(chance) = args.optional("--failure-chance") {
        config.failure_chance = match chance {
            "2" => ConstructionFailureChance::OneIn2,
            "20" => ConstructionFailureChance::OneIn20,
            "1000" => ConstructionFailureChance::OneIn1000,
            other => {
                return Err(Error::Usage(format!(
                    "--failure-chance must be 2, 20 or 1000 (one in N), got {other:?}"
                )))
            }
        };
    }
    config.slot_overhead = parse_number(args, "--overhead")?;
    if let Some(seed) = parse_number(args, "--seed")? {
        config.seed = seed;
    }
    if let Some(max_seeds) = parse_number(args, "--max-seeds")? {
        config.max_seeds = max_seeds;
    }
    config.validate().map_err(|e| Error::Usage(e.to_string()))?;
    Ok(config)
}

/// A progress line on stderr, redrawn in place; silent unless stderr is a
/// terminal and the job is large.
struct Progress {
    on: bool,
    total: usize,
    shown: usize,
}

impl Progress {
    fn new(total: usize) -> Self {
        Self {
            on: total >= PROGRESS_MIN_KEYS && std::io::stderr().is_terminal(),
            total,
            shown: usize::MAX,
        }
    }

    fn say(&self, what: &str) {
        if self.on {
            eprint!("\r\x1b[K{what}");
        }
    }

    fn hashed(&mut self, done: usize) {
        let percent = done * 100 / self.total.max(1);
        if self.on && percent != self.shown {
            self.shown = percent;
            self.say(&format!("hashing keys: {percent:3}% ({done}/{})", self.total));
        }
    }

    fn done(&self, what: &str) {
        if self.on {
            eprintln!("\r\x1b[K{what}");
        }
    }
}

/// Options that configure a filter built from keys (meaningless with
/// `--from-rocksdb`, whose filter is already built).
const CONFIG_OPTIONS: &[&str] = &[
    "--width",
    "--bits",
    "--fp-rate",
    "--failure-chance",
    "--overhead",
    "--seed",
    "--max-seeds",
];
/// Flags with the same role as [`CONFIG_OPTIONS`].
const CONFIG_FLAGS: &[&str] = &["--homogeneous", "--smash", "--no-first-coeff-one", "--hex"];

/// `ribbon build --standalone ...` (the arguments after `build`).
pub fn build(argv: &[String]) -> Result<(), Error> {
    let args = Args::parse(
        argv,
        &[
            CONFIG_OPTIONS,
            &["--keys", "--from-rocksdb", "--num-keys", "--out"],
        ]
        .concat(),
        &[CONFIG_FLAGS, &["--standalone", "--rocksdb"]].concat(),
    )?;
    if !args.flag("--standalone") {
        return Err(Error::Usage("build --standalone expected".into()));
    }
    let out = args.required("--out")?;
    let filter = match (args.optional("--keys"), args.optional("--from-rocksdb")) {
        (Some(_), Some(_)) => {
            return Err(Error::Usage(
                "--keys and --from-rocksdb exclude each other".into(),
            ))
        }
        (None, None) => return Err(Error::Usage("--keys or --from-rocksdb is required".into())),
        (Some(path), None) => {
            if args.optional("--num-keys").is_some() {
                return Err(Error::Usage("--num-keys goes with --from-rocksdb".into()));
            }
            build_from_keys(&args, path)?
        }
        (None, Some(path)) => {
            let configured = CONFIG_OPTIONS
                .iter()
                .chain(CONFIG_FLAGS)
                .find(|o| args.optional(o).is_some() || args.flag(o));
            if let Some(o) = configured {
                return Err(Error::Usage(format!(
                    "{o} does not apply to --from-rocksdb (the block fixes the filter)"
                )));
            }
            let block = std::fs::read(path).map_err(|e| Error::Failed(format!("cannot read {path}: {e}")))?;
            let num_keys = parse_number(&args, "--num-keys")?.unwrap_or(0);
            Ribbon::from_rocksdb(&block, num_keys).map_err(|e| Error::Failed(format!("{path}: {e}")))?
        }
    };
    let bytes = if args.flag("--rocksdb") {
        filter.to_rocksdb().map_err(|e| Error::Failed(e.to_string()))?
    } else {
        filter.into_bytes()
    };
    std::fs::write(out, &bytes).map_err(|e| Error::Failed(format!("cannot write {out}: {e}")))
}

fn build_from_keys(args: &Args, path: &str) -> Result<Ribbon, Error> {
    let config = config_from(args)?;
    let keys = read_keys(path, args.flag("--hex"))?;
    let mut progress = Progress::new(keys.len());
    let mut hashes = Vec::with_capacity(keys.len());
    for chunk in keys.chunks(16_384) {
        hashes.extend(chunk.iter().map(|k| get_slice_hash64(k)));
        progress.hashed(hashes.len());
    }
    drop(keys);
    if let Ok(plan) = config.plan(hashes.len() as u64) {
        progress.say(&format!(
            "banding {} keys into {} slots...",
            hashes.len(),
            plan.num_slots
        ));
    }
    let filter = Ribbon::from_hashes(&hashes, &config).map_err(|e| match e {
        sa::Error::InvalidConfig { .. } => Error::Usage(e.to_string()),
        _ => Error::Failed(e.to_string()),
    })?;
    progress.done(&format!(
        "built: {} keys, {} bytes, {:.3} bits/key, expected FP rate {:.6}",
        filter.num_keys(),
        filter.as_bytes().len(),
        filter.bits_per_key(),
        filter.expected_fp_rate()
    ));
    Ok(filter)
}

fn read_filter(path: &str) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|e| Error::Failed(format!("cannot read {path}: {e}")))
}

fn load<'a>(path: &str, bytes: &'a [u8]) -> Result<RibbonRef<'a>, Error> {
    RibbonRef::from_bytes(bytes).map_err(|e| Error::Failed(format!("{path}: {e}")))
}

/// `ribbon query --filter FILE --keys FILE [--hex] [--batch]` for a
/// standalone filter file: prints 1 (may match) or 0 (definitely not) per
/// key.
pub fn query(argv: &[String]) -> Result<(), Error> {
    let args = Args::parse(argv, &["--filter", "--keys"], &["--hex", "--batch"])?;
    let path = args.required("--filter")?;
    let bytes = read_filter(path)?;
    let filter = load(path, &bytes)?;
    let keys = read_keys(args.required("--keys")?, args.flag("--hex"))?;
    let answers: Vec<bool> = if args.flag("--batch") {
        filter.contains_many(&keys)
    } else {
        keys.iter().map(|k| filter.contains(k)).collect()
    };
    crate::commands::write_answers(answers)
}

/// `ribbon info --filter FILE` for a standalone filter file.
pub fn info(argv: &[String]) -> Result<(), Error> {
    let args = Args::parse(argv, &["--filter"], &[])?;
    let path = args.required("--filter")?;
    let bytes = read_filter(path)?;
    let f = load(path, &bytes)?;
    println!("{}", describe(&f));
    Ok(())
}

/// One line describing a standalone filter.
fn describe(f: &RibbonRef<'_>) -> String {
    let chance = match f.failure_chance() {
        Some(ConstructionFailureChance::OneIn2) => "1/2",
        Some(ConstructionFailureChance::OneIn20) => "1/20",
        Some(ConstructionFailureChance::OneIn1000) => "1/1000",
        None => "n/a",
    };
    let upper = f.upper_num_columns();
    let columns = match f.upper_start_block() {
        0 => format!("{upper} columns"),
        b => format!("{} columns in blocks 0..{b}, {upper} after", upper - 1),
    };
    format!(
        "standalone Ribbon v{}: {:?}, width {}, first_coeff_always_one {}, smash {}, failure chance {chance}, \
         seed {}, {} keys, {} slots ({} blocks), {columns}, \
         {} bytes ({} solution), {:.3} bits/key, expected FP rate {:.6}",
        sa::file::VERSION,
        f.mode(),
        f.width(),
        f.first_coeff_always_one(),
        f.smash(),
        f.seed(),
        f.num_keys(),
        f.num_slots(),
        f.num_blocks(),
        f.as_bytes().len(),
        f.solution_len(),
        f.bits_per_key(),
        f.expected_fp_rate()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn config(s: &str) -> Result<Config, Error> {
        let args = Args::parse(
            &argv(s),
            &[
                "--width",
                "--bits",
                "--fp-rate",
                "--failure-chance",
                "--overhead",
                "--seed",
                "--max-seeds",
            ],
            &["--homogeneous", "--smash", "--no-first-coeff-one"],
        )?;
        config_from(&args)
    }

    #[test]
    fn parses_every_setting() {
        let c = config(
            "--width 64 --bits 7.5 --homogeneous --smash --no-first-coeff-one --failure-chance 1000 \
             --overhead 0.2 --seed 9 --max-seeds 3",
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
            }
        );
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
        ] {
            assert!(matches!(config(bad), Err(Error::Usage(_))), "{bad}");
        }
    }

    #[test]
    fn detects_standalone_requests_and_files() {
        assert!(is_standalone_build(&argv("--standalone --keys k --out o")));
        assert!(!is_standalone_build(&argv(
            "--policy bloomfilter:10 --keys k --out o"
        )));
        assert_eq!(filter_path(&argv("--keys k --filter f.rbn")), Some("f.rbn"));
        assert_eq!(filter_path(&argv("--filter")), None);
        let dir = std::env::temp_dir();
        let standalone = dir.join(format!("ribbon-cli-test-{}.rbn", std::process::id()));
        let f = Ribbon::from_keys(["a", "b"], &Config::default()).unwrap();
        std::fs::write(&standalone, f.as_bytes()).unwrap();
        assert!(is_standalone_file(standalone.to_str().unwrap()));
        std::fs::write(&standalone, b"\xfe\x00\x02\x00\x00").unwrap();
        assert!(!is_standalone_file(standalone.to_str().unwrap()));
        assert!(!is_standalone_file("/nonexistent/ribbon/filter"));
        std::fs::remove_file(&standalone).unwrap();
    }
}
