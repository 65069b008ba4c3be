// RocksDB FilterPolicy objects for the filters users implement in Rust
// (rocks-bridge/src/custom): one C++ policy class that forwards every
// builder and reader call to a registered Rust policy.
#pragma once

#include "rust/cxx.h"

namespace rocks_bridge {

// Adds `name` to RocksDB's ObjectLibrary: the ids "NAME" and "NAME:ARGS"
// create the Rust policy registered under that name. The Rust side checks
// the name and calls this once per name.
void register_custom_policy_name(rust::Str name);

}  // namespace rocks_bridge
