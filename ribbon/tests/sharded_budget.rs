//! The sharded reader's written memory budget (`ShardedRef`'s docs):
//! opening allocates `BYTES_PER_SHARD` bytes per shard and nothing more,
//! measured with a counting allocator on a container of 2^14 shards; the
//! budget is then at most `BYTES_PER_SHARD / 88` times the file's length.

use ribbon::standalone::sharded::{assemble, build_shard_file, ShardedRef};
use ribbon::standalone::Config;

#[path = "../../sst/tests/support/counting_alloc.rs"]
mod counting_alloc;
use counting_alloc::peak_of;

#[test]
fn opening_allocates_the_documented_bytes_per_shard() {
    let bits = 14u32;
    let config = Config::standard(64, 7.0);
    let files: Vec<Vec<u8>> = (0..1usize << bits)
        .map(|i| build_shard_file(&[], i, bits, &config).unwrap())
        .collect();
    let refs: Vec<&[u8]> = files.iter().map(Vec::as_slice).collect();
    let container = assemble(bits, &refs).unwrap();
    drop(files);
    let (_view, used) = peak_of(|| {
        let view = ShardedRef::from_bytes(&container).unwrap();
        view.verify().unwrap();
        assert!(!view.contains_hash(7));
        view
    });
    let budget = ShardedRef::BYTES_PER_SHARD << bits;
    println!(
        "2^{bits} shards: {used} bytes at open ({} per shard; budget {} per shard); file {} bytes",
        used >> bits,
        ShardedRef::BYTES_PER_SHARD,
        container.len()
    );
    // Near the limit: at least 90 % of the budget is the per-shard state,
    // and nothing beyond it (but a few hundred bytes of error text).
    assert!(used <= budget + 1024, "{used} > {budget}");
    assert!(
        used >= budget / 10 * 9,
        "{used} far below {budget}: the budget is not what it says"
    );
    // The file-length bound the docs state.
    assert!(used as u64 <= container.len() as u64 * ShardedRef::BYTES_PER_SHARD as u64 / 88);
}
