"""The package's surface: every public name has a docstring and a type stub,
the exception hierarchy, and spark is not imported eagerly."""

import ast
import os
import subprocess
import sys

import rocks_ribbon as rr

STUB = os.path.join(os.path.dirname(rr.__file__), "_rocks_ribbon.pyi")


def stub_names():
    tree = ast.parse(open(STUB).read())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def test_every_public_name_has_a_stub_and_a_docstring():
    stubs = stub_names()
    assert "py.typed" in os.listdir(os.path.dirname(rr.__file__))
    for name in rr.__all__:
        assert name in stubs, f"{name} has no stub in _rocks_ribbon.pyi"
        obj = getattr(rr, name)
        if callable(obj):
            assert (obj.__doc__ or "").strip(), f"{name} has no docstring"


def test_every_name_of_the_extension_module_has_a_stub():
    from rocks_ribbon import _rocks_ribbon as ext

    stubs = stub_names()
    public = [n for n in dir(ext) if not n.startswith("_")]
    missing = [n for n in public if n not in stubs]
    assert not missing, f"no stub in _rocks_ribbon.pyi for {missing}"


def test_exceptions_form_one_hierarchy():
    for name in ["IoError", "CorruptionError", "UnsupportedError", "NotAFilterError",
                 "PolicyError", "ConfigError", "ReconcileError", "ClosedError"]:
        assert issubclass(getattr(rr, name), rr.Error)
    assert issubclass(rr.Error, Exception)


def test_spark_is_not_imported_eagerly():
    code = "import rocks_ribbon, sys; assert 'rocks_ribbon.spark' not in sys.modules"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
