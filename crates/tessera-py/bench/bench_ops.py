"""Every everyday operation against NumPy (issue 19): the Array API's elementwise functions,
reductions and array functions that both libraries have, at three sizes (16 elements: per-call
overhead; 64 Ki: in cache; 16 Mi: in memory), on contiguous, transposed and broadcast inputs,
for float32, float64 and int64, basic indexing of a 64^4 tensor with a key that changes
on every call, and the view functions (``view_*`` rows, on two 4-d arrays in turn). Matmul and linalg are bench_linalg.py's.

Each thread count runs in its own child process with ``TESSERA_NUM_THREADS`` (Tessera) and
``OPENBLAS_NUM_THREADS``/``OMP_NUM_THREADS`` (NumPy) set before import: 1, then the default
(the machine's cores). Inputs alternate between two arrays per call; the time is the best
median over repeats. A row whose first ratio is above 0.9 is timed again with four times
longer samples, and that second measurement replaces the first (marked ``*``). A row still
above 0.95 after that is timed five more times (an op row on fresh inputs), after the last
row (round-robin over all such rows), and its ratio is the median of those five draws, printed
with their range ("median of 5"; the look that chose the row is left out): the worst rows of
one draw are mostly noise. Prints the
rows worst first (Tessera time / NumPy time), then a few controls (NumPy's call timed
against itself, as every row is: the noise floor of one run), then ``ratio`` lines:
``worst_op_time_vs_numpy_<n>thread``, one per row (``op_<name>_<dtype>_<layout>_<size>``)
and the named lines of issue 19.

Run: ``python crates/tessera-py/bench/bench_ops.py [--quick] [--only NAME,NAME]``
(``--quick``: 16 and 64 Ki only; ``--only``: the ops whose names start with one of the given
prefixes, e.g. ``--only exp,sum_``).
"""

import itertools
import os
import statistics
import subprocess
import sys
import time

SIZES = {"16": 16, "64Ki": 1 << 16, "16Mi": 1 << 24}


def unary(np, ts):
    """(name, numpy fn, tessera fn, dtypes, domain) of one-operand functions."""
    fl, all_ = ("float32", "float64"), ("float32", "float64", "int64")
    return [
        ("abs", np.abs, ts.abs, all_, "any"), ("negative", np.negative, ts.negative, all_, "any"),
        ("square", np.square, ts.square, all_, "any"), ("sign", np.sign, ts.sign, all_, "any"),
        ("exp", np.exp, ts.exp, fl, "any"), ("expm1", np.expm1, ts.expm1, fl, "any"),
        ("log", np.log, ts.log, fl, "pos"), ("log1p", np.log1p, ts.log1p, fl, "pos"),
        ("log2", np.log2, ts.log2, fl, "pos"), ("log10", np.log10, ts.log10, fl, "pos"),
        ("sqrt", np.sqrt, ts.sqrt, fl, "pos"), ("sin", np.sin, ts.sin, fl, "any"),
        ("cos", np.cos, ts.cos, fl, "any"), ("tan", np.tan, ts.tan, fl, "any"),
        ("tanh", np.tanh, ts.tanh, fl, "any"), ("sinh", np.sinh, ts.sinh, fl, "any"),
        ("cosh", np.cosh, ts.cosh, fl, "any"), ("asin", np.arcsin, ts.asin, fl, "unit"),
        ("acos", np.arccos, ts.acos, fl, "unit"), ("atan", np.arctan, ts.atan, fl, "any"),
        ("asinh", np.arcsinh, ts.asinh, fl, "any"), ("atanh", np.arctanh, ts.atanh, fl, "unit"),
        ("floor", np.floor, ts.floor, fl, "any"), ("ceil", np.ceil, ts.ceil, fl, "any"),
        ("trunc", np.trunc, ts.trunc, fl, "any"), ("round", np.round, ts.round, fl, "any"),
        ("reciprocal", np.reciprocal, ts.reciprocal, fl, "pos"),
        ("isnan", np.isnan, ts.isnan, fl, "any"), ("isfinite", np.isfinite, ts.isfinite, fl, "any"),
        ("signbit", np.signbit, ts.signbit, fl, "any"),
        ("bitwise_invert", np.invert, ts.bitwise_invert, ("int64",), "any"),
        ("logical_not", np.logical_not, ts.logical_not, all_, "any"),
        ("astype_f64", lambda a: a.astype(np.float64), lambda a: ts.astype(a, ts.float64),
         ("float32", "int64"), "any"),
    ]


