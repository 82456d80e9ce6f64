//! The one error type of the `tessera` crate, with the sparse kinds ([`SparseError`]) in it.
//! Bottom layer: it names only [`crate::dtype`].

mod facts;
mod io;
mod sparse;

pub use facts::{DTypeFacts, IndexFacts, ShapeFacts};
pub use io::IoFacts;
pub use sparse::SparseError;

use crate::dtype::DType;

/// Everything that can go wrong in `tessera`. Every fallible public function returns
/// [`Result<T>`]; no public function panics on bad input.
///
/// The error is one pointer to its [`ErrorKind`], so that a `Result` stays small: a
/// `Result<()>` or `Result<&T>` comes back in registers, and a `Result` of a view is not
/// copied through the stack at each layer (docs/performance.md, "A one-pointer error").
/// Match on [`TesseraError::kind`]:
///
/// ```
/// use tessera::{ErrorKind, Tensor};
///
/// let t = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
/// let e = t.index_points(&[5]).unwrap_err();
/// assert!(matches!(e.kind(), ErrorKind::Index(_)));
/// assert_eq!(e.to_string(), "index error: index 5 is out of bounds for axis 0 with size 2");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct TesseraError(Box<ErrorKind>);

impl TesseraError {
    /// What went wrong, with its facts.
    pub fn kind(&self) -> &ErrorKind {
        &self.0
    }

    /// The kind, by value.
    pub fn into_kind(self) -> ErrorKind {
        *self.0
    }
}

impl From<ErrorKind> for TesseraError {
    /// Boxes the kind. Out of line and cold: errors are the rare path, and the allocation
    /// stays out of the callers' hot code.
    #[cold]
    #[inline(never)]
    fn from(kind: ErrorKind) -> Self {
        TesseraError(Box::new(kind))
    }
}

impl std::fmt::Debug for TesseraError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.0, f)
    }
}

impl std::fmt::Display for TesseraError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&*self.0, f)
    }
}

impl std::error::Error for TesseraError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        std::error::Error::source(&*self.0)
    }
}

/// The kinds of [`TesseraError`], each with the facts a caller can match on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A shape's element count, or its byte size for a given element size, does not fit in
    /// `isize`, or a stride/offset computation overflowed.
    #[error("shape overflow: {0}")]
    ShapeOverflow(String),
    /// A dimension or stride is outside what the library can represent.
    #[error("invalid shape: {0}")]
    InvalidShape(String),
    /// The number of elements given does not match the shape.
    #[error("data has {got} elements but shape {shape:?} needs {expected}")]
    DataLength {
        /// The requested shape.
        shape: Vec<usize>,
        /// Elements the shape needs.
        expected: usize,
        /// Elements supplied.
        got: usize,
    },
    /// A typed accessor was called with the wrong element type.
    #[error("dtype mismatch: expected {expected}, got {got}")]
    DTypeMismatch {
        /// The dtype the caller asked for.
        expected: DType,
        /// The tensor's dtype.
        got: DType,
    },
    /// The memory allocator refused an allocation of this many bytes.
    #[error("allocation of {0} bytes failed")]
    Allocation(usize),
    /// A view would reach elements outside its storage.
    #[error("out of bounds: {0}")]
    OutOfBounds(String),
    /// An index or axis is outside the dimension or rank it indexes.
    #[error("index error: {0}")]
    Index(IndexFacts),
    /// Shapes that must agree (broadcast, expand, reshape, assign) do not.
    #[error("shape mismatch: {0}")]
    ShapeMismatch(ShapeFacts),
    /// The operation is not defined for these dtypes (no promotion rule, wrong kind).
    #[error("dtype error: {0}")]
    DType(DTypeFacts),
    /// A write destination overlaps itself (e.g. an expanded, stride-0 view) (docs/design.md V7).
    #[error("overlapping destination: {0}")]
    OverlappingWrite(String),
    /// Autograd misuse: backward through a freed graph or a forward-only op, a saved tensor
    /// modified in place, an in-place write into a tensor that requires a gradient.
    #[error("autograd: {0}")]
    Autograd(String),
    /// An argument has a value outside its allowed range.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// A linear-algebra function cannot compute its result: a singular matrix (`inv`,
    /// `solve`), one that is not positive definite (`cholesky`), an eigen or singular value
    /// solver that did not converge (NumPy's `LinAlgError`).
    #[error("linear algebra: {0}")]
    LinAlg(String),
    /// No registered op has this name; `close` lists the registered names close to it.
    #[error("invalid argument: no op named {name:?}{} (see docs/ops.md for the list)", did_you_mean(.close))]
    UnknownOp {
        /// The name asked for.
        name: String,
        /// Registered names within a small edit distance (or sharing a prefix).
        close: Vec<String>,
    },
    /// Sparse parts that break a CSR / row-sparse invariant (docs/design.md O4).
    #[error("invalid sparse tensor: {0}")]
    Sparse(SparseError),
    /// Reading or writing a file failed: the OS refused ([`IoFacts::Os`]) or the contents
    /// break the format ([`IoFacts::Format`]). See the `io` module.
    #[error("{0}")]
    Io(IoFacts),
}

/// `Result` with [`TesseraError`].
pub type Result<T, E = TesseraError> = std::result::Result<T, E>;

impl From<SparseError> for TesseraError {
    fn from(e: SparseError) -> Self {
        ErrorKind::Sparse(e).into()
    }
}

/// `; did you mean "a", "b"?` for a non-empty list of close names.
fn did_you_mean(close: &[String]) -> String {
    if close.is_empty() {
        return String::new();
    }
    let quoted: Vec<String> = close.iter().map(|c| format!("{c:?}")).collect();
    format!("; did you mean {}?", quoted.join(", "))
}
