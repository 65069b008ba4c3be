"""RocksDB-format filter blocks and standalone/Balanced Ribbon filters."""

import numpy as np
import pytest

import rocks_ribbon as rr
from conftest import fp_bound, key

N = 20_000
QUERIES = 100_000
MEMBERS = [key(i) for i in range(N)]
ABSENT = [b"absent%08d" % i for i in range(QUERIES)]


@pytest.mark.parametrize(
    "policy,kind",
    [
        ("ribbonfilter:10", "Standard128Ribbon"),
        ("ribbonfilter:7", "Standard128Ribbon"),
        ("bloomfilter:10", "FastLocalBloom"),
    ],
)
def test_build_filter_members_match_and_fp_rate_is_promised(policy, kind):
    data = rr.build_filter(policy, MEMBERS)
    r = rr.FilterReader(data)
    assert r.kind == kind
    assert r.may_match_many(MEMBERS).all()
    assert all(r.may_match(k) for k in MEMBERS[:1000])
    fp = int(r.may_match_many(ABSENT).sum())
    p = r.expected_fp_rate(N)
    assert 0 < p < 0.05
    assert fp <= fp_bound(p, QUERIES), (fp, p)
    # Not vacuous: an empty filter block is refused, a tiny filter matches little.
    assert fp > 0


def test_legacy_bloom_under_format_version_4():
    data = rr.build_filter("bloomfilter:10", MEMBERS[:2000], format_version=4)
    r = rr.FilterReader(data)
    assert r.kind == "LegacyBloom"
    assert r.may_match_many(MEMBERS[:2000]).all()


def test_numpy_s_array_gives_the_list_answers():
    r = rr.FilterReader(rr.build_filter("ribbonfilter:10", MEMBERS))
    mixed = MEMBERS[:500] + ABSENT[:5000]
    a = np.array(mixed, dtype="S%d" % max(map(len, mixed)))
    got = r.may_match_many(a)
    assert got.dtype == np.bool_ and got.shape == (len(mixed),)
    assert (got == r.may_match_many(mixed)).all()
    assert got[:500].all()
    # NumPy pads short keys with NULs and strips them on reading: so does the reader.
    padded = np.array([b"key00000001"], dtype="S30")
    assert r.may_match_many(padded)[0]
    assert r.may_match_many(tuple(mixed[:10])).all() == r.may_match_many(mixed[:10]).all()
    assert r.may_match_many(iter(mixed[:10])).tolist() == r.may_match_many(mixed[:10]).tolist()
    assert r.may_match_many([]).shape == (0,)


def test_bad_keys_and_bytes_raise():
    r = rr.FilterReader(rr.build_filter("ribbonfilter:10", MEMBERS[:100]))
    with pytest.raises(TypeError, match=r"keys\[1\]: bytes expected, got str"):
        r.may_match_many([b"a", "b"])
    with pytest.raises(TypeError, match="one bytes object"):
        r.may_match_many(b"abc")
    with pytest.raises(TypeError, match="dtype"):
        r.may_match_many(np.arange(3))
    with pytest.raises(rr.NotAFilterError):
        rr.FilterReader(b"")
    with pytest.raises(rr.NotAFilterError):
        rr.FilterReader(b"not a filter at all")
    with pytest.raises(rr.PolicyError):
        rr.build_filter("ribbonfilter:ten", [b"a"])
    with pytest.raises(rr.Error):
        rr.build_filter("nofilter", [b"a"])


@pytest.mark.parametrize("balanced,width", [(False, 128), (True, 64), (False, 32)])
def test_standalone_ribbon_round_trips(tmp_path, balanced, width):
    f = rr.Ribbon.build(MEMBERS, bits=7, width=width, balanced=balanced)
    info = f.info()
    assert info["balanced"] is balanced and info["width"] == width
    assert len(f) == N
    assert f.may_match_many(MEMBERS).all()
    fp = int(f.may_match_many(ABSENT).sum())
    assert fp <= fp_bound(info["expected_fp_rate"], QUERIES), (fp, info)
    data = f.to_bytes()
    g = rr.Ribbon.from_bytes(data)
    assert (g.may_match_many(ABSENT) == f.may_match_many(ABSENT)).all()
    p = tmp_path / "filter.rbn"
    p.write_bytes(data)
    with rr.Ribbon.open(p) as m:
        assert m.may_match_many(MEMBERS).all()
        assert (m.may_match_many(ABSENT) == f.may_match_many(ABSENT)).all()
        assert MEMBERS[3] in m
    assert m.closed
    with pytest.raises(rr.ClosedError):
        m.may_match(b"x")


def test_standalone_errors():
    data = bytearray(rr.Ribbon.build(MEMBERS[:1000]).to_bytes())
    data[len(data) // 2] ^= 1
    with pytest.raises(rr.CorruptionError):
        rr.Ribbon.from_bytes(bytes(data))
    with pytest.raises(rr.ConfigError):
        rr.Ribbon.build([b"a"], width=16)
    with pytest.raises(rr.ConfigError):
        rr.Ribbon.build([b"a"], mode="other")
    with pytest.raises(rr.IoError):
        rr.Ribbon.open("/nonexistent/filter")


def test_fp_rate_target():
    f = rr.Ribbon.build(MEMBERS, fp_rate=0.01)
    assert abs(f.info()["target_fp_rate"] - 0.01) < 1e-9
    assert int(f.may_match_many(ABSENT).sum()) <= fp_bound(f.info()["expected_fp_rate"], QUERIES)


def test_rocksdb_ribbon_converts_with_the_same_answers():
    data = rr.build_filter("ribbonfilter:10", MEMBERS)
    r = rr.FilterReader(data)
    s = rr.Ribbon.from_rocksdb(data, N)
    assert (s.may_match_many(ABSENT) == r.may_match_many(ABSENT)).all()
    with pytest.raises(rr.NotAFilterError):
        rr.Ribbon.from_rocksdb(rr.build_filter("bloomfilter:10", MEMBERS[:100]))
