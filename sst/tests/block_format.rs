//! The entry walk over blocks as RocksDB's `BlockBuilder` writes them
//! (written here by the test SST writer).

mod support;

use ribbon_sst::block_entries::{EntryIter, ValueFormat};
use ribbon_sst::BlockKind;
use support::sst_writer::block;

#[test]
fn walks_delta_encoded_entries() {
    let entries: Vec<(Vec<u8>, Vec<u8>)> = [("apple", "1"), ("apricot", "22"), ("banana", ""), ("band", "4")]
        .iter()
        .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
        .collect();
    for interval in [1, 2, 16] {
        let block = block(&entries, interval);
        let mut it = EntryIter::new(&block, BlockKind::Data, 0, ValueFormat::Plain, 0).unwrap();
        for (k, v) in &entries {
            assert!(it.advance().unwrap());
            assert_eq!(it.key(), k.as_slice());
            assert_eq!(it.value(), v.as_slice());
            assert!(!it.repeats_previous_key());
        }
        assert!(!it.advance().unwrap());
    }
}

#[test]
fn notices_a_key_equal_to_the_previous_one() {
    let block = block(
        &[(b"same".to_vec(), Vec::new()), (b"same".to_vec(), Vec::new())],
        16,
    );
    let mut it = EntryIter::new(&block, BlockKind::Data, 0, ValueFormat::Plain, 0).unwrap();
    assert!(it.advance().unwrap() && !it.repeats_previous_key());
    assert!(it.advance().unwrap() && it.repeats_previous_key());
    assert!(!it.advance().unwrap());
}
