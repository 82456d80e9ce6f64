//! The header of a `.npy` file: a Python dict literal such as
//! `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`, written and parsed here
//! without a Python parser. Parsing accepts what NumPy writes (and the usual spellings of a
//! literal: either quote, optional trailing commas, any whitespace) and rejects everything
//! else with a message: unknown or extra keys, structured dtypes, dtypes Tessera lacks.

use crate::dtype::DType;

/// What a `.npy` header says.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Header {
    pub dtype: DType,
    /// Elements stored most significant byte first (`>`).
    pub big_endian: bool,
    pub fortran_order: bool,
    pub shape: Vec<usize>,
}

/// NumPy's type string of a dtype (little-endian), or `None` for bfloat16, which NumPy lacks.
pub(crate) fn descr(d: DType) -> Option<&'static str> {
    Some(match d {
        DType::Bool => "|b1",
        DType::U8 => "|u1",
        DType::I8 => "|i1",
        DType::U16 => "<u2",
        DType::I16 => "<i2",
        DType::U32 => "<u4",
        DType::U64 => "<u8",
        DType::I32 => "<i4",
        DType::I64 => "<i8",
        DType::F16 => "<f2",
        DType::F32 => "<f4",
        DType::F64 => "<f8",
        DType::C64 => "<c8",
        DType::C128 => "<c16",
        DType::BF16 => return None,
    })
}

/// The dict literal for `descr` and a C-order `shape`, as NumPy's `repr` writes it.
pub(crate) fn format(descr: &str, shape: &[usize]) -> String {
    let dims = match shape {
        [d] => format!("({d},)"),
        _ => {
            let s: Vec<String> = shape.iter().map(usize::to_string).collect();
            format!("({})", s.join(", "))
        }
    };
    format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {dims}, }}")
}

