//! `TESSERA_STORAGE_FALLBACK_LOG_VERBOSE=0` silences the fallback warning but not the
//! counter (docs/design.md O2). Its own test binary: it sets a process-wide environment variable.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tessera::ops::{self, fallback_count, set_fallback_hook, StorageType};
use tessera::{DType, Tensor};

#[test]
fn o2_verbose_zero_silences_the_warning() {
    std::env::set_var("TESSERA_STORAGE_FALLBACK_LOG_VERBOSE", "0");
    let warned = Arc::new(AtomicUsize::new(0));
    let w = Arc::clone(&warned);
    set_fallback_hook(Some(Box::new(move |_| {
        w.fetch_add(1, Ordering::Relaxed);
    })));
    let x = Tensor::ones(&[1, 3], DType::F64)
        .unwrap()
        .cast_storage(StorageType::Csr)
        .unwrap();
    let before = fallback_count();
    let y = ops::invoke("quadratic", &[x], &[("a", "2"), ("c", "1")]).unwrap();
    assert_eq!(y[0].to_vec::<f64>().unwrap(), vec![3.0; 3]);
    assert_eq!(fallback_count(), before + 1);
    assert_eq!(warned.load(Ordering::Relaxed), 0);
}
