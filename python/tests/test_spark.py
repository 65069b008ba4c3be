"""rocks_ribbon.spark on a local[2] Spark session (issue 35).

The filter built by Spark must have the bytes ``ribbon big build`` writes
for the same keys and settings, have no false negatives, and a false
positive rate within 3 sigma of the configuration's. ``ribbon`` is the
binary named by ``$RIBBON_BIN`` (``scripts/test-spark.sh`` builds it), or
``ribbon`` on ``$PATH``.

Run: ``ROCKS_RIBBON_SPARK_TEST=1 RIBBON_BIN=target/release/ribbon python -m pytest
--noconftest python/tests/test_spark.py`` (``scripts/test-spark.sh``; without
``ROCKS_RIBBON_SPARK_TEST=1`` the module is skipped, so that the package's own
suite, ``scripts/test-python.sh``, does not run minutes of Spark).
"""

import hashlib
import math
import os
import shutil
import subprocess
import sys

import pytest

if os.environ.get("ROCKS_RIBBON_SPARK_TEST") != "1":
    # Minutes of Spark: scripts/test-spark.sh runs it, not every pytest of python/tests.
    pytest.skip("the Spark test: set ROCKS_RIBBON_SPARK_TEST=1 (scripts/test-spark.sh)", allow_module_level=True)

import pyspark  # noqa: E402,F401  (required when asked for: never a silent skip)

from pyspark.sql import SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

from rocks_ribbon import spark as rs  # noqa: E402
from rocks_ribbon._rocks_ribbon import ShardedFilter, key_hash, shard_of_key  # noqa: E402

N = 1_000_000


def ribbon_bin():
    path = os.environ.get("RIBBON_BIN") or shutil.which("ribbon")
    if not path or not os.path.exists(path):
        pytest.fail("the ribbon binary is needed: set RIBBON_BIN (scripts/test-spark.sh builds it)")
    return path


@pytest.fixture(scope="module")
def spark():
    # The Python workers run this interpreter (its virtual environment has the package).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master("local[2]")
        .appName("rocks_ribbon test_spark")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def sha1_keys(spark, start, count):
    """Binary keys: SHA-1 of the decimal counters start.., as Spark computes them."""
    return spark.range(start, start + count).select(
        F.unhex(F.sha1(F.col("id").cast("string"))).alias("key")
    )


def sha1_records(start, count):
    """The same keys in Python, as 20-byte records for ``ribbon big build``."""
    return b"".join(hashlib.sha1(str(i).encode()).digest() for i in range(start, start + count))


def big_build(tmp_path, keys_file, out, shard_bits, *extra):
    subprocess.run(
        [
            ribbon_bin(), "big", "build", "--keys", str(keys_file), "--out", str(out),
            "--shard-bits", str(shard_bits), "--quiet", *extra,
        ],
        check=True,
    )
    return out.read_bytes()


def within_3_sigma(fp, n, p):
    sigma = math.sqrt(p * (1 - p) / n)
    return abs(fp / n - p) <= 3 * sigma, f"{fp} of {n}: {fp / n:.6f}, expected {p:.6f} +- 3 x {sigma:.6f}"


@pytest.fixture(scope="module")
def built(spark, tmp_path_factory):
    """The 10^6-key filter, built once by Spark (3 shard bits: 8 shards)."""
    out = tmp_path_factory.mktemp("spark") / "sha1.rbs"
    summary = rs.build_filter(sha1_keys(spark, 0, N), "key", str(out), bits=7, shard_bits=3)
    return out, summary


def test_same_bytes_as_ribbon_big_build(built, tmp_path):
    out, summary = built
    assert summary.num_keys == N
    assert summary.shard_bits == 3
    keys = tmp_path / "keys.bin"
    keys.write_bytes(sha1_records(0, N))
    reference = big_build(tmp_path, keys, tmp_path / "ref.rbs", 3, "--record-bytes", "20")
    assert out.read_bytes() == reference
    assert summary.file_len == len(reference)
    assert summary.bits_per_key < 7.1


def test_no_false_negatives_through_the_udf(spark, built):
    out, _ = built
    members = sha1_keys(spark, 0, N)
    missed = members.where(~rs.may_contain("key", str(out))).count()
    assert missed == 0


