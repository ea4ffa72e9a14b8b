"""What this machine is: CPU model, usable cores, free memory, last-level cache size.

Read from /proc and /sys (psutil when installed): these numbers size the calibration arrays and
the memory cap of `measure`, and name the device in the evidence it writes.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

DEFAULT_LAST_LEVEL_CACHE = 32 * 2**20  # when /sys does not say: larger than most desktop L3s


def usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.lower().startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def cpu_description() -> str:
    cpus = usable_cpus()
    hypervisor = " (virtual machine)" if _is_virtual() else ""
    return f"{cpu_model()}, {cpus} usable CPU{'s' if cpus != 1 else ''}{hypervisor}"


def _is_virtual() -> bool:
    """The `hypervisor` CPU flag: a guest's timings are noisier, which readers of evidence should know."""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith("flags"):
                return "hypervisor" in line.split()
    except OSError:
        pass
    return False


def available_memory_bytes() -> int | None:
    """Memory a new allocation can get without swapping: MemAvailable, not MemFree (which ignores
    reclaimable page cache and so understates it badly on a busy machine)."""
    try:
        import psutil  # optional

        return int(psutil.virtual_memory().available)
    except ImportError:
        pass
    try:
        for line in Path("/proc/meminfo").read_text(encoding="ascii", errors="replace").splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cache_size(text: str) -> int | None:
    text = text.strip().upper()
    scale = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1)
    digits = text[:-1] if scale != 1 else text
    try:
        return int(digits) * scale
    except ValueError:
        return None


def last_level_cache_bytes() -> int:
    """The largest CPU cache: calibration arrays must be several times larger, and `measure`
    evicts it before each timed run, so that operands really cross the DRAM boundary."""
    largest = 0
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            size = _cache_size((index / "size").read_text())
        except OSError:
            continue
        largest = max(largest, size or 0)
    return largest or DEFAULT_LAST_LEVEL_CACHE
