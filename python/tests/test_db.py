"""Database directories written by rocksdict: live keys and Get paths,
against rocksdict's own iterator, Get and statistics counters."""

import pytest

import rocks_ribbon as rr
from conftest import copy_db, key, options, rocksdict, ticker


@pytest.fixture(scope="module")
def layered(tmp_path_factory):
    """Three flushed files (with overwrites and deletions between them) and
    unflushed writes in the WAL; the directory is copied before close."""
    root = tmp_path_factory.mktemp("layered")
    src = str(root / "live")
    o = options(10.0)
    db = rocksdict.Rdict(src, o)
    for i in range(0, 3000):
        db[key(i)] = b"a"
    db.flush()
    for i in range(0, 3000, 3):
        del db[key(i)]
    for i in range(3000, 4000):
        db[key(i)] = b"b"
    db.flush()
    for i in range(1, 3000, 7):
        db[key(i)] = b"c"
    db.flush()
    # Unflushed: in the WAL only.
    for i in range(4000, 4500):
        db[key(i)] = b"d"
    for i in range(3000, 3100):
        del db[key(i)]
    copy = copy_db(db, src, str(root / "copy"))
    probes = [key(i) for i in range(0, 4600, 3)] + [b"nokey%d" % i for i in range(300)]
    expected = []
    for p in probes:
        useful = ticker(o, "rocksdb.bloom.filter.useful")
        positive = ticker(o, "rocksdb.bloom.filter.full.positive")
        found = db.get(p) is not None
        expected.append(
            (
                ticker(o, "rocksdb.bloom.filter.useful") - useful,
                ticker(o, "rocksdb.bloom.filter.full.positive") - positive,
                found,
            )
        )
    live = list(db.keys())
    db.close()
    return copy, live, probes, expected


def test_live_keys_equal_rocksdbs_iterator(layered):
    path, live, _, _ = layered
    with rr.Db(path) as db:
        got = list(db.live_keys())
        assert got == live
        assert len(db.files()) == 3
    assert db.closed
    with pytest.raises(rr.ClosedError):
        db.live_keys()


def test_get_paths_equal_rocksdbs_counters(layered):
    path, _, probes, expected = layered
    # Not vacuous: the filters both skip files and let lookups through.
    assert sum(e[0] for e in expected) > 100 and sum(e[1] for e in expected) > 100
    assert any(e[2] for e in expected) and not all(e[2] for e in expected)
    db = rr.Db(path)
    paths = db.get_paths(probes)
    assert len(paths) == len(probes)
    for p, gp, (useful, positive, found) in zip(probes, paths, expected):
        steps = [s for s in gp["steps"] if s["has_filter"]]
        assert sum(not s["may_match"] for s in steps) == useful, (p, gp)
        assert sum(s["may_match"] for s in steps) == positive, (p, gp)
        assert gp["found"] == found, (p, gp)
    one = db.get_path(probes[1])
    assert one == paths[1]
    assert one["key"] == probes[1]
    # Unflushed writes answer from the memtable.
    assert db.get_path(key(4002))["memtable"] == "value"
    assert db.get_path(key(3001))["memtable"] == "deleted"
    assert db.candidate_files(key(5)) and all(str(f).endswith(".sst") for f in db.candidate_files(key(5)))


def test_live_keys_iterator_is_lazy_and_can_be_dropped(layered):
    path, live, _, _ = layered
    it = rr.Db(path).live_keys()
    assert [next(it) for _ in range(10)] == live[:10]
    del it


def test_missing_database(tmp_path):
    with pytest.raises(rr.IoError):
        rr.Db(str(tmp_path / "none"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(rr.Error):
        rr.Db(str(tmp_path / "empty"))


def test_errors_name_the_directory_once_and_speak_no_cli(tmp_path):
    # Issue 44/48: the reader's message does not repeat the directory, so
    # Python names it (as the CLI and C do), and says no CLI flag alone.
    f = tmp_path / "file.sst"
    f.write_bytes(b"x")
    with pytest.raises(rr.Error) as e:
        rr.Db(str(f))
    msg = str(e.value)
    assert msg.count(str(f)) == 1, msg
    assert "not a database directory" in msg and "rocks_ribbon.SstFile" in msg, msg
    assert "\n" not in msg


def test_list_column_families_as_rocksdb_lists_them(tmp_path):
    src = str(tmp_path / "db")
    o = options(10.0)
    o.create_missing_column_families(True)
    db = rocksdict.Rdict(src, o, column_families={"other": options(10.0), "third cf": options(10.0)})
    db.put(b"k", b"v")
    db.close()
    names = rr.Db.list_column_families(src)
    assert names == rocksdict.Rdict.list_cf(src, options(10.0))
    assert names[0] == "default" and sorted(names) == ["default", "other", "third cf"]
    with pytest.raises(rr.IoError):
        rr.Db.list_column_families(str(tmp_path / "none"))
