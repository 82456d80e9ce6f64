import tessera as ts

x = ts.zeros((2,), ts.float32)
n: str = x.ndim
ts.no_such_function(x)
