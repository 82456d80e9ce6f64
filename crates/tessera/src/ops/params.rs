//! Typed operator parameters parsed from string key/values (docs/design.md O1).
//!
//! Each op declares its parameters once with [`op_params!`](crate::op_params): a struct whose
//! fields have a type, a default, an optional range and a doc line. Parsing rejects unknown
//! keys, unparsable values and out-of-range values with an error naming the op and the key.

use std::fmt::Debug;

use crate::error::{ErrorKind, Result, TesseraError};

/// One declared parameter, for listings and docs.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamSpec {
    /// Key.
    pub name: &'static str,
    /// Type as written in docs (`float`, `int`, `bool`, `int tuple`, ...).
    pub type_name: &'static str,
    /// Default value as a string (`required` when there is none).
    pub default: String,
    /// Allowed range as text, if restricted.
    pub range: Option<String>,
    /// One-line description.
    pub doc: &'static str,
}

/// A parsed parameter set of one op.
pub trait OpParams: Sized + Clone + Debug + Send + Sync + 'static {
    /// The declared parameters.
    fn specs() -> Vec<ParamSpec>;
    /// Parses key/values; `op` names the op in errors.
    fn parse(op: &str, kv: &[(&str, &str)]) -> Result<Self>;
    /// The values as key/value strings (for logs).
    fn to_kv(&self) -> Vec<(&'static str, String)>;
}

/// A type a parameter can have.
pub trait ParamValue: Sized + Clone + Debug {
    /// Name for docs.
    const TYPE_NAME: &'static str;
    /// Parses the string form.
    fn parse_value(s: &str) -> std::result::Result<Self, String>;
    /// Renders the value (the inverse of `parse_value`).
    fn render(&self) -> String;
}

macro_rules! scalar_param {
    ($($t:ty => $name:literal),*) => {$(
        impl ParamValue for $t {
            const TYPE_NAME: &'static str = $name;
            fn parse_value(s: &str) -> std::result::Result<Self, String> {
                s.trim().parse::<$t>().map_err(|e| format!("{s:?} is not a valid {}: {e}", $name))
            }
            fn render(&self) -> String {
                self.to_string()
            }
        }
    )*};
}
scalar_param!(f64 => "float", i64 => "int", isize => "int", usize => "non-negative int");

impl ParamValue for bool {
    const TYPE_NAME: &'static str = "bool";
    fn parse_value(s: &str) -> std::result::Result<Self, String> {
        match s.trim() {
            "1" | "true" | "True" => Ok(true),
            "0" | "false" | "False" => Ok(false),
            other => Err(format!("{other:?} is not a bool (true/false/1/0)")),
        }
    }
    fn render(&self) -> String {
        self.to_string()
    }
}

