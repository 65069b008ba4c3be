// A RocksDB FilterPolicy whose filters are built and read by the pure-Rust
// `ribbon` crate (through rocks-bridge/src/ffi.rs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "rust/cxx.h"

namespace rocks_bridge {

// Registers the policies in RocksDB's ObjectLibrary (once), so that
// "rust.RibbonFilter:BITS[:BLOOM_BEFORE_LEVEL]" and "rust.BloomFilter:BITS"
// select them wherever RocksDB parses a filter policy.
void register_rust_filter_policies();

// Sets BlockBasedTableOptions::filter_policy of the block-based table factory
// of a `rocksdb_options_t*` (passed as an address) to the policy `id` (any id
// FilterPolicy::CreateFromString accepts). Throws when the table factory is
// not block-based or the id is not accepted.
void set_table_filter_policy(size_t options_address, rust::Str id);

// The id of the filter policy in the block-based table factory of a
// `rocksdb_options_t*`, or "" when it has none.
rust::String table_filter_policy_id(size_t options_address);

}  // namespace rocks_bridge
