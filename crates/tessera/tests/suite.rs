//! The integration tests of `tessera` as one test binary: each file in `tests/` is a module
//! here (one link instead of one per file keeps the build small and fast). Tests that change
//! process-wide state (environment variables, the fallback counter and hook, `fork`, the
//! resident set size) stay their own binaries: see `[[test]]` in `Cargo.toml`.
//! Run one file's tests with a filter: `cargo test -p tessera --test suite arith::`.

mod io_support;
mod view_common;

mod advanced_indexing;
mod arg_extreme;
mod arith;
mod arrayfns;
mod autograd_engine;
mod borrowed_views;
mod broadcast_distinct;
mod copy_engine;
mod creation;
mod dtypes_complex;
mod dtypes_int;
mod elementwise_fns;
mod elementwise_large;
mod error_facts;
mod fft;
mod gradcheck;
mod hardening_core;
mod huge_alloc;
mod io_bad_files;
mod io_checkpoint;
mod io_npy;
mod linalg_basic;
mod linalg_factor;
mod matmul;
mod matmul_batched;
mod module_graph;
mod narrow;
mod optim;
mod printing;
mod reduce;
mod registry;
mod ring_buffer;
mod set_membership;
mod shape_cache;
mod sort_keys;
mod sparse_alloc;
mod sparse_construct;
mod sparse_constructors_fuzz;
mod sparse_grads;
mod sparse_ops;
mod sparse_shared_parts;
mod sparse_tampered;
mod vector_math;
mod vector_math_derived;
mod vector_math_trig;
mod view_edges;
mod views;