/// A tuple of ints, written `(1, -2, 3)`, `[1,2]` or `1,2` (`()` is empty).
impl ParamValue for Vec<isize> {
    const TYPE_NAME: &'static str = "int tuple";
    fn parse_value(s: &str) -> std::result::Result<Self, String> {
        let inner = s
            .trim()
            .trim_start_matches(['(', '['])
            .trim_end_matches([')', ']']);
        inner
            .split(',')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .map(|x| {
                x.parse::<isize>()
                    .map_err(|e| format!("{x:?} in {s:?} is not an int: {e}"))
            })
            .collect()
    }
    fn render(&self) -> String {
        match self.as_slice() {
            [x] => format!("({x},)"),
            xs => format!(
                "({})",
                xs.iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

/// Index specs, written as their INT64 encoding (`crate::index::encode`) in an int tuple.
/// The typed path carries the specs themselves, so bounds the encoding reserves (such as
/// `isize::MIN`) pass through `Tensor::index` unchanged.
impl ParamValue for Vec<crate::index::IndexSpec> {
    const TYPE_NAME: &'static str = "int tuple (INT64 index encoding)";
    fn parse_value(s: &str) -> std::result::Result<Self, String> {
        let ints = <Vec<isize>>::parse_value(s)?;
        let code: Vec<i64> = ints.iter().map(|&v| v as i64).collect();
        crate::index::decode(&code).map_err(|e| e.to_string())
    }
    fn render(&self) -> String {
        let ints: Vec<isize> = crate::index::encode(self)
            .into_iter()
            .map(|v| v as isize)
            .collect();
        ints.render()
    }
}

/// An optional value, written `None` when absent.
impl<T: ParamValue> ParamValue for Option<T> {
    const TYPE_NAME: &'static str = T::TYPE_NAME;
    fn parse_value(s: &str) -> std::result::Result<Self, String> {
        match s.trim() {
            "None" | "none" | "null" => Ok(None),
            v => T::parse_value(v).map(Some),
        }
    }
    fn render(&self) -> String {
        self.as_ref().map_or_else(|| "None".to_string(), T::render)
    }
}

/// Parses one value for `op`/`key`, checking `range` when given.
#[doc(hidden)]
pub fn parse_one<T: ParamValue>(
    op: &str,
    key: &str,
    raw: &str,
    ok: impl Fn(&T) -> bool,
    range: &str,
) -> Result<T> {
    let v = T::parse_value(raw).map_err(|why| bad(op, key, why))?;
    if !ok(&v) {
        return Err(bad(
            op,
            key,
            format!("{} is outside the allowed range {range}", v.render()),
        ));
    }
    Ok(v)
}

/// The error for a bad parameter of `op`.
pub fn bad(op: &str, key: &str, why: impl std::fmt::Display) -> TesseraError {
    ErrorKind::InvalidArgument(format!("op {op:?}, parameter {key:?}: {why}")).into()
}

/// Checks that every key in `kv` is declared and appears once.
#[doc(hidden)]
pub fn check_keys(op: &str, kv: &[(&str, &str)], known: &[&str]) -> Result<()> {
    for (i, (k, _)) in kv.iter().enumerate() {
        if !known.contains(k) {
            return Err(bad(
                op,
                k,
                format!("unknown parameter (known: {})", known.join(", ")),
            ));
        }
        if kv[..i].iter().any(|(j, _)| j == k) {
            return Err(bad(op, k, "given more than once"));
        }
    }
    Ok(())
}

/// Declares an op's parameter struct: each field has a doc line, a type, a default
/// (`= value`) or none (required), and optionally `in lo..=hi` (a range check).
///
/// ```
/// use tessera::op_params;
/// use tessera::ops::params::OpParams;
/// op_params! {
///     /// Parameters of a demo op.
///     pub struct Demo {
///         /// Scale factor.
///         scale: f64 = 1.0, in 0.0..=10.0;
///         /// Axis to work on.
///         axis: isize;
///     }
/// }
/// let p = Demo::parse("demo", &[("axis", "-1")]).unwrap();
/// assert_eq!((p.scale, p.axis), (1.0, -1));
/// assert!(Demo::parse("demo", &[]).is_err()); // axis is required
/// let e = Demo::parse("demo", &[("axis", "0"), ("scale", "11")]).unwrap_err();
/// assert!(e.to_string().contains("\"demo\"") && e.to_string().contains("\"scale\""));
/// ```
#[macro_export]
macro_rules! op_params {
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $(
                #[doc = $doc:literal]
                $field:ident : $ty:ty $(= $default:expr)? $(, in $range:expr)? ;
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Debug, PartialEq)]
        pub struct $name {
            $(
                #[doc = $doc]
                pub $field: $ty,
            )*
        }

        impl $crate::ops::params::OpParams for $name {
            #[allow(unused_mut, unused_assignments)]
            fn specs() -> Vec<$crate::ops::params::ParamSpec> {
                vec![$({
                    let mut default = String::from("required");
                    $( default = <$ty as $crate::ops::params::ParamValue>::render(&$default); )?
                    let mut range: Option<String> = None;
                    $( range = Some(format!("{:?}", $range)); )?
                    $crate::ops::params::ParamSpec {
                        name: stringify!($field),
                        type_name: <$ty as $crate::ops::params::ParamValue>::TYPE_NAME,
                        default,
                        range,
                        doc: $doc.trim(),
                    }
                }),*]
            }

            fn parse(op: &str, kv: &[(&str, &str)]) -> $crate::Result<Self> {
                $crate::ops::params::check_keys(op, kv, &[$(stringify!($field)),*])?;
                Ok($name {
                    $($field: {
                        let raw = kv.iter().find(|(k, _)| *k == stringify!($field)).map(|(_, v)| *v);
                        #[allow(unused_mut)]
                        let mut range_text = String::new();
                        $( range_text = format!("{:?}", $range); )?
                        let check = |_v: &$ty| -> bool { true $( && ($range).contains(_v) )? };
                        match raw {
                            Some(raw) => $crate::ops::params::parse_one::<$ty>(op, stringify!($field), raw, check, &range_text)?,
                            None => $crate::op_params!(@default op, $field, $ty $(, $default)?),
                        }
                    }),*
                })
            }

            fn to_kv(&self) -> Vec<(&'static str, String)> {
                vec![$((stringify!($field), <$ty as $crate::ops::params::ParamValue>::render(&self.$field))),*]
            }
        }
    };
    (@default $op:ident, $field:ident, $ty:ty, $default:expr) => { $default };
    (@default $op:ident, $field:ident, $ty:ty) => {
        return Err($crate::ops::params::bad($op, stringify!($field), "required parameter is missing"))
    };
}

impl ParamValue for crate::stype::StorageType {
    const TYPE_NAME: &'static str = "storage type";
    fn parse_value(s: &str) -> std::result::Result<Self, String> {
        use crate::stype::StorageType::*;
        match s.trim() {
            "default" => Ok(Default),
            "csr" => Ok(Csr),
            "row_sparse" => Ok(RowSparse),
            other => Err(format!(
                "{other:?} is not a storage type (default, csr, row_sparse)"
            )),
        }
    }
    fn render(&self) -> String {
        self.name().to_string()
    }
}

impl ParamValue for crate::dtype::DType {
    const TYPE_NAME: &'static str = "dtype";
    fn parse_value(s: &str) -> std::result::Result<Self, String> {
        crate::dtype::DType::from_name(s.trim()).ok_or_else(|| format!("{s:?} is not a dtype name"))
    }
    fn render(&self) -> String {
        self.name().to_string()
    }
}
