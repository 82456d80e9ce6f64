//! NumPy's element formatting: one format per printed array, chosen from the values shown,
//! so that columns line up (NumPy `arrayprint`, `floatmode='maxprec'`, precision 8).

use crate::dtype::{DType, Element};

/// Fractional digits NumPy prints at most (its default `precision`).
const PRECISION: usize = 8;

/// How every element of one printed array is formatted.
pub(crate) enum ElementFormat {
    Bool {
        zero_dim: bool,
    },
    Int {
        width: usize,
    },
    Float(FloatFormat),
    /// Complex: the real parts' format and the imaginary parts' (always signed), NumPy's
    /// `ComplexFloatingFormat`.
    Complex(Box<ComplexFormat>),
}

pub(crate) enum ComplexFormat {
    /// `complex64`: parts are `f32` (printed with `f32`'s shortest digits).
    Single { re: FloatFormat, im: FloatFormat },
    /// `complex128`: parts are `f64`.
    Double { re: FloatFormat, im: FloatFormat },
}

pub(crate) struct FloatFormat {
    exp: bool,
    pad_left: usize,
    pad_right: usize,
    /// Exponent mode: fractional digits of every mantissa (zero padded).
    precision: usize,
    /// Exponent mode: digits of every exponent (at least 2).
    exp_digits: usize,
    /// Non-negative values get a `+` (the imaginary parts of complex numbers).
    plus: bool,
}

/// A float split into the pieces NumPy pads separately.
struct Parts {
    int: String,
    frac: String,
    exp: i32,
}

impl ElementFormat {
    /// Picks the format for an array whose shown elements are `shown`.
    pub(crate) fn for_values<T: Element>(shown: &[T], zero_dim: bool) -> ElementFormat {
        match T::DTYPE {
            DType::Bool => ElementFormat::Bool { zero_dim },
            d if d.is_complex() => ElementFormat::Complex(Box::new(ComplexFormat::new(shown))),
            d if d.is_integer() => ElementFormat::Int {
                width: shown
                    .iter()
                    .map(|v| v.to_i128().to_string().len())
                    .max()
                    .unwrap_or(0),
            },
            _ => ElementFormat::Float(FloatFormat::new(shown, false)),
        }
    }

    /// Formats one element (already padded to the common width).
    pub(crate) fn format<T: Element>(&self, v: T) -> String {
        match self {
            ElementFormat::Bool { zero_dim } => match (v.to_i64() != 0, zero_dim) {
                (true, true) => "True".into(),
                (true, false) => " True".into(),
                (false, _) => "False".into(),
            },
            ElementFormat::Int { width } => format!("{:>width$}", v.to_i128()),
            ElementFormat::Float(f) => f.format(v),
            ElementFormat::Complex(c) => c.format(v),
        }
    }
}

impl ComplexFormat {
    fn new<T: Element>(shown: &[T]) -> ComplexFormat {
        let parts = |pick: fn((f64, f64)) -> f64| shown.iter().map(move |v| pick(v.to_complex()));
        let (re, im) = (|z: (f64, f64)| z.0, |z: (f64, f64)| z.1);
        if T::DTYPE == DType::C64 {
            let r: Vec<f32> = parts(re).map(|x| x as f32).collect();
            let i: Vec<f32> = parts(im).map(|x| x as f32).collect();
            ComplexFormat::Single {
                re: FloatFormat::new(&r, false),
                im: FloatFormat::new(&i, true),
            }
        } else {
            let r: Vec<f64> = parts(re).collect();
            let i: Vec<f64> = parts(im).collect();
            ComplexFormat::Double {
                re: FloatFormat::new(&r, false),
                im: FloatFormat::new(&i, true),
            }
        }
    }

    /// `re` then `im` with the `j` before the imaginary part's right padding (NumPy).
    fn format<T: Element>(&self, v: T) -> String {
        let (x, y) = v.to_complex();
        let (r, i) = match self {
            ComplexFormat::Single { re, im } => (re.format(x as f32), im.format(y as f32)),
            ComplexFormat::Double { re, im } => (re.format(x), im.format(y)),
        };
        let body = i.trim_end();
        format!("{r}{body}j{}", &i[body.len()..])
    }
}

