"""Regenerates crates/tessera/tests/fixtures/views.json: random chains of view operations
applied by NumPy to an arange array, the independent reference for Tessera's view tests.

Each case: a start shape, a list of ops, and NumPy's outcome (the result's shape and values
of the arange elements it sees, whether it is still a view, or the error class).
Run: .venv/bin/python scripts/gen_view_fixtures.py
"""
import json
import pathlib

import numpy as np

rng = np.random.default_rng(2026_11_22)
ABSENT = -(2**63)


def rand_shape():
    return [int(x) for x in rng.integers(0, 5, rng.integers(0, 5))]


def rand_key(ndim):
    key, code = [], []
    for _ in range(int(rng.integers(0, ndim + 3))):
        r = rng.random()
        if r < 0.3:
            i = int(rng.integers(-6, 6))
            key.append(i)
            code += [0, 1, 1, i, 0]
        elif r < 0.75:
            start = None if rng.random() < 0.3 else int(rng.integers(-7, 8))
            stop = None if rng.random() < 0.3 else int(rng.integers(-7, 8))
            step = int(rng.choice([1, 1, 2, 3, -1, -2, -3]))
            key.append(slice(start, stop, step))
            enc = lambda b: ABSENT if b is None else b
            code += [1, 2, step, enc(start), enc(stop), 0]
        elif r < 0.85:
            key.append(None)
            code += [3, 0, 1, 0]
        elif r < 0.93:
            key.append(Ellipsis)
            code += [4, 0, 1, 0]
        else:
            key.append(slice(None))
            code += [2, 0, 1, 0]
    return tuple(key), code


def rand_op(a):
    kind = rng.choice(["index", "index", "permute", "flip", "reshape", "expand", "squeeze", "unsqueeze"])
    nd = a.ndim
    if kind == "index":
        key, code = rand_key(nd)
        return {"op": "index", "code": code}, (lambda x: x[key])
    if kind == "permute":
        axes = [int(v) for v in rng.permutation(nd)]
        if nd and rng.random() < 0.3:
            axes[0] -= nd
        return {"op": "permute", "axes": axes}, (lambda x: np.transpose(x, axes))
    if kind == "flip":
        axes = [int(v) for v in rng.permutation(nd)[: rng.integers(0, nd + 1)]]
        return {"op": "flip", "axes": axes}, (lambda x: np.flip(x, axes) if axes else x)
    if kind == "reshape":
        # A random factorisation of the element count, sometimes with -1.
        n = a.size
        dims = []
        rest = n
        for _ in range(int(rng.integers(0, 4))):
            divs = [d for d in range(1, 7) if rest % d == 0] if rest else [0, 1, 2]
            d = int(rng.choice(divs))
            dims.append(d)
            rest = rest // d if d else rest
        dims.append(int(rest) if n else 0)
        rng.shuffle(dims)
        if n and rng.random() < 0.4:
            dims[int(rng.integers(0, len(dims)))] = -1
        dims = [int(d) for d in dims]
        return {"op": "view", "shape": dims}, (lambda x: np.reshape(x, dims, copy=False))
    if kind == "expand":
        lead = [int(v) for v in rng.integers(0, 3, rng.integers(0, 2))]
        sizes = [int(rng.integers(1, 4)) if d == 1 and rng.random() < 0.7 else (-1 if rng.random() < 0.3 else d) for d in a.shape]
        target = lead + [d if s == -1 else s for s, d in zip(sizes, a.shape)]
        return {"op": "expand", "sizes": lead + sizes}, (lambda x: np.broadcast_to(x, target))
    if kind == "squeeze":
        ones = [i for i, d in enumerate(a.shape) if d == 1]
        if ones and rng.random() < 0.5:
            axes = [int(rng.choice(ones))]
            return {"op": "squeeze", "axes": axes}, (lambda x: np.squeeze(x, tuple(axes)))
        return {"op": "squeeze", "axes": None}, (lambda x: np.squeeze(x))
    axis = int(rng.integers(-nd - 1, nd + 1))
    return {"op": "unsqueeze", "axis": axis}, (lambda x: np.expand_dims(x, axis))


def main():
    cases = []
    while len(cases) < 600:
        shape = rand_shape()
        base = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
        a = base
        ops = []
        error = None
        for _ in range(int(rng.integers(1, 4))):
            spec, fn = rand_op(a)
            ops.append(spec)
            try:
                a = fn(a)
            except IndexError:
                error = "IndexError"
            except ValueError:
                error = "ValueError"
            if error:
                break
        case = {"shape": shape, "ops": ops, "error": error}
        if not error:
            case["result_shape"] = list(a.shape)
            case["values"] = [int(v) for v in a.ravel()]
        cases.append(case)
    out = pathlib.Path(__file__).resolve().parent.parent / "crates/tessera/tests/fixtures/views.json"
    out.write_text(json.dumps(cases) + "\n")
    errs = sum(1 for c in cases if c["error"])
    print(f"wrote {len(cases)} cases ({errs} errors) to {out}")


if __name__ == "__main__":
    main()
