//! Index specs as Python keys become (`t[...]` parses into these, then calls the same Rust
//! resolver): any list of specs gives a view of distinct base elements or a typed error.
use tessera::index::IndexSpec;

use super::common::{check_view, numbered, Bytes};

fn spec(bytes: &mut Bytes) -> IndexSpec {
    let opt = |b: &mut Bytes| (!b.u8().is_multiple_of(3)).then(|| b.edgy() as isize);
    match bytes.u8() % 5 {
        0 => IndexSpec::Point(bytes.edgy() as isize),
        1 => IndexSpec::Interval {
            start: opt(bytes),
            end: opt(bytes),
            step: bytes.edgy() as isize,
            inclusive: bytes.u8() % 2 == 1,
        },
        2 => IndexSpec::All,
        3 => IndexSpec::NewAxis,
        _ => IndexSpec::Ellipsis,
    }
}

/// One input: panics (fails) when the property above does not hold.
pub fn check(data: &[u8]) {
    let mut bytes = Bytes(data);
    let base = numbered(&mut bytes);
    let mut specs = Vec::new();
    while !bytes.is_empty() && specs.len() < 12 {
        specs.push(spec(&mut bytes));
    }
    if let Ok(view) = base.index(&specs) {
        check_view(&view, base.numel());
        // A view of the view resolves too (or errors), never panics.
        let _ = view.index(&specs);
    }
}
