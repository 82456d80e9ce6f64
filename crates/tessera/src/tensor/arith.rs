//! Elementwise arithmetic on tensors: unary functions, binary operations with broadcasting
//! and type promotion ([`crate::promote`]), comparisons, scalar operands and in-place updates
//! through views (docs/design.md V7).
//!
//! Dtype rules beyond promotion (all NumPy's):
//! - `div` is true division: integer and bool operands give `f64`.
//! - `sqrt`, `exp`, `log`, `sin`, `tanh` of integers/bool compute in
//!   [`crate::promote::float_result`] (`f16` for bool/u8/i8, `f64` for i32/i64).
//! - `bool - bool` and `-bool` are errors; `bool ** bool` and `square(bool)` give `i8`.
//! - An integer `pow` with a negative exponent is an error (NumPy's `ValueError`).
//! - Integer overflow wraps. `f16`/`bf16` compute each element in `f32` and round once.
//! - Complex (`complex64`/`complex128`, through num-complex): `abs` gives the real dtype of
//!   the parts; the ordering operations (`<`, `<=`, `>`, `>=`, `maximum`, `minimum`) and
//!   `relu` are [`ErrorKind::DType`] errors, since the array API standard leaves complex
//!   numbers unordered (NumPy orders them lexicographically).

use std::sync::Arc;

use super::distinct::Distinct;
use super::flat::{zip_dense, zip_flat};
use super::map::{map_into, map_new, operand};
use super::vector_math::{vector_math, VecFn};
use super::Tensor;
use crate::dtype::{DType, Element, Scalar};
use crate::error::{DTypeFacts, ErrorKind, Result};
use crate::kernels::elementwise::{zip2, zip3};
use crate::kernels::plan::Plan;
use crate::kernels::scalar_math::{convert, Arith};
use crate::layout::{broadcast_shapes, Layout};
use crate::promote::{float_result, result_type, result_type_scalar};
use crate::shape::DimVec;
use crate::storage::Storage;
use crate::with_dtype;

macro_rules! op_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident => $s:literal),* $(,)? }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name { $($(#[$vm])* $v),* }
        impl $name {
            /// Every operation of this kind.
            pub const ALL: &'static [$name] = &[$($name::$v),*];
            /// The registry name of the operation (NumPy's ufunc name).
            pub const fn name(self) -> &'static str {
                match self { $($name::$v => $s),* }
            }
            /// The operation whose registry name is `name`, if any.
            pub fn from_name(name: &str) -> Option<$name> {
                match name { $($s => Some($name::$v),)* _ => None }
            }
        }
    };
}
pub(super) use op_enum;

op_enum!(
    /// Elementwise functions of one tensor.
    UnaryOp {
        /// `-x`.
        Neg => "negative",
        /// `|x|`.
        Abs => "absolute",
        /// Square root.
        Sqrt => "sqrt",
        /// `e ** x`.
        Exp => "exp",
        /// Natural logarithm.
        Log => "log",
        /// `x * x`.
        Square => "square",
        /// Sine.
        Sin => "sin",
        /// Hyperbolic tangent.
        Tanh => "tanh",
        /// `max(x, 0)` (NaN kept).
        Relu => "relu",
    }
);

op_enum!(
    /// Elementwise arithmetic on two broadcast tensors.
    BinaryOp {
        /// `a + b`.
        Add => "add",
        /// `a - b`.
        Sub => "subtract",
        /// `a * b`.
        Mul => "multiply",
        /// True division `a / b`.
        Div => "divide",
        /// Elementwise maximum, NaN-propagating.
        Maximum => "maximum",
        /// Elementwise minimum, NaN-propagating.
        Minimum => "minimum",
        /// `a ** b`.
        Pow => "power",
    }
);

op_enum!(
    /// Elementwise comparisons; the result is `bool`.
    CompareOp {
        /// `a == b`.
        Eq => "equal",
        /// `a != b`.
        Ne => "not_equal",
        /// `a < b`.
        Lt => "less",
        /// `a <= b`.
        Le => "less_equal",
        /// `a > b`.
        Gt => "greater",
        /// `a >= b`.
        Ge => "greater_equal",
    }
);

