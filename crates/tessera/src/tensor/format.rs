//! NumPy-style printing of tensors: `Display` is NumPy's `str`, `Debug` is its `repr` with
//! `tensor(` in place of `array(`. Arrays above [`PRINT_THRESHOLD`] elements are summarised
//! with `...`, keeping [`EDGE_ITEMS`] items at each edge of every axis; lines wrap at
//! [`LINE_WIDTH`] columns. Dtypes NumPy implies (float64, int64, bool) are not printed.

use std::fmt;

use super::element_format::{complex_scalar_str, scalar_str, ElementFormat};
use super::Tensor;
use crate::dtype::{DType, Element};
use crate::with_dtype;

/// Element count above which printing summarises (NumPy's `threshold`).
pub const PRINT_THRESHOLD: usize = 1000;
/// Items kept at each edge of a summarised axis (NumPy's `edgeitems`).
pub const EDGE_ITEMS: usize = 3;
/// Line width for wrapping (NumPy's `linewidth`).
pub const LINE_WIDTH: usize = 75;

/// The strided elements of a tensor as the printer sees them.
struct View<'a, T> {
    data: &'a [T],
    dims: &'a [usize],
    strides: &'a [isize],
    summarise: bool,
}

impl<T: Element> View<'_, T> {
    /// Indices of axis `axis` that are printed; `None` marks where `...` goes.
    fn shown(&self, axis: usize) -> Vec<Option<usize>> {
        let n = self.dims[axis];
        if self.summarise && n > 2 * EDGE_ITEMS {
            let mut v: Vec<_> = (0..EDGE_ITEMS).map(Some).collect();
            v.push(None);
            v.extend((n - EDGE_ITEMS..n).map(Some));
            v
        } else {
            (0..n).map(Some).collect()
        }
    }

    fn at(&self, offset: isize) -> T {
        self.data[offset as usize]
    }

    fn collect(&self, axis: usize, offset: isize, out: &mut Vec<T>) {
        if axis == self.dims.len() {
            out.push(self.at(offset));
            return;
        }
        for i in self.shown(axis).into_iter().flatten() {
            self.collect(axis + 1, offset + i as isize * self.strides[axis], out);
        }
    }

    /// NumPy's `_formatArray` recursion for the sub-array at `axis`, `offset`.
    fn render(
        &self,
        f: &ElementFormat,
        sep: &str,
        axis: usize,
        offset: isize,
        indent: &str,
        width: usize,
    ) -> String {
        let rank = self.dims.len();
        if axis == rank {
            return f.format(self.at(offset));
        }
        let next_indent = format!("{indent} ");
        // Each child is one word (a number) or one nested block; `...` marks the summary gap.
        let children: Vec<String> = self
            .shown(axis)
            .into_iter()
            .map(|item| match item {
                Some(i) => self.render(
                    f,
                    sep,
                    axis + 1,
                    offset + i as isize * self.strides[axis],
                    &next_indent,
                    width.saturating_sub(1),
                ),
                None => "...".to_string(),
            })
            .collect();
        let last = children.len() - 1;
        let mut s = String::new();
        if rank - axis == 1 {
            // Words fill lines up to the width (one less for the closing bracket).
            let mut line = indent.to_string();
            for (k, word) in children.iter().enumerate() {
                if line.len() + word.len() > width.saturating_sub(1) && line.len() > indent.len() {
                    s.push_str(line.trim_end());
                    s.push('\n');
                    line = indent.to_string();
                }
                line.push_str(word);
                if k != last {
                    line.push_str(sep);
                }
            }
            s.push_str(&line);
        } else {
            // Nested blocks, one per line, separated by blank lines per remaining axis.
            let line_sep = format!("{}{}", sep.trim_end(), "\n".repeat(rank - axis - 1));
            for (k, nested) in children.iter().enumerate() {
                s.push_str(indent);
                s.push_str(nested);
                if k != last {
                    s.push_str(&line_sep);
                }
            }
        }
        format!("[{}]", &s[indent.len()..])
    }
}

