"""SST files written by rocksdict's RocksDB, and by native RocksDB (fixtures)."""

import os

import numpy as np
import pytest

import rocks_ribbon as rr
from conftest import FIXTURES, fp_bound, key, options, rocksdict, ssts

N = 20_000
QUERIES = 50_000


@pytest.fixture(scope="module")
def bloom_db(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("bloom") / "db")
    db = rocksdict.Rdict(path, options(10.0))
    for i in range(N):
        db[key(i)] = b"v%d" % i
    db.flush()
    db.close()
    return path


def test_every_member_may_match_and_fp_rate_is_promised(bloom_db):
    (path,) = ssts(bloom_db)
    with rr.SstFile(path) as sst:
        info = sst.info()
        assert info["filter_kind"] == "FastLocalBloom"
        assert info["num_entries"] == N
        assert info["filter_layout"] == "full"
        members = [key(i) for i in range(N)]
        assert sst.may_match_many(members).all()
        assert sst.may_match_many(np.array(members)).all()
        assert sst.may_match(key(7))
        absent = [b"zz%08d" % i for i in range(QUERIES)]
        fp = int(sst.may_match_many(absent).sum())
        p = info["expected_fp_rate"]
        assert fp <= fp_bound(p, QUERIES), (fp, p)
        with pytest.raises(rr.UnsupportedError):
            sst.prefix_may_match(b"key")
    assert sst.closed
    with pytest.raises(rr.ClosedError):
        sst.may_match(key(1))


def test_prefix_queries(tmp_path):
    path = str(tmp_path / "db")
    db = rocksdict.Rdict(path, options(10.0, prefix=5))
    for i in range(2000):
        db[b"pre%02d-%06d" % (i % 50, i)] = b"v"
    db.flush()
    db.close()
    (f,) = ssts(path)
    sst = rr.SstFile(f)
    assert sst.info()["prefix_extractor"] == "rocksdb.FixedPrefix.5"
    present = [b"pre%02d-zzz" % j for j in range(50)]
    assert sst.prefix_may_match_many(present).all()
    assert sst.prefix_may_match(b"pre07")
    absent = [b"abs%02d-x" % j for j in range(100)] + [b"q%04d" % j for j in range(2000)]
    assert sst.prefix_may_match_many(absent).mean() < 0.1


def test_native_rocksdb_ribbon_fixture_answers_as_rocksdb():
    base = os.path.join(FIXTURES, "v9_8_sst_ribbon")
    if not os.path.exists(base + ".sst"):
        pytest.skip("fixtures not in this checkout")
    read = lambda ext: [line.strip() for line in open(base + ext) if line.strip()]
    keys = [bytes.fromhex(h) for h in read(".keys")]
    probes = [bytes.fromhex(h) for h in read(".probes")]
    expected = [x == "1" for x in read(".expected")]
    sst = rr.SstFile(base + ".sst")
    assert sst.info()["filter_kind"] == "Standard128Ribbon"
    assert sst.may_match_many(keys).all()
    assert sst.may_match_many(probes).tolist() == expected
    with open(base + ".sst", "rb") as f:
        assert rr.SstFile.from_bytes(f.read()).may_match_many(probes).tolist() == expected


def test_errors_name_the_file(tmp_path):
    with pytest.raises(rr.IoError, match="nonexistent"):
        rr.SstFile(str(tmp_path / "nonexistent.sst"))
    bad = tmp_path / "bad.sst"
    bad.write_bytes(b"\0" * 4096)
    with pytest.raises(rr.CorruptionError):
        rr.SstFile(str(bad))
    with pytest.raises(rr.IoError):
        rr.SstFile(str(tmp_path))