impl UnaryOp {
    /// The dtype `self` computes in and returns for an input of dtype `d`.
    pub fn result_dtype(self, d: DType) -> Result<DType> {
        use UnaryOp::*;
        match (self, d) {
            (Neg, DType::Bool) => Err(ErrorKind::DType(DTypeFacts::Unsupported {
                op: "negative".into(),
                dtype: DType::Bool,
                hint: " (NumPy); use logical not",
            })
            .into()),
            (Square, DType::Bool) => Ok(DType::I8),
            (Abs, DType::C64) => Ok(DType::F32),
            (Abs, DType::C128) => Ok(DType::F64),
            (Relu, d) if d.is_complex() => Err(crate::tensor::reduce::unordered("relu", d)),
            (Sqrt | Exp | Log | Sin | Tanh, d) => Ok(float_result(d)),
            (_, d) => Ok(d),
        }
    }
}

impl BinaryOp {
    /// The dtype `self` computes in and returns for operands of dtypes `a` and `b`.
    pub fn result_dtype(self, a: DType, b: DType) -> Result<DType> {
        let t = result_type(a, b)?;
        match (self, t) {
            (BinaryOp::Div, t) if !t.is_float() && !t.is_complex() => Ok(DType::F64),
            (BinaryOp::Maximum | BinaryOp::Minimum, t) if t.is_complex() => {
                Err(crate::tensor::reduce::unordered(self.name(), t))
            }
            (BinaryOp::Sub, DType::Bool) => Err(ErrorKind::DType(DTypeFacts::Unsupported {
                op: "subtract".into(),
                dtype: DType::Bool,
                hint: " (NumPy); use logical xor",
            })
            .into()),
            (BinaryOp::Pow, DType::Bool) => Ok(DType::I8),
            (_, t) => Ok(t),
        }
    }
}

/// Runs `$body` with `$f` bound to the closure of a binary op, one monomorphised copy per op
/// (closures inline and vectorise; function pointers called per element do not).
macro_rules! with_binary_fn {
    ($op:expr, $f:ident => $body:expr) => {
        match $op {
            BinaryOp::Add => {
                let $f = |x, y| Arith::add(x, y);
                $body
            }
            BinaryOp::Sub => {
                let $f = |x, y| Arith::sub(x, y);
                $body
            }
            BinaryOp::Mul => {
                let $f = |x, y| Arith::mul(x, y);
                $body
            }
            BinaryOp::Div => {
                let $f = |x, y| Arith::div(x, y);
                $body
            }
            BinaryOp::Maximum => {
                let $f = |x, y| Arith::maximum(x, y);
                $body
            }
            BinaryOp::Minimum => {
                let $f = |x, y| Arith::minimum(x, y);
                $body
            }
            BinaryOp::Pow => {
                let $f = |x, y| Arith::pow(x, y);
                $body
            }
        }
    };
}

impl Tensor {
    /// The dense kernel of [`Tensor::unary`]: a new tensor (order: design.md P6) of
    /// [`UnaryOp::result_dtype`].
    pub(crate) fn unary_dense(&self, op: UnaryOp) -> Result<Tensor> {
        let dt = op.result_dtype(self.dtype())?;
        if op == UnaryOp::Abs && self.dtype().is_complex() {
            return self.complex_abs(dt);
        }
        let src = self.astype_if(dt)?;
        let vector = match op {
            UnaryOp::Exp => Some(VecFn::Exp),
            UnaryOp::Log => Some(VecFn::Log),
            UnaryOp::Sin => Some(VecFn::Sin),
            UnaryOp::Tanh => Some(VecFn::Tanh),
            _ => None,
        };
        if let Some(f) = vector {
            if let Some(out) = vector_math(f, &src)? {
                return Ok(out);
            }
        }
        with_dtype!(dt, T => {
            // One monomorphised kernel per op: a closure the compiler inlines and vectorises,
            // not a function pointer called per element.
            macro_rules! run {
                ($f:path) => {
                    map_new::<T, T>(&src, |x| $f(x))
                };
            }
            match op {
                UnaryOp::Neg => run!(Arith::neg),
                UnaryOp::Abs => run!(Arith::abs),
                UnaryOp::Sqrt => run!(Arith::sqrt),
                UnaryOp::Exp => run!(Arith::exp),
                UnaryOp::Log => run!(Arith::ln),
                UnaryOp::Square => run!(Arith::square),
                UnaryOp::Sin => run!(Arith::sin),
                UnaryOp::Tanh => run!(Arith::tanh),
                UnaryOp::Relu => run!(Arith::relu),
            }
        })
    }

