//! The trie of one lock stripe: keyed by rank, then dims, then strides (seed 004).
//!
//! Each path from the root spells `[rank, d0, .., d(r-1), s0, .., s(r-1)]`; shapes that share
//! a prefix share the nodes of that prefix. A node at the end of a path holds a weak reference
//! to the live descriptor; the descriptor's own `Drop` removes the path again, so the trie only
//! holds shapes that some handle still uses.

use std::sync::{Arc, Weak};

/// One trie node. Children are kept sorted by key for binary search: fan-out is small for
/// real workloads and a sorted vector is compact and cache friendly.
pub(super) struct Node<V> {
    children: Vec<(i64, Node<V>)>,
    value: Option<Weak<V>>,
}

impl<V> Default for Node<V> {
    fn default() -> Self {
        Node {
            children: Vec::new(),
            value: None,
        }
    }
}

impl<V> Node<V> {
    /// Returns the live value at `key`, or stores the one `make` builds (and returns it).
    /// `make` runs only when no live value is present; it is told whether it replaces a dead
    /// value (whose `Drop` will then find the slot taken and leave it alone).
    pub(super) fn get_or_insert(
        &mut self,
        key: &[i64],
        make: impl FnOnce(bool) -> Arc<V>,
    ) -> Arc<V> {
        let mut node = self;
        for &k in key {
            let at = match node.children.binary_search_by_key(&k, |c| c.0) {
                Ok(i) => i,
                Err(i) => {
                    node.children.insert(
                        i,
                        (
                            k,
                            Node {
                                children: Vec::new(),
                                value: None,
                            },
                        ),
                    );
                    i
                }
            };
            node = &mut node.children[at].1;
        }
        if let Some(live) = node.value.as_ref().and_then(Weak::upgrade) {
            return live;
        }
        let fresh = make(node.value.is_some());
        // Replacing a dead weak reference only frees its allocation; the old value's Drop has
        // already run (or is waiting for this stripe's lock and will see it was replaced).
        node.value = Some(Arc::downgrade(&fresh));
        fresh
    }

    /// Removes the value at `key` if it is the one at `ptr`, pruning nodes left empty.
    /// Returns true if a value was removed. Iterative: keys are as long as `2 * rank + 1`,
    /// and a rank of ten thousand must not overflow the stack (docs/design.md H-rules).
    pub(super) fn remove_if_same(&mut self, key: &[i64], ptr: *const V) -> bool {
        // The child index taken at each level, found first without holding borrows.
        let mut path = Vec::with_capacity(key.len());
        let mut node: &Node<V> = self;
        for &k in key {
            let Ok(at) = node.children.binary_search_by_key(&k, |c| c.0) else {
                return false;
            };
            path.push(at);
            node = &node.children[at].1;
        }
        let same = node
            .value
            .as_ref()
            .is_some_and(|w| std::ptr::eq(w.as_ptr(), ptr));
        if !same {
            return false;
        }
        // Clear the value, then prune from the deepest level up: the deepest node on the
        // path that still has something (a value or another child) keeps its subtree, and
        // the empty chain below it is cut off at its top.
        let mut keep = 0; // depth of the node whose child at `path[keep]` is cut (0: root)
        let mut node: &mut Node<V> = self;
        for (depth, &at) in path.iter().enumerate() {
            if node.value.is_some() || node.children.len() > 1 {
                keep = depth;
            }
            node = &mut node.children[at].1;
        }
        node.value = None;
        if path.is_empty() || !node.children.is_empty() {
            return true; // the root, or a node leading to longer keys: nothing to prune
        }
        let mut node: &mut Node<V> = self;
        for &at in &path[..keep] {
            node = &mut node.children[at].1;
        }
        // Dropping the cut chain is iterative too (`Drop for Node`).
        node.children.remove(path[keep]);
        true
    }

    /// True when the node holds nothing (no value, no children).
    pub(super) fn is_empty(&self) -> bool {
        self.value.is_none() && self.children.is_empty()
    }