/// Python's `repr` of a complex scalar (used for 0-d complex tensors): `1j`, `(1+2j)`,
/// `(1.5-0.5j)`, `(nan+infj)`: each part's shortest digits with no `.0` for integral values.
pub(crate) fn complex_scalar_str<T: Element>(v: T) -> String {
    let (x, y) = v.to_complex();
    let part = |p: f64| -> String {
        let s = if T::DTYPE == DType::C64 {
            scalar_str(p as f32)
        } else {
            scalar_str(p)
        };
        s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
    };
    let im = part(y);
    if x == 0.0 && x.is_sign_positive() {
        return format!("{im}j");
    }
    let sign = if im.starts_with('-') { "" } else { "+" };
    format!("({}{sign}{im}j)", part(x))
}

impl FloatFormat {
    fn new<T: Element>(shown: &[T], plus: bool) -> FloatFormat {
        let finite: Vec<T> = shown
            .iter()
            .copied()
            .filter(|v| v.to_f64().is_finite())
            .collect();
        let abs_nonzero = finite
            .iter()
            .map(|v| v.to_f64().abs())
            .filter(|&a| a != 0.0);
        let (min, max) = abs_nonzero.fold((f64::INFINITY, 0.0f64), |(lo, hi), a| {
            (lo.min(a), hi.max(a))
        });
        let exp = max > 0.0 && (max >= 1e8 || min < 1e-4 || max / min > 1e3);
        let mut f = FloatFormat {
            exp,
            pad_left: 0,
            pad_right: 0,
            precision: 0,
            exp_digits: 2,
            plus,
        };
        if exp {
            for v in &finite {
                let p = signed(sci_parts(*v), plus);
                f.pad_left = f.pad_left.max(p.int.len());
                f.precision = f.precision.max(p.frac.len());
                f.exp_digits = f.exp_digits.max(p.exp.unsigned_abs().to_string().len());
            }
            f.pad_right = f.exp_digits + 2 + f.precision;
        } else {
            for v in &finite {
                let p = signed(positional_parts(*v), plus);
                f.pad_left = f.pad_left.max(p.int.len());
                f.pad_right = f.pad_right.max(p.frac.len());
            }
        }
        if finite.len() != shown.len() {
            let neg_inf = (plus || shown.iter().any(|v| v.to_f64() == f64::NEG_INFINITY)) as usize;
            let offset = f.pad_right + 1;
            f.pad_left = f
                .pad_left
                .max(3usize.saturating_sub(offset))
                .max((3 + neg_inf).saturating_sub(offset));
        }
        f
    }

    fn format<T: Element>(&self, v: T) -> String {
        let x = v.to_f64();
        if !x.is_finite() {
            let s = match (x.is_nan(), x > 0.0, self.plus) {
                (true, _, false) => "nan",
                (true, _, true) => "+nan",
                (false, true, false) => "inf",
                (false, true, true) => "+inf",
                (false, false, _) => "-inf",
            };
            let width = self.pad_left + self.pad_right + 1;
            return format!("{s:>width$}");
        }
        let (pl, pr) = (self.pad_left, self.pad_right);
        if self.exp {
            // NumPy pads mantissas to the common precision with the value's true digits
            // (dragon4 with `min_digits`), which is plain correct rounding of the exact value.
            let (neg, digits, exp) = split_sci(&format!("{:.prec$e}", x, prec = self.precision));
            let (int, frac) = digits.split_at(1);
            let p = signed(
                Parts {
                    int: format!("{}{int}", sign(neg)),
                    frac: frac.to_string(),
                    exp,
                },
                self.plus,
            );
            let (sign, e) = if p.exp < 0 {
                ('-', -p.exp)
            } else {
                ('+', p.exp)
            };
            format!(
                "{:>pl$}.{:0<prec$}e{sign}{:0>ed$}",
                p.int,
                p.frac,
                e,
                prec = self.precision,
                ed = self.exp_digits
            )
        } else {
            let p = signed(positional_parts(v), self.plus);
            format!("{:>pl$}.{:<pr$}", p.int, p.frac)
        }
    }
}

