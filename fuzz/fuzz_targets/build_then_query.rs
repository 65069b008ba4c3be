//! No false negatives: filters built from arbitrary key sets answer "may
//! match" for every key they hold, single and batched, for RocksDB's
//! filter policies at every format_version and for the standalone filter
//! (and its bytes read back, and its RocksDB conversion).
//!
//! Input: a settings byte (policy and format_version), a bits byte, then
//! keys, each a length byte followed by that many bytes.

#![no_main]

use libfuzzer_sys::fuzz_target;
use ribbon::rocksdb::builder::FilterBuilder;
use ribbon::rocksdb::format::FilterReader;
use ribbon::rocksdb::policy::{BuildContext, FilterPolicy};
use ribbon::standalone::{Config, Ribbon, RibbonRef};

fn keys_of(mut data: &[u8]) -> Vec<&[u8]> {
    let mut keys = Vec::new();
    while let Some((&len, rest)) = data.split_first() {
        let len = usize::from(len).min(rest.len());
        keys.push(&rest[..len]);
        data = &rest[len..];
    }
    keys
}

fn assert_all_match(reader: &FilterReader<'_>, keys: &[&[u8]], what: &str) {
    for k in keys {
        assert!(reader.may_match(k), "{what}: false negative for {k:?}");
    }
    assert!(
        reader.may_match_many(keys).iter().all(|&m| m),
        "{what}: batch false negative"
    );
}

fuzz_target!(|data: &[u8]| {
    let [settings, bits, rest @ ..] = data else {
        return;
    };
    let keys = keys_of(rest);
    let bits = 1.0 + f64::from(*bits % 200) / 8.0;
    let family = ["ribbonfilter", "bloomfilter"][usize::from(settings & 1)];
    let format_version = 2 + i32::from((settings >> 1) % 6);
    let policy: FilterPolicy = format!("{family}:{bits}").parse().expect("a valid policy string");
    if let Some(mut builder) = FilterBuilder::new(&policy, &BuildContext::sst_file_writer(format_version)) {
        for k in &keys {
            builder.add_key(k);
        }
        let block = builder.finish();
        let what = format!("{family}:{bits} format_version {format_version}");
        assert_all_match(&FilterReader::new(&block), &keys, &what);
    }

    let width = [32, 64, 128][usize::from(settings >> 4) % 3];
    let config = if settings & 0x80 != 0 {
        Config::homogeneous(width, bits.min(16.0))
    } else {
        Config::standard(width, bits.min(16.0))
    };
    let Ok(filter) = Ribbon::from_keys(&keys, &config) else {
        return;
    };
    assert!(keys.iter().all(|k| filter.contains(k)), "standalone {config:?}");
    assert!(filter.contains_many(&keys).iter().all(|&m| m));
    let view = RibbonRef::from_bytes(filter.as_bytes()).expect("its own bytes read back");
    assert!(keys.iter().all(|k| view.contains(k)));
    if let Ok(block) = view.to_rocksdb() {
        assert_all_match(&FilterReader::new(&block), &keys, "standalone as RocksDB");
    }
});
