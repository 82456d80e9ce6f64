//! Borrowed views (`Tensor::index_ref`, `TensorRef`): the same views as `Tensor::index`
//! (V1–V3) without interning, checked against NumPy's fixtures and against `index` itself.

use crate::view_common::{ints, spec_strategy};
use proptest::prelude::*;
use serde_json::Value;
use tessera::index::{decode, IndexSpec, NewAxis};
use tessera::{idx, DType, ErrorKind, StorageType, Tensor};

fn arange(shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    let dims: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
    Tensor::arange(0, n as i64, 1, DType::I64)
        .unwrap()
        .view(&dims)
        .unwrap()
}

/// The owned and the borrowed view of the same specs agree: both fail with the same message,
/// or both succeed with the same geometry, and the borrowed one interns to the owned one's
/// layout (same descriptor, same offset).
fn same_view(
    owned: tessera::Result<Tensor>,
    borrowed: tessera::Result<tessera::TensorRef<'_>>,
) -> Result<Option<(Tensor, tessera::TensorRef<'_>)>, TestCaseError> {
    match (owned, borrowed) {
        (Ok(o), Ok(b)) => {
            prop_assert_eq!(o.shape(), b.shape());
            prop_assert_eq!(o.strides(), b.strides());
            prop_assert_eq!(o.layout().offset(), b.offset());
            let fresh = b.to_tensor().unwrap();
            prop_assert!(o.layout() == fresh.layout(), "same descriptor and offset");
            Ok(Some((o, b)))
        }
        (Err(e1), Err(e2)) => {
            prop_assert_eq!(e1.to_string(), e2.to_string());
            Ok(None)
        }
        (o, b) => {
            prop_assert!(false, "owned ok {} borrowed ok {}", o.is_ok(), b.is_ok());
            Ok(None)
        }
    }
}

/// Every fixture chain made only of index ops, replayed through borrowed views.
#[test]
fn v1_to_v3_borrowed_index_chains_match_numpy() {
    let cases: Vec<Value> = serde_json::from_str(include_str!("fixtures/views.json")).unwrap();
    let mut checked = 0;
    for (n, case) in cases.iter().enumerate() {
        let ops = case["ops"].as_array().unwrap();
        if ops.is_empty() || ops.iter().any(|op| op["op"] != "index") {
            continue;
        }
        let shape: Vec<usize> = ints(&case["shape"]).iter().map(|&x| x as usize).collect();
        let base = arange(&shape);
        let specs: Vec<Vec<IndexSpec>> = ops
            .iter()
            .map(|op| decode(&ints(&op["code"])).unwrap())
            .collect();
        let mut view = base.index_ref(&specs[0]);
        for s in &specs[1..] {
            view = view.and_then(|v| v.index(s));
        }
        let ctx = format!("case {n}: shape {shape:?} ops {}", case["ops"]);
        match (case["error"].as_str(), view) {
            (None, Ok(v)) => {
                let want: Vec<usize> = ints(&case["result_shape"])
                    .iter()
                    .map(|&x| x as usize)
                    .collect();
                assert_eq!(v.shape(), want.as_slice(), "{ctx}");
                assert_eq!(v.to_vec::<i64>().unwrap(), ints(&case["values"]), "{ctx}");
                assert!(v.to_tensor().unwrap().shares_storage(&base), "{ctx}");
            }
            (Some("IndexError"), Err(e)) if matches!(e.kind(), ErrorKind::Index(_)) => {}
            (Some("ValueError"), Err(e)) if !matches!(e.kind(), ErrorKind::Index(_)) => {}
            (want, got) => panic!(
                "{ctx}: want {want:?}, got {:?}",
                got.map(|v| v.shape().to_vec())
            ),
        }
        checked += 1;
    }
    assert!(checked >= 100, "only {checked} index-only fixture chains");
}

/// Positions of `0..d` an interval visits, by walking the definition element by element.
fn walk(d: isize, start: Option<isize>, end: Option<isize>, step: isize, incl: bool) -> Vec<isize> {
    let norm = |x: isize| if x < 0 { x + d } else { x };
    let mut p = match start {
        None if step > 0 => 0,
        None => d - 1,
        Some(s) if step > 0 => norm(s).max(0),
        Some(s) => norm(s).min(d - 1),
    };
    let mut out = Vec::new();
    while (0..d).contains(&p) {
        let stop = match end.map(norm) {
            None => false,
            Some(e) if step > 0 => p > e || (p == e && !incl),
            Some(e) => p < e || (p == e && !incl),
        };
        if stop {
            break;
        }
        out.push(p);
        p += step;
    }
    out
}

