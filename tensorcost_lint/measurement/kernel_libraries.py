"""Which BLAS / kernel library runs the work, with how many threads, and how to change that.

The identity goes into the evidence's `source` because a peak FLOP rate belongs to a library and
a thread count as much as to a chip: OpenBLAS's AVX2 kernels on an AVX-512 machine, or 1 thread
instead of 16, give numbers that differ by multiples. `measure` compares its own thread count with
the one recorded, since evidence taken on fewer threads does not bound a run on more.
"""

from __future__ import annotations

import ctypes
import re
from dataclasses import dataclass
from pathlib import Path


@dataclass
class KernelLibrary:
    backend: str  # numpy | torch | jax
    description: str  # "numpy 2.4.6 with OpenBLAS 0.3.31 (Haswell kernels)"
    threads: int | None  # None when it cannot be read


def _loaded_libraries(fragment: str) -> list[str]:
    try:
        lines = Path("/proc/self/maps").read_text(errors="replace").splitlines()
    except OSError:
        return []
    return sorted({line.split()[-1] for line in lines if fragment in line.lower() and "/" in line})


class _OpenBlasHandle:
    """OpenBLAS's own C entry points, found in the library numpy loaded (when threadpoolctl is not
    installed). Wheels rename the symbols (`scipy_openblas_..._64_`), so several spellings are tried."""

    PREFIXES = ("scipy_openblas_", "openblas_")
    SUFFIXES = ("64_", "")

    def __init__(self) -> None:
        self.library = None
        for path in _loaded_libraries("openblas"):
            try:
                self.library = ctypes.CDLL(path)
                break
            except OSError:
                continue

    def _symbol(self, stem: str):
        if self.library is None:
            return None
        for prefix in self.PREFIXES:
            for suffix in self.SUFFIXES:
                function = getattr(self.library, f"{prefix}{stem}{suffix}", None)
                if function is not None:
                    return function
        return None

    def text(self, stem: str) -> str | None:
        function = self._symbol(stem)
        if function is None:
            return None
        function.restype = ctypes.c_char_p
        value = function()
        return value.decode(errors="replace").strip() if value else None

    def threads(self) -> int | None:
        function = self._symbol("get_num_threads")
        return int(function()) if function is not None else None

    def set_threads(self, count: int) -> bool:
        function = self._symbol("set_num_threads")
        if function is None:
            return False
        function(ctypes.c_int(count))
        return True


def _numpy_blas_name(np) -> str:
    try:
        config = np.show_config(mode="dicts")
        blas = config["Build Dependencies"]["blas"]
        name = {"scipy-openblas": "OpenBLAS"}.get(blas.get("name", ""), blas.get("name", "BLAS"))
        version = ".".join(str(blas.get("version", "")).split(".")[:3])  # wheels append build numbers
        return f"{name} {version}".strip()
    except Exception:  # noqa: BLE001 - show_config's layout changes between numpy versions
        return "BLAS (unknown)"


def numpy_library(np, threads: int | None = None) -> KernelLibrary:
    """numpy's BLAS, after setting its thread count to `threads` when given."""
    blas = _numpy_blas_name(np)
    try:
        import threadpoolctl  # optional: the portable way (OpenBLAS, MKL, BLIS)

        if threads is not None:
            threadpoolctl.threadpool_limits(limits=threads, user_api="blas")
        infos = [i for i in threadpoolctl.threadpool_info() if i.get("user_api") == "blas"]
        if infos:
            info = infos[0]
            core = f" ({info['architecture']} kernels)" if info.get("architecture") else ""
            return KernelLibrary("numpy", f"numpy {np.__version__} with {info.get('internal_api', blas)} "
                                          f"{info.get('version', '')}{core}".replace("  ", " "),
                                 int(info.get("num_threads") or 0) or None)
    except ImportError:
        pass
    handle = _OpenBlasHandle()
    if threads is not None:
        handle.set_threads(threads)
    core = handle.text("get_corename")
    kernels = f" ({core} kernels)" if core else ""
    return KernelLibrary("numpy", f"numpy {np.__version__} with {blas}{kernels}", handle.threads())


def torch_library(torch, threads: int | None = None) -> KernelLibrary:
    if threads is not None:
        torch.set_num_threads(threads)
    shown = torch.__config__.show()
    parts = []
    blas = re.search(r"BLAS_INFO=(\w+)", shown)
    if blas:
        parts.append({"mkl": "MKL", "open": "OpenBLAS"}.get(blas.group(1), blas.group(1)))
    onednn = re.search(r"MKL-DNN v([\d.]+)", shown) or re.search(r"oneDNN v([\d.]+)", shown)
    if onednn:
        parts.append(f"oneDNN {onednn.group(1)}")
    capability = re.search(r"CPU capability usage: (\w+)", shown)
    if capability:
        parts.append(f"{capability.group(1)} kernels")
    detail = f" ({', '.join(parts)})" if parts else ""
    return KernelLibrary("torch", f"torch {torch.__version__}{detail}", torch.get_num_threads())


def torch_cuda_library(torch, device) -> KernelLibrary:
    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    name = torch.cuda.get_device_name(device)
    detail = f"CUDA {torch.version.cuda}, cuBLAS" + (f", cuDNN {cudnn}" if cudnn else "")
    return KernelLibrary("torch", f"torch {torch.__version__} ({detail}) on {name}", None)


THREADS_IN_SOURCE = re.compile(r"(\d+) threads?\b")


def threads_recorded(source: str) -> int | None:
    """The thread count `calibrate` wrote into an evidence source (None for datasheets)."""
    match = THREADS_IN_SOURCE.search(source)
    return int(match.group(1)) if match else None
