//! RocksDB filter blocks (`ribbon::rocksdb::format::FilterReader`): any bytes are
//! read without a panic, and a batch query answers as single queries do.
//!
//! Input: one byte (how many probe keys), then the filter block.

#![no_main]

use libfuzzer_sys::fuzz_target;
use ribbon::rocksdb::format::FilterReader;

fuzz_target!(|data: &[u8]| {
    let Some((&n, block)) = data.split_first() else {
        return;
    };
    let reader = FilterReader::new(block);
    let _ = reader.describe();
    // Up to 255 keys: several batches of 32, so a second batch reuses the
    // batch loop's state.
    let keys: Vec<Vec<u8>> = (0..n).map(|i| vec![i; usize::from(i)]).collect();
    let single: Vec<bool> = keys.iter().map(|k| reader.may_match(k)).collect();
    assert_eq!(reader.may_match_many(&keys), single);
});
