//! The INT64 view-spec decoder and CreateView (docs/design.md V4): any code decodes to specs
//! or a typed error, and `create_view` gives a view of distinct base elements or an error,
//! never a panic. A code that decodes re-encodes to itself.
use tessera::index::{decode, encode};

use super::common::{check_view, numbered, Bytes};

/// One input: panics (fails) when the property above does not hold.
pub fn check(data: &[u8]) {
    let mut bytes = Bytes(data);
    let base = numbered(&mut bytes);
    let mut code = Vec::new();
    while !bytes.is_empty() && code.len() < 64 {
        code.push(bytes.edgy());
    }
    if let Ok(specs) = decode(&code) {
        let again = encode(&specs);
        assert_eq!(decode(&again).expect("re-decodes"), specs);
    }
    if let Ok(view) = base.create_view(&code) {
        check_view(&view, base.numel());
    }
}
