"""The package ships `py.typed` and a stub of the whole namespace (docs/design.md N5):
the committed stub is what `stubgen.py` writes from the built package, mypy accepts a sample
program written against it, and reports the type errors of a bad one (so the stub is seen)."""

import subprocess
import sys
from pathlib import Path

import pytest

import tessera as ts

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))
import stubgen  # noqa: E402

pytest.importorskip("mypy")


def test_package_is_typed_and_the_stub_is_up_to_date():
    package = Path(ts.__file__).parent
    assert (package / "py.typed").exists()
    stub = package / "__init__.pyi"
    assert stub.read_text() == stubgen.render(), \
        "stale stub: run python crates/tessera-py/stubgen.py after changing the API"


def mypy(path):
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(path)],
        capture_output=True, text=True, timeout=600, cwd=path.parent,
    )


def test_mypy_accepts_a_program_written_against_the_stub():
    r = mypy(HERE / "typing_samples" / "good.py")
    assert r.returncode == 0, r.stdout + r.stderr


def test_mypy_reports_the_errors_of_a_bad_program():
    r = mypy(HERE / "typing_samples" / "bad.py")
    assert r.returncode == 1
    assert 'Too many positional arguments for "zeros"' in r.stdout  # dtype is keyword-only
    assert "bad.py:4: error: Incompatible types in assignment" in r.stdout
    assert 'Module has no attribute "no_such_function"' in r.stdout
