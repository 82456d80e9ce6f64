//! Advanced indexing (docs/design.md X1-X5) against a naive reference: nested loops over
//! NumPy's rules, one output element at a time from coordinates (no strides, no views).

use proptest::prelude::*;
use tessera::index::IndexSpec;
use tessera::IndexItem;
use tessera::{DType, Tensor};

/// A key item of the reference: a slice (start, end, step), a point, an integer array, a
/// mask or a new axis.
#[derive(Clone, Debug)]
enum Item {
    Slice(Option<isize>, Option<isize>, isize),
    Point(isize),
    Array(Vec<i64>, Vec<usize>),
    Mask(Vec<bool>, Vec<usize>),
    NewAxis,
}

/// Python's `range(*slice(start, end, step).indices(n))`, written out.
fn slice_positions(n: usize, start: Option<isize>, end: Option<isize>, step: isize) -> Vec<usize> {
    let n = n as isize;
    let norm = |v: isize, lo: isize, hi: isize| {
        let v = if v < 0 { v + n } else { v };
        v.clamp(lo, hi)
    };
    let mut out = Vec::new();
    if step > 0 {
        let (mut i, e) = (
            start.map_or(0, |s| norm(s, 0, n)),
            end.map_or(n, |e| norm(e, 0, n)),
        );
        while i < e {
            out.push(i as usize);
            i += step;
        }
    } else {
        let s = start.map_or(n - 1, |s| norm(s, -1, n - 1));
        let e = end.map_or(-1, |e| norm(e, -1, n - 1));
        let mut i = s;
        while i > e {
            out.push(i as usize);
            i += step;
        }
    }
    out
}

fn unravel(mut k: usize, dims: &[usize]) -> Vec<usize> {
    let mut c = vec![0; dims.len()];
    for j in (0..dims.len()).rev() {
        c[j] = k % dims[j].max(1);
        k /= dims[j].max(1);
    }
    c
}

fn broadcast(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let r = a.len().max(b.len());
    let mut out = vec![0; r];
    for j in 0..r {
        let x = if j + a.len() >= r {
            a[j + a.len() - r]
        } else {
            1
        };
        let y = if j + b.len() >= r {
            b[j + b.len() - r]
        } else {
            1
        };
        out[j] = if x == y || y == 1 {
            x
        } else if x == 1 {
            y
        } else {
            return None;
        };
    }
    Some(out)
}

/// Value of a broadcast array at broadcast coordinate `c`.
fn at(values: &[i64], shape: &[usize], c: &[usize]) -> i64 {
    let off = c.len() - shape.len();
    let mut k = 0;
    for (j, &d) in shape.iter().enumerate() {
        k = k * d + if d == 1 { 0 } else { c[off + j] };
    }
    values[k]
}

