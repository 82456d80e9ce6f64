//! Bindings of the Array API functions that are typed `Tensor` methods composed of registry
//! ops. The everyday ones (`argmax`, `argmin`, `sort`, `argsort`, `cumulative_sum`,
//! `cumulative_prod`, `where`, `astype`) are bound here with the standard's signatures and argument
//! checks, so a small call pays no Python wrapper; the others (`prod`, `var`, `std`, `all`,
//! `any`, `count_nonzero`, `moveaxis`, `unstack`, `broadcast_arrays`, `roll`,
//! `diff`, `tril`, `triu`, `meshgrid`, `eye`, `linspace`) take arguments that
//! `python/tessera/_arrayfns.py` has already normalised.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyBool;
use tessera::Tensor;

use crate::convert::to_tensor;
use crate::dtype::{parse_dtype, parse_opt_dtype};
use crate::elementwise::{not_a_python_scalar, weak_pair};
use crate::errors::PyRes;
use crate::handle::PyTensor;
use crate::indexing::has_index;
use crate::tensor::heavy;

fn arg(x: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    to_tensor(x, None, None)
}

fn out(t: tessera::Result<Tensor>) -> PyResult<PyTensor> {
    t.py().map(Into::into)
}

fn outs(ts: tessera::Result<Vec<Tensor>>) -> PyResult<Vec<PyTensor>> {
    Ok(ts.py()?.into_iter().map(Into::into).collect())
}

fn args(xs: Vec<Bound<'_, PyAny>>) -> PyResult<Vec<Tensor>> {
    xs.iter().map(arg).collect()
}

/// `prod(x, axis, keepdims, dtype)`.
#[pyfunction]
#[pyo3(signature = (x, axis, keepdims, dtype))]
fn _prod(
    x: &Bound<'_, PyAny>,
    axis: Option<Vec<isize>>,
    keepdims: bool,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    out(arg(x)?.prod(axis.as_deref(), keepdims, parse_opt_dtype(dtype)?))
}

/// `var(x, axis, correction, keepdims)`.
#[pyfunction]
fn _var(
    x: &Bound<'_, PyAny>,
    axis: Option<Vec<isize>>,
    correction: f64,
    keepdims: bool,
) -> PyResult<PyTensor> {
    out(arg(x)?.var(axis.as_deref(), correction, keepdims))
}

/// `std(x, axis, correction, keepdims)`.
#[pyfunction]
fn _std(
    x: &Bound<'_, PyAny>,
    axis: Option<Vec<isize>>,
    correction: f64,
    keepdims: bool,
) -> PyResult<PyTensor> {
    out(arg(x)?.std(axis.as_deref(), correction, keepdims))
}

/// An integer argument given as a Python int or anything with `__index__` (NumPy integers);
/// a bool or anything else is a `TypeError` naming `what`.
fn int_arg(v: &Bound<'_, PyAny>, what: &str) -> PyResult<isize> {
    if v.is_instance_of::<PyBool>() || !has_index(v) {
        return Err(PyTypeError::new_err(format!(
            "{what} must be an int, got {}",
            v.get_type().name()?
        )));
    }
    v.extract::<isize>()
}

/// [`int_arg`], or `None` for `None`.
fn opt_int_arg(v: Option<&Bound<'_, PyAny>>, what: &str) -> PyResult<Option<isize>> {
    v.filter(|v| !v.is_none())
        .map(|v| int_arg(v, what))
        .transpose()
}

/// The truth of a flag argument (Python's `bool(v)`), `default` when not given.
fn flag(v: Option<&Bound<'_, PyAny>>, default: bool) -> PyResult<bool> {
    v.map_or(Ok(default), |v| v.is_truthy())
}

/// `name(x, ...)` of one tensor argument, detached from the GIL for large inputs.
fn run1(
    x: &Bound<'_, PyAny>,
    f: impl FnOnce(&Tensor) -> tessera::Result<Tensor> + Send,
) -> PyResult<PyTensor> {
    let py = x.py();
    let run = |t: &Tensor| out(heavy(py, t.numel(), || f(t)));
    match x.cast::<PyTensor>() {
        Ok(t) => run(t.get().t()),
        Err(_) => run(&arg(x)?),
    }
}

