"""Writes the type stub of the `tessera` namespace (python/tessera/__init__.pyi) from the
built package: every public name, with the signatures Python reports and types chosen by
parameter name (docs/design.md N5). `tests/test_typing.py` checks that the committed stub is
what this script writes, and runs mypy on a sample program against it.

Usage (after building the package): python crates/tessera-py/stubgen.py [--check]
"""

import inspect
import re
import sys
from pathlib import Path

import tessera as ts

STUB = Path(__file__).parent / "python" / "tessera" / "__init__.pyi"

ARRAY = "Tensor"
ARRAY_LIKE = "Tensor | _Scalar | _Nested"
# Parameter name -> annotation (the standard's names are consistent across functions).
PARAM_TYPES = {
    "x": ARRAY_LIKE, "x1": ARRAY_LIKE, "x2": ARRAY_LIKE, "condition": ARRAY_LIKE,
    "indices": ARRAY_LIKE, "obj": "object", "t": ARRAY, "prepend": f"{ARRAY_LIKE} | None",
    "append": f"{ARRAY_LIKE} | None", "sorter": f"{ARRAY} | None", "repeats": "int | Tensor",
    "arrays": f"Sequence[{ARRAY}]", "tensors": f"Mapping[str, {ARRAY}]",
    "arrays_and_dtypes": "Tensor | dtype | str", "inputs": ARRAY,
    "dtype": "_DTypeLike", "from_": "Tensor | dtype | str", "to": "dtype | str",
    "type": "Tensor | dtype | str", "kind": "str | dtype | tuple[str | dtype, ...]",
    "device": "Device | str | None", "copy": "bool | None", "axis": "int | tuple[int, ...] | None",
    "axes": "Any", "keepdims": "bool", "stable": "bool", "descending": "bool",
    "include_initial": "bool", "invert": "bool", "endpoint": "bool", "correction": "float",
    "shape": "int | Sequence[int]", "shapes": "Sequence[int]", "fill_value": "_Scalar",
    "start": "_Scalar", "stop": "_Scalar | None", "step": "_Scalar | None", "num": "int",
    "n": "int", "n_rows": "int", "n_cols": "int | None", "k": "int", "shift": "int | Sequence[int]",
    "source": "int | Sequence[int]", "destination": "int | Sequence[int]", "side": "str",
    "indexing": "str", "repetitions": "Sequence[int]", "min": "_Scalar | Tensor | None",
    "max": "_Scalar | Tensor | None", "path": "str | os.PathLike[str]", "name": "str",
    "key": "Any", "encoded": "Any", "params": "Any", "metadata": "Mapping[str, str] | None",
    "with_metadata": "bool",
}
# Function name -> return annotation (default: a Tensor).
RETURNS = {
    "unique_all": "tuple[Tensor, Tensor, Tensor, Tensor]",
    "unique_counts": "tuple[Tensor, Tensor]", "unique_inverse": "tuple[Tensor, Tensor]",
    "unstack": "tuple[Tensor, ...]", "meshgrid": "list[Tensor]",
    "broadcast_arrays": "list[Tensor]", "nonzero": "tuple[Tensor, ...]",
    "broadcast_shapes": "tuple[int, ...]", "finfo": "Any", "iinfo": "Any",
    "isdtype": "bool", "can_cast": "bool", "result_type": "dtype",
    "__array_namespace_info__": "Any", "save": "None", "save_npy": "None", "load": "Any",
    "load_npy": "Tensor", "list_ops": "list[dict[str, Any]]", "fallback_count": "int",
    "encode_index": "Any", "invoke": "Any", "is_grad_enabled": "bool",
}
TENSOR_PROPERTIES = {
    "shape": "tuple[int, ...]", "strides": "tuple[int, ...]", "dtype": "dtype", "ndim": "int",
    "size": "int", "itemsize": "int", "T": "Tensor", "mT": "Tensor", "device": "Device",
}
BINARY_DUNDERS = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and",
                  "or", "xor", "lshift", "rshift"]


def annotate(p: inspect.Parameter) -> str:
    kind_prefix = {p.VAR_POSITIONAL: "*", p.VAR_KEYWORD: "**"}.get(p.kind, "")
    ann = PARAM_TYPES.get(p.name, "Any")
    if p.kind == p.VAR_POSITIONAL and p.name in ("arrays", "shapes"):
        ann = ARRAY if p.name == "arrays" else "Sequence[int]"
    if p.kind == p.VAR_KEYWORD:
        ann = "Any"
    text = f"{kind_prefix}{p.name}: {ann}"
    if p.default is not p.empty:
        text += " = ..."
    return text


def render_params(sig: inspect.Signature, skip_first: bool = False) -> str:
    out, seen_kwonly, params = [], False, list(sig.parameters.values())
    if skip_first:
        params = params[1:]
    for i, p in enumerate(params):
        if p.kind == p.KEYWORD_ONLY and not seen_kwonly:
            if not any(q.kind == q.VAR_POSITIONAL for q in params):
                out.append("*")
            seen_kwonly = True
        out.append(annotate(p))
        last_posonly = p.kind == p.POSITIONAL_ONLY and (
            i + 1 == len(params) or params[i + 1].kind != p.POSITIONAL_ONLY)
        if last_posonly:
            out.append("/")
    return ", ".join(out)


def function_stub(name: str, f) -> str:
    try:
        sig = inspect.signature(f)
        params = render_params(sig)
    except (TypeError, ValueError):
        params = "*args: Any, **kwargs: Any"
    return f"def {name}({params}) -> {RETURNS.get(name, ARRAY)}: ..."


