#!/usr/bin/env bash
# Regenerates the numbers of docs/db-query.md: `ribbon db query` throughput
# and peak RSS on a 5 M-key, two-level database (4 M keys compacted into L6,
# then 1 M more flushed to L0), probed with 2 M keys (half present, half
# random 16-hex-digit keys, so absent), text and --json output.
#
# Usage (from the repository root): scripts/db-query-bench.sh [WORKDIR]
#   WORKDIR (default /var/tmp/dbq-bench5m) holds the database, the keys and
#   a Python virtual environment with rocksdict (RocksDB 9.x from PyPI),
#   which writes the database; all are kept for later runs.
# Needs python3 with venv, /usr/bin/time, and cargo. A documented command,
# not a CI step (writing the database takes about a minute, the queries a
# few seconds).
set -euo pipefail
work=${1:-/var/tmp/dbq-bench5m}
mkdir -p "$work"
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-/var/tmp/target-db}
cargo build --release -q -p ribbon-cli
ribbon="$CARGO_TARGET_DIR/release/ribbon"

if [ ! -x "$work/venv/bin/python" ]; then
  python3 -m venv "$work/venv"
  "$work/venv/bin/pip" install -q rocksdict
fi

if [ ! -e "$work/db/CURRENT" ]; then
  "$work/venv/bin/python" - "$work/db" 5000000 <<'PY'
import shutil, sys
from rocksdict import BlockBasedOptions, Options, Rdict, WriteBatch
path, n = sys.argv[1], int(sys.argv[2])
shutil.rmtree(path, ignore_errors=True)
o = Options(raw_mode=True)
o.create_if_missing(True)
o.set_disable_auto_compactions(True)
o.set_write_buffer_size(512 << 20)
t = BlockBasedOptions()
t.set_bloom_filter(10, False)
o.set_block_based_table_factory(t)
db = Rdict(path, o)
M = 0x9E3779B97F4A7C15
def key(i):
    return b"%016x" % ((i * M) & 0xFFFFFFFFFFFFFFFF)
older = n * 4 // 5
for lo in range(0, n, 100000):
    wb = WriteBatch(raw_mode=True)
    for i in range(lo, min(lo + 100000, n)):
        wb.put(key(i), b"value")
    db.write(wb)
    if lo + 100000 == older:
        db.flush()
        db.compact_range(None, None)   # the older 4 M keys: one L6 file
db.flush()                             # the newer 1 M keys: one L0 file
db.close()
PY
fi

if [ ! -e "$work/keys" ]; then
  python3 - "$work/keys" 5000000 2000000 <<'PY'
import random, sys
out, n, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
M = 0x9E3779B97F4A7C15
rng = random.Random(30)
with open(out, "w") as f:
    for j in range(count):
        if j % 2 == 0:   # present: a key the database holds
            f.write("%016x\n" % ((rng.randrange(n) * M) & 0xFFFFFFFFFFFFFFFF))
        else:            # absent (a random 64-bit key)
            f.write("%016x\n" % rng.getrandbits(64))
PY
fi

keys=$(wc -l < "$work/keys")
echo "database: $work/db; $keys probe keys; $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for mode in text json; do
  flag=; [ "$mode" = json ] && flag=--json
  /usr/bin/time -f "%e %U %S %M" -o "$work/time-$mode" "$ribbon" db query "$work/db" --keys "$work/keys" $flag > /dev/null
  read -r wall user sys rss < "$work/time-$mode"
  python3 - "$mode" "$keys" "$wall" "$user" "$sys" "$rss" <<'PY'
import sys
mode, keys, wall, user, sys_, rss = sys.argv[1], int(sys.argv[2]), *map(float, sys.argv[3:])
cpu = user + sys_
print(f"{mode:5}: wall {wall:.2f} s ({keys / wall / 1e6:.2f} M keys/s), "
      f"CPU {cpu:.2f} s ({keys / cpu / 1e6:.2f} M keys/s on one core), peak RSS {rss / 1024:.0f} MB")
PY
done
