"""A catalogue of bad inputs from Python (issue 15), each run in a fresh interpreter so that an
abort (a Rust `abort` on a failed allocation, a panic across a thread, a signal) or a hang is
a test failure instead of a lost test run.

Each case is a snippet run as the body of a function in `python -c`; the harness prints the
name of the exception it raised (`none` when it returned) and the names of that exception's
classes (so NumPy's `AxisError` counts as a `ValueError` and as an `IndexError`). The test
passes when the interpreter exits normally, within the time limit, having raised one of the
expected exceptions. The expectations are NumPy's for the same input where NumPy has one:
`MemoryError` when an allocation fails, `ValueError` for bad shapes and values (a size that
does not fit is NumPy's "array is too big" `ValueError`), `TypeError` for wrong types,
`IndexError` for bad indices (also for an integer index beyond the index range, as Python's
lists do, where NumPy says `OverflowError`).
"""

import os
import signal
import subprocess
import sys
import textwrap

import pytest

# Seconds a case may take (an import of numpy and tessera is ~0.3 s of it).
TIMEOUT = 8

HARNESS = """\
import os, signal, sys, threading, time
import numpy as np
import tessera as ts


def _wait_child(pid, seconds=5):
    # Waits for a forked child; a hang past the deadline kills it and fails the case.
    deadline = time.monotonic() + seconds
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise TimeoutError("the forked child hung")
        time.sleep(0.02)
    assert os.waitstatus_to_exitcode(status) == 0, os.waitstatus_to_exitcode(status)


def _case():
{body}


try:
    _case()
except BaseException as e:
    names = " ".join(c.__name__ for c in type(e).__mro__)
    print("RAISED", names, "|", str(e)[:300].replace(chr(10), " "), flush=True)
else:
    print("RAISED none |", flush=True)
"""

NONE = "none"

