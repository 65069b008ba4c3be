"""Sharded Ribbon filters built and queried by Spark (PySpark).

Build one filter file for the keys of a DataFrame column, on any number of
executors, with the bytes ``ribbon big build`` writes for the same keys::

    from rocks_ribbon import spark as rs

    summary = rs.build_filter(users, "email", "/data/users.rbs", bits=7)
    print(summary.bits_per_key)          # about 7.04 for Balanced Ribbon

and use it to drop the rows of a large table that cannot match before a
join (the filter is memory-mapped once per Python worker)::

    events = spark.read.parquet("/lake/events")
    candidates = events.where(rs.may_contain("email", "/data/users.rbs"))
    joined = candidates.join(users, "email")   # same rows as events.join(users, "email")

Install with ``pip install './python[spark]'`` (PySpark, pandas >= 2.2 and
pyarrow with the package). The Python workers must import this package:
when ``PYSPARK_PYTHON`` is unset, importing this module before the first
Spark session makes the workers run the driver's interpreter (a virtual
environment need not be activated); a local session made earlier with
another interpreter is refused with one line saying what to set.

How the build runs (``build_filter``):

1. the column's keys (``string`` as UTF-8 bytes, ``binary`` as they are;
   nulls skipped) are hashed once, in ``mapInArrow`` tasks, with RocksDB's
   64-bit ``GetSliceHash64``, and each hash goes to its shard by the
   container's own shard rule (the hash's top ``shard_bits`` bits,
   ``ShardRouter``); a task sends each shard's hashes as a few large
   binary rows (at most ``FLUSH_HASHES`` hashes buffered per task);
2. ``groupBy("shard").applyInPandas`` puts every hash of a shard in one
   task, which builds the shard with the library (``build_shard``, the
   ``ribbon big shard`` bytes); the shard files are kept on the executors'
   disks (``DISK_ONLY``) so the driver never holds more than one partition;
3. the driver streams the shard files to a local directory, builds the
   (rare) shards no key fell into, and assembles the container
   (``assemble_files``, the ``ribbon big assemble`` bytes) to a temporary
   file renamed over ``out_path``; a path with a scheme other than
   ``file:`` is written locally first and copied with Hadoop's
   ``FileSystem`` (any filesystem Spark can write).

A shard's bytes depend only on the set of its hashes, never on the order a
shuffle delivers them in, so the file equals
``ribbon big build --keys FILE --shard-bits B --bits R --kind K`` for the
same keys (``B`` is ``summary.shard_bits``; the test compares the files).
"""


import math
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Iterator, Optional

from ._rocks_ribbon import (
    MAX_SHARD_BITS,
    ShardedFilter,
    ShardRouter,
    assemble_files,
    build_shard,
)

__all__ = [
    "BuildSummary",
    "build_filter",
    "choose_shard_bits",
    "may_contain",
    "open_filter",
    "FLUSH_HASHES",
    "TARGET_SHARD_KEYS",
]

#: Keys per shard the default shard count aims at (as ``ribbon big build``):
#: headers cost nothing, and a shard builds in about a second.
TARGET_SHARD_KEYS = 1 << 22

#: Hashes a routing task holds before it sends them on (8 bytes each).
FLUSH_HASHES = 1 << 21

_KINDS = ("balanced", "standard", "homogeneous")


def _default_worker_python() -> None:
    """Spark's Python workers run ``$PYSPARK_PYTHON`` (default ``python3``
    on ``$PATH``), which need not be the interpreter that has this package
    (a virtual environment not activated): when ``PYSPARK_PYTHON`` is unset
    and no SparkContext exists yet, the workers of the sessions made from
    now on run this one. Called when this module is imported."""
    if os.environ.get("PYSPARK_PYTHON") or not sys.executable:
        return
    try:
        from pyspark import SparkContext
    except ImportError:
        return
    if getattr(SparkContext, "_active_spark_context", None) is None:
        os.environ["PYSPARK_PYTHON"] = sys.executable


_default_worker_python()

_WORKER_PYTHON_CHECKED: dict = {}


