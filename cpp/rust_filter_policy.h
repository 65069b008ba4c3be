// A RocksDB FilterPolicy whose filters are built and read by Rust policies
// (rocks-bridge/src/ffi.rs): the rust.* ones and users' own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "rust/cxx.h"

namespace rocks_bridge {

// Adds `name` to RocksDB's ObjectLibrary: the ids "NAME" and "NAME:ARGS"
// create the Rust policy registered under that name (the Rust registry
// checks the name and calls this once per name).
void register_policy_name(rust::Str name);

// Sets BlockBasedTableOptions::filter_policy of the block-based table factory
// of a `rocksdb_options_t*` (passed as an address) to the policy `id` (any id
// FilterPolicy::CreateFromString accepts). Throws when the table factory is
// not block-based or the id is not accepted.
void set_table_filter_policy(size_t options_address, rust::Str id);

// The id of the filter policy in the block-based table factory of a
// `rocksdb_options_t*`, or "" when it has none.
rust::String table_filter_policy_id(size_t options_address);

}  // namespace rocks_bridge
