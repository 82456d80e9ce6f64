"""Array API ``take`` and ``take_along_axis`` (docs/design.md X1-X5); the work is the
Rust core's ``Tensor::take`` / ``Tensor::take_along_axis``. Integer-array and boolean-mask
keys of ``t[key]`` and ``t[key] = value`` need no wrapper."""

from ._native import take, take_along_axis

__all__ = ["take", "take_along_axis"]