def _check_worker_python(sc) -> None:
    """On a local master, fails with one line when the Python workers'
    interpreter cannot import this package (a session made before this
    module was imported, with ``PYSPARK_PYTHON`` unset), instead of every
    task failing with "No module named 'rocks_ribbon'". On a cluster the
    executors' interpreters are not checked here."""
    master = sc.master or ""
    exe = getattr(sc, "pythonExec", None)
    if not master.startswith("local") or not exe or exe == sys.executable:
        return
    ok = _WORKER_PYTHON_CHECKED.get(exe)
    if ok is None:
        try:
            ok = (
                subprocess.run(
                    [exe, "-c", "import rocks_ribbon"],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    timeout=60,
                ).returncode
                == 0
            )
        except (OSError, subprocess.SubprocessError):
            ok = False
        _WORKER_PYTHON_CHECKED[exe] = ok
    if not ok:
        raise RuntimeError(
            f"Spark's Python workers run {exe!r}, which cannot import rocks_ribbon: "
            f"set PYSPARK_PYTHON={sys.executable} (or import rocks_ribbon.spark) "
            "before the Spark session is created"
        )


@dataclass(frozen=True)
class BuildSummary:
    """What ``build_filter`` wrote.

    Attributes: ``path`` (``out_path``), ``num_keys`` (non-null keys,
    duplicates counted), ``shard_bits`` (``2**shard_bits`` shards),
    ``file_len`` (bytes), ``bits_per_key`` (``8 * file_len / num_keys``)
    and ``expected_fp_rate`` (the shards' configuration's).
    """

    path: str
    num_keys: int
    shard_bits: int
    file_len: int
    bits_per_key: float
    expected_fp_rate: float