/// NumPy's `array2string` body (`[...]`), or the scalar for rank 0.
fn array_string<T: Element>(
    t: &Tensor,
    sep: &str,
    prefix_len: usize,
    suffix_len: usize,
) -> crate::Result<String> {
    let guard = t.dense_storage()?.read_as::<T>();
    let layout = &t.layout;
    let view = View {
        data: &guard,
        dims: layout.dims(),
        strides: layout.strides(),
        summarise: layout.numel() > PRINT_THRESHOLD,
    };
    if layout.numel() == 0 {
        return Ok("[]".into());
    }
    let mut shown = Vec::new();
    view.collect(0, layout.offset() as isize, &mut shown);
    let f = ElementFormat::for_values(&shown, layout.rank() == 0);
    let indent = " ".repeat(1 + prefix_len);
    Ok(view.render(
        &f,
        sep,
        0,
        layout.offset() as isize,
        &indent,
        LINE_WIDTH - suffix_len,
    ))
}

fn str_of<T: Element>(t: &Tensor) -> crate::Result<String> {
    if t.rank() == 0 {
        let v = t.dense_storage()?.read_as::<T>()[t.layout.offset()];
        return Ok(if T::DTYPE.is_complex() {
            complex_scalar_str(v)
        } else if T::DTYPE.is_float() {
            scalar_str(v)
        } else {
            ElementFormat::for_values(&[v], true).format(v)
        });
    }
    array_string::<T>(t, " ", 0, 0)
}

fn repr_of<T: Element>(t: &Tensor) -> crate::Result<String> {
    const PREFIX: &str = "tensor(";
    let body = array_string::<T>(t, ", ", PREFIX.len(), 1)?;
    let mut extras = Vec::new();
    let dims = t.shape();
    if (t.numel() == 0 && dims.len() != 1) || t.numel() > PRINT_THRESHOLD {
        extras.push(format!("shape={}", python_tuple(dims)));
    }
    let implied = matches!(
        T::DTYPE,
        DType::F64 | DType::I64 | DType::Bool | DType::C128
    );
    if !implied || t.numel() == 0 {
        extras.push(format!("dtype={}", T::DTYPE.name()));
    }
    if extras.is_empty() {
        return Ok(format!("{PREFIX}{body})"));
    }
    let head = format!("{PREFIX}{body},");
    let extra = format!("{})", extras.join(", "));
    let last_line = head.len() - head.rfind('\n').map_or(0, |i| i + 1);
    let spacer = if last_line + extra.len() + 1 > LINE_WIDTH {
        format!("\n{}", " ".repeat(PREFIX.len()))
    } else {
        " ".into()
    };
    Ok(format!("{head}{spacer}{extra}"))
}

fn python_tuple(dims: &[usize]) -> String {
    match dims {
        [d] => format!("({d},)"),
        _ => format!(
            "({})",
            dims.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// What a tensor that cannot be densified prints as (a sparse tensor whose shared index parts
/// were written after construction): the error, since formatting must not fail (`to_string`
/// and `format!` panic on a formatting error).
fn unprintable(f: &mut fmt::Formatter<'_>, t: &Tensor, e: crate::TesseraError) -> fmt::Result {
    write!(f, "<{} tensor of shape {:?}: {e}>", t.stype(), t.shape())
}

impl fmt::Display for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Sparse tensors print as their dense equivalent (NumPy-style, like `to_vec`).
        let t = match self.densified() {
            Ok(t) => t,
            Err(e) => return unprintable(f, self, e),
        };
        let s = with_dtype!(t.dtype(), T => str_of::<T>(&t)).map_err(|_| fmt::Error)?;
        f.write_str(&s)
    }
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = match self.densified() {
            Ok(t) => t,
            Err(e) => return unprintable(f, self, e),
        };
        let s = with_dtype!(t.dtype(), T => repr_of::<T>(&t)).map_err(|_| fmt::Error)?;
        match self.stype() {
            crate::StorageType::Default => f.write_str(&s),
            st => write!(f, "{}, stype={st})", &s[..s.len() - 1]),
        }
    }
}
