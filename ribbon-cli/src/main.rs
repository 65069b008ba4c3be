//! `ribbon`: build and query RocksDB-format filters from key files, without
//! RocksDB.
//!
//! ```text
//! ribbon build --policy POLICY [--format-version N] [--level L | --flush] --keys FILE [--hex] --out FILTER
//! ribbon query --filter FILTER --keys FILE [--hex] [--batch]
//! ribbon info --filter FILTER
//! ribbon sst info|query|dump-filter|verify ...
//! ribbon build --standalone ... / query and info on standalone filter files
//! ```

mod args;
mod commands;
mod keys;
mod sst;
mod standalone;

use std::process::ExitCode;

const USAGE: &str = "\
usage:
  ribbon build --policy POLICY [--format-version N] [--level L | --flush] --keys FILE [--hex] --out FILTER
  ribbon query --filter FILTER --keys FILE [--hex] [--batch]
  ribbon info --filter FILTER
  ribbon sst info FILE.sst|DIR... [--json]
  ribbon sst query FILE.sst --keys FILE [--hex] [--prefix]
  ribbon sst dump-filter FILE.sst --out FILTER
  ribbon sst verify FILE.sst|DIR...

POLICY is a RocksDB filter policy id: ribbonfilter:BITS[:BLOOM_BEFORE_LEVEL],
bloomfilter:BITS, rocksdb.internal.Standard128RibbonFilter:BITS,
rocksdb.internal.FastLocalBloomFilter:BITS, rocksdb.internal.LegacyBloomFilter:BITS.
--format-version defaults to 7 and --level to -1 (an SstFileWriter file);
--flush builds as for a memtable flush. A keys file has one key per line; with
--hex each line is the key in hex (an empty line is the empty key).
`build` writes the filter block contents RocksDB puts in an SST (no block
trailer); `query` prints 1 (may match) or 0 (definitely not) per key.";

/// A failure reported as one line on stderr.
#[derive(Debug)]
pub enum Error {
    /// Bad command line: exit code 2, with the usage.
    Usage(String),
    /// Anything else: exit code 1.
    Failed(String),
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    match commands::run(&argv) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Error::Usage(msg)) => {
            eprintln!("ribbon: {msg}");
            eprintln!("{USAGE}");
            eprintln!("{}", standalone::USAGE);
            ExitCode::from(2)
        }
        Err(Error::Failed(msg)) => {
            eprintln!("ribbon: {msg}");
            ExitCode::from(1)
        }
    }
}
