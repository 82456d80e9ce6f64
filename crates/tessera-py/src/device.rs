//! The standard's device object (docs/design.md N2): Tessera's one device, the host CPU,
//! and the check behind every `device=` keyword. At the bottom of the module graph with
//! `errors`, `dtype` and `handle`.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// The one device Tessera computes on: the host CPU (the standard's device object).
///
/// Equal only to itself; `tessera.Device()` and `x.device` are the same device.
#[pyclass(frozen, eq, hash, name = "Device", module = "tessera")]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PyDevice;

#[pymethods]
impl PyDevice {
    #[new]
    fn new() -> Self {
        PyDevice
    }

    fn __repr__(&self) -> &'static str {
        "Device('cpu')"
    }
}

/// Accepts the CPU: `None`, a `Device`, or the string `"cpu"`; any other device is a
/// `ValueError` (the standard leaves the kind to the library; NumPy raises ValueError).
pub fn check_device(device: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
    match device {
        None => Ok(()),
        Some(d) if d.is_none() || d.is_instance_of::<PyDevice>() => Ok(()),
        Some(d) if d.extract::<String>().is_ok_and(|s| s == "cpu") => Ok(()),
        Some(d) => Err(PyValueError::new_err(format!(
            "unsupported device {}: tessera computes on Device('cpu')",
            d.repr()?
        ))),
    }
}
