//! Op definitions and the registry (docs/design.md O1): one entry per op, looked up by name.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use super::fallback::{self, FallbackEvent};
use super::params::{OpParams, ParamSpec};
use super::stype::{DispatchMode, StorageType, StypeDecision, TensorMeta};
use crate::error::{Result, TesseraError};
use crate::tensor::Tensor;

/// Shape and dtype inference: output metas from parameters and input metas.
pub type InferFn<P> = fn(&P, &[TensorMeta]) -> Result<Vec<TensorMeta>>;
/// Storage-type inference: output storage types and dispatch mode from input storage types.
pub type InferStypeFn<P> = fn(&P, &[StorageType]) -> StypeDecision;
/// A compute kernel: outputs from parameters and inputs.
pub type ComputeFn<P> = fn(&P, &[Tensor]) -> Result<Vec<Tensor>>;

/// Everything the registry knows of one op, typed by its parameter struct.
pub struct OpDef<P: OpParams> {
    /// Name used by `invoke`.
    pub name: &'static str,
    /// One-paragraph description.
    pub doc: &'static str,
    /// Input names, in order.
    pub inputs: &'static [&'static str],
    /// Output names, in order.
    pub outputs: &'static [&'static str],
    /// Shape and dtype inference (no data touched).
    pub infer: InferFn<P>,
    /// Storage-type inference.
    pub infer_stype: InferStypeFn<P>,
    /// Dense kernel.
    pub dense: ComputeFn<P>,
    /// Sparse kernel, if any.
    pub sparse: Option<ComputeFn<P>>,
    /// `(input, output)` pairs that may share memory (the output may be written in place).
    pub inplace: &'static [(usize, usize)],
    /// Inputs the op writes to (auxiliary state, such as the ring buffer's buffer).
    pub mutates: &'static [usize],
    /// No gradient exists by design.
    pub forward_only: bool,
    /// The op keeps state between calls (in a mutated input).
    pub stateful: bool,
    /// Name of the registered op computing the gradient, if any.
    pub gradient: Option<&'static str>,
}

impl<P: OpParams> OpDef<P> {
    /// An op with one dense kernel and the defaults: dense-only storage inference (one
    /// output), no sparse kernel, no in-place pairs, no mutated inputs, not forward-only, not
    /// stateful, no gradient. Adjust with the builder methods below.
    pub fn new(
        name: &'static str,
        doc: &'static str,
        inputs: &'static [&'static str],
        outputs: &'static [&'static str],
        infer: InferFn<P>,
        dense: ComputeFn<P>,
    ) -> OpDef<P> {
        OpDef {
            name,
            doc,
            inputs,
            outputs,
            infer,
            infer_stype: super::stype::dense_stype::<P>,
            dense,
            sparse: None,
            inplace: &[],
            mutates: &[],
            forward_only: false,
            stateful: false,
            gradient: None,
        }
    }

    /// Sets the storage-type inference.
    pub fn stype(mut self, f: InferStypeFn<P>) -> Self {
        self.infer_stype = f;
        self
    }

    /// Sets the sparse kernel.
    pub fn sparse(mut self, f: ComputeFn<P>) -> Self {
        self.sparse = Some(f);
        self
    }

    /// Declares `(input, output)` pairs that may share memory.
    pub fn inplace(mut self, pairs: &'static [(usize, usize)]) -> Self {
        self.inplace = pairs;
        self
    }

    /// Declares inputs the op writes (auxiliary state); such an op is stateful.
    pub fn mutates(mut self, inputs: &'static [usize]) -> Self {
        self.mutates = inputs;
        self.stateful = true;
        self
    }

    /// Declares that the op has no gradient by design.
    pub fn forward_only(mut self) -> Self {
        self.forward_only = true;
        self
    }

    /// Names the registered op computing the gradient.
    pub fn gradient(mut self, op: &'static str) -> Self {
        self.gradient = Some(op);
        self
    }
}

/// Static facts of an op, for listings.
#[derive(Clone, Debug, PartialEq)]
pub struct OpInfo {
    /// Name.
    pub name: &'static str,
    /// Description.
    pub doc: &'static str,
    /// Input names.
    pub inputs: &'static [&'static str],
    /// Output names.
    pub outputs: &'static [&'static str],
    /// Declared parameters.
    pub params: Vec<ParamSpec>,
    /// In-place pairs.
    pub inplace: &'static [(usize, usize)],
    /// Mutated inputs.
    pub mutates: &'static [usize],
    /// Forward only.
    pub forward_only: bool,
    /// Stateful.
    pub stateful: bool,
    /// Gradient op.
    pub gradient: Option<&'static str>,
    /// Has a sparse kernel.
    pub has_sparse: bool,
}