def binary(np, ts):
    fl, all_ = ("float32", "float64"), ("float32", "float64", "int64")
    return [
        ("add", np.add, ts.add, all_), ("subtract", np.subtract, ts.subtract, all_),
        ("multiply", np.multiply, ts.multiply, all_), ("divide", np.divide, ts.divide, fl),
        ("floor_divide", np.floor_divide, ts.floor_divide, all_),
        ("remainder", np.remainder, ts.remainder, all_), ("pow", np.power, ts.pow, fl),
        ("maximum", np.maximum, ts.maximum, all_), ("minimum", np.minimum, ts.minimum, all_),
        ("atan2", np.arctan2, ts.atan2, fl), ("hypot", np.hypot, ts.hypot, fl),
        ("logaddexp", np.logaddexp, ts.logaddexp, fl), ("copysign", np.copysign, ts.copysign, fl),
        ("equal", np.equal, ts.equal, all_), ("less", np.less, ts.less, all_),
        ("greater_equal", np.greater_equal, ts.greater_equal, all_),
        ("bitwise_and", np.bitwise_and, ts.bitwise_and, ("int64",)),
        ("bitwise_xor", np.bitwise_xor, ts.bitwise_xor, ("int64",)),
        ("logical_and", np.logical_and, ts.logical_and, all_),
        ("add_scalar", lambda a, b: a + 2, lambda a, b: a + 2, all_),
        ("mul_scalar", lambda a, b: a * 1.5, lambda a, b: a * 1.5, fl),
    ]


def reductions(np, ts):
    all_ = ("float32", "float64", "int64")
    out = []
    for axis, tag in ((None, "all"), (0, "axis0"), (1, "axis1")):
        out += [
            (f"sum_{tag}", lambda a, ax=axis: np.sum(a, axis=ax),
             lambda a, ax=axis: ts.sum(a, axis=ax), all_),
            (f"mean_{tag}", lambda a, ax=axis: np.mean(a, axis=ax),
             lambda a, ax=axis: ts.mean(a, axis=ax), ("float32", "float64")),
            (f"max_{tag}", lambda a, ax=axis: np.max(a, axis=ax),
             lambda a, ax=axis: ts.max(a, axis=ax), all_),
            (f"min_{tag}", lambda a, ax=axis: np.min(a, axis=ax),
             lambda a, ax=axis: ts.min(a, axis=ax), all_),
            (f"prod_{tag}", lambda a, ax=axis: np.prod(a, axis=ax),
             lambda a, ax=axis: ts.prod(a, axis=ax), ("float32", "float64")),
            (f"any_{tag}", lambda a, ax=axis: np.any(a, axis=ax),
             lambda a, ax=axis: ts.any(a, axis=ax), all_),
            (f"all_{tag}", lambda a, ax=axis: np.all(a, axis=ax),
             lambda a, ax=axis: ts.all(a, axis=ax), all_),
        ]
        if axis is not None:
            out += [
                (f"argmax_{tag}", lambda a, ax=axis: np.argmax(a, axis=ax),
                 lambda a, ax=axis: ts.argmax(a, axis=ax), all_),
                (f"cumulative_sum_{tag}", lambda a, ax=axis: np.cumulative_sum(a, axis=ax),
                 lambda a, ax=axis: ts.cumulative_sum(a, axis=ax), all_),
                (f"sort_{tag}", lambda a, ax=axis: np.sort(a, axis=ax),
                 lambda a, ax=axis: ts.sort(a, axis=ax), all_),
                (f"flip_copy_{tag}", lambda a, ax=axis: np.flip(a, axis=ax).copy(),
                 lambda a, ax=axis: ts.flip(a, axis=ax).copy(), all_),
            ]
    out += [
        ("where", lambda a: np.where(a > 0, a, 0), lambda a: ts.where(a > 0, a, 0), all_),
        ("clip", lambda a: np.clip(a, -1, 1), lambda a: ts.clip(a, -1, 1), all_),
        ("std_all", np.std, ts.std, ("float32", "float64")),
    ]
    return out


