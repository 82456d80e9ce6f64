//! The registry (docs/design.md O1): every op, looked up by name, and the eager entry points
//! [`invoke`] / [`invoke_into`].

use std::sync::LazyLock;

pub use super::def::{ComputeFn, InferFn, InferStypeFn, Op, OpDef, OpInfo};
use super::def::{Gradient, OpTable};
use crate::error::{ErrorKind, Result};
use crate::tensor::Tensor;

/// All registered ops, by name.
pub struct Registry {
    table: OpTable,
}

static REGISTRY: LazyLock<Registry> = LazyLock::new(|| {
    // faer (linalg, matmul) is only reached through registry ops: registering the at-fork
    // handler here puts it in place before faer can start rayon's pool, even in a program
    // whose kernels never had inputs large enough to ask `kernels::parallel` for threads.
    crate::kernels::parallel::register_fork_handler();
    let mut table = OpTable::default();
    super::defs::register_all(&mut table);
    Registry { table }
});

/// The process-wide registry.
pub fn registry() -> &'static Registry {
    &REGISTRY
}

impl Registry {
    /// The op called `name`, or an error listing close names: within edit distance 2, or one
    /// name a prefix of the other (at least 3 characters), closest first, at most five.
    ///
    /// ```
    /// let e = tessera::ops::registry().get("tiel").err().unwrap();
    /// assert!(e.to_string().contains(r#"did you mean "tile""#), "{e}");
    /// ```
    pub fn get(&self, name: &str) -> Result<&dyn Op> {
        self.table.ops.get(name).map(|b| b.as_ref()).ok_or_else(|| {
            let mut names: Vec<&str> = self.table.ops.keys().copied().collect();
            names.sort_unstable();
            let close = close_names(name, names);
            ErrorKind::UnknownOp {
                name: name.to_string(),
                close: close.iter().map(|c| c.to_string()).collect(),
            }
            .into()
        })
    }

    /// The typed definition of op `name`, whose parameters are `P` (the typed `Tensor`
    /// methods call ops through it, without parsing parameters from strings). Errors for an
    /// unknown name or another parameter type.
    pub(crate) fn def<P: super::params::OpParams>(&self, name: &str) -> Result<&OpDef<P>> {
        self.get(name)?
            .as_any()
            .downcast_ref::<OpDef<P>>()
            .ok_or_else(|| {
                ErrorKind::InvalidArgument(format!(
                    "op {name:?} does not take parameters of type {}",
                    std::any::type_name::<P>()
                ))
                .into()
            })
    }

    /// Every op's static facts, sorted by name.
    pub fn list(&self) -> Vec<OpInfo> {
        let mut infos: Vec<OpInfo> = self.table.ops.values().map(|o| o.info()).collect();
        infos.sort_unstable_by_key(|i| i.name);
        infos
    }