/// The type-erased face of an [`OpDef`].
pub trait Op: Send + Sync {
    /// Static facts.
    fn info(&self) -> OpInfo;
    /// Output metas and the dispatch mode, without running anything.
    fn infer(
        &self,
        kv: &[(&str, &str)],
        inputs: &[TensorMeta],
    ) -> Result<(Vec<TensorMeta>, DispatchMode)>;
    /// Runs the op.
    fn run(&self, kv: &[(&str, &str)], inputs: &[Tensor]) -> Result<Vec<Tensor>>;
}

impl<P: OpParams> OpDef<P> {
    fn check_arity(&self, n: usize) -> Result<()> {
        if n != self.inputs.len() {
            return Err(TesseraError::InvalidArgument(format!(
                "op {:?} takes {} inputs ({}), got {n}",
                self.name,
                self.inputs.len(),
                self.inputs.join(", ")
            )));
        }
        Ok(())
    }

    fn decide(&self, p: &P, stypes: &[StorageType]) -> StypeDecision {
        let mut d = (self.infer_stype)(p, stypes);
        if d.mode == DispatchMode::Sparse && self.sparse.is_none() {
            d.mode = DispatchMode::Fallback;
        }
        d
    }
}

impl<P: OpParams> Op for OpDef<P> {
    fn info(&self) -> OpInfo {
        OpInfo {
            name: self.name,
            doc: self.doc,
            inputs: self.inputs,
            outputs: self.outputs,
            params: P::specs(),
            inplace: self.inplace,
            mutates: self.mutates,
            forward_only: self.forward_only,
            stateful: self.stateful,
            gradient: self.gradient,
            has_sparse: self.sparse.is_some(),
        }
    }

    fn infer(
        &self,
        kv: &[(&str, &str)],
        inputs: &[TensorMeta],
    ) -> Result<(Vec<TensorMeta>, DispatchMode)> {
        let p = P::parse(self.name, kv)?;
        self.check_arity(inputs.len())?;
        let mut metas = (self.infer)(&p, inputs)?;
        let stypes: Vec<StorageType> = inputs.iter().map(|m| m.stype).collect();
        let d = self.decide(&p, &stypes);
        for (m, s) in metas.iter_mut().zip(&d.outputs) {
            m.stype = *s;
        }
        Ok((metas, d.mode))
    }

    fn run(&self, kv: &[(&str, &str)], inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let p = P::parse(self.name, kv)?;
        self.check_arity(inputs.len())?;
        // Kernels validate their inputs themselves, so the eager path does not run shape
        // inference first (that was most of `invoke`'s overhead); debug builds check below
        // that inference agrees with what the kernel produced.
        let stypes: Vec<StorageType> = inputs.iter().map(Tensor::stype).collect();
        let d = self.decide(&p, &stypes);
        let outputs = match d.mode {
            DispatchMode::Dense => (self.dense)(&p, inputs)?,
            DispatchMode::Sparse => {
                (self
                    .sparse
                    .expect("decide() only picks Sparse with a kernel"))(&p, inputs)?
            }
            DispatchMode::Fallback => {
                if let Some(&i) = self
                    .mutates
                    .iter()
                    .find(|&&i| inputs[i].stype() != StorageType::Default)
                {
                    return Err(TesseraError::InvalidArgument(format!(
                        "op {:?} writes its input {:?}, which has storage type {}; the dense fallback \
                         cannot write it back (pass a dense tensor)",
                        self.name,
                        self.inputs[i],
                        inputs[i].stype()
                    )));
                }
                let dense: Vec<Tensor> = inputs
                    .iter()
                    .map(|t| t.cast_storage(StorageType::Default))
                    .collect::<Result<_>>()?;
                let out = (self.dense)(&p, &dense)?;
                fallback::record(FallbackEvent {
                    op: self.name.to_string(),
                    inputs: stypes,
                    outputs: d.outputs.clone(),
                    params: p.to_kv(),
                });
                out.iter()
                    .zip(&d.outputs)
                    .map(|(t, &s)| t.cast_storage(s))
                    .collect::<Result<_>>()?
            }
        };
        #[cfg(debug_assertions)]
        {
            let metas: Vec<TensorMeta> = inputs.iter().map(Tensor::meta).collect();
            let expected = (self.infer)(&p, &metas).unwrap_or_else(|e| {
                panic!("op {}: the kernel ran but inference fails: {e}", self.name)
            });
            let got: Vec<_> = outputs.iter().map(|o| (o.shape(), o.dtype())).collect();
            let want: Vec<_> = expected.iter().map(|e| (&e.shape[..], e.dtype)).collect();
            assert_eq!(got, want, "op {}: outputs differ from inference", self.name);
        }
        Ok(outputs)
    }
}

