//! Storage-type dispatch and the logged fallback (docs/design.md O2), exercised with CSR tensors.
//! One test function: the fallback counter and the once-per-key log are process-wide.

use std::sync::{Arc, Mutex};

use tessera::ops::{
    self, fallback_count, registry, set_fallback_hook, DispatchMode, StorageType, TensorMeta,
};
use tessera::{DType, Tensor};

#[test]
fn o2_fallback_casts_runs_dense_counts_and_warns_once_per_key() {
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = Arc::clone(&seen);
    set_fallback_hook(Some(Box::new(move |e| {
        sink.lock().unwrap().push(e.message())
    })));

    // Inference alone reports the mode without running anything.
    let meta = TensorMeta {
        shape: vec![2, 2],
        dtype: DType::F32,
        stype: StorageType::Csr,
    };
    let (out, mode) = registry()
        .get("quadratic")
        .unwrap()
        .infer(&[("c", "3")], &[meta])
        .unwrap();
    assert_eq!(
        (mode, out[0].stype),
        (DispatchMode::Fallback, StorageType::Default)
    );

    let dense = Tensor::from_vec(vec![0.0f32, 1.0, 2.0, 0.0], &[2, 2]).unwrap();
    let tagged = dense.cast_storage(StorageType::Csr).unwrap();
    assert_eq!(tagged.stype(), StorageType::Csr);
    let kv = [("a", "1"), ("b", "2"), ("c", "3")];

    let before = fallback_count();
    let y = ops::invoke("quadratic", std::slice::from_ref(&tagged), &kv).unwrap();
    assert_eq!(y[0].stype(), StorageType::Default);
    assert_eq!(
        y[0].to_vec::<f32>().unwrap(),
        vec![3.0, 6.0, 11.0, 3.0],
        "seed 003's example"
    );
    assert_eq!(fallback_count(), before + 1);
    {
        let msgs = seen.lock().unwrap();
        assert_eq!(msgs.len(), 1);
        let m = &msgs[0];
        for needle in [
            "operator = quadratic",
            "input storage types = [csr, ]",
            "output storage types = [default, ]",
            "\"c\" : 3",
        ] {
            assert!(m.contains(needle), "{needle:?} missing from {m}");
        }
    }

    // Same (op, storage types) again: counted, not logged again.
    ops::invoke("quadratic", std::slice::from_ref(&tagged), &kv).unwrap();
    assert_eq!(fallback_count(), before + 2);
    assert_eq!(seen.lock().unwrap().len(), 1);

    // A new key logs once more; dense inputs never fall back.
    // (`maximum` has no sparse kernel.)
    let sum = ops::invoke("maximum", &[tagged.clone(), dense.clone()], &[]).unwrap();
    assert_eq!(sum[0].to_vec::<f32>().unwrap(), vec![0.0, 1.0, 2.0, 0.0]);
    assert_eq!(fallback_count(), before + 3);
    assert_eq!(seen.lock().unwrap().len(), 2);
    ops::invoke("maximum", &[dense.clone(), dense.clone()], &[]).unwrap();
    ops::invoke("quadratic", std::slice::from_ref(&dense), &kv).unwrap();
    assert_eq!(fallback_count(), before + 3);

    // An op that writes an input cannot fall back on it: a clear error, nothing written.
    let buffer = Tensor::zeros(&[4, 1], DType::F32)
        .unwrap()
        .cast_storage(StorageType::Csr)
        .unwrap();
    let x = Tensor::ones(&[1, 1], DType::F32).unwrap();
    let e = ops::invoke("ring_buffer", &[x, buffer], &[("axis", "0")])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("writes its input") && e.contains("buffer"),
        "{e}"
    );
    set_fallback_hook(None);
}