/// The reference: `x[key]` for a contiguous `x` of `dims`, or `None` if NumPy raises.
fn reference(x: &[f64], dims: &[usize], key: &[Item]) -> Option<(Vec<usize>, Vec<f64>)> {
    // Masks become their nonzero arrays; points become 0-d arrays (there is an array).
    enum K {
        Pos(Vec<usize>),
        Adv(Vec<i64>, Vec<usize>),
        New,
    }
    let mut ks = Vec::new();
    let mut axis = 0;
    for it in key {
        match it {
            Item::Slice(s, e, st) => {
                ks.push((
                    Some(axis),
                    K::Pos(slice_positions(*dims.get(axis)?, *s, *e, *st)),
                ));
                axis += 1;
            }
            Item::Point(p) => {
                dims.get(axis)?;
                // Wrapped with the arrays below.
                ks.push((Some(axis), K::Adv(vec![*p as i64], vec![])));
                axis += 1;
            }
            Item::Array(v, s) => {
                ks.push((Some(axis), K::Adv(v.clone(), s.clone())));
                axis += 1;
            }
            Item::Mask(m, s) => {
                if dims.len() < axis + s.len() || dims[axis..axis + s.len()] != s[..] {
                    return None;
                }
                let mut cols = vec![Vec::new(); s.len()];
                for (k, &f) in m.iter().enumerate() {
                    if f {
                        for (col, c) in cols.iter_mut().zip(unravel(k, s)) {
                            col.push(c as i64);
                        }
                    }
                }
                for col in cols {
                    let n = col.len();
                    ks.push((Some(axis), K::Adv(col, vec![n])));
                    axis += 1;
                }
            }
            Item::NewAxis => ks.push((None, K::New)),
        }
    }
    if axis > dims.len() {
        return None;
    }
    for (d, &n) in dims.iter().enumerate().skip(axis) {
        ks.push((Some(d), K::Pos((0..n).collect())));
    }
    // Range checks and the broadcast shape.
    let mut b: Vec<usize> = vec![];
    let mut adv_items = vec![];
    for (i, (ax, k)) in ks.iter_mut().enumerate() {
        if let K::Adv(v, s) = k {
            let n = dims[ax.unwrap()] as i64;
            for x in v.iter_mut() {
                if *x < 0 {
                    *x += n;
                }
                if !(0..n).contains(x) {
                    return None;
                }
            }
            b = broadcast(&b, s)?;
            adv_items.push(i);
        }
    }
    let adjacent = adv_items.windows(2).all(|w| w[1] == w[0] + 1);
    // Output dims as a list of "sources": a non-advanced item, or the broadcast block.
    let mut out_dims = Vec::new();
    let mut layout = Vec::new(); // Some(item) for a basic dim, None for the block start
    if !adjacent {
        out_dims.extend(&b);
        layout.push(None);
    }
    for (i, (_, k)) in ks.iter().enumerate() {
        match k {
            K::Pos(p) => {
                out_dims.push(p.len());
                layout.push(Some(i));
            }
            K::New => {
                out_dims.push(1);
                layout.push(Some(i));
            }
            K::Adv(..) if adjacent && Some(&i) == adv_items.first() => {
                out_dims.extend(&b);
                layout.push(None);
            }
            K::Adv(..) => {}
        }
    }
    let n: usize = out_dims.iter().product();
    let mut out = Vec::with_capacity(n);
    for k in 0..n {
        let c = unravel(k, &out_dims);
        let mut src = vec![0usize; dims.len()];
        let mut pos = 0;
        for l in &layout {
            match l {
                None => {
                    let bc = &c[pos..pos + b.len()];
                    for &i in &adv_items {
                        if let (Some(ax), K::Adv(v, s)) = &ks[i] {
                            src[*ax] = at(v, s, bc) as usize;
                        }
                    }
                    pos += b.len();
                }
                Some(i) => {
                    if let (Some(ax), K::Pos(p)) = &ks[*i] {
                        src[*ax] = p[c[pos]];
                    }
                    pos += 1;
                }
            }
        }
        let mut flat = 0;
        for (j, &d) in dims.iter().enumerate() {
            flat = flat * d + src[j];
        }
        out.push(x[flat]);
    }
    Some((out_dims, out))
}

fn to_key(key: &[Item]) -> Vec<IndexItem> {
    key.iter()
        .map(|it| match it {
            Item::Slice(s, e, st) => IndexItem::Spec(IndexSpec::Interval {
                start: *s,
                end: *e,
                step: *st,
                inclusive: false,
            }),
            Item::Point(p) => IndexItem::Spec(IndexSpec::Point(*p)),
            Item::Array(v, s) => IndexItem::Array(
                Tensor::from_vec(v.iter().map(|&x| x as i32).collect::<Vec<i32>>(), s).unwrap(),
            ),
            Item::Mask(m, s) => IndexItem::Array(Tensor::from_vec(m.clone(), s).unwrap()),
            Item::NewAxis => IndexItem::Spec(IndexSpec::NewAxis),
        })
        .collect()
}

fn item(dims: Vec<usize>) -> impl Strategy<Value = Item> {
    let d = dims.first().copied().unwrap_or(1) as isize;
    let bshape = prop::collection::vec(prop::sample::select(vec![1usize, 2, 3]), 0..3);
    let mask_dims: Vec<usize> = dims.iter().take(2).copied().collect();
    let mask_n: usize = mask_dims.iter().product();
    prop_oneof![
        (
            prop::option::of(-d - 2..d + 2),
            prop::option::of(-d - 2..d + 2),
            prop::sample::select(vec![-3isize, -2, -1, 1, 2, 3])
        )
            .prop_map(|(s, e, st)| Item::Slice(s, e, st)),
        (-d - 1..d + 1).prop_map(Item::Point),
        bshape.prop_flat_map(move |s| {
            let n: usize = s.iter().product();
            (prop::collection::vec(-d - 1..d + 1, n), Just(s))
                .prop_map(|(v, s)| Item::Array(v.into_iter().map(|x| x as i64).collect(), s))
        }),
        prop::collection::vec(any::<bool>(), mask_n)
            .prop_map(move |m| Item::Mask(m, mask_dims.clone())),
        Just(Item::NewAxis),
    ]
}