/// All registered ops, by name.
pub struct Registry {
    ops: BTreeMap<&'static str, Box<dyn Op>>,
}

static REGISTRY: LazyLock<Registry> = LazyLock::new(|| {
    let mut r = Registry {
        ops: BTreeMap::new(),
    };
    super::defs::register_all(&mut r);
    r
});

/// The process-wide registry.
pub fn registry() -> &'static Registry {
    &REGISTRY
}

impl Registry {
    /// Adds an op; a duplicate name is a programming error caught by the registry's tests.
    pub(crate) fn add<P: OpParams>(&mut self, def: OpDef<P>) {
        let prev = self.ops.insert(def.name, Box::new(def));
        assert!(prev.is_none(), "op registered twice");
    }

    /// The op called `name`, or an error listing close names.
    pub fn get(&self, name: &str) -> Result<&dyn Op> {
        self.ops.get(name).map(|b| b.as_ref()).ok_or_else(|| {
            TesseraError::InvalidArgument(format!(
                "no op named {name:?} (see docs/ops.md for the list)"
            ))
        })
    }

    /// Every op's static facts, sorted by name.
    pub fn list(&self) -> Vec<OpInfo> {
        self.ops.values().map(|o| o.info()).collect()
    }

    /// The operator reference as Markdown (the committed `docs/ops.md`; a test keeps it in
    /// sync with the registry).
    pub fn docs_markdown(&self) -> String {
        let mut out = String::from(
            "# Tessera operators\n\nGenerated from the operator registry by `Registry::docs_markdown`; \
             do not edit by hand (regenerate with `TESSERA_BLESS=1 cargo test --test registry`).\n\n\
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
            flags.push(match (info.gradient, info.forward_only) {
                (Some(g), _) => format!("gradient `{g}`"),
                (None, true) => "forward only".into(),
                (None, false) => "no gradient".into(),
            });
            flags.push(if info.has_sparse {
                "sparse kernel".into()
            } else {
                "dense kernel only".into()
            });
            out += &format!("- {}\n", flags.join("; "));
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

    /// The name of the op computing `name`'s gradient, or an error saying why there is none.
    pub fn gradient_of(&self, name: &str) -> Result<&'static str> {
        let info = self.get(name)?.info();
        match (info.gradient, info.forward_only) {
            (Some(g), _) => Ok(g),
            (None, true) => Err(TesseraError::InvalidArgument(format!(
                "op {name:?} is forward only: it has no gradient"
            ))),
            (None, false) => Err(TesseraError::InvalidArgument(format!(
                "op {name:?} has no gradient registered"
            ))),
        }
    }
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
        return Err(TesseraError::InvalidArgument(format!(
            "op {name:?} has {} outputs, {} given",
            info.outputs.len(),
            outputs.len()
        )));
    }
    for (o, out) in outputs.iter().enumerate() {
        for (i, inp) in inputs.iter().enumerate() {
            if out.shares_storage(inp) && !info.inplace.contains(&(i, o)) {
                return Err(TesseraError::OverlappingWrite(format!(
                    "op {name:?}: output {:?} shares memory with input {:?}, which is not a declared in-place pair",
                    info.outputs[o],
                    info.inputs.get(i).copied().unwrap_or("?")
                )));
            }
        }
    }
    let results = op.run(kv, inputs)?;
    for (out, r) in outputs.iter().zip(&results) {
        if out.shape() != r.shape() || out.dtype() != r.dtype() {
            return Err(TesseraError::ShapeMismatch(format!(
                "op {name:?}: provided output is {:?} {}, the op produces {:?} {}",
                out.shape(),
                out.dtype(),
                r.shape(),
                r.dtype()
            )));
        }
        out.assign(r)?;
    }
    Ok(())
}