def test_fp_rate_within_3_sigma(spark, built):
    out, summary = built
    non_members = sha1_keys(spark, N, N)
    fp = non_members.where(rs.may_contain("key", str(out))).count()
    ok, why = within_3_sigma(fp, N, summary.expected_fp_rate)
    assert ok, why


def test_string_keys_and_the_join_example(spark, tmp_path):
    n = 50_000
    users = spark.range(n).select(F.sha1(F.col("id").cast("string")).alias("user"))
    out = tmp_path / "users.rbs"
    summary = rs.build_filter(users, "user", str(out), bits=7, shard_bits=2)
    lines = tmp_path / "users.txt"
    lines.write_text("".join(hashlib.sha1(str(i).encode()).hexdigest() + "\n" for i in range(n)))
    assert out.read_bytes() == big_build(tmp_path, lines, tmp_path / "ref.rbs", 2)
    # A table of events, a third of them by users in the filter.
    events = spark.range(3 * n).select(
        F.sha1((F.col("id") * 7 % (3 * n)).cast("string")).alias("user"), F.col("id").alias("event")
    )
    pre = events.where(rs.may_contain("user", str(out)))
    assert pre.count() < 3 * n * 0.4
    direct = sorted(events.join(users, "user").select("event").collect())
    filtered = sorted(pre.join(users, "user").select("event").collect())
    assert filtered == direct
    assert len(direct) == n
    assert summary.num_keys == n


def test_default_shard_bits_nulls_and_other_settings(spark, tmp_path):
    rows = [(b"a",), (None,), (b"b",), (b"",), (b"a",)]
    df = spark.createDataFrame(rows, "k binary")
    out = tmp_path / "small.rbs"
    summary = rs.build_filter(df, "k", str(out), bits=9.5, kind="standard")
    assert summary.shard_bits == rs.choose_shard_bits(4, spark.sparkContext.defaultParallelism) == 0
    assert summary.num_keys == 4  # the null is skipped, the duplicate counted
    keys = tmp_path / "small.txt"
    keys.write_bytes(b"a\nb\n\na\n")
    assert out.read_bytes() == big_build(
        tmp_path, keys, tmp_path / "ref.rbs", 0, "--bits", "9.5", "--kind", "standard"
    )
    got = df.select(rs.may_contain("k", str(out)).alias("m")).collect()
    assert [r.m for r in got] == [True, None, True, True, True]
    # A filter rebuilt at the path after the Column was made is refused, not used.
    column = rs.may_contain("k", str(out))
    other = tmp_path / "other.rbs"
    rs.build_filter(df, "k", str(other), bits=7)
    os.replace(other, out)
    with pytest.raises(Exception, match="rebuilt since"):
        df.select(column).collect()


def test_choose_shard_bits():
    assert rs.choose_shard_bits(0) == 0
    assert rs.choose_shard_bits((1 << 20) - 1, 8) == 0  # one shard: no key spread to share
    assert rs.choose_shard_bits(1 << 22, 1) == 1  # two shards, one per task of 1 core
    assert rs.choose_shard_bits(5 << 22, 1) == 3  # shards of at most 2^22 keys
    assert rs.choose_shard_bits(10**8, 2) == 5
    assert rs.choose_shard_bits(1 << 20, 8) == 4
    assert rs.choose_shard_bits(2_050_000_000, 1) == 9
    with pytest.raises(ValueError):
        rs.choose_shard_bits(-1)


def test_shard_rule_is_the_hash_top_bits():
    for key in [b"", b"a", b"rocks", bytes(range(40))]:
        h = key_hash(key)
        assert shard_of_key(key, 0) == 0
        assert shard_of_key(key, 5) == h >> 59
        assert shard_of_key(key, 20) == h >> 44


def test_bad_input_is_refused(spark, tmp_path):
    ints = spark.range(10)
    with pytest.raises(TypeError, match="string or binary"):
        rs.build_filter(ints, "id", str(tmp_path / "x.rbs"))
    keys = spark.createDataFrame([(b"a",)], "k binary")
    with pytest.raises(ValueError, match="kind"):
        rs.build_filter(keys, "k", str(tmp_path / "x.rbs"), kind="bloom")
    with pytest.raises(ValueError, match="shard_bits"):
        rs.build_filter(keys, "k", str(tmp_path / "x.rbs"), shard_bits=21)
    assert not (tmp_path / "x.rbs").exists()