/// The Array API's `argmax(x, /, *, axis=None, keepdims=False)`: int64 index of the first
/// maximum along `axis` (of the flattened array when None); NaN wins.
#[pyfunction]
#[pyo3(signature = (x, /, *, axis = None, keepdims = None),
       text_signature = "(x, /, *, axis=None, keepdims=False)")]
fn argmax(
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    keepdims: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let (axis, keepdims) = (opt_int_arg(axis, "axis")?, flag(keepdims, false)?);
    run1(x, |t| t.argmax(axis, keepdims))
}

/// The Array API's `argmin(x, /, *, axis=None, keepdims=False)`: int64 index of the first
/// minimum along `axis` (of the flattened array when None); NaN wins.
#[pyfunction]
#[pyo3(signature = (x, /, *, axis = None, keepdims = None),
       text_signature = "(x, /, *, axis=None, keepdims=False)")]
fn argmin(
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    keepdims: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let (axis, keepdims) = (opt_int_arg(axis, "axis")?, flag(keepdims, false)?);
    run1(x, |t| t.argmin(axis, keepdims))
}

/// The Array API's `sort(x, /, *, axis=-1, descending=False, stable=True)`: a sorted copy
/// along `axis`, NaNs last (first when `descending`); `stable` keeps equal elements in input
/// order.
#[pyfunction]
#[pyo3(signature = (x, /, *, axis = None, descending = None, stable = None),
       text_signature = "(x, /, *, axis=-1, descending=False, stable=True)")]
fn sort(
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    descending: Option<&Bound<'_, PyAny>>,
    stable: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let axis = opt_int_arg(axis, "axis")?.unwrap_or(-1);
    let (descending, stable) = (flag(descending, false)?, flag(stable, true)?);
    run1(x, |t| t.sort(axis, descending, stable))
}

/// The Array API's `argsort(x, /, *, axis=-1, descending=False, stable=True)`: int64
/// indices that sort `x` along `axis` (always stable: equal elements keep their input order,
/// in both directions).
#[pyfunction]
#[pyo3(signature = (x, /, *, axis = None, descending = None, stable = None),
       text_signature = "(x, /, *, axis=-1, descending=False, stable=True)")]
fn argsort(
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    descending: Option<&Bound<'_, PyAny>>,
    stable: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    flag(stable, true)?; // always stable
    let axis = opt_int_arg(axis, "axis")?.unwrap_or(-1);
    let descending = flag(descending, false)?;
    run1(x, |t| t.argsort(axis, descending))
}

/// The running sum (`prod`: product) of `x` along `axis`, for the two cumulative functions.
fn cumulative(
    prod: bool,
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    include_initial: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let axis = opt_int_arg(axis, "axis")?;
    let (dtype, initial) = (parse_opt_dtype(dtype)?, flag(include_initial, false)?);
    run1(x, |t| match prod {
        false => t.cumulative_sum(axis, dtype, initial),
        true => t.cumulative_prod(axis, dtype, initial),
    })
}

/// The Array API's `cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False)`:
/// the running sum along `axis` (None only for 1-d `x`); bool and integers sum in int64
/// unless `dtype` is given; `include_initial` prepends 0.
#[pyfunction]
#[pyo3(signature = (x, /, *, axis = None, dtype = None, include_initial = None),
       text_signature = "(x, /, *, axis=None, dtype=None, include_initial=False)")]
fn cumulative_sum(
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    include_initial: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    cumulative(false, x, axis, dtype, include_initial)
}

/// The Array API's `cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False)`:
/// the running product along `axis` (as `cumulative_sum`; `include_initial` prepends 1).
#[pyfunction]
#[pyo3(signature = (x, /, *, axis = None, dtype = None, include_initial = None),
       text_signature = "(x, /, *, axis=None, dtype=None, include_initial=False)")]
fn cumulative_prod(
    x: &Bound<'_, PyAny>,
    axis: Option<&Bound<'_, PyAny>>,
    dtype: Option<&Bound<'_, PyAny>>,
    include_initial: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    cumulative(true, x, axis, dtype, include_initial)
}

