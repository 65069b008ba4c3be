#!/usr/bin/env bash
# The main job: build a small database with the filter policies and show
# what was written and how it reads.
source "$(dirname "$0")/env.sh"
cargo run --release -q --bin demo -- "$@"