    /// Number of trie nodes below and including this one (for tests and diagnostics).
    pub(super) fn node_count(&self) -> usize {
        let (mut count, mut stack) = (0, vec![self]);
        while let Some(n) = stack.pop() {
            count += 1;
            stack.extend(n.children.iter().map(|c| &c.1));
        }
        count
    }
}

impl<V> Drop for Node<V> {
    /// Frees the subtree without recursion (a path is as deep as a key is long).
    fn drop(&mut self) {
        let mut stack = std::mem::take(&mut self.children);
        while let Some((_, mut n)) = stack.pop() {
            stack.append(&mut n.children);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_prefixes_and_prunes() {
        let mut root: Node<u32> = Node::default();
        let a = root.get_or_insert(&[2, 3, 4], |_| Arc::new(1));
        let b = root.get_or_insert(&[2, 3, 5], |_| Arc::new(2));
        // root -> 2 -> 3 -> {4, 5}
        assert_eq!(root.node_count(), 5);
        let again = root.get_or_insert(&[2, 3, 4], |_| Arc::new(99));
        assert!(Arc::ptr_eq(&a, &again));
        assert!(root.remove_if_same(&[2, 3, 4], Arc::as_ptr(&a)));
        assert_eq!(root.node_count(), 4);
        // A different pointer at the same key is left alone.
        assert!(!root.remove_if_same(&[2, 3, 5], Arc::as_ptr(&a)));
        assert!(root.remove_if_same(&[2, 3, 5], Arc::as_ptr(&b)));
        assert!(root.is_empty());
    }

    #[test]
    #[cfg_attr(miri, ignore)] // a hundred thousand nodes: slow under Miri
    fn keys_of_huge_rank_neither_recurse_on_removal_nor_on_drop() {
        // A rank of 50 000 spells a key of 100 001 entries: one node per entry.
        let key: Vec<i64> = (0..100_001).collect();
        let mut root: Node<u32> = Node::default();
        let a = root.get_or_insert(&key, |_| Arc::new(1));
        let b = root.get_or_insert(&key[..50_000], |_| Arc::new(2));
        assert_eq!(root.node_count(), 100_002);
        assert!(root.remove_if_same(&key, Arc::as_ptr(&a)));
        assert_eq!(root.node_count(), 50_001);
        let c = root.get_or_insert(&key, |_| Arc::new(3));
        drop(root); // the whole deep trie at once
        drop((a, b, c));
    }

    proptest::proptest! {
        /// Against a model: after inserting keys and removing some, the trie holds exactly
        /// the distinct prefixes of the keys left (plus the root).
        #[test]
        fn holds_exactly_the_prefixes_of_live_keys(
            keys in proptest::collection::btree_set(proptest::collection::vec(0i64..3, 0..5), 0..12),
            remove in proptest::collection::vec(proptest::bool::ANY, 12),
        ) {
            let keys: Vec<Vec<i64>> = keys.into_iter().collect(); // distinct keys
            let mut root: Node<u32> = Node::default();
            let vals: Vec<Arc<u32>> = keys.iter().map(|k| root.get_or_insert(k, |_| Arc::new(0))).collect();
            let mut live = std::collections::BTreeSet::new();
            for (i, k) in keys.iter().enumerate() {
                if remove[i] {
                    root.remove_if_same(k, Arc::as_ptr(&vals[i]));
                } else {
                    live.insert(k.clone());
                }
            }
            let mut prefixes = std::collections::BTreeSet::new();
            for k in &live {
                for n in 1..=k.len() {
                    prefixes.insert(k[..n].to_vec());
                }
            }
            proptest::prop_assert_eq!(root.node_count(), 1 + prefixes.len());
        }
    }

    #[test]
    fn dead_value_is_replaced() {
        let mut root: Node<u32> = Node::default();
        let a = root.get_or_insert(&[1, 7], |replaces| {
            assert!(!replaces);
            Arc::new(1)
        });
        drop(a);
        let b = root.get_or_insert(&[1, 7], |replaces| {
            assert!(replaces, "the dead value is reported");
            Arc::new(2)
        });
        assert_eq!(*b, 2);
    }
}
