// A RocksDB FilterPolicy whose filters are built and read by Rust policies
// (rocks-bridge/src/ffi.rs): the rust.* ones and users' own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "rust/cxx.h"

namespace rocks_bridge {

struct FamilyOptions;

// Adds `name` to RocksDB's ObjectLibrary: the ids "NAME" and "NAME:ARGS"
// create the Rust policy registered under that name (the Rust registry
// checks the name and calls this once per name).
void register_policy_name(rust::Str name);

// The id RocksDB writes to an OPTIONS file for the filter policy `id` (any
// id FilterPolicy::CreateFromString accepts), or "" for the ids that mean
// "no policy". Throws when RocksDB creates no policy from `id`.
rust::String policy_id(rust::Str id);

// Parses `db_options` (RocksDB's DBOptions) and each family's options
// string (ColumnFamilyOptions) with RocksDB's own parser, unknown names
// refused, each from RocksDB's defaults, and writes them as the OPTIONS file
// `file`, which RocksDB then reads back and compares with what it wrote.
// Throws with RocksDB's message on any failure.
void persist_options(rust::Str file, rust::Str db_options,
                     rust::Slice<const FamilyOptions> families);

}  // namespace rocks_bridge