    /// `|z|` of a complex tensor in the real dtype `dt` of its parts (`hypot`, no overflow
    /// for large parts).
    fn complex_abs(&self, dt: DType) -> Result<Tensor> {
        use crate::complex::{C128, C64};
        let out = Tensor::for_overwrite_in_order(self.layout(), dt)?;
        match self.dtype() {
            DType::C64 => map_into::<f32, C64>(&out, self, |_, z| z.0.norm())?,
            _ => map_into::<f64, C128>(&out, self, |_, z| z.0.norm())?,
        }
        Ok(out)
    }

    /// The dense kernel of [`Tensor::binary`]: `op(self, other)` with broadcasting and type
    /// promotion, into a new tensor (order: design.md P6).
    pub(crate) fn binary_dense(&self, other: &Tensor, op: BinaryOp) -> Result<Tensor> {
        let dt = op.result_dtype(self.dtype(), other.dtype())?;
        let integer_pow = op == BinaryOp::Pow && dt.is_integer();
        if op == BinaryOp::Pow {
            // Operands that repeat along a dim: `pow` once per distinct pair (distinct.rs).
            if let Some(d) = Distinct::of(&[self, other])? {
                return d.spread(&d.operands[0].binary_dense(&d.operands[1], op)?);
            }
        }
        if self.dtype() == dt && other.dtype() == dt && !integer_pow {
            let flat = with_dtype!(dt, T => {
                with_binary_fn!(op, f => zip_flat::<T, T>(self, other, f)?)
            });
            if let Some(out) = flat {
                return Ok(out);
            }
        }
        let (out, a, b) = self.zip_new(other, dt, dt)?;
        if integer_pow {
            check_no_negative(&b)?;
        }
        with_dtype!(dt, T => {
            with_binary_fn!(op, f => zip_into::<T, T>(&out, &a, &b, f)?)
        });
        Ok(out)
    }

    /// The dense kernel of [`Tensor::compare`]: `op(self, other)` elementwise with
    /// broadcasting, compared in the promoted dtype; the result is a `bool` tensor.
    #[allow(clippy::bool_comparison)] // instantiated for T = bool too
    pub(crate) fn compare_dense(&self, other: &Tensor, op: CompareOp) -> Result<Tensor> {
        let dt = result_type(self.dtype(), other.dtype())?;
        if dt.is_complex() && !matches!(op, CompareOp::Eq | CompareOp::Ne) {
            return Err(crate::tensor::reduce::unordered(op.name(), dt));
        }
        let same = self.dtype() == dt && other.dtype() == dt;
        with_dtype!(dt, T => {
            // One flat run when it can be, across threads from the cut-over (`flat.rs`),
            // else the general walk.
            macro_rules! run {
                ($f:expr) => {{
                    if same {
                        if let Some(out) = zip_dense::<bool, T>(self, other, $f)? {
                            return Ok(out);
                        }
                    }
                    let (out, a, b) = self.zip_new(other, dt, DType::Bool)?;
                    zip_into::<bool, T>(&out, &a, &b, $f)?;
                    Ok(out)
                }};
            }
            match op {
                CompareOp::Eq => run!(|x: T, y: T| x == y),
                CompareOp::Ne => run!(|x: T, y: T| x != y),
                CompareOp::Lt => run!(|x: T, y: T| x < y),
                CompareOp::Le => run!(|x: T, y: T| x <= y),
                CompareOp::Gt => run!(|x: T, y: T| x > y),
                CompareOp::Ge => run!(|x: T, y: T| x >= y),
            }
        })
    }