def choose_shard_bits(num_keys: int, parallelism: int = 1) -> int:
    """The shard bits ``build_filter`` picks for ``num_keys`` keys.

    The fewest shards of at most ``TARGET_SHARD_KEYS`` keys each, and from
    2**20 keys on at least ``2 * parallelism`` shards so that every core
    builds one; at most ``MAX_SHARD_BITS``. It depends only on its
    arguments (``ribbon big build`` also weighs its memory budget, so pass
    ``--shard-bits`` to compare files).
    """
    if num_keys < 0 or parallelism < 1:
        raise ValueError(f"num_keys {num_keys}, parallelism {parallelism}")
    bits = 0
    while bits < MAX_SHARD_BITS and -(-num_keys // (1 << bits)) > TARGET_SHARD_KEYS:
        bits += 1
    if num_keys >= 1 << 20:
        want = max(1, math.ceil(math.log2(2 * parallelism)))
        bits = max(bits, min(want, MAX_SHARD_BITS))
    return bits


def _large_binary_buffers(array):
    """(offsets bytes, data bytes, offset, length) of a string or binary
    Arrow array, as ``large_binary`` (a ``TypeError`` for other types, a
    ``ValueError`` for nulls)."""
    import pyarrow as pa

    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    t = array.type
    if not (
        pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
    ):
        raise TypeError(f"keys must be string or binary values, not Arrow {t}")
    if array.null_count:
        raise ValueError(f"{array.null_count} null keys in a batch (nulls are filtered before)")
    array = array.cast(pa.large_binary())
    _, offsets, data = array.buffers()
    return (
        offsets.to_pybytes(),
        data.to_pybytes() if data is not None else b"",
        array.offset,
        len(array),
    )


def _route_batches(shard_bits: int):
    """The ``mapInArrow`` function: keys in, ``(shard, hashes)`` rows out."""

    def route(batches: Iterator) -> Iterator:
        import pyarrow as pa

        router = ShardRouter(shard_bits)
        schema = pa.schema([("shard", pa.int32()), ("hashes", pa.binary())])

        def flush():
            pairs = router.drain()
            return pa.RecordBatch.from_arrays(
                [
                    pa.array([s for s, _ in pairs], pa.int32()),
                    pa.array([h for _, h in pairs], pa.binary()),
                ],
                schema=schema,
            )

        for batch in batches:
            router.add_arrow(*_large_binary_buffers(batch.column(0)))
            if router.buffered >= FLUSH_HASHES:
                yield flush()
        if router.buffered:
            yield flush()

    return route


def _build_groups(shard_bits: int, bits: float, kind: str, width: int):
    """The ``applyInPandas`` function: one shard's hash rows in, its shard
    file out."""

    def build(pdf):
        import pandas as pd

        shards = set(int(s) for s in pdf["shard"])
        if len(shards) != 1:
            raise ValueError(f"a group holds shards {sorted(shards)}")
        shard = shards.pop()
        blobs = [bytes(b) for b in pdf["hashes"]]
        file = build_shard(blobs, shard, shard_bits, bits=bits, kind=kind, width=width)
        return pd.DataFrame({"shard": [shard], "file": [file]})

    return build


def _is_local(path: str) -> bool:
    return "://" not in path or path.startswith("file:")


def _local_path(path: str) -> str:
    if path.startswith("file://"):
        return path[len("file://") :]
    if path.startswith("file:"):
        return path[len("file:") :]
    return path


def build_filter(df, column, out_path, bits=7, kind="balanced", *, shard_bits=None, width=64):
    """Builds a sharded Ribbon filter of ``df[column]``'s keys at ``out_path``.

    Keys are the column's ``binary`` values, or its ``string`` values as
    UTF-8 bytes (as ``ribbon big build`` reads text lines); null values are
    skipped; duplicates are kept (they cost nothing). ``bits`` is the
    result bits per key, so the false-positive rate is about ``2**-bits``
    (7: 1/128 at about 7.04 bits/key for ``kind="balanced"``, fractional
    values allowed); ``kind`` is ``"balanced"`` (least space),
    ``"standard"`` or ``"homogeneous"``; ``width`` the Ribbon width (32,
    64 or 128). ``shard_bits`` (``None``: ``choose_shard_bits`` of the
    key count, which costs one ``count()`` pass) sets ``2**shard_bits``
    shards, each built by one task.

    The file has the bytes of ``ribbon big build --shard-bits B --bits
    bits --kind kind --width width`` over the same keys (B is the
    returned ``shard_bits``), and is written whole or not at all
    (a temporary file renamed over ``out_path``). ``out_path`` is a local
    path (on the driver), a ``file:`` URI, or any URI Spark's Hadoop
    ``FileSystem`` can write (``hdfs://``, ``s3a://``: written locally,
    then copied).

    Memory: a routing task holds at most ``FLUSH_HASHES`` hashes; a shard
    task about 64 bytes per key of its shard; the driver one partition of
    shard files and then one shard at a time.

    Returns a ``BuildSummary``. Raises ``TypeError`` for a column that is
    neither string nor binary, ``ValueError`` for bad settings, and
    Spark's exception for a failed task.
    """
    from pyspark import StorageLevel
    from pyspark.sql import functions as F
    from pyspark.sql.types import BinaryType, StringType

    if kind not in _KINDS:
        raise ValueError(f"kind {kind!r}: expected one of {', '.join(_KINDS)}")
    bits = float(bits)
    if not (0 < bits <= 64) or math.isnan(bits):
        raise ValueError(f"bits {bits}: expected a number of result bits above 0")
    field = df.schema[column]
    if not isinstance(field.dataType, (BinaryType, StringType)):
        raise TypeError(
            f"column {column!r} is {field.dataType.simpleString()}: keys must be string or binary"
        )
    keys = df.select(df[column].cast("binary").alias("key")).where(F.col("key").isNotNull())
    spark = df.sparkSession
    _check_worker_python(spark.sparkContext)
    if shard_bits is None:
        parallelism = spark.sparkContext.defaultParallelism
        shard_bits = choose_shard_bits(keys.count(), parallelism)
    shard_bits = int(shard_bits)
    if not 0 <= shard_bits <= MAX_SHARD_BITS:
        raise ValueError(f"shard_bits {shard_bits}: expected 0..{MAX_SHARD_BITS}")
    # Checks the configuration on the driver before any task runs.
    build_shard([], 0, shard_bits, bits=bits, kind=kind, width=width)

    routed = keys.mapInArrow(_route_batches(shard_bits), "shard int, hashes binary")
    # One shuffle partition per shard, up to a few per core: not the 200
    # of spark.sql.shuffle.partitions, each a task (and a driver fetch).
    partitions = min(1 << shard_bits, 4 * spark.sparkContext.defaultParallelism)
    routed = routed.repartition(partitions, "shard")
    shards = routed.groupBy("shard").applyInPandas(
        _build_groups(shard_bits, bits, kind, width), "shard int, file binary"
    )
    shards = shards.persist(StorageLevel.DISK_ONLY)
    local_out = _local_path(out_path) if _is_local(out_path) else None
    work_parent = os.path.dirname(os.path.abspath(local_out)) if local_out else None
    work = tempfile.mkdtemp(prefix=".rocks-ribbon-spark-", dir=work_parent)
    try:
        # One job builds every shard in parallel; then the cached files
        # are streamed to the driver one partition at a time.
        shards.count()
        paths = [os.path.join(work, f"s{i:06}.rbn") for i in range(1 << shard_bits)]
        seen = set()
        for row in shards.toLocalIterator():
            if row.shard in seen or not 0 <= row.shard < 1 << shard_bits:
                raise ValueError(f"shard {row.shard} built twice or out of range")
            seen.add(row.shard)
            with open(paths[row.shard], "wb") as f:
                f.write(row.file)
        for i in range(1 << shard_bits):
            if i not in seen:
                with open(paths[i], "wb") as f:
                    f.write(build_shard([], i, shard_bits, bits=bits, kind=kind, width=width))
        target = local_out if local_out else os.path.join(work, "filter.rbs")
        file_len = assemble_files(shard_bits, paths, target)
        view = ShardedFilter(target)
        summary = BuildSummary(
            path=out_path,
            num_keys=view.num_keys,
            shard_bits=shard_bits,
            file_len=file_len,
            bits_per_key=view.bits_per_key,
            expected_fp_rate=view.expected_fp_rate,
        )
        del view
        if local_out is None:
            jvm = spark.sparkContext._jvm
            conf = spark.sparkContext._jsc.hadoopConfiguration()
            dst = jvm.org.apache.hadoop.fs.Path(out_path)
            fs = dst.getFileSystem(conf)
            fs.copyFromLocalFile(False, True, jvm.org.apache.hadoop.fs.Path("file://" + target), dst)
        return summary
    finally:
        shards.unpersist()
        shutil.rmtree(work, ignore_errors=True)


_OPEN: dict = {}


def open_filter(path: str) -> ShardedFilter:
    """The ``ShardedFilter`` at local ``path``, memory-mapped once per
    process and cached (a file replaced by a rename is opened again)."""
    st = os.stat(path)
    key = (os.path.abspath(path), st.st_ino, st.st_mtime_ns, st.st_size)
    f = _OPEN.get(key)
    if f is None:
        f = ShardedFilter(path)
        _OPEN.clear()  # one filter per worker at a time: old maps are released
        _OPEN[key] = f
    return f


def _resolve(path: str, shipped: Optional[str]) -> str:
    if shipped is not None:
        try:
            from pyspark import SparkFiles

            candidate = SparkFiles.get(shipped)
            if os.path.exists(candidate):
                return candidate
        except Exception:  # noqa: BLE001 - no SparkFiles here: the path itself
            pass
    return _local_path(path)


def may_contain(col, filter_path: str):
    """A boolean Column: False where ``col``'s key is certainly not in the
    filter at ``filter_path``, True where it may be, null for a null key.

    ``col`` is a column name or ``Column`` of ``string`` (UTF-8 bytes) or
    ``binary`` keys, as given to ``build_filter``; any other type raises
    ``TypeError`` in the task (never a silent conversion). The filter is
    shipped to the executors with ``SparkContext.addFile`` when
    ``filter_path`` is a local file on the driver (otherwise it must be
    readable at that path on every executor), and each Python worker
    memory-maps it once; a damaged shard raises ``ValueError`` (its checksum
    is verified the first time it is used), never a false negative.

    Example, to drop the rows of a large table that cannot join::

        big.where(may_contain("user_id", "/data/users.rbs")).join(users, "user_id")
    """
    import pandas as pd
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F
    from pyspark.sql.functions import pandas_udf

    local = _local_path(filter_path)
    shipped = None
    head = None
    spark = SparkSession.getActiveSession()
    if spark is not None:
        _check_worker_python(spark.sparkContext)
    if os.path.isfile(local):
        ShardedFilter(local)  # fails now, on the driver, for a bad file
        # The container's header (key count, length, index checksum): a
        # worker refuses a copy with another one (a file rebuilt at the
        # same path after Spark shipped it), never answering from it.
        with open(local, "rb") as f:
            head = f.read(64)
        if spark is not None and spark.sparkContext.master.split("[")[0] != "local":
            spark.sparkContext.addFile(local)
            shipped = os.path.basename(local)

    @pandas_udf("boolean")
    def _may_contain(keys: pd.Series) -> pd.Series:
        import numpy as np
        import pyarrow as pa

        path = _resolve(filter_path, shipped)
        f = open_filter(path)
        if head is not None:
            with open(path, "rb") as h:
                if h.read(64) != head:
                    raise ValueError(
                        f"{path}: not the filter {filter_path} was when may_contain was called "
                        "(rebuilt since?): call may_contain again, with a new path on a cluster"
                    )
        array = pa.array(keys, from_pandas=True)
        if pa.types.is_null(array.type):
            return pd.Series([None] * len(keys), dtype="boolean")
        valid = array.is_valid()
        present = array.filter(valid)
        answers = np.frombuffer(f.may_contain_arrow(*_large_binary_buffers(present)), dtype=bool)
        if len(present) == len(array):
            return pd.Series(answers, dtype="boolean")
        out = np.zeros(len(array), dtype=bool)
        mask = valid.to_numpy(zero_copy_only=False)
        out[mask] = answers
        result = pd.Series(out, dtype="boolean")
        result[~mask] = pd.NA
        return result

    column = F.col(col) if isinstance(col, str) else col
    return _may_contain(column)