/// The seed's CreateView written naively: geometry of `specs` on a C-contiguous `shape`,
/// or `None` where NumPy raises.
fn naive_view(shape: &[usize], specs: &[IndexSpec]) -> Option<(Vec<usize>, Vec<isize>, isize)> {
    let mut strides = vec![1isize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * shape[i + 1] as isize;
    }
    let named = specs
        .iter()
        .filter(|s| !matches!(s, IndexSpec::NewAxis | IndexSpec::Ellipsis))
        .count();
    if named > shape.len() || specs.iter().filter(|s| **s == IndexSpec::Ellipsis).count() > 1 {
        return None;
    }
    let mut expanded = Vec::new();
    for s in specs {
        if *s == IndexSpec::Ellipsis {
            expanded.extend(std::iter::repeat_n(IndexSpec::All, shape.len() - named));
        } else {
            expanded.push(*s);
        }
    }
    while expanded
        .iter()
        .filter(|s| **s != IndexSpec::NewAxis)
        .count()
        < shape.len()
    {
        expanded.push(IndexSpec::All);
    }
    let (mut dims, mut out_strides, mut offset, mut axis) = (vec![], vec![], 0isize, 0);
    for s in expanded {
        match s {
            IndexSpec::NewAxis => {
                dims.push(1);
                out_strides.push(0);
                continue;
            }
            IndexSpec::Point(i) => {
                let d = shape[axis] as isize;
                let p = if i < 0 { i + d } else { i };
                if !(0..d).contains(&p) {
                    return None;
                }
                offset += p * strides[axis];
            }
            IndexSpec::All => {
                dims.push(shape[axis]);
                out_strides.push(strides[axis]);
            }
            IndexSpec::Interval {
                start,
                end,
                step,
                inclusive,
            } => {
                let ps = walk(shape[axis] as isize, start, end, step, inclusive);
                offset += ps.first().map_or(0, |p| p * strides[axis]);
                dims.push(ps.len());
                out_strides.push(if ps.len() > 1 {
                    (ps[1] - ps[0]) * strides[axis]
                } else {
                    strides[axis]
                });
            }
            IndexSpec::Ellipsis => unreachable!(),
        }
        axis += 1;
    }
    Some((dims, out_strides, offset))
}

proptest! {
    /// Borrowed views against the naive CreateView, ranks up to 7 and up to 10 specs (so
    /// results both inside and beyond the inline rank of 6).
    #[test]
    fn borrowed_view_matches_naive_create_view(
        shape in prop::collection::vec(1usize..5, 0..8),
        specs in prop::collection::vec(spec_strategy(), 0..10),
    ) {
        let base = arange(&shape);
        match (naive_view(&shape, &specs), base.index_ref(&specs)) {
            (Some((dims, strides, offset)), Ok(v)) => {
                prop_assert_eq!(v.shape(), dims.as_slice());
                prop_assert_eq!(v.strides(), strides.as_slice());
                prop_assert_eq!(v.offset() as isize, offset);
            }
            (None, Err(_)) => {}
            (want, got) => prop_assert!(false, "naive {:?} vs {:?}", want, got.map(|v| v.shape().to_vec())),
        }
    }

    /// The borrowed view has exactly the geometry (and errors) of the owned one, for ranks up
    /// to 8 and up to 10 specs (so results both inside and beyond the inline rank of 6).
    #[test]
    fn borrowed_view_equals_owned_view(
        shape in prop::collection::vec(1usize..4, 0..8),
        specs in prop::collection::vec(spec_strategy(), 0..10),
        more in prop::collection::vec(spec_strategy(), 0..3),
    ) {
        let base = arange(&shape);
        if let Some((o, b)) = same_view(base.index(&specs), base.index_ref(&specs))? {
            prop_assert!(b.to_tensor().unwrap().shares_storage(&base));
            // A view of the borrowed view is the view of the owned one.
            same_view(o.index(&more), b.index(&more))?;
        }
    }

    /// `index` remembers the last (geometry, specs) of each thread: repeating them (a hit), on
    /// a tensor of the same geometry at another storage offset (a hit with another offset), or
    /// after an erroring index (never remembered) gives the view computed afresh.
    #[test]
    fn repeated_owned_views_equal_fresh_ones(
        shape in prop::collection::vec(1usize..4, 0..8),
        specs in prop::collection::vec(spec_strategy(), 0..10),
        shift in 1usize..4,
    ) {
        let n: usize = shape.iter().product();
        let dims: Vec<isize> = shape.iter().map(|&d| d as isize).collect();
        let shifted = Tensor::arange(0, (n + shift) as i64, 1, DType::I64)
            .unwrap()
            .index(&[IndexSpec::Interval { start: Some(shift as isize), end: None, step: 1, inclusive: false }])
            .unwrap()
            .view(&dims)
            .unwrap();
        prop_assert_eq!(shifted.layout().offset(), shift);
        let base = arange(&shape);
        for t in [&base, &base, &shifted, &shifted, &base] {
            same_view(t.index(&specs), t.index_ref(&specs))?;
            // An erroring index in between is not remembered.
            prop_assert!(t.index(&[IndexSpec::Ellipsis, IndexSpec::Ellipsis]).is_err());
        }
    }
}

/// V7: writes through a borrowed view reach the base; a stride-0 borrowed view refuses them.
#[test]
fn writes_through_a_borrowed_view_reach_the_base() {
    let t = arange(&[3, 4]);
    let col = t.index_ref(&idx![.., 1]).unwrap();
    col.fill_(-1).unwrap();
    col.index(&idx![1..])
        .unwrap()
        .assign(&Tensor::from_slice(&[7i64, 8], &[2]).unwrap())
        .unwrap();
    assert_eq!(
        t.to_vec::<i64>().unwrap(),
        vec![0, -1, 2, 3, 4, 7, 6, 7, 8, 8, 10, 11]
    );
    let row = t.index(&idx![0, NewAxis]).unwrap().expand(&[3, 4]).unwrap();
    let r = row.index_ref(&idx![..]).unwrap();
    assert_eq!(r.strides(), &[0, 1]);
    assert!(matches!(
        r.fill_(0).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::OverlappingWrite(_))
    ));
}

/// A sparse tensor has no dense layout to borrow: the same error as `index`.
#[test]
fn borrowing_from_a_sparse_tensor_is_an_error() {
    let d = Tensor::from_vec(vec![0.0f64, 1., 2., 0.], &[2, 2]).unwrap();
    let c = d.cast_storage(StorageType::Csr).unwrap();
    assert!(matches!(
        c.index_ref(&idx![0]).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::InvalidArgument(_))
    ));
    assert!(matches!(
        c.index(&idx![0]).as_ref().map_err(|e| e.kind()),
        Err(ErrorKind::InvalidArgument(_))
    ));
}
