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
    /// Returns true if a value was removed.
    pub(super) fn remove_if_same(&mut self, key: &[i64], ptr: *const V) -> bool {
        let Some((&k, rest)) = key.split_first() else {
            let same = self
                .value
                .as_ref()
                .is_some_and(|w| std::ptr::eq(w.as_ptr(), ptr));
            if same {
                self.value = None;
            }
            return same;
        };
        let Ok(at) = self.children.binary_search_by_key(&k, |c| c.0) else {
            return false;
        };
        let child = &mut self.children[at].1;
        let removed = child.remove_if_same(rest, ptr);
        if removed && child.value.is_none() && child.children.is_empty() {
            self.children.remove(at);
        }
        removed
    }

    /// True when the node holds nothing (no value, no children).
    pub(super) fn is_empty(&self) -> bool {
        self.value.is_none() && self.children.is_empty()
    }

    /// Number of trie nodes below and including this one (for tests and diagnostics).
    pub(super) fn node_count(&self) -> usize {
        1 + self
            .children
            .iter()
            .map(|c| c.1.node_count())
            .sum::<usize>()
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
