"""The serving process's BLAS threads (``GRAPHSVC_BLAS_THREADS``, default 1).

numpy's OpenBLAS starts a thread per core and, after each call, keeps its threads
spinning for a while in case another call follows. The head mirror's vector leg
(one matrix-vector product per search, :class:`graphsvc.core.head_mirror.HeadMirror`)
is such a call: with a request's usual gap after it, two threads spend several
times the CPU of one (docs/performance.md#search-at-10k-atoms-over-http). On two
cores the spinning thread takes the CPU that Neo4j and the other requests need, so a
serving process runs BLAS on one thread: a search waits a little longer for the
product and every other request stops paying for it.
"""

from __future__ import annotations

import contextlib

__all__ = ["limit_blas_threads"]


def limit_blas_threads(threads: int) -> bool:
    """Run this process's BLAS calls on at most ``threads`` threads (0: leave the
    library's default); True when a limit was set."""
    if threads <= 0:
        return False
    with contextlib.suppress(ImportError):
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=threads, user_api="blas")
        return True
    return False
