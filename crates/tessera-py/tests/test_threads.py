"""Thread count control (docs/design.md P3): TESSERA_NUM_THREADS and set_num_threads, each
checked in a fresh interpreter (the pool is process-wide), with results equal to NumPy's."""

import os
import subprocess
import sys

import pytest

import tessera as ts

SCRIPT = """
import numpy as np, tessera as ts
{setup}
x = np.linspace(-3, 3, 1 << 18).reshape(512, 512)
t = ts.asarray(x)
assert np.allclose(np.asarray(ts.exp(t)), np.exp(x), rtol=1e-15, atol=0)
assert np.allclose(np.asarray(ts.sum(t, axis=0)), x.sum(axis=0), rtol=1e-12, atol=1e-9)
print(ts.get_num_threads())
"""


def run(setup, **env):
    full = dict(os.environ, **env)
    full.pop("RAYON_NUM_THREADS", None)
    out = subprocess.run([sys.executable, "-c", SCRIPT.format(setup=setup)], env=full,
                         capture_output=True, text=True, check=True)
    return int(out.stdout.split()[-1])


def test_environment_variable_sizes_the_pool():
    assert run("", TESSERA_NUM_THREADS="1") == 1
    assert run("", TESSERA_NUM_THREADS="3") == 3


def test_invalid_environment_value_is_ignored():
    assert run("", TESSERA_NUM_THREADS="lots") == run("")


def test_set_num_threads_before_and_after_the_pool_starts():
    assert run("ts.set_num_threads(2)") == 2
    # After a parallel op the pool runs: the call caps the threads kernels use.
    assert run("ts.sum(ts.ones((1 << 18,)))\nts.set_num_threads(1)") == 1


@pytest.mark.parametrize("bad", [0, -3])
def test_set_num_threads_rejects_counts_below_one(bad):
    with pytest.raises(ValueError):
        ts.set_num_threads(bad)


def test_get_num_threads_is_positive():
    assert ts.get_num_threads() >= 1
