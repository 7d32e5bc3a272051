"""A serving process runs BLAS on the threads GRAPHSVC_BLAS_THREADS allows."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from graphsvc.errors import InvalidInputError
from graphsvc.settings import Settings

_CHILD = """
import json, sys
import numpy as np
from threadpoolctl import threadpool_info
from graphsvc.http.blas_threads import limit_blas_threads
limited = limit_blas_threads(int(sys.argv[1]))
np.ones((64, 64)) @ np.ones(64)
blas = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
print(json.dumps({"limited": limited, "threads": blas}))
"""


def _child(threads: int) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(threads)], capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(out.stdout)
    return result


def test_one_thread_is_set_and_zero_leaves_the_librarys_default() -> None:
    one = _child(1)
    threads = one["threads"]
    assert one["limited"] is True and isinstance(threads, list) and set(threads) == {1}
    default = _child(0)
    assert default["limited"] is False and default["threads"]


def test_the_setting_defaults_to_one_thread() -> None:
    assert Settings.from_env({}).http.blas_threads == 1
    assert Settings.from_env({"GRAPHSVC_BLAS_THREADS": "0"}).http.blas_threads == 0
    with pytest.raises(InvalidInputError, match="GRAPHSVC_BLAS_THREADS"):
        Settings.from_env({"GRAPHSVC_BLAS_THREADS": "many"})
