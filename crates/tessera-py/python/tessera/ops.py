"""Every registered Tessera operator as a Python function, generated at import from the
operator registry (``tessera.list_ops()``): names, docs, inputs and typed parameters with
their defaults. ``tessera.ops.quadratic(x, a=1, b=2, c=3)`` is
``tessera.invoke("quadratic", x, a=1, b=2, c=3)``.
"""

import inspect as _inspect
import keyword as _keyword

from ._native import invoke as _invoke, list_ops as _list_ops

_REQUIRED = "required"


def _default_value(text, type_name):
    """The Python value of a registry default (the registry stores strings)."""
    if text == "None":
        return None
    if type_name == "bool":
        return text in ("true", "True", "1")
    if type_name in ("int", "non-negative int"):
        return int(text)
    if type_name == "float":
        return float(text)
    if type_name == "int tuple":
        inner = text.strip("()[] ")
        return tuple(int(v) for v in inner.split(",") if v.strip())
    return text


def _make(info):
    name = info["name"]
    inputs = [i if not _keyword.iskeyword(i) else i + "_" for i in info["inputs"]]
    # An op of any number of inputs names its one input `*name` (concat, stack).
    variadic = len(inputs) == 1 and inputs[0].startswith("*")
    if variadic:
        inputs = [inputs[0][1:]]
    params = []
    for i in inputs:
        kind = _inspect.Parameter.VAR_POSITIONAL if variadic else _inspect.Parameter.POSITIONAL_OR_KEYWORD
        params.append(_inspect.Parameter(i, kind))
    for p in info["params"]:
        default = (
            _inspect.Parameter.empty
            if p["default"] == _REQUIRED
            else _default_value(p["default"], p["type"])
        )
        params.append(_inspect.Parameter(p["name"], _inspect.Parameter.KEYWORD_ONLY, default=default))
    sig = _inspect.Signature(params)
    param_names = [p["name"] for p in info["params"]]

    def op(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        tensors = list(bound.arguments.get(inputs[0], ())) if variadic else [bound.arguments[i] for i in inputs]
        # Only explicitly given parameters are passed: the registry applies its own defaults.
        given = {k: bound.arguments[k] for k in param_names if k in bound.arguments}
        return _invoke(name, *tensors, **given)

    lines = [info["doc"], ""]
    lines.append("Inputs: " + ", ".join(info["inputs"]) + "; outputs: " + ", ".join(info["outputs"]) + ".")
    if info["params"]:
        lines.append("")
        lines.append("Parameters:")
        for p in info["params"]:
            rng = f", range {p['range']}" if p["range"] else ""
            lines.append(f"    {p['name']} ({p['type']}, default {p['default']}{rng}): {p['doc']}")
    flags = []
    if info["mutates"]:
        flags.append("mutates " + ", ".join(info["inputs"][i] for i in info["mutates"]))
    if info["forward_only"]:
        flags.append("forward only")
    if flags:
        lines += ["", "; ".join(flags).capitalize() + "."]
    op.__name__ = op.__qualname__ = name
    op.__doc__ = "\n".join(lines)
    op.__signature__ = sig
    op.__module__ = __name__
    return op


__all__ = []
for _info in _list_ops():
    globals()[_info["name"]] = _make(_info)
    __all__.append(_info["name"])
del _info