# (id, expected exception name or tuple of names, snippet).
CASES = [
    # Huge shapes: sizes that do not fit (ValueError) and allocations that fail (MemoryError).
    ("zeros 2^40 x 2^40", "ValueError", "ts.zeros((2**40, 2**40))"),
    ("empty 2^62", "ValueError", "ts.empty(2**62)"),
    ("empty (0, 2^60) bool", NONE, "assert ts.empty((0, 2**60), dtype=ts.bool).shape == (0, 2**60)"),
    ("empty 2^40 (8 TiB)", "MemoryError", "ts.empty(2**40)"),
    ("ones 2^20 x 2^20 (8 TiB)", "MemoryError", "ts.ones((2**20, 2**20))"),
    ("full 2^40", "MemoryError", "ts.full(2**40, 1.5)"),
    ("arange 2^62", "ValueError", "ts.arange(2**62)"),
    ("arange 2^40", "MemoryError", "ts.arange(2**40)"),
    ("expand to 2^40 x 2^40", "ValueError", "ts.zeros(1).expand(2**40, 2**40)"),
    ("broadcast_to 2^40 x 2^40", "ValueError", "ts.zeros(1).broadcast_to((2**40, 2**40))"),
    ("broadcast_to 2^20 x 2^20 then copy", "MemoryError",
     "ts.zeros(1).broadcast_to((2**20, 2**20)).copy()"),
    ("reshape into 2^40 x 2^40", "ValueError", "ts.zeros(4).reshape(2**40, 2**40)"),
    ("repeat 2^40 x 2^40", "ValueError", "ts.zeros(2).repeat(2**40, 2**40)"),
    ("tile 2^20 x 2^20", "MemoryError", "ts.zeros(2).tile((2**20, 2**20))"),
    ("broadcast 2^20 x 2^20 + 1", "MemoryError",
     "ts.zeros(1).broadcast_to((2**20, 2**20)) + 1.0"),
    ("reduce (0, 2^40) over axis 0", "MemoryError", "ts.zeros((0, 2**40)).sum(axis=0)"),
    ("ring buffer 2 x 2^61", "ValueError", "ts.RingBuffer((2, 2**61), 0, 2)"),
    ("ring buffer 4 x 2^40", "MemoryError", "ts.RingBuffer((4, 2**40), 0, 2)"),
    ("dot 0 x (0, 2^40)", "MemoryError", "ts.ops.dot(ts.zeros(0), ts.zeros((0, 2**40)))"),
    # Negative and zero dims.
    # Linear algebra: results sized past memory, non-finite input to the iterative solvers.
    ("linalg svd of (0, 2^40): Vh does not fit", "ValueError",
     "ts.linalg.svd(ts.zeros((0, 2**40)))"),
    ("linalg svd of (0, 2^20): Vh 8 TiB", "MemoryError", "ts.linalg.svd(ts.zeros((0, 2**20)))"),
    ("linalg complete qr of (2^20, 0)", "MemoryError",
     "ts.linalg.qr(ts.zeros((2**20, 0)), mode='complete')"),
    ("linalg inv of a broadcast 2^40 stack", "MemoryError",
     "ts.linalg.inv(ts.broadcast_to(ts.eye(4), (2**40, 4, 4)))"),
    ("linalg solve broadcast to 2^40 right-hand sides", "MemoryError",
     "ts.linalg.solve(ts.eye(4), ts.broadcast_to(ts.ones((4, 1)), (2**40, 4, 1)))"),
    ("linalg svd of NaN", "LinAlgError", "ts.linalg.svd(ts.full((3, 3), float('nan')))"),
    ("linalg eigh of inf", "LinAlgError", "ts.linalg.eigh(ts.full((3, 3), float('inf')))"),
    ("linalg cholesky of NaN", "LinAlgError", "ts.linalg.cholesky(ts.full((2, 2), float('nan')))"),
    ("linalg det of a vector", "ValueError", "ts.linalg.det(ts.ones(3))"),
    ("linalg matrix_power -2^63", "LinAlgError",
     "ts.linalg.matrix_power(ts.zeros((2, 2)), -(2**63))"),
    ("zeros negative dim", "ValueError", "ts.zeros((-1, 2))"),
    ("empty negative size", "ValueError", "ts.empty(-5)"),
    ("zeros -2^63 dim", "ValueError", "ts.zeros((-(2**63), 2))"),
    ("zeros 2^64", "ValueError", "ts.zeros(2**64)"),
    ("zeros (2^63, 2)", "ValueError", "ts.zeros((2**63, 2))"),
    ("expand to 2^61 (bytes past isize)", NONE, """
        v = ts.zeros(1).expand(2**61)
        assert v.size == 2**61 and v.nbytes == 2**64
    """),
    ("NumPy export of 2^61 x float64", "ValueError", "np.asarray(ts.zeros(1).expand(2**61))"),
    ("reshape -1, 0 of an empty tensor", "ValueError", "ts.zeros(0).reshape(-1, 0)"),
    ("reshape two unknown dims", "ValueError", "ts.zeros(4).reshape(-1, -1)"),
    ("reshape negative", "ValueError", "ts.zeros(4).reshape(-2, -2)"),
    ("repeat negative count", "ValueError", "ts.zeros(2).repeat(-1)"),
    ("tile negative reps", "ValueError", "ts.zeros(2).tile(-1)"),
    ("expand negative size", "ValueError", "ts.zeros(1).expand(-2)"),
    ("broadcast_to negative", "ValueError", "ts.zeros(1).broadcast_to((-1,))"),
    ("max of an empty tensor", "ValueError", "ts.zeros((3, 0)).max()"),
    ("zero-size ops", NONE, """
        z = ts.zeros((0, 3))
        assert (z + 1).shape == (0, 3) and z.sum().item() == 0.0
        assert z.T.copy().shape == (3, 0) and z.reshape(3, 0, 5).shape == (3, 0, 5)
        assert z[::-1].shape == (0, 3) and z.sum(axis=0).tolist() == [0.0] * 3
    """),
    ("ring buffer negative length", ("ValueError", "OverflowError"),
     "ts.RingBuffer((2, 3), 0, -1)"),
    # Wrong dtypes and dtype names.
    ("dtype name unknown", "TypeError", "ts.zeros(3, dtype='nope')"),
    ("dtype float128", "TypeError", "ts.zeros(3, dtype='float128')"),
    ("dtype clongdouble", "TypeError", "ts.zeros(3, dtype='clongdouble')"),
    ("dtype a float", "TypeError", "ts.zeros(3, dtype=3.5)"),
    ("shape a float", "TypeError", "ts.zeros(3.0)"),
    ("shape a string", "TypeError", "ts.zeros('abc')"),
    ("shape a list of floats", "TypeError", "ts.zeros([2.0, 3.0])"),
    ("asarray clongdouble", "TypeError", "ts.asarray(np.zeros(3, np.clongdouble))"),
    ("asarray strings", "TypeError", "ts.asarray(np.array(['a', 'b']))"),
    ("asarray objects", "TypeError", "ts.asarray([object()])"),
    ("asarray longdouble without a target", "TypeError", "ts.asarray(np.zeros(3, np.longdouble))"),
    ("asarray ragged", "ValueError", "ts.asarray([[1], [1, 2]])"),
    ("astype to a string dtype", "TypeError", "ts.zeros(3).astype('U1')"),
    ("dtype() of garbage", "TypeError", "ts.dtype(object())"),
    ("bfloat16 to NumPy", "TypeError", "np.asarray(ts.zeros(3, dtype=ts.bfloat16))"),
    # Invalid bools (bytes other than 0 and 1 in NumPy bool memory): normalised to 0/1, as
    # NumPy's own casts do; never read as Rust bools.
    ("invalid bools from frombuffer", NONE, """
        a = np.frombuffer(b"\\x00\\x02\\xff\\x01", np.bool_)
        t = ts.asarray(a)
        assert np.asarray(t).view(np.uint8).tolist() == [0, 1, 1, 1]
        assert t.astype(ts.uint8).tolist() == a.astype(np.uint8).tolist() == [0, 1, 1, 1]
        assert t.sum().item() == int(a.sum()) == 3
        assert (t == True).tolist() == [False, True, True, True]
    """),
    ("invalid bools strided and reversed", NONE, """
        a = np.frombuffer(bytes(range(0, 256, 5)), np.bool_)[::-3]
        t = ts.asarray(a)
        assert np.asarray(t).view(np.uint8).tolist() == a.astype(np.uint8).tolist()
    """),
    ("invalid bools written by setitem", NONE, """
        t = ts.zeros(4, dtype=ts.bool)
        t[:] = np.frombuffer(b"\\x07\\x00\\x80\\x01", np.bool_)
        t2 = ts.zeros(4)
        t2[:] = np.frombuffer(b"\\x07\\x00\\x80\\x01", np.bool_)
        assert np.asarray(t).view(np.uint8).tolist() == [1, 0, 1, 1]
        assert t2.tolist() == [1.0, 0.0, 1.0, 1.0]
    """),
    ("invalid bools from a buffer and a 0-d array", NONE, """
        m = memoryview(bytearray(b"\\x00\\x05")).cast("?")
        t = ts.asarray(m)
        assert np.asarray(t).view(np.uint8).tolist() == [0, 1]
        s = ts.full(2, np.frombuffer(b"\\x09", np.bool_).reshape(()))
        assert np.asarray(s).view(np.uint8).tolist() == [1, 1]
    """),
    ("invalid bools as csr data", NONE, """
        d = np.frombuffer(b"\\x02\\x03", np.bool_)
        s = ts.sparse.csr_matrix((d, [0, 1], [0, 1, 2]), shape=(2, 2))
        assert np.asarray(s.todense()).view(np.uint8).tolist() == [[1, 0], [0, 1]]
    """),
    # A bool tensor's NumPy export is read-only (H7): bytes other than 0 and 1 cannot reach
    # the core's bool storage through it, and the flag cannot be turned back on.
    ("invalid bools written through the NumPy export", "ValueError", """
        t = ts.zeros(3, dtype=ts.bool)
        a = np.asarray(t)
        assert not a.flags.writeable and a.tolist() == [False] * 3
        try:
            a.flags.writeable = True
        except ValueError:
            pass
        else:
            raise AssertionError("the read-only flag of a bool export was turned off")
        a.view(np.uint8)[:] = [0, 2, 255]
    """),
    ("bool export stays zero-copy and sees writes made through the tensor", NONE, """
        t = ts.zeros(3, dtype=ts.bool)
        a = np.asarray(t)
        t[1] = True
        assert a.tolist() == [False, True, False]
        f = np.asarray(ts.zeros(2))
        assert f.flags.writeable
    """),
    # Sparse parts tampered with: checked constructors raise ValueError (TypeError for
    # non-integer index arrays), kernels on parts written later raise ValueError.
    ("csr column index out of range", "ValueError",
     "ts.sparse.csr_matrix((np.ones(1), [5], [0, 1, 1]), shape=(2, 3))"),
    ("csr column index 2^62", "ValueError",
     "ts.sparse.csr_matrix((np.ones(1), np.array([2**62]), np.array([0, 1])), shape=(1, 3))"),
    ("csr negative column index", "ValueError",
     "ts.sparse.csr_matrix((np.ones(1), [-1], [0, 1, 1]), shape=(2, 3))"),
    ("csr indptr not monotone", "ValueError",
     "ts.sparse.csr_matrix((np.ones(2), [0, 1], [0, 2, 1]), shape=(2, 3))"),
    ("csr indptr huge", "ValueError",
     "ts.sparse.csr_matrix((np.ones(2), [0, 1], np.array([0, 2**62, 2])), shape=(2, 3))"),
    ("csr indptr not from 0", "ValueError",
     "ts.sparse.csr_matrix((np.ones(2), [0, 1], [1, 2, 2]), shape=(2, 3))"),
    ("csr indptr too short", "ValueError",
     "ts.sparse.csr_matrix((np.ones(2), [0, 1], [0, 2]), shape=(2, 3))"),
    ("csr indptr too long", "ValueError",
     "ts.sparse.csr_matrix((np.ones(2), [0, 1], [0, 1, 2, 2]), shape=(2, 3))"),
    ("csr indptr empty", "ValueError",
     "ts.sparse.csr_matrix((np.ones(0), [], []), shape=(2, 3))"),
    ("csr data too short", "ValueError",
     "ts.sparse.csr_matrix((np.ones(1), [0, 1], [0, 1, 2]), shape=(2, 3))"),
    ("csr data 2-D", "ValueError",
     "ts.sparse.csr_matrix((np.ones((2, 1)), [0, 1], [0, 1, 2]), shape=(2, 3))"),
    ("csr float indices", "TypeError",
     "ts.sparse.csr_matrix((np.ones(1), np.array([0.0]), [0, 1]), shape=(1, 2))"),
    ("csr 3-D shape", "ValueError",
     "ts.sparse.csr_matrix((np.ones(1), [0], [0, 1]), shape=(1, 2, 3))"),
    ("csr negative shape", "ValueError",
     "ts.sparse.csr_matrix((np.ones(0), [], [0]), shape=(-1, 3))"),
    ("csr 2^40 rows", "ValueError",
     "ts.sparse.csr_matrix((np.ones(0), [], [0, 0]), shape=(2**40, 3))"),
    ("row_sparse id out of range", "ValueError",
     "ts.sparse.row_sparse_array((np.ones((1, 2)), [4]), shape=(4, 2))"),
    ("row_sparse ids unsorted", "ValueError",
     "ts.sparse.row_sparse_array((np.ones((2, 2)), [2, 1]), shape=(4, 2))"),
    ("row_sparse block shape wrong", "ValueError",
     "ts.sparse.row_sparse_array((np.ones((2, 3)), [0, 1]), shape=(4, 2))"),
    ("row_sparse id 2^63 - 1", "ValueError",
     "ts.sparse.row_sparse_array((np.ones((1, 2)), np.array([2**63 - 1])), shape=(4, 2))"),
    ("csr parts written later: column 2^31 - 1", "ValueError", """
        s = ts.sparse.csr_matrix((np.ones(2), [0, 2], [0, 1, 2]), shape=(2, 3))
        np.asarray(s.sparse_parts()[1])[1] = 2**31 - 1
        s * ts.ones((2, 3))
    """),
    ("csr parts written later: indptr -2^31", "ValueError", """
        s = ts.sparse.csr_matrix((np.ones(2), [0, 2], [0, 1, 2]), shape=(2, 3))
        np.asarray(s.sparse_parts()[2])[1] = -(2**31)
        ts.sparse.dot(s, ts.ones(3))
    """),
    ("csr parts written later: printed", NONE, """
        s = ts.sparse.csr_matrix((np.ones(2), [0, 2], [0, 1, 2]), shape=(2, 3))
        np.asarray(s.sparse_parts()[2])[2] = 2**31 - 1
        assert "no longer valid" in repr(s) and "no longer valid" in str(s)
    """),
    ("csr_rows out of range", "IndexError",
     "ts.asarray(np.eye(3)).tostype('csr').csr_rows(2, 1)"),
    ("csr_rows negative", "OverflowError",
     "ts.asarray(np.eye(3)).tostype('csr').csr_rows(-1, 2)"),
    ("retain ids out of range", NONE, """
        r = ts.asarray(np.eye(3)).tostype('row_sparse')
        for ids in ([7], [-1], [2**63 - 1], [-(2**63)]):  # not stored: nothing is kept
            assert r.retain(ids).sparse_parts()[1].tolist() == []
    """),
    ("tostype unknown", "ValueError", "ts.zeros((2, 2)).tostype('coo')"),
    ("tostype csr of 3-D", "ValueError", "ts.zeros((2, 2, 2)).tostype('csr')"),
    # A 1 x 2^40 empty CSR matrix: printing and densifying must not abort.
    ("print 1 x 2^40 empty csr", (NONE, "MemoryError"), """
        s = ts.sparse.csr_matrix((np.zeros(0), [], [0, 0]), shape=(1, 2**40))
        print(s)
        print(repr(s))
    """),
    ("densify 1 x 2^40 empty csr", "MemoryError", """
        s = ts.sparse.csr_matrix((np.zeros(0), [], [0, 0]), shape=(1, 2**40))
        s.todense()
    """),
    ("densify 1 x 2^62 empty csr", "ValueError", """
        s = ts.sparse.csr_matrix((np.zeros(0), [], [0, 0]), shape=(1, 2**62))
        s.todense()
    """),
    ("csr.T @ dense with 2^40 columns", (NONE, "MemoryError"), """
        s = ts.sparse.csr_matrix((np.zeros(0), [], [0, 0]), shape=(1, 2**40))
        ts.sparse.dot(s, ts.ones((1, 1)), transpose_a=True)
    """),
    ("densify 2^20 x 2^20 empty row_sparse", "MemoryError", """
        r = ts.sparse.row_sparse_array((np.zeros((0, 2**20)), []), shape=(2**20, 2**20))
        r.todense()
    """),
    # Indexing extremes (NumPy's results; Python's IndexError for ints past the index range).
    ("slice step -2^63", NONE, """
        a = np.arange(5)
        assert ts.asarray(a)[::-(2**63)].tolist() == a[::-(2**63)].tolist() == [4]
    """),
    ("slice step 2^63 and bounds +-2^63", NONE, """
        a, t = np.arange(5), ts.arange(5)
        assert t[::2**63].tolist() == a[::2**63].tolist()
        assert t[-(2**63):2**63].tolist() == a[-(2**63):2**63].tolist()
        assert t[2**63:-(2**63):-1].tolist() == a[2**63:-(2**63):-1].tolist()
        assert t[-(2**63)::-(2**63)].tolist() == a[-(2**63)::-(2**63)].tolist()
        assert t[2**100::-(2**100)].tolist() == a[2**100::-(2**100)].tolist()
    """),
    ("slice step 0", "ValueError", "ts.arange(5)[::0]"),
    ("index 2^63", "IndexError", "ts.arange(5)[2**63]"),
    ("index -2^63", "IndexError", "ts.arange(5)[-(2**63)]"),
    ("index 2^63 - 1", "IndexError", "ts.arange(5)[2**63 - 1]"),
    ("index np.int64 min", "IndexError", "ts.arange(5)[np.int64(-(2**63))]"),
    ("two ellipses", "IndexError", "ts.zeros((2, 3))[..., None, ...]"),
    ("too many indices", "IndexError", "ts.zeros((2, 3))[0, 0, 0]"),
    ("index into 0-d", "IndexError", "ts.zeros(())[0]"),
    # NumPy stops at 64 dims (IndexError); Tessera has no rank limit.
    ("10000 new axes", NONE, """
        v = ts.zeros(2)[(None,) * 10000]
        assert v.ndim == 10001 and (v + 1).sum().item() == 2.0
    """),
    # The shape cache's trie holds a path as long as 2 * rank + 1: freeing it must not recurse.
    ("100000 new axes, freed", NONE, """
        v = ts.zeros(2)[(None,) * 100000]
        assert v.ndim == 100001
        del v
        for n in range(3, 600):  # other shapes evict the retained descriptor: it is freed
            ts.zeros(n)[None]
    """),
    ("float index", "IndexError", "ts.zeros(2)[1.5]"),
    ("float array index", "IndexError", "ts.zeros(2)[np.array([0.0])]"),
    ("array index out of range", "IndexError", "ts.zeros(2)[np.array([2])]"),
    ("array index 2^63", "IndexError", "ts.zeros(2)[[2**63]]"),
    ("mask of the wrong shape", "IndexError", "ts.zeros(2)[np.array([True])]"),
    ("take out of range", "IndexError", "ts.take(ts.zeros(2), ts.asarray([-3]))"),
    ("setitem at 2^63", "IndexError", "ts.zeros(2).__setitem__(2**63, 1.0)"),
    ("setitem int64 with 2^70", "OverflowError", "ts.zeros(2, dtype=ts.int64)[:] = 2**70"),
    ("setitem shape mismatch", "ValueError", "ts.zeros((2, 3))[:] = ts.zeros(4)"),
    ("create_view garbage", "ValueError", "ts.create_view(ts.zeros(3), [2**62, -1, 2**62])"),
    ("create_view huge count", "ValueError",
     "ts.create_view(ts.zeros(3), [1, 2**62, 0, 1])"),
    ("unsqueeze 2^62", "IndexError", "ts.zeros(2).unsqueeze(2**62)"),
    ("permute repeated axis", "ValueError", "ts.zeros((2, 3)).permute(0, 0)"),
    ("sum over axis 2^62", "IndexError", "ts.zeros(2).sum(axis=2**62)"),
    # NaN (and infinite) parameters to ops taking scalars.
    ("arange to NaN", "ValueError", "ts.arange(0, float('nan'))"),
    ("arange to inf", "ValueError", "ts.arange(0, float('inf'))"),
    ("arange step NaN", "ValueError", "ts.arange(0.0, 1.0, float('nan'))"),
    ("arange step 0", ("ValueError", "ZeroDivisionError"), "ts.arange(0, 10, 0)"),
    ("full NaN", NONE, "assert np.isnan(ts.full(3, float('nan')).tolist()).all()"),
    ("quadratic NaN coefficients", NONE, """
        y = ts.ops.quadratic(ts.ones(3), a=float('nan'), b=1.0, c=float('inf'))
        assert np.isnan(np.asarray(y)).all()
    """),
    ("add_scalar NaN on csr", NONE, """
        s = ts.asarray(np.eye(2)).tostype('csr')
        y = ts.invoke('add_scalar', s, scalar=float('nan'))
        assert np.isnan(np.asarray(y)).all()
    """),
    ("NaN for an int parameter", "ValueError", "ts.ops.tile(ts.ones(2), reps=float('nan'))"),
    ("NaN for a bool parameter", "ValueError",
     "ts.invoke('dot', ts.ones(2), ts.ones(2), transpose_a=float('nan'))"),
    ("NaN as an axis", "TypeError", "ts.ones(2).sum(axis=float('nan'))"),
    ("NaN as a shape", "TypeError", "ts.zeros(float('nan'))"),
    ("NaN into an int tensor", NONE, """
        t = ts.zeros(2, dtype=ts.int32)
        t[:] = ts.full(2, float('nan'))
        assert t.tolist() == [0, 0]
    """),
    # Shared index buffers under a concurrent writer: a CSR matrix whose indptr, indices and
    # data are views of one int32 tensor, read by sparse kernels (GIL released) while another
    # thread writes into an unused element of that tensor (a write lock on the storage).
    ("shared csr parts under a concurrent writer", NONE, """
        n = 182  # n * n > 2**15: the operators release the GIL
        off = 3 * n + 2  # [indptr | indices | data | scratch | dense operand]
        base = ts.zeros(off + n * n, dtype=ts.int32)
        b = np.asarray(base)
        b[: n + 1] = np.arange(n + 1)
        b[n + 1 : 2 * n + 1] = np.arange(n)
        b[2 * n + 1 : 3 * n + 1] = 2
        b[off:] = 1
        s = ts.sparse.csr_matrix(
            (base[2 * n + 1 : 3 * n + 1], base[n + 1 : 2 * n + 1], base[: n + 1]), shape=(n, n))
        dense = base[off:].reshape(n, n)
        data, indices, indptr = s.sparse_parts()
        assert indices.shares_storage(base) and indptr.shares_storage(base)
        assert data.shares_storage(base) and dense.shares_storage(base)
        want = 2 * np.eye(n, dtype=np.int32)
        stop = time.monotonic() + 2
        errors, reads, writes = [], [0], [0]

        def reader():
            try:
                while time.monotonic() < stop:  # short kernels in a tight loop
                    s * dense
                    reads[0] += 1
                assert (np.asarray(s * dense) == want).all()
                assert (np.asarray(s + s) == 2 * want).all()
                assert (np.asarray(ts.sparse.dot(s, dense)) == 2).all()
            except BaseException as e:
                errors.append(e)

        def writer():  # a write lock on the shared storage, outside the parts
            while time.monotonic() < stop:
                base[3 * n + 1] = writes[0]
                writes[0] += 1

        threads = [threading.Thread(target=reader) for _ in range(4)]
        threads.append(threading.Thread(target=writer))
        for th in threads:
            th.start()
        for th in threads:
            th.join(5)
        assert not any(th.is_alive() for th in threads), "a thread is stuck"
        if errors:
            raise errors[0]
        assert reads[0] > 0 and writes[0] > 0
    """),
    # fork after the kernel pool ran in the parent, then large ops (>= 1 << 20 elements, so
    # the pool is used) in the child; the parent waits with a deadline.
    ("fork then compute", NONE, """
        x = ts.ones(1 << 21)
        assert (x * 2).sum().item() == 2.0 * (1 << 21)
        pid = os.fork()
        if pid == 0:
            try:
                ok = (x * 3).sum().item() == 3.0 * (1 << 21)
                ok = ok and (x + x).copy().astype(ts.float32).max().item() == 2.0
            except BaseException:
                os._exit(2)
            os._exit(0 if ok else 1)
        _wait_child(pid)
    """),
    # faer runs a large factorization on rayon's pool: in a forked child it must run
    # sequentially (the at-fork handler), else the child waits for threads it does not have.
    ("fork then linalg", NONE, """
        a = ts.asarray(np.eye(600) * 3 + np.random.default_rng(0).random((600, 600)))
        ts.linalg.svd(a)
        pid = os.fork()
        if pid == 0:
            try:
                s = ts.linalg.svdvals(a)
                x = ts.linalg.solve(a, ts.ones(600))
                ok = s.shape == (600,) and float(ts.max(ts.abs(a @ x - 1))) < 1e-8
                ok = ok and ts.linalg.det(ts.broadcast_to(ts.eye(8), (64, 8, 8))).shape == (64,)
            except BaseException:
                os._exit(2)
            os._exit(0 if ok else 1)
        _wait_child(pid)
    """),
    ("fork then sparse and reduction", NONE, """
        a = ts.ones((1 << 10, 1 << 10))
        a.sum(axis=0)
        pid = os.fork()
        if pid == 0:
            try:
                ok = a.sum(axis=1).tolist() == [1024.0] * 1024
                s = (a * 2).tostype('csr')
                ok = ok and (s * a).sum().item() == 2.0 * (1 << 20)
            except BaseException:
                os._exit(2)
            os._exit(0 if ok else 1)
        _wait_child(pid)
    """),
]


