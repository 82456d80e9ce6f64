"""Regenerates crates/tessera/tests/fixtures/print.json: NumPy's str() and repr() of many
arrays, the independent reference for Tessera's printing tests.

Run: .venv/bin/python scripts/gen_print_fixtures.py
"""
import json
import pathlib

import numpy as np


class tensor(np.ndarray):
    """A subclass so NumPy's repr says `tensor(` and indents continuation lines to match."""


def case(arr):
    flat = arr.ravel()
    if arr.dtype.kind == "f":
        data = [repr(float(x)) for x in flat]
    elif arr.dtype.kind == "b":
        data = [bool(x) for x in flat]
    else:
        data = [int(x) for x in flat]
    return {
        "dtype": str(arr.dtype),
        "shape": list(arr.shape),
        "data": data,
        "str": str(arr),
        "repr": repr(arr.view(tensor)),
    }


def main():
    rng = np.random.default_rng(20261122)
    arrays = [
        np.array([1.5, 2.0]),
        np.array([0.1, 0.25, -3.0]),
        np.array([1e-5, 1e10]),
        np.array([1.5e-5, 1e10]),
        np.array([1e-100, 1.0]),
        np.array([np.nan, np.inf, -np.inf, 1.0]),
        np.array([np.nan, 1e-5]),
        np.array([np.nan, np.nan]),
        np.array([np.inf]),
        np.array([-0.0, 1.0]),
        np.array([0.0, 0.0]),
        np.array([1 / 3]),
        np.array([1 / 3], dtype=np.float32),
        np.array([123456789.0]),
        np.array([1e16, -2.5]),
        np.array([0.0001, 1.0]),
        np.array([0.1, 0.7], dtype=np.float16),
        np.array([65504.0, -1e-3], dtype=np.float16),
        np.arange(30.0) * 1.1,
        np.arange(2000.0),
        np.arange(2000),
        np.arange(24).reshape(2, 3, 4).astype(np.float32),
        np.arange(5000, dtype=np.int32).reshape(50, 100),
        np.arange(3000, dtype=np.float64).reshape(10, 10, 30) / 7,
        np.arange(40, dtype=np.int64).reshape(2, 2, 2, 5),
        rng.standard_normal((4, 5)),
        rng.standard_normal((3, 7)).astype(np.float32),
        (rng.standard_normal(40) * 1e6).astype(np.float32),
        rng.integers(-128, 127, (6, 6)).astype(np.int8),
        rng.integers(0, 255, 30).astype(np.uint8),
        rng.integers(-(2**62), 2**62, 12),
        rng.integers(0, 2, (3, 4)).astype(bool),
        np.array([True, True]),
        np.array(1.5, dtype=np.float32),
        np.array(2.0),
        np.array(1e20),
        np.array(1.5e-7),
        np.array(-0.0),
        np.array(np.nan),
        np.array(7),
        np.array(-3, dtype=np.int8),
        np.array(True),
        np.array(False),
        np.zeros((0, 3)),
        np.zeros((0,), dtype=np.float32),
        np.zeros((0,)),
        np.zeros((2, 0, 4), dtype=np.int32),
        np.ones((1, 1, 1)),
        np.full((2, 3), 255, dtype=np.uint8),
    ]
    out = pathlib.Path(__file__).resolve().parent.parent / "crates/tessera/tests/fixtures/print.json"
    out.write_text(json.dumps([case(a) for a in arrays], indent=1) + "\n")
    print(f"wrote {len(arrays)} cases to {out}")


if __name__ == "__main__":
    main()
