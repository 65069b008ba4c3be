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

// The id RocksDB writes to an OPTIONS file for the filter policy `id` (any
// id FilterPolicy::CreateFromString accepts), or "" for the ids that mean
// "no policy". Throws when RocksDB creates no policy from `id`.
rust::String policy_id(rust::Str id);

}  // namespace rocks_bridge