    /// In place: `self = op(self, other)`, written through the view `self` so the base and
    /// every other view see it (docs/design.md V7).
    ///
    /// `other` must broadcast to `self`'s shape; the promoted result dtype must be `self`'s
    /// ([`ErrorKind::DType`] otherwise, like NumPy's casting error for `int_arr += 1.5`);
    /// a destination that overlaps itself (a stride-0 dim of size > 1) is
    /// [`ErrorKind::OverlappingWrite`]. When `other` shares storage with `self` it is
    /// copied first, so `a[1:] += a[:-1]` gives NumPy's result.
    ///
    /// Refused while grad mode is on and `self` or `other` requires a gradient
    /// ([`ErrorKind::Autograd`], docs/design.md G4).
    pub fn binary_(&self, other: &Tensor, op: BinaryOp) -> Result<()> {
        self.check_inplace(op.name(), &[other])?;
        let dt = op.result_dtype(self.dtype(), other.dtype())?;
        if dt != self.dtype() {
            return Err(ErrorKind::DType(DTypeFacts::Differ {
                op: format!("{} in place", op.name()),
                what: "result",
                expected: self.dtype(),
                got: dt,
            })
            .into());
        }
        self.layout().check_writable()?;
        let layout = other.layout().broadcast_to(self.shape())?;
        let other = if self.shares_storage(other) {
            other.astype_dense(dt)?
        } else {
            other.astype_if(dt)?
        };
        let other = other.with_layout(other.layout().broadcast_to(layout.dims())?)?;
        if op == BinaryOp::Pow && dt.is_integer() {
            check_no_negative(&other)?;
        }
        with_dtype!(dt, T => {
            with_binary_fn!(op, f => update_in_place::<T>(self, &other, f)?)
        });
        Ok(())
    }

    /// The dense kernel of [`Tensor::binary_scalar`]: `op(self, s)` with a weak scalar.
    pub(crate) fn binary_scalar_dense(&self, s: impl Into<Scalar>, op: BinaryOp) -> Result<Tensor> {
        self.binary_dense(&self.weak_scalar(s.into())?, op)
    }

    /// In place: `self = op(self, s)` with a weak scalar (see [`Tensor::binary_`]).
    pub fn binary_scalar_(&self, s: impl Into<Scalar>, op: BinaryOp) -> Result<()> {
        self.binary_(&self.weak_scalar(s.into())?, op)
    }

    /// The dense kernel of [`Tensor::astype`]: a new tensor (order: design.md P6) with the elements
    /// converted to `dtype` (always a copy; float to integer truncates toward zero and
    /// saturates, NaN becomes 0, non-zero becomes `true`). The source is read under one read
    /// lock released on return. Errors for a sparse tensor (the dense gate).
    pub(crate) fn astype_dense(&self, dtype: DType) -> Result<Tensor> {
        // `map_new`: one flat loop, with no walk planned, when the input is one run.
        with_dtype!(dtype, O => with_dtype!(self.dtype(), A => {
            map_new::<O, A>(self, convert::<A, O>)
        }))
    }

    /// [`Tensor::astype_dense`] into a row-major result whatever this tensor's memory order:
    /// for kernels that read the converted elements flat. One copy, where `astype_dense`
    /// followed by `contiguous_dense` would make two for a permuted input.
    pub(crate) fn astype_contiguous(&self, dtype: DType) -> Result<Tensor> {
        self.convert_into(Tensor::for_overwrite_like(self.layout(), dtype)?)
    }

    /// Writes this tensor's elements, converted, into `out` (fresh, of this shape).
    fn convert_into(&self, out: Tensor) -> Result<Tensor> {
        with_dtype!(out.dtype(), O => with_dtype!(self.dtype(), A => {
            map_into::<O, A>(&out, self, |_, x| convert::<A, O>(x))?
        }));
        Ok(out)
    }