fn case() -> impl Strategy<Value = (Vec<usize>, Vec<Item>)> {
    prop::collection::vec(0usize..4, 1..4).prop_flat_map(|dims| {
        let n = dims.len();
        let items: Vec<_> = (0..n).map(|j| item(dims[j..].to_vec())).collect();
        (Just(dims), items, 1..=n).prop_map(|(d, items, k)| (d, items[..k].to_vec()))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn get_matches_the_reference((dims, key) in case(), transposed in any::<bool>()) {
        let n: usize = dims.iter().product();
        let x: Vec<f64> = (0..n).map(|v| v as f64).collect();
        // The same values seen through a transposed (non-contiguous) layout.
        let t = if transposed {
            let rev: Vec<usize> = dims.iter().rev().copied().collect();
            let axes: Vec<isize> = (0..dims.len() as isize).rev().collect();
            let xt = Tensor::from_vec(x.clone(), &dims).unwrap().permute(&axes).unwrap().contiguous().unwrap();
            assert_eq!(xt.shape(), &rev[..]);
            xt.permute(&axes).unwrap()
        } else {
            Tensor::from_vec(x.clone(), &dims).unwrap()
        };
        let got = t.get(&to_key(&key));
        match reference(&x, &dims, &key) {
            None => prop_assert!(got.is_err(), "expected an error, got {:?}", got.map(|g| g.shape().to_vec())),
            Some((shape, values)) => {
                let got = got.unwrap();
                prop_assert_eq!(got.shape(), &shape[..]);
                prop_assert_eq!(got.to_vec::<f64>().unwrap(), values);
            }
        }
    }

    #[test]
    fn set_writes_where_get_reads((dims, key) in case()) {
        let n: usize = dims.iter().product();
        let x: Vec<f64> = (0..n).map(|v| v as f64).collect();
        let Some((shape, _)) = reference(&x, &dims, &key) else { return Ok(()) };
        // Write each element's own flat position negated: with repeated positions the last
        // write of the row-major walk wins, and it carries the same value anyway.
        let t = Tensor::from_vec(x.clone(), &dims).unwrap();
        // (A basic key's `get` is a view: read its positions before writing.)
        let pos = t.get(&to_key(&key)).unwrap();
        let read = pos.to_vec::<f64>().unwrap();
        let neg: Vec<f64> = read.iter().map(|v| -v).collect();
        let vals = Tensor::from_vec(neg, pos.shape()).unwrap();
        t.set(&to_key(&key), &vals).unwrap();
        let mut want = x.clone();
        for v in read {
            want[v as usize] = -v;
        }
        prop_assert_eq!(t.to_vec::<f64>().unwrap(), want);
        let _ = shape;
    }
}

#[test]
fn repeated_indices_last_write_wins() {
    let t = Tensor::zeros(&[4], DType::F64).unwrap();
    let i = Tensor::from_slice(&[1i64, 1, 3, 1], &[4]).unwrap();
    let v = Tensor::from_slice(&[1.0f64, 2.0, 3.0, 4.0], &[4]).unwrap();
    t.set(&[IndexItem::Array(i)], &v).unwrap();
    assert_eq!(t.to_vec::<f64>().unwrap(), vec![0.0, 4.0, 0.0, 3.0]);
}

#[test]
fn mask_select_over_leading_dims_and_empty() {
    let t = Tensor::arange(0, 12, 1, DType::I64)
        .unwrap()
        .view(&[3, 4])
        .unwrap();
    let m = Tensor::from_slice(&[true, false, true], &[3]).unwrap();
    let g = t.get(&[IndexItem::Array(m)]).unwrap();
    assert_eq!(g.shape(), &[2, 4]);
    assert_eq!(g.to_vec::<i64>().unwrap(), vec![0, 1, 2, 3, 8, 9, 10, 11]);
    let none = Tensor::from_slice(&[false; 12], &[3, 4]).unwrap();
    assert_eq!(t.get(&[IndexItem::Array(none)]).unwrap().shape(), &[0]);
    let bad = Tensor::from_slice(&[true; 4], &[4]).unwrap();
    assert!(matches!(
        t.get(&[IndexItem::Array(bad)])
            .as_ref()
            .map_err(|e| e.kind()),
        Err(tessera::ErrorKind::Index(_))
    ));
}

#[test]
fn take_and_take_along_axis_errors_are_typed() {
    let t = Tensor::arange(0, 6, 1, DType::F32)
        .unwrap()
        .view(&[2, 3])
        .unwrap();
    let i = Tensor::from_slice(&[3i64], &[1]).unwrap();
    assert!(matches!(
        t.take(&i, Some(1)).as_ref().map_err(|e| e.kind()),
        Err(tessera::ErrorKind::Index(_))
    ));
    assert!(matches!(
        t.take(&i, None).as_ref().map_err(|e| e.kind()),
        Err(tessera::ErrorKind::InvalidArgument(_))
    ));
    let f = Tensor::from_slice(&[0.0f32], &[1]).unwrap();
    assert!(matches!(
        t.take(&f, Some(0)).as_ref().map_err(|e| e.kind()),
        Err(tessera::ErrorKind::DType(_))
    ));
    let j = Tensor::from_slice(&[2i64, -1], &[1, 2]).unwrap();
    assert!(t.take_along_axis(&j, 0).is_err());
    let s = t.take_along_axis(&j, 1).unwrap();
    assert_eq!(s.to_vec::<f32>().unwrap(), vec![2.0, 2.0, 5.0, 5.0]);
}