def _ends(text):
    """The start (the abort or panic message) and the end of a long stderr."""
    return text if len(text) <= 3000 else f"{text[:1500]}\n[...]\n{text[-1500:]}"


def _outcome(code):
    """(the exception's message or what went wrong, the names of the exception's classes
    (`["none"]` when the snippet returned; None when the interpreter did not exit normally),
    the ends of stdout and stderr) of running `code`."""
    body = textwrap.indent(textwrap.dedent(code).strip() + "\n", "    ")
    script = HARNESS.format(body=body)
    env = dict(os.environ, TESSERA_STORAGE_FALLBACK_LOG_VERBOSE="0")
    # A session of its own, so that a hung case is killed with any child it forked.
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        stdout, stderr = p.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        stdout, stderr = p.communicate()
        return f"timed out after {TIMEOUT} s (a hang)", None, (stdout[-2000:], _ends(stderr))
    out = stdout[-2000:], _ends(stderr)
    if p.returncode < 0:
        return f"killed by signal {-p.returncode} (an abort or crash)", None, out
    lines = [ln for ln in stdout.splitlines() if ln.startswith("RAISED ")]
    if p.returncode != 0 or not lines:
        return f"exit status {p.returncode} without a result", None, out
    names, message = lines[-1][len("RAISED "):].split("|", 1)
    return message.strip(), names.split(), out


# Known open defects: strict xfails, so the suite says when one is fixed. None are open.
KNOWN_OPEN: dict = {}


def _param(case_id, expected, code):
    marks = ()
    if case_id in KNOWN_OPEN:
        marks = pytest.mark.xfail(reason=KNOWN_OPEN[case_id], strict=True)
    return pytest.param(expected, code, id=case_id, marks=marks)


@pytest.mark.parametrize("expected,code", [_param(i, e, c) for i, e, c in CASES])
def test_bad_input(expected, code):
    status, names, (out, err) = _outcome(code)
    expected = (expected,) if isinstance(expected, str) else expected
    assert names is not None, f"{status}\nstdout: {out}\nstderr: {err}"
    assert any(e in names for e in expected), (
        f"raised {names[0]} ({status!r}; classes {names}), expected one of {expected}\n"
        f"stdout: {out}\nstderr: {err}")
