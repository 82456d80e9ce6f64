//! How an op call runs (docs/design.md O2): the one place where calls are dispatched on the
//! inputs' storage types. Every op call goes through [`OpDef::call`]: `invoke` (by name,
//! through [`Op::run`]) and the storage-aware `Tensor` methods (`ops/methods.rs`) alike. The
//! storage rules themselves are the ops' `infer_stype` functions (`defs/sparse_rules.rs`).

use super::def::{Op, OpDef, OpInfo};
use super::fallback::{self, FallbackEvent};
use super::params::OpParams;
use super::stype::{DispatchMode, StorageType, StypeDecision, TensorMeta};
use crate::autograd;
use crate::error::{ErrorKind, Result};
use crate::tensor::Tensor;

/// True when [`OpDef::call`] would hand `inputs` straight to an op's dense kernel and record
/// nothing: every input is dense and none requires a gradient. For an op whose storage rule
/// picks the dense kernel for dense inputs (elementwise arithmetic and comparisons, basic
/// indexing), a typed method may then call that kernel itself: the same result, without the
/// registry lookup, the parameter copy and the output vector, which were half the cost of a
/// 16-element `a + b` and of `t[i]` (docs/design.md P4).
#[inline]
pub(crate) fn plain_dense(inputs: &[&Tensor]) -> bool {
    inputs
        .iter()
        .all(|t| t.stype() == StorageType::Default && !t.requires_grad())
}

impl<P: OpParams> OpDef<P> {
    pub(crate) fn check_arity(&self, n: usize) -> Result<()> {
        let variadic = matches!(self.inputs, [one] if one.starts_with('*'));
        if (variadic && n == 0) || (!variadic && n != self.inputs.len()) {
            return Err(ErrorKind::InvalidArgument(format!(
                "op {:?} takes {} inputs ({}), got {n}",
                self.name,
                self.inputs.len(),
                self.inputs.join(", ")
            ))
            .into());
        }
        Ok(())
    }

    /// The dispatch mode for these input storage types: the op's storage rule, with
    /// `Sparse` turned into `Fallback` when the op has no sparse kernel.
    pub(crate) fn decide(&self, p: &P, stypes: &[StorageType]) -> StypeDecision {
        let mut d = (self.infer_stype)(p, stypes);
        if d.mode == DispatchMode::Sparse && self.sparse.is_none() {
            d.mode = DispatchMode::Fallback;
        }
        d
    }

    /// Runs the op with typed parameters: the one place where an op call is dispatched on
    /// the inputs' storage types (dense kernel, sparse kernel, or the logged dense fallback).
    /// Errors if the number of inputs is not the op's.
    pub(crate) fn call(&self, p: &P, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        self.check_arity(inputs.len())?;
        // Kernels validate their inputs themselves, so the eager path does not run shape
        // inference first (that was most of `invoke`'s overhead); debug builds check below
        // that inference agrees with what the kernel produced.
        // On the stack: every call pays for this, most with one to three inputs.
        let stypes: smallvec::SmallVec<[StorageType; 4]> =
            inputs.iter().map(Tensor::stype).collect();
        let d = self.decide(p, &stypes);
        let recorded = autograd::wants_record(inputs);
        for &i in self.mutates {
            inputs[i].check_inplace(self.name, &[])?;
        }
        // Kernels see the inputs as plain data: autograd state belongs to the caller's handles
        // (so a kernel's internal writes are not taken for user writes, docs/design.md G4).
        let detached: smallvec::SmallVec<[Tensor; 4]>;
        let inputs_for_record = inputs;
        let inputs = if recorded {
            detached = inputs.iter().map(Tensor::detach).collect();
            &detached[..]
        } else {
            inputs
        };
        let outputs = match d.mode {
            DispatchMode::Dense => (self.dense)(p, inputs)?,
            DispatchMode::Sparse => {
                (self
                    .sparse
                    .expect("decide() only picks Sparse with a kernel"))(p, inputs)?
            }
            DispatchMode::Fallback => {
                if let Some(&i) = self
                    .mutates
                    .iter()
                    .find(|&&i| inputs[i].stype() != StorageType::Default)
                {
                    return Err(ErrorKind::InvalidArgument(format!(
                        "op {:?} writes its input {:?}, which has storage type {}; the dense fallback \
                         cannot write it back (pass a dense tensor)",
                        self.name,
                        self.inputs[i],
                        inputs[i].stype()
                    )).into());
                }
                let dense: Vec<Tensor> = inputs
                    .iter()
                    .map(|t| t.cast_storage(StorageType::Default))
                    .collect::<Result<_>>()?;
                let out = (self.dense)(p, &dense)?;
                fallback::record(FallbackEvent {
                    op: self.name.to_string(),
                    inputs: stypes.to_vec(),
                    outputs: d.outputs.to_vec(),
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
            let expected = (self.infer)(p, &metas).unwrap_or_else(|e| {
                panic!("op {}: the kernel ran but inference fails: {e}", self.name)
            });
            let dims = |s: &[usize]| {
                if self.data_dependent_shape {
                    vec![0; s.len()]
                } else {
                    s.to_vec()
                }
            };
            let got: Vec<_> = outputs
                .iter()
                .map(|o| (dims(o.shape()), o.dtype()))
                .collect();
            let want: Vec<_> = expected.iter().map(|e| (dims(&e.shape), e.dtype)).collect();
            assert_eq!(got, want, "op {}: outputs differ from inference", self.name);
        }
        // The one recording point of autograd (docs/design.md G1).
        autograd::record(
            recorded,
            self.name,
            p,
            &self.grad,
            inputs_for_record,
            outputs,
        )
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
            stateful: self.stateful,
            gradient: (&self.grad).into(),
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
        self.call(&P::parse(self.name, kv)?, inputs)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
