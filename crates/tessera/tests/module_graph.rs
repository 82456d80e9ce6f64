//! "Imports go one way": no cycle between sibling modules, at any level, in the three crates
//! of the workspace (`tessera`, `tessera-dist`, `tessera-py`).
//!
//! The test reads every `src/` tree (std only, no parser crate): it strips comments and
//! literals, collects the paths that start with `crate`, `$crate`, `super` or `self` (in `use`
//! trees and in code; `#[cfg(test)]` code counts too), resolves them through the `use`
//! imports and re-exports of the module they pass through (so `crate::Tensor` is the `tensor`
//! module, `crate::with_dtype` the module defining the macro), and draws an edge `A -> B`
//! between two sibling modules (children of one parent, a folder or the crate root) when
//! something in `A` (or below it) names something in `B` (or below it). A parent naming its
//! children (`mod` declarations, `pub use child::X`) is not a sibling edge, so it is ignored.
//! Any cycle among siblings fails the test, except the ones in [`ALLOWED`].

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Cycles allowed to stay, each with its reason: none. (Entries are (crate, the cycle as
/// `::`-joined sibling paths, starting at its smallest module in sorted order); a stale entry
/// does not fail the test, it is reported on stderr.)
const ALLOWED: &[(&str, &[&str])] = &[];

/// A module path inside one crate (`[]` is the crate root).
type ModPath = Vec<String>;

/// One crate's modules and the names its modules import.
#[derive(Default)]
struct Crate {
    /// Modules that are files (`a.rs`, `a/mod.rs`).
    modules: BTreeSet<ModPath>,
    /// `(module, name) -> absolute path`: what a `use` (or a `#[macro_export]` macro, at the
    /// root) brings into a module's namespace.
    aliases: BTreeMap<(ModPath, String), ModPath>,
    /// `(file module, absolute path named)`, before alias resolution.
    refs: Vec<(ModPath, ModPath)>,
}

/// Source text with comments, string and char literals blanked (identifiers kept).
fn strip(src: &str) -> String {
    let b: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let next = b.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            out.push(' ');
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !prev_ident(&b, i) {
            // Raw string r"..." / r#"..."#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == '"' && (0..hashes).all(|h| b.get(j + 1 + h) == Some(&'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push_str("\"\"");
            i = j;
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                i += if b[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else if c == '\'' {
            // A char literal ('x', '\n', '\u{..}') or a lifetime ('a): only the former is skipped.
            if next == Some('\\') {
                i += 2;
                while i < b.len() && b[i] != '\'' {
                    i += 1;
                }
                i += 1;
                out.push_str("' '");
            } else if b.get(i + 2) == Some(&'\'') {
                i += 3;
                out.push_str("' '");
            } else {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn prev_ident(b: &[char], i: usize) -> bool {
    i > 0 && (b[i - 1].is_alphanumeric() || b[i - 1] == '_')
}

/// Identifiers (with a leading `$` kept), `::` and single punctuation characters.
fn tokens(src: &str) -> Vec<String> {
    let b: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_alphanumeric() || c == '_' || c == '$' {
            let s = i;
            i += 1;
            while i < b.len() && (b[i].is_alphanumeric() || b[i] == '_') {
                i += 1;
            }
            out.push(b[s..i].iter().collect());
        } else if c == ':' && b.get(i + 1) == Some(&':') {
            out.push("::".into());
            i += 2;
        } else {
            out.push(c.to_string());
            i += 1;
        }
    }
    out
}

fn is_ident(t: &str) -> bool {
    t.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
}

/// Expands a `use` tree starting at `toks[*i]` into `(path, name it binds)` pairs; stops
/// after the tree (at `;`, `,` or `}` of an enclosing group, not consumed).
fn use_tree(toks: &[String], i: &mut usize, prefix: &[String], out: &mut Vec<(ModPath, String)>) {
    let mut path = prefix.to_vec();
    loop {
        let Some(t) = toks.get(*i) else { return };
        if t == "{" {
            *i += 1;
            while toks.get(*i).is_some_and(|t| t != "}") {
                use_tree(toks, i, &path, out);
                if toks.get(*i).is_some_and(|t| t == ",") {
                    *i += 1;
                }
            }
            *i += 1;
            return;
        } else if t == "*" {
            *i += 1;
            out.push((path, "*".into()));
            return;
        } else if is_ident(t) {
            if t != "self" || path.is_empty() {
                path.push(t.clone());
            }
            *i += 1;
            if toks.get(*i).is_some_and(|t| t == "::") {
                *i += 1;
                continue;
            }
            let mut name = path.last().cloned().unwrap_or_default();
            if toks.get(*i).is_some_and(|t| t == "as") {
                name = toks.get(*i + 1).cloned().unwrap_or_default();
                *i += 2;
            }
            out.push((path, name));
            return;
        } else {
            return;
        }
    }
}

/// `path` as seen from module `cur` (`crate`/`super`/`self` resolved); `None` for a path
/// into another crate.
fn absolute(c: &Crate, cur: &[String], path: &[String]) -> Option<ModPath> {
    let first = path.first()?;
    match first.as_str() {
        "crate" | "$crate" => Some(path[1..].to_vec()),
        "self" | "super" => {
            let mut base = cur.to_vec();
            let mut k = 0;
            while let Some(seg) = path.get(k) {
                match seg.as_str() {
                    "self" => {}
                    "super" => {
                        base.pop()?;
                    }
                    _ => break,
                }
                k += 1;
            }
            base.extend_from_slice(&path[k..]);
            Some(base)
        }
        // `use child::X` inside a module names its child; anything else is another crate.
        _ => {
            let mut child = cur.to_vec();
            child.push(first.clone());
            c.modules
                .contains(&child)
                .then(|| cur.iter().chain(path).cloned().collect())
        }
    }
}

/// Reads one file of module `file_mod`: its imports into `c.aliases`, its references into
/// `c.refs`.
fn scan_file(c: &mut Crate, file_mod: &ModPath, src: &str) {
    let toks = tokens(&strip(src));
    // Inline modules (`mod tests { .. }`) as (name, brace depth inside it).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        let t = toks[i].as_str();
        let cur: ModPath = file_mod
            .iter()
            .cloned()
            .chain(inline.iter().map(|(n, _)| n.clone()))
            .collect();
        match t {
            "{" => depth += 1,
            "}" => {
                if inline.last().is_some_and(|&(_, d)| d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            "mod" if toks.get(i + 2).is_some_and(|t| t == "{") => {
                inline.push((toks[i + 1].clone(), depth + 1));
                i += 2;
                continue;
            }
            "use" => {
                let mut j = i + 1;
                let mut trees = Vec::new();
                use_tree(&toks, &mut j, &[], &mut trees);
                for (path, name) in trees {
                    if let Some(abs) = absolute(c, &cur, &path) {
                        if name != "*" && inline.is_empty() {
                            c.aliases.insert((cur.clone(), name), abs.clone());
                        }
                        c.refs.push((file_mod.clone(), abs));
                    }
                }
                i = j;
                continue;
            }
            "crate" | "$crate" | "super" | "self" if toks.get(i + 1).is_some_and(|t| t == "::") => {
                let mut path = vec![t.to_string()];
                let mut j = i + 1;
                while toks.get(j).is_some_and(|t| t == "::")
                    && toks.get(j + 1).is_some_and(|t| is_ident(t))
                {
                    path.push(toks[j + 1].clone());
                    j += 2;
                }
                if let Some(abs) = absolute(c, &cur, &path) {
                    c.refs.push((file_mod.clone(), abs));
                }
                i = j;
                continue;
            }
            "macro_export" => {
                // `#[macro_export] macro_rules! name` lives at the crate root.
                if let Some(k) = (i..toks.len().min(i + 8)).find(|&k| toks[k] == "macro_rules") {
                    if let Some(name) = toks.get(k + 2) {
                        let mut target = file_mod.clone();
                        target.push(name.clone());
                        c.aliases.insert((Vec::new(), name.clone()), target);
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
}

/// Follows imports: the module path `p` names once every `use` alias on the way is replaced
/// by what it imports (a bounded number of hops).
fn resolve(c: &Crate, mut p: ModPath) -> ModPath {
    'hops: for _ in 0..16 {
        for k in 0..p.len() {
            let (m, rest) = p.split_at(k);
            if !c.modules.contains(m) {
                break;
            }
            let name = &rest[0];
            let mut child = m.to_vec();
            child.push(name.clone());
            if c.modules.contains(&child) {
                continue;
            }
            if let Some(target) = c.aliases.get(&(m.to_vec(), name.clone())) {
                if target[..] != p[..=k] {
                    p = target.iter().chain(&rest[1..]).cloned().collect();
                    continue 'hops;
                }
            }
            break;
        }
        break;
    }
    p
}

/// Sibling edges of one crate: `parent -> (from, to)` with `from`, `to` children of
/// `parent`, as `::`-joined paths.
type Edges = BTreeMap<String, BTreeSet<(String, String)>>;

fn edges(c: &Crate) -> Edges {
    let mut out = Edges::new();
    for (from, named) in &c.refs {
        let to = resolve(c, named.clone());
        let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
        if common < from.len() && common < to.len() && c.modules.contains(&to[..=common]) {
            out.entry(from[..common].join("::"))
                .or_default()
                .insert((from[..=common].join("::"), to[..=common].join("::")));
        }
    }
    out
}

/// Every elementary cycle of a directed graph, each starting at its smallest node and
/// listed once.
fn cycles(graph: &BTreeSet<(String, String)>) -> Vec<Vec<String>> {
    let mut adj: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in graph {
        adj.entry(a).or_default().push(b);
    }
    let mut found = Vec::new();
    fn walk<'a>(
        adj: &BTreeMap<&'a str, Vec<&'a str>>,
        start: &'a str,
        path: &mut Vec<&'a str>,
        found: &mut Vec<Vec<String>>,
    ) {
        let last = *path.last().unwrap();
        for &n in adj.get(last).into_iter().flatten() {
            if n == start {
                found.push(path.iter().map(|s| s.to_string()).collect());
            } else if n > start && !path.contains(&n) && found.len() < 10_000 {
                path.push(n);
                walk(adj, start, path, found);
                path.pop();
            }
        }
    }
    for &start in adj.keys() {
        walk(&adj, start, &mut vec![start], &mut found);
    }
    found
}

/// Module path of a source file relative to `src/`.
fn module_of(rel: &Path) -> ModPath {
    let mut segs: Vec<String> = rel
        .iter()
        .map(|s| s.to_string_lossy().into_owned())
        .collect();
    let file = segs.pop().unwrap_or_default();
    let stem = file.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" && stem != "main" {
        segs.push(stem.to_string());
    }
    segs
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

fn scan_crate(src: &Path) -> Crate {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut c = Crate::default();
    let mods: Vec<(ModPath, PathBuf)> = files
        .into_iter()
        .map(|f| (module_of(f.strip_prefix(src).unwrap()), f))
        .collect();
    c.modules = mods.iter().map(|(m, _)| m.clone()).collect();
    for (m, f) in &mods {
        let text = std::fs::read_to_string(f).unwrap();
        scan_file(&mut c, m, &text);
    }
    c
}

/// The sibling edges of every crate of the workspace, keyed by crate name.
fn workspace_edges() -> BTreeMap<&'static str, Edges> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    ["tessera", "tessera-dist", "tessera-py"]
        .into_iter()
        .map(|name| (name, edges(&scan_crate(&crates.join(name).join("src")))))
        .collect()
}

#[test]
fn no_cycles_between_sibling_modules() {
    let mut bad = Vec::new();
    let mut seen_allowed = BTreeSet::new();
    for (krate, by_parent) in workspace_edges() {
        for (parent, graph) in &by_parent {
            for cycle in cycles(graph) {
                let allowed = ALLOWED
                    .iter()
                    .position(|(k, c)| *k == krate && c.iter().eq(cycle.iter()));
                match allowed {
                    Some(k) => {
                        seen_allowed.insert(k);
                    }
                    None => {
                        let (mut shown, first) = (cycle.join(" -> "), &cycle[0]);
                        shown = format!("{shown} -> {first}");
                        let at = if parent.is_empty() {
                            "crate root"
                        } else {
                            parent
                        };
                        bad.push(format!("{krate} ({at}): {shown}"));
                    }
                }
            }
        }
    }
    for (k, (krate, c)) in ALLOWED.iter().enumerate() {
        if !seen_allowed.contains(&k) {
            eprintln!("allowlisted cycle no longer present, remove it: {krate}: {c:?}");
        }
    }
    assert!(
        bad.is_empty(),
        "cycles between sibling modules (imports must go one way):\n{}",
        bad.join("\n")
    );
}

/// Prints the sibling graphs (`cargo test --test module_graph -- --nocapture print`).
#[test]
fn print_module_graph() {
    for (krate, by_parent) in workspace_edges() {
        for (parent, graph) in by_parent {
            let at = if parent.is_empty() {
                "crate root"
            } else {
                &parent
            };
            let mut lines: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
            for (a, b) in &graph {
                lines.entry(a).or_default().push(b);
            }
            for (a, bs) in lines {
                println!("{krate} ({at}): {a} -> {}", bs.join(", "));
            }
        }
    }
}

fn graph(edges: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    edges
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn cycle_finder_finds_every_elementary_cycle_once() {
    // a -> b -> c -> a and b <-> d; e hangs off without a way back.
    let g = graph(&[
        ("a", "b"),
        ("b", "c"),
        ("c", "a"),
        ("b", "d"),
        ("d", "b"),
        ("c", "e"),
    ]);
    let mut found = cycles(&g);
    found.sort();
    assert_eq!(found, vec![vec!["a", "b", "c"], vec!["b", "d"]]);
    let dag = graph(&[("a", "b"), ("b", "c"), ("a", "c")]);
    assert!(cycles(&dag).is_empty());
}

#[test]
fn scanner_resolves_paths_through_imports() {
    let mut c = Crate::default();
    let m = |s: &str| -> ModPath {
        s.split('/')
            .filter(|x| !x.is_empty())
            .map(String::from)
            .collect()
    };
    for p in ["", "a", "a/x", "a/y", "b"] {
        c.modules.insert(m(p));
    }
    scan_file(
        &mut c,
        &m(""),
        "mod a; mod b; pub use b::Thing; // crate::a::x\n",
    );
    scan_file(&mut c, &m("a"), "pub mod x; mod y; pub use y::Y;\n");
    // x names its sibling y through the parent's re-export, and the root's re-export of b.
    scan_file(
        &mut c,
        &m("a/x"),
        "use super::{Y, self as p}; use crate::{Thing, a::y::Z as W};\n\
         fn f() { let s = \"crate::b\"; let c = '{'; }\n#[cfg(test)] mod tests { use super::super::y; }",
    );
    // b names a::x in code and a through a macro of a.
    scan_file(
        &mut c,
        &m("b"),
        "fn g<'a>(v: &'a str) { crate::a::x::f(); mac!(); }\nuse crate::mac;\n",
    );
    scan_file(
        &mut c,
        &m("a/y"),
        "#[macro_export]\nmacro_rules! mac { () => {} }\n",
    );
    let e = edges(&c);
    assert_eq!(
        e.get("a").cloned().unwrap_or_default(),
        graph(&[("a::x", "a::y")])
    );
    assert_eq!(
        e.get("").cloned().unwrap_or_default(),
        graph(&[("a", "b"), ("b", "a")])
    );
    let mut found: Vec<_> = e.values().flat_map(cycles).collect();
    found.sort();
    assert_eq!(found, vec![vec!["a", "b"]]);
}