    /// A new tensor (order: design.md P6) of `out` dtype with `f` applied to every element, computed in
    /// `f64` (exact for every dtype but `i64` beyond 2^53). The kernel behind ops such as
    /// `quadratic` that are defined by a real function.
    ///
    /// Converts to `f64`, maps, and converts to `out` (each conversion skipped when the dtype
    /// already matches): one compiled kernel per `f`, not one per pair of dtypes.
    pub(crate) fn map_f64(&self, out: DType, f: impl Fn(f64) -> f64 + Sync) -> Result<Tensor> {
        let src = self.astype_if(DType::F64)?;
        let dst = Tensor::for_overwrite_in_order(self.layout(), DType::F64)?;
        map_into::<f64, f64>(&dst, &src, |_, x| f(x))?;
        dst.astype_if(out)
    }

    /// `self` if it already has `dtype`, else a converted copy.
    pub(crate) fn astype_if(&self, dtype: DType) -> Result<Tensor> {
        if self.dtype() == dtype {
            Ok(self.clone())
        } else {
            self.astype_dense(dtype)
        }
    }

    /// A rank-0 tensor holding `s` in the dtype weak promotion gives it next to `self`.
    pub(crate) fn weak_scalar(&self, s: Scalar) -> Result<Tensor> {
        Tensor::scalar(s, result_type_scalar(self.dtype(), s)?)
    }

    /// The new output (`out_dtype`, broadcast shape) and both operands converted to
    /// `compute` and broadcast to that shape.
    pub(super) fn zip_new(
        &self,
        other: &Tensor,
        compute: DType,
        out_dtype: DType,
    ) -> Result<(Tensor, Tensor, Tensor)> {
        // Same-shape operands (the common case) need no broadcast and no allocation.
        let shape: DimVec<usize> = if self.shape() == other.shape() {
            self.shape().into()
        } else {
            broadcast_shapes(self.shape(), other.shape())?.into()
        };
        let prep = |t: &Tensor| -> Result<Tensor> {
            let mut t = t.astype_if(compute)?;
            // An operand whose innermost dim runs backwards (`flip`, `[..., ::-1]`) is copied
            // row-major first: the run loops have no arm for a stride of -1, and their
            // bounds-checked indexed loop took 120 us for `flip(t, axis=1) * 1` on 256x256 f32,
            // where the copy (a reversed slice, which vectorises) takes 15.
            if super::map::inner_runs_backwards(&t) {
                t = t.copy_dense()?;
            }
            let l = t.layout().broadcast_to(&shape)?;
            t.with_layout(l)
        };
        let (a, b) = (prep(self)?, prep(other)?);
        // Both now have `shape`. The output follows the memory order of an input that is a
        // permuted dense block when the other input walks memory the same way on every dim
        // longer than 1, or is broadcast along one (docs/design.md P6); otherwise it is
        // row-major, sharing a canonical input's descriptor when there is one.
        let in_order = |x: &Tensor, y: &Tensor| -> Result<Option<Layout>> {
            if x.is_contiguous() {
                return Ok(None);
            }
            let broadcast = x
                .shape()
                .iter()
                .zip(y.strides())
                .any(|(&d, &s)| d > 1 && s == 0);
            if broadcast || x.layout().walks_like(y.layout()) {
                x.layout().dense_order()
            } else {
                Ok(None)
            }
        };
        let out = match in_order(&a, &b)? {
            Some(layout) => Tensor::for_overwrite_dense(layout, out_dtype)?,
            None => match in_order(&b, &a)? {
                Some(layout) => Tensor::for_overwrite_dense(layout, out_dtype)?,
                None if a.layout().is_canonical() => {
                    Tensor::for_overwrite_like(a.layout(), out_dtype)?
                }
                None => Tensor::for_overwrite_like(b.layout(), out_dtype)?,
            },
        };
        Ok((out, a, b))
    }
}

