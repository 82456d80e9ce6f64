//! Op definitions (docs/design.md O1): [`OpDef`], an op's typed description (inference,
//! storage rules, kernels, flags), its type-erased face [`Op`], and [`OpTable`], the ops the
//! `defs` modules collect for the registry. How an op runs (the storage-type dispatch) is in
//! `dispatch.rs`; looking ops up by name in `registry.rs`.

use super::params::{OpParams, ParamSpec};
use super::stype::{dense_stype, DispatchMode, StorageType, StypeDecision, TensorMeta};
use crate::autograd::{BackwardFn, GradRule, Saves};
use crate::error::Result;
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
    /// The output shapes depend on the input values (`unique_*`): inference gives only the
    /// dtypes and ranks exactly (its dims are placeholders).
    pub data_dependent_shape: bool,
    /// One-paragraph description.
    pub doc: &'static str,
    /// Input names, in order. One name starting with `*` (`*arrays`) takes any positive
    /// number of inputs (`concat`, `stack`).
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
    /// The op keeps state between calls (in a mutated input).
    pub stateful: bool,
    /// How the op differentiates (docs/design.md G1).
    pub grad: GradRule<P>,
}

impl<P: OpParams> OpDef<P> {
    /// An op with one dense kernel and the defaults: dense-only storage inference (one
    /// output), no sparse kernel, no in-place pairs, no mutated inputs, not stateful, and no
    /// gradient rule declared yet ([`GradRule::Missing`], which the gradient-check gate
    /// refuses). Adjust with the builder methods below.
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
            data_dependent_shape: false,
            doc,
            inputs,
            outputs,
            infer,
            infer_stype: dense_stype::<P>,
            dense,
            sparse: None,
            inplace: &[],
            mutates: &[],
            stateful: false,
            grad: GradRule::Missing,
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

    /// Declares that the output shapes depend on the input values (see the field).
    pub fn data_dependent_shape(mut self) -> Self {
        self.data_dependent_shape = true;
        self
    }

    /// Declares that the op has no gradient by design (backward through it is an error).
    pub fn forward_only(mut self) -> Self {
        self.grad = GradRule::ForwardOnly;
        self
    }

    /// Declares that no gradient exists, and why (its outputs never require one).
    pub fn not_differentiable(mut self, why: &'static str) -> Self {
        self.grad = GradRule::NotDifferentiable(why);
        self
    }

    /// Declares the backward rule `f`, described by `doc`, reading what `saves` lists.
    pub fn backward(mut self, doc: &'static str, saves: Saves, f: BackwardFn<P>) -> Self {
        self.grad = GradRule::Backward {
            doc,
            via: None,
            saves,
            f,
        };
        self
    }

    /// Names the registered op the backward rule calls (after [`OpDef::backward`]).
    pub fn gradient_op(mut self, op: &'static str) -> Self {
        if let GradRule::Backward { via, .. } = &mut self.grad {
            *via = Some(op);
        }
        self
    }
}

/// How an op differentiates, for listings (the face of [`GradRule`]).
#[derive(Clone, Debug, PartialEq)]
pub enum Gradient {
    /// A backward rule, in words, and the registered op it calls, if any.
    Rule {
        /// The rule.
        doc: &'static str,
        /// The gradient op.
        via: Option<&'static str>,
    },
    /// No gradient exists, and why.
    NotDifferentiable(&'static str),
    /// No gradient by design.
    ForwardOnly,
    /// No rule declared yet.
    Missing,
}

impl<P> From<&GradRule<P>> for Gradient {
    fn from(r: &GradRule<P>) -> Gradient {
        match r {
            GradRule::Missing => Gradient::Missing,
            GradRule::Backward { doc, via, .. } => Gradient::Rule { doc, via: *via },
            GradRule::NotDifferentiable(w) => Gradient::NotDifferentiable(w),
            GradRule::ForwardOnly => Gradient::ForwardOnly,
        }
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
    /// Stateful.
    pub stateful: bool,
    /// How the op differentiates.
    pub gradient: Gradient,
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
    /// The typed definition (the registry downcasts it for the typed `Tensor` methods).
    fn as_any(&self) -> &dyn std::any::Any;
}

/// The ops collected for the registry, by name (each `defs` module adds its own).
#[derive(Default)]
pub(crate) struct OpTable {
    /// Every call of a typed method looks its op up here, so a fast hash (not SipHash, not
    /// a tree of string comparisons) matters; listings sort by name themselves.
    pub(crate) ops: rustc_hash::FxHashMap<&'static str, Box<dyn Op>>,
}

impl OpTable {
    /// Adds an op; a duplicate name is a programming error caught by the registry's tests.
    pub(crate) fn add<P: OpParams>(&mut self, def: OpDef<P>) {
        let prev = self.ops.insert(def.name, Box::new(def));
        assert!(prev.is_none(), "op registered twice");
    }
}
