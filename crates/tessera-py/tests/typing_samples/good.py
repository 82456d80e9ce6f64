import tessera as ts

x = ts.asarray([[1.0, 2.0], [3.0, 4.0]], dtype=ts.float32)
y = ts.matmul(x, x.mT) + 1
s: ts.Tensor = ts.sum(y, axis=0)
n: int = x.ndim
shape: tuple[int, ...] = ts.broadcast_shapes((2, 1), (3,))
vals, counts = ts.unique_counts(ts.round(x))
print(s, n, shape, vals, counts, ts.__array_api_version__)