/// Shortest decimal digits (no dot) and exponent that read back as `v` in its own type.
fn shortest<T: Element>(v: T) -> (bool, String, i32) {
    let x = v.to_f64();
    for p in 0..17 {
        let s = format!("{:.p$e}", x);
        if s.parse::<f64>()
            .map(T::from_f64)
            .is_ok_and(|back| back == v)
        {
            return split_sci(&s);
        }
    }
    split_sci(&format!("{:e}", x))
}

/// Splits Rust's `-d.ddde-5` into (negative, "dddd", exponent), trailing zeros trimmed.
fn split_sci(s: &str) -> (bool, String, i32) {
    let (mant, exp) = s.split_once('e').unwrap_or((s, "0"));
    let neg = mant.starts_with('-');
    let mut digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
    }
    (neg, digits, exp.parse().unwrap_or(0))
}

/// `p` with a `+` before a non-negative integer part when `plus` (NumPy's `sign='+'`).
fn signed(mut p: Parts, plus: bool) -> Parts {
    if plus && !p.int.starts_with('-') {
        p.int.insert(0, '+');
    }
    p
}

fn sign(neg: bool) -> &'static str {
    if neg {
        "-"
    } else {
        ""
    }
}

/// Positional pieces, rounded to at most [`PRECISION`] fractional digits (trailing zeros trimmed).
fn positional_parts<T: Element>(v: T) -> Parts {
    let (neg, digits, exp) = shortest(v);
    let n = digits.len() as i32;
    let frac_len = (n - 1 - exp).max(0) as usize;
    let (int, frac) = if frac_len > PRECISION {
        let s = format!("{:.PRECISION$}", v.to_f64().abs());
        let (i, f) = s.split_once('.').unwrap_or((&s, ""));
        (i.to_string(), f.trim_end_matches('0').to_string())
    } else if exp < 0 {
        (
            "0".to_string(),
            format!("{}{digits}", "0".repeat((-exp - 1) as usize)),
        )
    } else if exp >= n - 1 {
        (
            format!("{digits}{}", "0".repeat((exp - (n - 1)) as usize)),
            String::new(),
        )
    } else {
        let (i, f) = digits.split_at(exp as usize + 1);
        (i.to_string(), f.to_string())
    };
    Parts {
        int: format!("{}{int}", sign(neg)),
        frac,
        exp: 0,
    }
}

/// Scientific pieces with at most [`PRECISION`] mantissa fractional digits.
fn sci_parts<T: Element>(v: T) -> Parts {
    let (neg, mut digits, mut exp) = shortest(v);
    if digits.len() > PRECISION + 1 {
        let (_, d, e) = split_sci(&format!("{:.PRECISION$e}", v.to_f64()));
        (digits, exp) = (d, e);
    }
    let (i, f) = digits.split_at(1);
    Parts {
        int: format!("{}{i}", sign(neg)),
        frac: f.to_string(),
        exp,
    }
}

/// Python's `str` of a float scalar (used for 0-d tensors): shortest round-trip digits,
/// positional between 1e-4 and 1e16 (with `.0` for integral values), scientific otherwise.
pub(crate) fn scalar_str<T: Element>(v: T) -> String {
    let x = v.to_f64();
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf" } else { "-inf" }.into();
    }
    let (neg, digits, exp) = shortest(v);
    if x == 0.0 || (-4..16).contains(&exp) {
        let p = positional_parts(v);
        let frac = if p.frac.is_empty() {
            "0".to_string()
        } else {
            p.frac
        };
        return format!("{}.{frac}", p.int);
    }
    let (i, f) = digits.split_at(1);
    let dot = if f.is_empty() {
        String::new()
    } else {
        format!(".{f}")
    };
    let (es, e) = if exp < 0 { ('-', -exp) } else { ('+', exp) };
    format!("{}{i}{dot}e{es}{e:02}", sign(neg))
}