/// A parsed literal value.
#[derive(Debug)]
enum Lit {
    Str(String),
    Bool(bool),
    Tuple(Vec<Option<usize>>),
    Other(&'static str),
}

/// A cursor over the header text.
struct Cursor<'a> {
    s: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn skip_ws(&mut self) {
        while self.s.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    /// Consumes `c` (after whitespace) if it is next.
    fn eat(&mut self, c: u8) -> bool {
        self.skip_ws();
        let hit = self.s.get(self.at) == Some(&c);
        self.at += hit as usize;
        hit
    }

    fn expect(&mut self, c: u8) -> Result<(), String> {
        match self.eat(c) {
            true => Ok(()),
            false => Err(format!("expected '{}' at byte {}", c as char, self.at)),
        }
    }

    /// A quoted string (either quote; a backslash takes the next character as is).
    fn string(&mut self) -> Result<String, String> {
        self.skip_ws();
        let q = match self.s.get(self.at) {
            Some(&q @ (b'\'' | b'"')) => q,
            _ => return Err(format!("expected a string at byte {}", self.at)),
        };
        self.at += 1;
        let mut out = Vec::new();
        loop {
            match self.s.get(self.at) {
                None => return Err("unterminated string".into()),
                Some(&c) if c == q => break,
                Some(b'\\') => {
                    self.at += 1;
                    out.extend(self.s.get(self.at));
                }
                Some(&c) => out.push(c),
            }
            self.at += 1;
        }
        self.at += 1;
        String::from_utf8(out).map_err(|_| "a string is not UTF-8".to_string())
    }

    /// Consumes a run of ASCII alphanumeric characters.
    fn word(&mut self) -> &str {
        self.skip_ws();
        let start = self.at;
        while self.s.get(self.at).is_some_and(u8::is_ascii_alphanumeric) {
            self.at += 1;
        }
        std::str::from_utf8(&self.s[start..self.at]).unwrap_or("")
    }

    fn value(&mut self) -> Result<Lit, String> {
        self.skip_ws();
        match self.s.get(self.at) {
            Some(b'\'' | b'"') => self.string().map(Lit::Str),
            Some(b'(') => {
                self.at += 1;
                let mut dims = Vec::new();
                while !self.eat(b')') {
                    let w = self.word();
                    if w.is_empty() {
                        return Err(format!("expected a size at byte {}", self.at));
                    }
                    dims.push(
                        w.parse::<usize>()
                            .ok()
                            .filter(|&d| d <= isize::MAX as usize),
                    );
                    if !self.eat(b',') {
                        self.expect(b')')?;
                        break;
                    }
                }
                Ok(Lit::Tuple(dims))
            }
            Some(b'[') => Ok(Lit::Other("a list")),
            Some(b'{') => Ok(Lit::Other("a dict")),
            _ => match self.word() {
                "True" => Ok(Lit::Bool(true)),
                "False" => Ok(Lit::Bool(false)),
                _ => Ok(Lit::Other("not a literal NumPy writes")),
            },
        }
    }
}

/// Parses a header's dict literal.
pub(crate) fn parse(text: &[u8]) -> Result<Header, String> {
    let mut c = Cursor { s: text, at: 0 };
    c.expect(b'{')?;
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    while !c.eat(b'}') {
        let key = c.string()?;
        c.expect(b':')?;
        let v = c.value()?;
        let slot = match key.as_str() {
            "descr" => &mut descr,
            "fortran_order" => &mut fortran,
            "shape" => &mut shape,
            _ => return Err(format!("unexpected key {key:?}")),
        };
        if slot.replace(v).is_some() {
            return Err(format!("key {key:?} given twice"));
        }
        if !c.eat(b',') {
            c.expect(b'}')?;
            break;
        }
    }
    c.skip_ws();
    if c.at != text.len() {
        return Err(format!("unexpected text after the dict at byte {}", c.at));
    }
    let (dtype, big_endian) = match descr {
        Some(Lit::Str(s)) => parse_descr(&s)?,
        Some(Lit::Other("a list")) => {
            return Err("structured dtypes (a list descr) are not supported".into())
        }
        Some(other) => return Err(format!("'descr' is not a type string: {other:?}")),
        None => return Err("missing key 'descr'".into()),
    };
    let fortran_order = match fortran {
        Some(Lit::Bool(b)) => b,
        Some(other) => return Err(format!("'fortran_order' is not a bool: {other:?}")),
        None => return Err("missing key 'fortran_order'".into()),
    };
    let shape = match shape {
        Some(Lit::Tuple(dims)) => dims
            .into_iter()
            .collect::<Option<Vec<usize>>>()
            .ok_or("'shape' holds a size that is not a non-negative integer within isize")?,
        Some(other) => return Err(format!("'shape' is not a tuple: {other:?}")),
        None => return Err("missing key 'shape'".into()),
    };
    Ok(Header {
        dtype,
        big_endian,
        fortran_order,
        shape,
    })
}

/// A type string (`'<f4'`, `'|b1'`, `'>i8'`) as a dtype and whether it is big-endian.
fn parse_descr(s: &str) -> Result<(DType, bool), String> {
    let (order, code) = match s.as_bytes().first() {
        Some(b'<' | b'>' | b'|' | b'=') => (s.as_bytes()[0], &s[1..]),
        _ => (b'=', s),
    };
    let dtype = match code {
        "b1" => DType::Bool,
        "u1" => DType::U8,
        "i1" => DType::I8,
        "u2" => DType::U16,
        "i2" => DType::I16,
        "u4" => DType::U32,
        "u8" => DType::U64,
        "i4" => DType::I32,
        "i8" => DType::I64,
        "f2" => DType::F16,
        "f4" => DType::F32,
        "f8" => DType::F64,
        "c8" => DType::C64,
        "c16" => DType::C128,
        _ => return Err(unsupported(s, code)),
    };
    let big_endian = match order {
        b'>' => true,
        b'=' => cfg!(target_endian = "big"),
        b'|' if dtype.itemsize() > 1 => {
            return Err(format!("type string {s:?}: '|' is only for one-byte types"))
        }
        _ => false,
    };
    Ok((dtype, big_endian))
}

/// The error for a type string Tessera has no dtype for, with NumPy's name when known.
fn unsupported(s: &str, code: &str) -> String {
    let name = match code {
        "f16" | "f12" => "longdouble",
        "O" => "object (pickled Python objects, never loaded)",
        _ if code.starts_with('U') => "str",
        _ if code.starts_with('S') => "bytes",
        _ if code.starts_with('V') => "void",
        _ if code.starts_with('M') => "datetime64",
        _ if code.starts_with('m') => "timedelta64",
        _ => "unknown",
    };
    format!(
        "dtype {s:?} ({name}) has no Tessera dtype (Tessera has bool, uint8, int8, int32, \
         int64, float16, float32, float64 in .npy)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numpy_headers_parse_and_ours_read_back() {
        let h =
            parse(b"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }      \n").unwrap();
        assert_eq!(
            (h.dtype, h.big_endian, h.fortran_order),
            (DType::F32, false, false)
        );
        assert_eq!(h.shape, vec![2, 3]);
        let h = parse(b"{\"shape\":(),\"fortran_order\":True,\"descr\":\">i8\"}").unwrap();
        assert_eq!(
            (h.dtype, h.big_endian, h.fortran_order),
            (DType::I64, true, true)
        );
        assert!(h.shape.is_empty());
        for d in DType::ALL.into_iter().filter(|&d| d != DType::BF16) {
            for shape in [&[][..], &[0], &[7], &[2, 3, 4]] {
                let h = parse(format(descr(d).unwrap(), shape).as_bytes()).unwrap();
                assert_eq!((h.dtype, h.shape.as_slice()), (d, shape));
            }
        }
        assert_eq!(
            format("<f8", &[3]),
            "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }"
        );
    }

    #[test]
    fn bad_headers_are_errors() {
        let cases: &[&[u8]] = &[
            b"",
            b"{",
            b"{'descr': '<f4', 'fortran_order': False}",
            b"{'descr': '<f16', 'fortran_order': False, 'shape': (1,)}",
            b"{'descr': '|O', 'fortran_order': False, 'shape': (1,)}",
            b"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}",
            b"{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}",
            b"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}",
            b"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}",
            b"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}",
            b"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}",
            b"{'descr': '|f4', 'fortran_order': False, 'shape': (1,)}",
            b"{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x",
            b"{'descr': '<f4\xff', 'fortran_order': False, 'shape': (1,)}",
        ];
        for c in cases {
            assert!(parse(c).is_err(), "{:?}", String::from_utf8_lossy(c));
        }
    }
}