def test_damaged_file_is_an_error_not_a_false_negative(built, tmp_path):
    out, _ = built
    data = bytearray(out.read_bytes())
    bad = tmp_path / "bad.rbs"
    bad.write_bytes(bytes(data[: len(data) // 2]))
    with pytest.raises(ValueError):
        ShardedFilter(str(bad))
    # A flipped byte in a shard's body: found by its checksum on first use.
    data[len(data) // 2] ^= 0xFF
    bad.write_bytes(bytes(data))
    f = ShardedFilter(str(bad))
    with pytest.raises(ValueError, match="sharded filter file"):
        f.may_contain_many([hashlib.sha1(str(i).encode()).digest() for i in range(2000)])


# Issue 48: a newcomer's virtual environment, not activated. Spark's Python
# workers run $PYSPARK_PYTHON, by default `python3` on PATH, which need not
# have the package ("No module named 'rocks_ribbon'" in every task).


def _env_without_worker_python():
    """This environment as a shell that never activated the venv has it:
    no PYSPARK_PYTHON, and the interpreter's directory off PATH."""
    env = dict(os.environ)
    env.pop("PYSPARK_PYTHON", None)
    env.pop("PYSPARK_DRIVER_PYTHON", None)
    env.pop("VIRTUAL_ENV", None)
    bindir = os.path.dirname(sys.executable)
    env["PATH"] = ":".join(p for p in env.get("PATH", "").split(":") if p and os.path.realpath(p) != os.path.realpath(bindir))
    return env


def test_import_makes_the_workers_run_the_drivers_python():
    code = "import os, rocks_ribbon.spark; print(os.environ.get('PYSPARK_PYTHON'))"
    env = _env_without_worker_python()
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == sys.executable
    # A PYSPARK_PYTHON of the user's is theirs.
    env["PYSPARK_PYTHON"] = "/opt/py/bin/python3"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "/opt/py/bin/python3"


class _FakeContext:
    def __init__(self, master, exe):
        self.master, self.pythonExec = master, exe


def test_a_local_session_whose_workers_lack_the_package_is_one_clear_error():
    with pytest.raises(RuntimeError, match=r"set PYSPARK_PYTHON=") as e:
        rs._check_worker_python(_FakeContext("local[2]", "/bin/false"))
    assert "\n" not in str(e.value) and "/bin/false" in str(e.value)
    rs._check_worker_python(_FakeContext("local[2]", sys.executable))  # this interpreter has it
    rs._check_worker_python(_FakeContext("yarn", "/bin/false"))  # executors elsewhere: not checked here


def test_a_fresh_shell_without_the_venv_on_path_works(tmp_path):
    """The README's Spark lines in a shell that never activated the venv:
    the session is made after `import rocks_ribbon.spark`, PYSPARK_PYTHON
    unset, `python3` on PATH another interpreter (or none)."""
    script = tmp_path / "spark_fresh.py"
    script.write_text(
        "from pyspark.sql import SparkSession\n"
        "from rocks_ribbon import spark as rs\n"
        "spark = SparkSession.builder.master('local[1]').config('spark.ui.enabled', 'false').getOrCreate()\n"
        "users = spark.createDataFrame([('ann@example.com',), ('bob@example.com',)], ['email'])\n"
        f"rs.build_filter(users, 'email', {str(tmp_path / 'users.rbs')!r})\n"
        "events = spark.createDataFrame([('ann@example.com', 1), ('eve@example.com', 2)], ['email', 'n'])\n"
        f"rows = events.where(rs.may_contain('email', {str(tmp_path / 'users.rbs')!r})).join(users, 'email').collect()\n"
        "assert [r.email for r in rows] == ['ann@example.com'], rows\n"
        "spark.stop()\n"
    )
    out = subprocess.run(
        [sys.executable, str(script)], env=_env_without_worker_python(), cwd=tmp_path,
        capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
