//! Outputs sized by user shapes are allocated fallibly (issue 15, item 3): a size that
//! overflows is `ShapeOverflow`, one the allocator refuses is `Allocation(bytes)`, never an
//! abort of the process. Broadcast (stride-0) views make huge element counts cheap to build.

use tessera::{DType, ErrorKind, Tensor};

/// A one-element i64 tensor broadcast to `dims` (no memory behind the extra elements).
fn huge(dims: &[usize]) -> Tensor {
    Tensor::ones(&[1], DType::I64)
        .unwrap()
        .broadcast_to(dims)
        .unwrap()
}

fn is_alloc_error<T>(r: tessera::Result<T>) -> bool {
    matches!(
        r.as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::Allocation(_)) | Err(ErrorKind::ShapeOverflow(_))
    )
}

#[test]
fn to_vec_of_a_huge_broadcast_view_is_an_allocation_error() {
    // 2^41 i64 = 16 TiB: refused by the allocator.
    let r = huge(&[1 << 41]).to_vec::<i64>();
    assert!(
        matches!(r.as_ref().map_err(|e| e.kind()), Err(ErrorKind::Allocation(b)) if *b == 8 << 41),
        "{r:?}"
    );
    // 2^61 * 8 bytes overflows isize.
    let r = huge(&[1 << 61]).to_vec::<i64>();
    assert!(
        matches!(
            r.as_ref().map_err(|e| e.kind()),
            Err(ErrorKind::ShapeOverflow(_))
        ),
        "{r:?}"
    );
}

#[test]
fn contiguous_of_a_huge_broadcast_view_is_an_allocation_error() {
    assert!(is_alloc_error(huge(&[1 << 41]).contiguous()));
}

#[test]
fn reductions_keeping_a_huge_axis_are_allocation_errors() {
    let t = huge(&[1 << 41, 1]);
    assert!(is_alloc_error(t.sum(Some(&[1]), false)));
    assert!(is_alloc_error(t.mean(Some(&[1]), false)));
    assert!(is_alloc_error(t.max(Some(&[1]), false)));
    // Small reductions still give hand-worked values.
    let s = huge(&[3, 4]).sum(Some(&[1]), false).unwrap();
    assert_eq!(s.to_vec::<i64>().unwrap(), vec![4, 4, 4]);
}

#[test]
fn printing_an_empty_tensor_with_a_huge_axis_is_cheap() {
    let t = Tensor::zeros(&[1 << 40, 0], DType::F32).unwrap();
    assert_eq!(format!("{t}"), "[]");
}

#[test]
fn a_shape_cache_with_an_impossible_retention_is_an_error() {
    assert!(is_alloc_error(tessera::ShapeCache::try_with_retention(
        1 << 50
    )));
    assert!(is_alloc_error(tessera::ShapeCache::try_with_retention(
        usize::MAX
    )));
    assert!(tessera::ShapeCache::try_with_retention(3).is_ok());
}