/// `out = f(a, b)` where `out` is fresh and `a`, `b` have its shape. One read lock serves
/// both inputs when they share storage (parking_lot read locks must not be taken twice by
/// one thread: a queued writer would deadlock it).
pub(super) fn zip_into<O: Element, T: Element>(
    out: &Tensor,
    a: &Tensor,
    b: &Tensor,
    f: impl Fn(T, T) -> O + Sync,
) -> Result<()> {
    let mut o = out.dense_storage()?.write_as::<O>();
    let ga = a.dense_storage()?.read_as::<T>();
    let gb = match a.shares_storage(b) {
        true => None,
        false => Some(b.dense_storage()?.read_as::<T>()),
    };
    let bd: &[T] = gb.as_deref().unwrap_or(&ga);
    let (la, lb) = (operand(a.layout()), operand(b.layout()));
    zip3(
        out.shape(),
        &mut o,
        operand(out.layout()),
        (&ga, la),
        (bd, lb),
        f,
    )
}

/// `dst = f(dst, src)` through the view `dst`; `src` has `dst`'s shape and dtype and does
/// not share its storage. The two locks are taken in storage-address order so that two
/// threads running `x += y` and `y += x` cannot deadlock.
fn update_in_place<T: Element>(
    dst: &Tensor,
    src: &Tensor,
    f: impl Fn(T, T) -> T + Sync,
) -> Result<()> {
    debug_assert!(!dst.shares_storage(src));
    let (ds, ss) = (dst.dense_storage()?, src.dense_storage()?);
    let (pd, ps) = (Arc::as_ptr(ds), Arc::as_ptr(ss));
    let (d, s): (&Storage, &Storage) = (ds, ss);
    let (mut o, a) = if pd < ps {
        let o = d.write_as::<T>();
        (o, s.read_as::<T>())
    } else {
        let a = s.read_as::<T>();
        (d.write_as::<T>(), a)
    };
    zip2(
        dst.shape(),
        &mut o,
        operand(dst.layout()),
        &a,
        operand(src.layout()),
        f,
    )
}

/// Errors if any element of the integer tensor `t` is negative (an exponent of `pow`).
#[allow(clippy::bool_comparison)] // instantiated for T = bool too
fn check_no_negative(t: &Tensor) -> Result<()> {
    let neg = with_dtype!(t.dtype(), T => {
        let data = t.dense_storage()?.read_as::<T>();
        let l = t.layout();
        let plan = Plan::new(l.dims(), [l.strides()], [l.offset()]);
        let (n, s, zero) = (plan.inner_len() as isize, plan.inner_stride(0), T::default());
        let mut neg = false;
        plan.for_each_run(0..plan.runs(), |o| {
            neg |= (0..n).any(|i| data[(o[0] + i * s) as usize] < zero);
        });
        neg
    });
    if neg {
        return Err(ErrorKind::InvalidArgument(
            "integers to negative integer powers are not allowed".into(),
        )
        .into());
    }
    Ok(())
}

macro_rules! named_inplace_ops {
    ($($name:ident, $inplace:ident, $sinplace:ident => $op:ident;)*) => {
        impl Tensor {$(
            #[doc = concat!("In-place `", stringify!($name), "` (see [`Tensor::binary_`]).")]
            pub fn $inplace(&self, other: &Tensor) -> Result<()> {
                self.binary_(other, BinaryOp::$op)
            }
            #[doc = concat!("In-place `", stringify!($name), "` with a weak scalar.")]
            pub fn $sinplace(&self, s: impl Into<Scalar>) -> Result<()> {
                self.binary_scalar_(s, BinaryOp::$op)
            }
        )*}
    };
}

named_inplace_ops! {
    add, add_, add_scalar_ => Add;
    sub, sub_, sub_scalar_ => Sub;
    mul, mul_, mul_scalar_ => Mul;
    div, div_, div_scalar_ => Div;
    maximum, maximum_, maximum_scalar_ => Maximum;
    minimum, minimum_, minimum_scalar_ => Minimum;
    pow, pow_, pow_scalar_ => Pow;
}