def shape2d(n):
    """A 2-D shape of n elements (16: 4 x 4)."""
    r = 1 << ((n.bit_length() - 1) // 2)
    return (r, n // r)


def inputs(np, ts, n, dtype, layout, domain, rng, count=2):
    """`count` pairs (NumPy array, Tessera tensor) of n elements (2-D), both laid out as
    `layout`: a transposed view of a contiguous array, or a stride-0 broadcast of one row."""
    rows, cols = shape2d(n)
    out = []
    for _ in range(count):
        if layout == "broadcast":
            base = rng.uniform(-3, 3, (1, cols))
        elif layout == "transposed":
            base = rng.uniform(-3, 3, (cols, rows))
        else:
            base = rng.uniform(-3, 3, (rows, cols))
        if domain == "pos":
            base = np.abs(base) + 0.1
        elif domain == "unit":
            base = base / 3.5
        a = (base * 100).round() if dtype == "int64" else base
        a = a.astype(dtype)
        t = ts.asarray(a)
        if layout == "broadcast":
            a, t = np.broadcast_to(a, (rows, cols)), ts.broadcast_to(t, (rows, cols))
        elif layout == "transposed":
            a, t = a.T, ts.permute_dims(t, (1, 0))
        out.append((a, t))
    return out


# Basic-indexing keys of a 64^4 tensor (also bench.py's varying-keys line).
VIEW_KEYS = [
    (slice(1, 60, 2), Ellipsis, None, slice(None, None, -3)),
    (slice(2, 61, 2), Ellipsis, None, slice(None, None, -3)),
    (3, slice(None, None, 5), None),
    (Ellipsis, slice(4, 50)),
    (slice(None, None, -1), 7, slice(1, None)),
    (None, slice(0, 32), Ellipsis, 1),
    (slice(5, 9), slice(None, None, 2), slice(1, 63, 3)),
    (1, 2, Ellipsis),
]


def indexing():
    """(name, keys) of basic indexing with a key that changes on every call, on a 64^4 float32
    tensor: an int, two ints, a slice with moving bounds, and the 8 view keys in turn."""
    return [
        ("getitem_int", list(range(64))),
        ("getitem_int2", [(i, 63 - i) for i in range(64)]),
        ("getitem_slice", [slice(i, i + 5) for i in range(59)]),
        ("view_8keys", VIEW_KEYS),
    ]


def views(np, ts):
    """(name, numpy fn, tessera fn) of the view functions (zero-copy: their cost is per call,
    whatever the size), timed on two 4-d float32 arrays in turn."""
    return [
        ("view_T", lambda a: a.T, lambda t: t.T),
        ("view_mT", lambda a: a.mT, lambda t: t.mT),
        ("view_permute_dims", lambda a: np.permute_dims(a, (0, 2, 1, 3)),
         lambda t: ts.permute_dims(t, (0, 2, 1, 3))),
        ("view_reshape", lambda a: np.reshape(a, (-1, 64)), lambda t: ts.reshape(t, (-1, 64))),
        ("view_expand_dims", lambda a: np.expand_dims(a, 1), lambda t: ts.expand_dims(t, axis=1)),
        ("view_squeeze", lambda a: np.squeeze(a[:, :1], 1), lambda t: ts.squeeze(t[:, :1], 1)),
        ("view_broadcast_to", lambda a: np.broadcast_to(a[:1], (3,) + a.shape[1:]),
         lambda t: ts.broadcast_to(t[:1], (3,) + t.shape[1:])),
        ("view_flip", lambda a: np.flip(a, axis=0), lambda t: ts.flip(t, axis=0)),
    ]


def cycling(x, keys):
    """A call that indexes ``x`` with the next key of ``keys`` (round robin)."""
    nxt = itertools.cycle(keys).__next__
    return lambda: x[nxt()]


# A row whose first ratio is above this is timed again, with samples RETIME_SCALE times
# longer and RETIME_SAMPLES of them, and the second measurement replaces the first (not the
# better of the two). On this 2-core machine one row's ratio moves by up to 30% between runs
# of unchanged code (the machine's speed drifts within a run), and the worst rows of a
# 1551-row table are mostly such draws; the second look is an independent measurement of the
# rows that matter for the worst-row line.
RETIME_ABOVE = 0.9
RETIME_SCALE = 4
RETIME_SAMPLES = 7


def time_twice(make_np, make_ts):
    """``time_runs`` of fresh calls from ``make_np``/``make_ts``, again with longer samples when
    the first ratio is above ``RETIME_ABOVE``: (numpy, tessera, retimed)."""
    tn, tt = time_runs(make_np(), make_ts())
    if tt / tn <= RETIME_ABOVE:
        return tn, tt, False
    tn, tt = time_runs(make_np(), make_ts(), RETIME_SCALE, RETIME_SAMPLES)
    return tn, tt, True


def time_runs(r_np, r_ts, scale=1, samples=5):
    """Best-of medians per call of two argument-less calls, in seconds (interleaved blocks):
    ``samples`` blocks each, of about ``scale`` times 4 ms."""
    # Warm up (a first call may initialise something, the pool or a lazy table: timed alone
    # it once set the calls per sample to 1 and gave a 16-element row a ratio of 8), then
    # calibrate the number of calls per sample to about 4 ms, on ten calls of each when one
    # is short.
    r_np()
    r_ts()
    t = time.perf_counter()
    r_np()
    r_ts()
    once = time.perf_counter() - t
    if once < 1e-4:
        t = time.perf_counter()
        for _ in range(10):
            r_np()
            r_ts()
        once = (time.perf_counter() - t) / 10
    number = max(1, min(2000 * scale, int(0.004 * scale / max(once, 1e-7))))
    samples_np, samples_ts = [], []
    for _ in range(samples):
        t = time.perf_counter()
        for _ in range(number):
            r_np()
        samples_np.append((time.perf_counter() - t) / number)
        t = time.perf_counter()
        for _ in range(number):
            r_ts()
        samples_ts.append((time.perf_counter() - t) / number)
    return statistics.median(samples_np), statistics.median(samples_ts)


def only_prefixes():
    """The ``--only`` prefixes, or None for every op."""
    if "--only" not in sys.argv:
        return None
    return tuple(sys.argv[sys.argv.index("--only") + 1].split(","))


# A row whose ratio after the second look is above CONFIRM_ABOVE (a control too) is timed
# CONFIRM_ROUNDS more times, as the second look was (an op row on fresh inputs each time),
# the rounds going round-robin over all such rows after the last row (so that a drift of the
# machine's speed lands on all of them alike). The row's ratio becomes the median of those
# rounds' ratios, with their range printed beside it. The look that chose the row is left
# out, so the choice does not bias the median: one draw of a 1551-row table lands above 1.0
# by noise alone, and the median of five fresh draws mostly does not.
CONFIRM_ABOVE = 0.95
CONFIRM_ROUNDS = 5


def op_jobs(np, ts, rng, sizes, only):
    """(kind, key, make, skippable) for every op row: ``make()`` builds fresh inputs and
    returns (numpy call maker, tessera call maker, check), where ``check()`` raises if the two
    results differ in shape; an op row whose check raises is skipped (reported), any other
    job's stops the run."""
    groups = [(u[0], u[1], u[2], u[3], u[4], 1) for u in unary(np, ts)]
    groups += [(b[0], b[1], b[2], b[3], "any", 2) for b in binary(np, ts)]
    groups += [(r[0], r[1], r[2], r[3], "any", 1) for r in reductions(np, ts)]
    jobs = []
    for name, f_np, f_ts, dtypes, domain, arity in groups:
        if only and not name.startswith(only):
            continue
        for dtype in dtypes:
            for layout in ("contiguous", "transposed", "broadcast"):
                for size, n in sizes.items():
                    if size == "16Mi" and layout != "contiguous" and not name.startswith(
                            ("sum", "max", "add", "exp")):
                        continue  # keep the run short: 16 Mi non-contiguous for a few ops

                    def make(f_np=f_np, f_ts=f_ts, n=n, dtype=dtype, layout=layout,
                             domain=domain, arity=arity):
                        a = inputs(np, ts, n, dtype, layout, domain, rng, 2 * arity)
                        np_args = [tuple(x for x, _ in a[i * arity:(i + 1) * arity])
                                   for i in range(2)]
                        ts_args = [tuple(t for _, t in a[i * arity:(i + 1) * arity])
                                   for i in range(2)]

                        def check():
                            want = np.asarray(f_np(*np_args[0]))
                            got = np.asarray(f_ts(*ts_args[0]))
                            if got.shape != want.shape:
                                raise ValueError(f"shape {got.shape} vs {want.shape}")
                        return calls(f_np, np_args), calls(f_ts, ts_args), check
                    jobs.append(("row", (name, dtype, layout, size), make, True))
    return jobs


def other_jobs(np, ts, only):
    """``op_jobs``'s form for the indexing and view rows, on one 64^4 tensor made when the
    first of them runs (not held through the op rows)."""
    made = []

    def tensor():
        if not made:
            # Distinct values, so the check compares the elements each key selects.
            a = np.arange(64 ** 4, dtype=np.float32).reshape((64,) * 4)
            made.append((a, ts.asarray(a.copy())))
        return made[0]

    jobs = []
    for name, keys in indexing():
        if only and not name.startswith(only):
            continue

        def make(keys=keys, name=name):
            a, t = tensor()

            def check():
                for k in keys:
                    if not np.array_equal(np.asarray(t[k]), a[k]):
                        raise AssertionError(f"{name}: t[{k!r}] differs from NumPy")
            return lambda: cycling(a, keys), lambda: cycling(t, keys), check
        jobs.append(("row", (name, "float32", "contiguous", "64^4"), make, False))
    for name, f_np, f_ts in views(np, ts):
        if only and not name.startswith(only):
            continue

        def make(f_np=f_np, f_ts=f_ts, name=name):
            a, t = tensor()
            pair, ts_pair = [(a,), (a[:32],)], [(t,), (t[:32],)]

            def check():
                for (x,), (y,) in zip(pair, ts_pair):
                    if not np.array_equal(np.asarray(f_ts(y)), f_np(x)) or \
                            not f_ts(y).shares_storage(y):
                        raise AssertionError(f"{name}: not NumPy's view")
            return calls(f_np, pair), calls(f_ts, ts_pair), check
        jobs.append(("row", (name, "float32", "contiguous", "64^4"), make, False))
    return jobs


def calls(f, args):
    """A maker of argument-less calls of ``f`` that alternate between the two tuples of
    ``args``."""
    def maker():
        k = [0]

        def run():
            k[0] ^= 1
            f(*args[k[0]])
        return run
    return maker


def child(threads, quick):
    import numpy as np

    import tessera as ts
    rng = np.random.default_rng(0)
    sizes = {k: v for k, v in SIZES.items() if not (quick and k == "16Mi")}
    only = only_prefixes()
    jobs = op_jobs(np, ts, rng, sizes, only) + other_jobs(np, ts, only)
    jobs += control_jobs(np, ts, rng, quick, only)
    confirm = []
    for kind, key, make, skippable in jobs:
        make_np, make_ts, check = make()
        try:
            check()
        except Exception as e:  # noqa: BLE001 - an op row that cannot run is reported
            if not skippable:
                raise
            print(f"skip {' '.join(key)}: {type(e).__name__}: {e}", flush=True)
            make_np = None
        if make_np is not None:
            tn, tt, again = time_twice(make_np, make_ts)
            print(f"{kind} {' '.join(key)} {tn!r} {tt!r} {again}", flush=True)
            if tt / tn > CONFIRM_ABOVE:
                confirm.append((kind, key, make))
        del make_np, make_ts, check  # free a 16 Mi row's inputs before the next row's
    for _ in range(CONFIRM_ROUNDS):
        for kind, key, make in confirm:
            make_np, make_ts, _check = make()
            tn, tt = time_runs(make_np(), make_ts(), RETIME_SCALE, RETIME_SAMPLES)
            print(f"confirm {kind} {' '.join(key)} {tn!r} {tt!r}", flush=True)
            del make_np, make_ts, _check


# NumPy against itself: the same calls on both sides of a row, on other arrays of the same
# kind, timed as every row is. Their ratios show how far from 1.0 a row of equal speed
# lands in one run (the noise floor the worst rows are read against); not counted as rows.
CONTROLS = [("add", "float32", "16"), ("sin", "float32", "64Ki"), ("sum_all", "float32", "64Ki"),
            ("less", "float32", "16Mi"), ("view_T", "float32", "64^4")]


def control_jobs(np, ts, rng, quick, only):
    """``op_jobs``'s form for ``CONTROLS`` (NumPy's call on both sides)."""
    fns = {g[0]: (g[1], arity) for gs, arity in ((unary(np, ts), 1), (binary(np, ts), 2),
                                                  (reductions(np, ts), 1)) for g in gs}
    jobs = []
    for name, dtype, size in CONTROLS:
        if (quick and size == "16Mi") or (only and not name.startswith(only)):
            continue
        if name == "view_T":
            def make():
                a = np.arange(64 ** 4, dtype=np.float32).reshape((64,) * 4)
                pair, other = [(a,), (a[:32],)], [(a.copy(),), (a[:32].copy(),)]
                f = lambda x: x.T  # noqa: E731 - the row's NumPy call
                return calls(f, pair), calls(f, other), lambda: None
        else:
            def make(name=name, dtype=dtype, size=size):
                f, arity = fns[name]
                a = [x for x, _ in inputs(np, ts, SIZES[size], dtype, "contiguous", "any", rng,
                                          4 * arity)]
                args = [tuple(a[i * arity:(i + 1) * arity]) for i in range(4)]
                return calls(f, args[:2]), calls(f, args[2:]), lambda: None
        jobs.append(("control", (name, dtype, "contiguous", size), make, False))
    return jobs


def run(threads, quick):
    env = dict(os.environ)
    if threads is not None:
        env.update(TESSERA_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
                   OMP_NUM_THREADS=str(threads))
    args = [sys.executable, __file__, "--child"] + (["--quick"] if quick else [])
    if only_prefixes():
        args += ["--only", ",".join(only_prefixes())]
    out = subprocess.run(args, env=env, check=True, capture_output=True, text=True).stdout
    first, draws = {}, {}
    for line in out.splitlines():
        if line.startswith(("row ", "control ")):
            kind, name, dtype, layout, size, tn, tt, again = line.split()
            first[(kind, name, dtype, layout, size)] = (float(tn), float(tt), again == "True")
        elif line.startswith("confirm "):
            _, kind, name, dtype, layout, size, tn, tt = line.split()
            draws.setdefault((kind, name, dtype, layout, size), []).append(
                (float(tn), float(tt)))
        elif line.startswith("skip "):
            print(line)
    rows, control = [], []
    for key, (tn, tt, again) in first.items():
        kind, name, dtype, layout, size = key
        spread = None
        if key in draws:
            # The confirmation rounds (not the look that chose the row): the median ratio,
            # and each side's median time beside it (their quotient may differ from it).
            looks = draws[key]
            ratios = [b / a for a, b in looks]
            spread = (min(ratios), max(ratios), len(ratios))
            ratio = statistics.median(ratios)
            tn = statistics.median(a for a, _ in looks)
            tt = statistics.median(b for _, b in looks)
        else:
            ratio = tt / tn
        (rows if kind == "row" else control).append(
            (ratio, name, dtype, layout, size, tn, tt, again, spread))
    return rows, control


def print_rows(rows):
    """The table's lines, one per row, in the order given."""
    print(f"{'op':<22} {'dtype':<8} {'layout':<11} {'size':>5} {'numpy':>10} {'tessera':>10}"
          f" {'ratio':>7}")
    for r, name, dtype, layout, size, tn, tt, retimed, spread in rows:
        mark = " *" if retimed else ""
        if spread:
            mark += f" median of {spread[2]}: {spread[0]:.3f}-{spread[1]:.3f}"
        print(f"{name:<22} {dtype:<8} {layout:<11} {size:>5} {tn * 1e6:8.2f}us "
              f"{tt * 1e6:8.2f}us {r:7.3f}{mark}")


NAMED = {
    "reduce_max_axis1_time_vs_numpy": ("max_axis1", "float32", "contiguous", "16Mi"),
    "reduce_sum_all_time_vs_numpy": ("sum_all", "float32", "contiguous", "16Mi"),
    "reduce_sum_axis0_time_vs_numpy": ("sum_axis0", "float32", "contiguous", "16Mi"),
    "exp_f32_16M_time_vs_numpy": ("exp", "float32", "contiguous", "16Mi"),
    "tanh_f64_16M_time_vs_numpy": ("tanh", "float64", "contiguous", "16Mi"),
    "small_add_16_time_vs_numpy": ("add", "float32", "contiguous", "16"),
    "small_sum_16_time_vs_numpy": ("sum_all", "float32", "contiguous", "16"),
    "getitem_int_varying_time_vs_numpy": ("getitem_int", "float32", "contiguous", "64^4"),
    "py_view_varying_keys_time_vs_numpy": ("view_8keys", "float32", "contiguous", "64^4"),
}


def main():
    if {"-h", "--help"} & set(sys.argv):
        print(__doc__)
        return
    quick = "--quick" in sys.argv
    if "--child" in sys.argv:
        child(None, quick)
        return
    lines = []
    for threads, tag in ((1, "1thread"), (None, f"{os.cpu_count()}threads")):
        rows, control = run(threads, quick)
        rows.sort(reverse=True)
        again = sum(row[7] for row in rows)
        confirmed = sum(row[8] is not None for row in rows)
        print(f"== {tag}: {len(rows)} rows, worst first (ratio = Tessera / NumPy; * = first "
              f"ratio above {RETIME_ABOVE}, timed again with {RETIME_SCALE}x longer samples: "
              f"{again} rows; 'median of': above {CONFIRM_ABOVE} after that, timed "
              f"{CONFIRM_ROUNDS} more times, the median ratio of those and their range: "
              f"{confirmed} rows)")
        print_rows(rows)
        if control:
            print(f"-- {tag}: NumPy against itself, timed as the rows are (the 'tessera' column"
                  " is NumPy on other arrays): how far from 1.0 equal speed lands")
            print_rows(control)
        for r, name, dtype, layout, size, *_ in control:
            lines.append(f"ratio control_numpy_vs_numpy_{name}_{dtype}_{size}_{tag} {r:.3f}")
        if rows:
            lines.append(f"ratio worst_op_time_vs_numpy_{tag} {rows[0][0]:.3f}")
        by_key = {(n, d, l, s): r for r, n, d, l, s, *_ in rows}
        if threads == 1:
            for line_name, key in NAMED.items():
                if key in by_key:
                    lines.append(f"ratio {line_name} {by_key[key]:.3f}")
        for r, name, dtype, layout, size, *_ in rows:
            lines.append(f"ratio op_{name}_{dtype}_{layout}_{size}_{tag} {r:.3f}")
        print()
    print("\n".join(lines))


if __name__ == "__main__":
    main()