def tensor_stub() -> list[str]:
    lines = ["class Tensor:"]
    for name in TENSOR_PROPERTIES:
        lines += ["    @property", f"    def {name}(self) -> {TENSOR_PROPERTIES[name]}: ..."]
    for op in BINARY_DUNDERS:
        for form in (op, "r" + op, "i" + op):
            lines.append(f"    def __{form}__(self, other: Tensor | _Scalar, /) -> Tensor: ...")
    for op in ("neg", "pos", "abs", "invert"):
        lines.append(f"    def __{op}__(self) -> Tensor: ...")
    for op in ("lt", "le", "gt", "ge"):
        lines.append(f"    def __{op}__(self, other: Tensor | _Scalar, /) -> Tensor: ...")
    lines += [
        "    def __eq__(self, other: object, /) -> Tensor: ...  # type: ignore[override]",
        "    def __ne__(self, other: object, /) -> Tensor: ...  # type: ignore[override]",
        "    def __getitem__(self, key: Any, /) -> Tensor: ...",
        "    def __setitem__(self, key: Any, value: Tensor | _Scalar | _Nested, /) -> None: ...",
        "    def __len__(self) -> int: ...",
        "    def __iter__(self) -> Iterator[Tensor]: ...",
        "    def __bool__(self) -> bool: ...",
        "    def __int__(self) -> int: ...",
        "    def __float__(self) -> float: ...",
        "    def __complex__(self) -> complex: ...",
        "    def __index__(self) -> int: ...",
        "    def __array_namespace__(self, *, api_version: str | None = ...) -> ModuleType: ...",
        "    def __dlpack__(self, *, stream: Any = ..., max_version: tuple[int, int] | None = ...,"
        " dl_device: tuple[int, int] | None = ..., copy: bool | None = ...) -> Any: ...",
        "    def __dlpack_device__(self) -> tuple[int, int]: ...",
        "    def to_device(self, device: Device | str, /, *, stream: Any = ...) -> Tensor: ...",
        "    def astype(self, dtype: _DTypeLike, /, *, copy: bool = ...,"
        " device: Device | str | None = ...) -> Tensor: ...",
        "    def tolist(self) -> Any: ...",
        "    def item(self) -> Any: ...",
    ]
    done = set(TENSOR_PROPERTIES) | {"to_device", "astype", "tolist", "item"}
    for name in sorted(dir(ts.Tensor)):
        if name.startswith("_") or name in done:
            continue
        attr = inspect.getattr_static(ts.Tensor, name)
        if type(attr).__name__ == "getset_descriptor":
            lines += ["    @property", f"    def {name}(self) -> Any: ..."]
            continue
        try:
            params = render_params(inspect.signature(getattr(ts.Tensor, name)), skip_first=True)
            params = "self" + (", " + params if params else "")
        except (TypeError, ValueError):
            params = "self, *args: Any, **kwargs: Any"
        lines.append(f"    def {name}({params}) -> Any: ...")
    return lines


def render() -> str:
    lines = [
        '"""Type stub of the `tessera` namespace, written by crates/tessera-py/stubgen.py from',
        'the built package (do not edit by hand; regenerate after changing the API)."""',
        "",
        "import builtins",
        "import os",
        "from collections.abc import Iterator, Mapping, Sequence",
        "from types import ModuleType",
        "from typing import Any",
        "",
        "from . import autograd as autograd",
        "from . import fft as fft",
        "from . import ops as ops",
        "from . import optim as optim",
        "from . import sparse as sparse",
        "",
        "_Scalar = builtins.bool | int | float | complex",
        "_Nested = Sequence[Any]",
        "_DTypeLike = dtype | str | builtins.type | None",
        "",
        "class dtype:",
        "    def __init__(self, spec: Any, /) -> None: ...",
        "    @property",
        "    def name(self) -> str: ...",
        "    @property",
        "    def itemsize(self) -> int: ...",
        "",
        "class Device:",
        "    def __init__(self) -> None: ...",
        "",
        *tensor_stub(),
        "",
        "class RingBuffer:",
        "    def __init__(self, *args: Any, **kwargs: Any) -> None: ...",
        "    def __getattr__(self, name: str) -> Any: ...",
        "",
        "class no_grad:",
        "    def __enter__(self) -> None: ...",
        "    def __exit__(self, *args: object) -> None: ...",
        "",
        "class enable_grad(no_grad): ...",
        "",
        "class set_grad_enabled(no_grad):",
        "    def __init__(self, mode: bool) -> None: ...",
        "",
        '__array_api_version__: str',
        "e: float",
        "inf: float",
        "nan: float",
        "pi: float",
        "newaxis: None",
        "",
    ]
    classes = {"Tensor", "Device", "RingBuffer", "dtype", "no_grad", "enable_grad",
               "set_grad_enabled"}
    for name in sorted(set(ts.__all__) | {"__array_namespace_info__"}):
        obj = getattr(ts, name)
        if name in classes or inspect.ismodule(obj) or name in ("e", "inf", "nan", "pi", "newaxis"):
            continue
        if isinstance(obj, ts.dtype):
            lines.append(f"{name}: dtype")
        elif callable(obj):
            lines.append(function_stub(name, obj))
        else:
            lines.append(f"{name}: Any")
    # `bool` is tessera's dtype in this module: annotations name Python's as builtins.bool.
    text = "\n".join(lines) + "\n"
    text = re.sub(r"(?<![.\w])bool\b(?!: dtype)", "builtins.bool", text)
    return text.replace("builtins.builtins.bool", "builtins.bool")


if __name__ == "__main__":
    text = render()
    if "--check" in sys.argv:
        sys.exit(0 if STUB.read_text() == text else 1)
    STUB.write_text(text)
    print(f"wrote {STUB} ({text.count(chr(10))} lines)")