    /// The operator reference as Markdown (the committed `docs/ops.md`; a test keeps it in
    /// sync with the registry).
    pub fn docs_markdown(&self) -> String {
        let mut out = String::from(
            "# Tessera operators\n\nGenerated from the operator registry by `Registry::docs_markdown`; \
             do not edit by hand (regenerate with `TESSERA_BLESS=1 cargo test -p tessera --test suite registry::`).\n\n\
             Call any of them with `tessera::ops::invoke(name, inputs, params)` from Rust or \
             `tessera.invoke(name, *inputs, **params)` from Python; parameters are strings parsed \
             into the types below.\n",
        );
        for info in self.list() {
            out += &format!("\n## `{}`\n\n{}\n\n", info.name, info.doc);
            out += &format!(
                "- inputs: {}\n",
                info.inputs
                    .iter()
                    .map(|i| format!("`{i}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            out += &format!(
                "- outputs: {}\n",
                info.outputs
                    .iter()
                    .map(|i| format!("`{i}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            let mut flags = Vec::new();
            if !info.inplace.is_empty() {
                flags.push(format!("in place {:?} (input, output)", info.inplace));
            }
            if !info.mutates.is_empty() {
                let names: Vec<_> = info
                    .mutates
                    .iter()
                    .map(|&i| format!("`{}`", info.inputs[i]))
                    .collect();
                flags.push(format!("mutates {}", names.join(", ")));
            }
            if info.stateful {
                flags.push("stateful".into());
            }
            flags.push(match &info.gradient {
                Gradient::Rule { via: Some(op), .. } => format!("gradient via `{op}`"),
                Gradient::Rule { via: None, .. } => "differentiable".into(),
                Gradient::NotDifferentiable(_) => "not differentiable".into(),
                Gradient::ForwardOnly => "forward only".into(),
                Gradient::Missing => "no gradient rule yet".into(),
            });
            flags.push(if info.has_sparse {
                "sparse kernel".into()
            } else {
                "dense kernel only".into()
            });
            out += &format!("- {}\n", flags.join("; "));
            out += &match &info.gradient {
                Gradient::Rule { doc, .. } => format!("- gradient: {doc}\n"),
                Gradient::NotDifferentiable(why) => format!("- no gradient: {why}\n"),
                Gradient::ForwardOnly => {
                    "- no gradient: forward only by design; backward through it is an error that names the op\n".to_string()
                }
                Gradient::Missing => String::new(),
            };
            if !info.params.is_empty() {
                out += "\n| parameter | type | default | range | description |\n|---|---|---|---|---|\n";
                for p in &info.params {
                    out += &format!(
                        "| `{}` | {} | `{}` | {} | {} |\n",
                        p.name,
                        p.type_name,
                        p.default,
                        p.range.as_deref().unwrap_or(""),
                        p.doc
                    );
                }
            }
        }
        out
    }

    /// How op `name` differentiates ([`Gradient::Rule`]), or an error saying why it has no
    /// gradient (forward only, not differentiable, no rule yet).
    pub fn gradient_of(&self, name: &str) -> Result<Gradient> {
        match self.get(name)?.info().gradient {
            g @ Gradient::Rule { .. } => Ok(g),
            Gradient::ForwardOnly => Err(ErrorKind::Autograd(format!(
                "op {name:?} is forward only by design: it has no gradient"
            ))
            .into()),
            Gradient::NotDifferentiable(why) => {
                Err(ErrorKind::Autograd(format!("op {name:?} is not differentiable: {why}")).into())
            }
            Gradient::Missing => Err(ErrorKind::Autograd(format!(
                "op {name:?} has no gradient rule registered yet"
            ))
            .into()),
        }
    }
}

/// The names among `known` close to `name`, closest first (then alphabetical), at most
/// five: within edit distance 2 (Levenshtein, on characters), or one a prefix of the other
/// when the shorter has at least 3 characters (`sum_` and `sum`, `quad` and `quadratic`).
fn close_names<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let mut close: Vec<(usize, &str)> = known
        .into_iter()
        .filter_map(|k| {
            let d = edit_distance(name, k);
            let (short, long) = if name.len() <= k.len() {
                (name, k)
            } else {
                (k, name)
            };
            let prefix = short.chars().count() >= 3 && long.starts_with(short);
            (d <= 2 || prefix).then_some((d, k))
        })
        .collect();
    close.sort_unstable();
    close.into_iter().take(5).map(|(_, k)| k).collect()
}

/// Levenshtein distance between `a` and `b` (insertions, deletions, substitutions of
/// characters), two rows of dynamic programming.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Runs the op `name` on `inputs` with string parameters (the eager entry point).
///
/// ```
/// use tessera::{ops, Tensor};
/// let x = Tensor::from_vec(vec![1i64, 2], &[2]).unwrap();
/// let y = ops::invoke("tile", &[x.clone()], &[("reps", "(2, 2)")]).unwrap();
/// assert_eq!(y[0].to_vec::<i64>().unwrap(), vec![1, 2, 1, 2, 1, 2, 1, 2]);
/// assert!(ops::invoke("tile", &[x.clone()], &[("reps", "(-1,)")]).is_err());
/// assert!(ops::invoke("tile", &[x], &[("rep", "2")]).is_err()); // unknown key
/// ```
pub fn invoke(name: &str, inputs: &[Tensor], kv: &[(&str, &str)]) -> Result<Vec<Tensor>> {
    registry().get(name)?.run(kv, inputs)
}

/// Runs `name` and writes its results into caller-provided `outputs` (same shapes and
/// dtypes as the op's). An output may share memory with an input only where the op declares
/// that `(input, output)` pair in place; any other alias is an error, never a silent
/// corruption.
pub fn invoke_into(
    name: &str,
    inputs: &[Tensor],
    kv: &[(&str, &str)],
    outputs: &[Tensor],
) -> Result<()> {
    let op = registry().get(name)?;
    let info = op.info();
    if outputs.len() != info.outputs.len() {
        return Err(ErrorKind::InvalidArgument(format!(
            "op {name:?} has {} outputs, {} given",
            info.outputs.len(),
            outputs.len()
        ))
        .into());
    }
    for (o, out) in outputs.iter().enumerate() {
        for (i, inp) in inputs.iter().enumerate() {
            if out.shares_storage(inp) && !info.inplace.contains(&(i, o)) {
                return Err(ErrorKind::OverlappingWrite(format!(
                    "op {name:?}: output {:?} shares memory with input {:?}, which is not a declared in-place pair",
                    info.outputs[o],
                    info.inputs.get(i).copied().unwrap_or("?")
                )).into());
            }
        }
    }
    let results = op.run(kv, inputs)?;
    for (out, r) in outputs.iter().zip(&results) {
        if out.shape() != r.shape() || out.dtype() != r.dtype() {
            return Err(ErrorKind::ShapeMismatch(
                format!(
                    "op {name:?}: provided output is {:?} {}, the op produces {:?} {}",
                    out.shape(),
                    out.dtype(),
                    r.shape(),
                    r.dtype()
                )
                .into(),
            )
            .into());
        }
        out.assign(r)?;
    }
    Ok(())
}