/// The Array API's `where(condition, x1, x2, /)`: elements of `x1` where `condition` is
/// true, else of `x2`, broadcast together; `x1` and `x2` promote to their result type. A
/// Python scalar is weak next to an array operand (it takes the array's dtype when its kind
/// fits, as for the two-operand functions); two Python scalars take their default dtypes.
#[pyfunction]
#[pyo3(name = "where", signature = (condition, x1, x2, /))]
fn where_(
    condition: &Bound<'_, PyAny>,
    x1: &Bound<'_, PyAny>,
    x2: &Bound<'_, PyAny>,
) -> PyResult<PyTensor> {
    let py = condition.py();
    let tensors = (
        condition.cast::<PyTensor>(),
        x1.cast::<PyTensor>(),
        x2.cast::<PyTensor>(),
    );
    if let (Ok(c), Ok(a), Ok(b)) = tensors {
        let (c, a, b) = (c.get().t(), a.get().t(), b.get().t());
        let n = c.numel().max(a.numel()).max(b.numel());
        return out(heavy(py, n, || Tensor::where_(c, a, b)));
    }
    let (a, b) = weak_pair("where", x1, x2, true)?;
    let c = arg(condition)?;
    let n = c.numel().max(a.numel()).max(b.numel());
    out(heavy(py, n, || Tensor::where_(&c, &a, &b)))
}

/// The Array API's `astype(x, dtype, /, *, copy=True, device=None)`: `x` converted to
/// `dtype` (a new array; with `copy=False`, `x` itself when it already has `dtype`). Float to
/// integer truncates toward zero; complex to real is a `TypeError`, as the standard leaves it
/// unspecified and NumPy warns and drops the imaginary part.
#[pyfunction]
#[pyo3(signature = (x, dtype, /, *, copy = None, device = None),
       text_signature = "(x, dtype, /, *, copy=True, device=None)")]
fn astype(
    x: &Bound<'_, PyAny>,
    dtype: &Bound<'_, PyAny>,
    copy: Option<&Bound<'_, PyAny>>,
    device: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    crate::device::check_device(device)?;
    let py = x.py();
    let d = parse_dtype(dtype)?;
    let tensor = x.cast::<PyTensor>().ok();
    let converted;
    let t = match tensor {
        Some(t) => t.get().t(),
        None => {
            converted = array_arg("astype", x)?;
            &converted
        }
    };
    if t.dtype().is_complex() && !d.is_complex() {
        return Err(PyTypeError::new_err(format!(
            "astype: casting {} to {} drops the imaginary part",
            t.dtype().name(),
            d.name()
        )));
    }
    if !flag(copy, true)? && t.dtype() == d {
        return match tensor {
            Some(same) => Ok(same.clone().into_any().unbind()),
            None => Ok(Py::new(py, PyTensor::from(t.clone()))?.into_any()),
        };
    }
    let out: PyTensor = heavy(py, t.numel(), || t.astype(d)).py()?.into();
    Ok(Py::new(py, out)?.into_any())
}

/// `x` as a tensor for a function that wants an array: a tensor or array-like (converted);
/// a Python scalar is a `TypeError`.
fn array_arg(name: &str, x: &Bound<'_, PyAny>) -> PyResult<Tensor> {
    not_a_python_scalar(name, x)?;
    arg(x)
}

/// `all`, `any` or `count_nonzero` (`which`) of `x` over `axis`.
#[pyfunction]
fn _truth(
    which: &str,
    x: &Bound<'_, PyAny>,
    axis: Option<Vec<isize>>,
    keepdims: bool,
) -> PyResult<PyTensor> {
    let x = arg(x)?;
    let ax = axis.as_deref();
    out(match which {
        "all" => x.all(ax, keepdims),
        "any" => x.any(ax, keepdims),
        _ => x.count_nonzero(ax, keepdims),
    })
}

/// `moveaxis(x, source, destination)`.
#[pyfunction]
fn _moveaxis(
    x: &Bound<'_, PyAny>,
    source: Vec<isize>,
    destination: Vec<isize>,
) -> PyResult<PyTensor> {
    out(arg(x)?.moveaxis(&source, &destination))
}

/// `unstack(x, axis)`.
#[pyfunction]
fn _unstack(x: &Bound<'_, PyAny>, axis: isize) -> PyResult<Vec<PyTensor>> {
    outs(arg(x)?.unstack(axis))
}

