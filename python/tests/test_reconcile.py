"""Reconciliation: the diff of two rocksdict databases is the known difference."""

import pytest

import rocks_ribbon as rr
from conftest import key, options, rocksdict


def write_db(path, keys, deleted=()):
    db = rocksdict.Rdict(path, options(10.0))
    for k in keys:
        db[k] = b"v"
    db.flush()
    for k in deleted:
        del db[k]
    db.close()


def test_diff_of_two_databases_is_the_known_difference(tmp_path):
    common = [key(i) for i in range(20_000)]
    only_a = [b"a-only-%04d" % i for i in range(40)]
    only_b = [b"b-only-%04d" % i for i in range(25)]
    deleted_in_b = common[100:110]
    write_db(str(tmp_path / "a"), common + only_a)
    write_db(str(tmp_path / "b"), common + only_b, deleted=deleted_in_b)
    want_a = sorted(only_a + deleted_in_b)
    want_b = sorted(only_b)
    est_a = rr.Sketch.of_db(str(tmp_path / "a"))
    est_b = rr.Sketch.of_db(str(tmp_path / "b"))
    estimate = est_a.estimate_difference(est_b)
    assert estimate > 0
    with pytest.raises(rr.ReconcileError, match="cells"):
        est_a.diff(est_b)
    cells = rr.recommended_cells(estimate)
    a = rr.Sketch.of_db(str(tmp_path / "a"), cells)
    b = rr.Sketch.of_db(str(tmp_path / "b"), cells)
    assert a.keys == len(common) + len(only_a)
    got_a, got_b = a.diff(b)
    assert (got_a, got_b) == (want_a, want_b)
    # Through the file bytes, and from keys.
    a2 = rr.Sketch.from_bytes(a.to_bytes())
    assert a2.diff(b) == (want_a, want_b)
    c = rr.Sketch(cells)
    c.insert_many(common + only_b + only_b[:3])  # repeats are added once
    assert c.diff(b) == (sorted(deleted_in_b), [])


def test_too_small_and_mismatched_sketches_raise():
    a, b = rr.Sketch(6), rr.Sketch(6)
    a.insert_many([b"k%d" % i for i in range(200)])
    with pytest.raises(rr.ReconcileError):
        a.diff(b)
    with pytest.raises(rr.ReconcileError):
        a.diff(rr.Sketch(9))
    with pytest.raises(rr.CorruptionError):
        rr.Sketch.from_bytes(b"RBNSKTCH garbage")