/// `broadcast_arrays(*xs)`.
#[pyfunction]
fn _broadcast_arrays(xs: Vec<Bound<'_, PyAny>>) -> PyResult<Vec<PyTensor>> {
    outs(Tensor::broadcast_arrays(&args(xs)?))
}

/// `roll(x, shift, axis)`.
#[pyfunction]
fn _roll(x: &Bound<'_, PyAny>, shift: Vec<isize>, axis: Option<Vec<isize>>) -> PyResult<PyTensor> {
    out(arg(x)?.roll(&shift, axis.as_deref()))
}

/// `diff(x, axis, n, prepend, append)`.
#[pyfunction]
#[pyo3(signature = (x, axis, n, prepend, append))]
fn _diff(
    x: &Bound<'_, PyAny>,
    axis: isize,
    n: usize,
    prepend: Option<&Bound<'_, PyAny>>,
    append: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let p = prepend.map(arg).transpose()?;
    let a = append.map(arg).transpose()?;
    out(arg(x)?.diff(axis, n, p.as_ref(), a.as_ref()))
}

/// `tril(x, k)` (`lower`) or `triu(x, k)`.
#[pyfunction]
fn _triangle(x: &Bound<'_, PyAny>, k: i64, lower: bool) -> PyResult<PyTensor> {
    let x = arg(x)?;
    out(if lower { x.tril(k) } else { x.triu(k) })
}

/// `meshgrid(*xs, indexing)`.
#[pyfunction]
fn _meshgrid(xs: Vec<Bound<'_, PyAny>>, indexing: &str) -> PyResult<Vec<PyTensor>> {
    outs(Tensor::meshgrid(&args(xs)?, indexing))
}

/// `eye(rows, cols, k, dtype)`.
#[pyfunction]
#[pyo3(signature = (rows, cols, k, dtype))]
fn _eye(rows: usize, cols: usize, k: i64, dtype: Option<&Bound<'_, PyAny>>) -> PyResult<PyTensor> {
    let d = parse_opt_dtype(dtype)?.unwrap_or(tessera::DType::F64);
    out(Tensor::eye(rows, cols, k, d))
}

/// `linspace(start, stop, num, endpoint, dtype)`.
#[pyfunction]
#[pyo3(signature = (start, stop, num, endpoint, dtype))]
fn _linspace(
    start: f64,
    stop: f64,
    num: usize,
    endpoint: bool,
    dtype: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyTensor> {
    let d = parse_opt_dtype(dtype)?.unwrap_or(tessera::DType::F64);
    out(Tensor::linspace(start, stop, num, endpoint, d))
}

/// Adds the functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_prod, m)?)?;
    m.add_function(wrap_pyfunction!(_var, m)?)?;
    m.add_function(wrap_pyfunction!(_std, m)?)?;
    m.add_function(wrap_pyfunction!(_truth, m)?)?;
    m.add_function(wrap_pyfunction!(argmax, m)?)?;
    m.add_function(wrap_pyfunction!(argmin, m)?)?;
    m.add_function(wrap_pyfunction!(sort, m)?)?;
    m.add_function(wrap_pyfunction!(argsort, m)?)?;
    m.add_function(wrap_pyfunction!(cumulative_sum, m)?)?;
    m.add_function(wrap_pyfunction!(cumulative_prod, m)?)?;
    m.add_function(wrap_pyfunction!(where_, m)?)?;
    m.add_function(wrap_pyfunction!(astype, m)?)?;
    m.add_function(wrap_pyfunction!(_moveaxis, m)?)?;
    m.add_function(wrap_pyfunction!(_unstack, m)?)?;
    m.add_function(wrap_pyfunction!(_broadcast_arrays, m)?)?;
    m.add_function(wrap_pyfunction!(_roll, m)?)?;
    m.add_function(wrap_pyfunction!(_diff, m)?)?;
    m.add_function(wrap_pyfunction!(_triangle, m)?)?;
    m.add_function(wrap_pyfunction!(_meshgrid, m)?)?;
    m.add_function(wrap_pyfunction!(_eye, m)?)?;
    m.add_function(wrap_pyfunction!(_linspace, m)?)?;
    Ok(())
}
