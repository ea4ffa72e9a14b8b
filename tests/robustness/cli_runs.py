"""Running the real front ends as users do (subprocesses), with the wall time and the peak memory
of that one child, so tests can assert boundedness of what people actually run."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Run:
    returncode: int | None  # None: killed at the timeout
    stdout: str
    stderr: str
    seconds: float
    peak_mib: float

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


def clean_env(**extra) -> dict:
    env = dict(os.environ)
    env.pop("TENSORCOST_CACHE_DIR", None)
    env.update(extra)
    return env


def _limit_memory(max_bytes: int):
    def apply():  # runs in the child: a runaway read fails there instead of taking the machine down
        resource.setrlimit(resource.RLIMIT_AS, (max_bytes, max_bytes))
    return apply


# Runs a module as `python -m` would, and writes the process's own peak RSS (KiB) to a file at exit:
# stdout and stderr stay exactly what users see, and the number is this process's, not a sibling's.
# VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec, so a child forked from a test worker that
# had imported torch started at that worker's ~370 MB; VmHWM belongs to the address space exec made.
_MEASURED = (
    "import atexit, os, resource, runpy, sys\n"
    "def _hwm():\n"
    "    try:\n"
    "        with open('/proc/self/status') as status:\n"
    "            return next(int(l.split()[1]) for l in status if l.startswith('VmHWM:'))\n"
    "    except (OSError, StopIteration, ValueError):\n"
    "        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
    "def _peak():\n"
    "    with open(os.environ['TC_ROBUSTNESS_PEAK_FILE'], 'w') as f:\n"
    "        f.write(str(_hwm()))\n"
    "atexit.register(_peak)\n"
    "module = sys.argv.pop(1)\n"
    "runpy.run_module(module, run_name='__main__', alter_sys=True)\n"
)


def run_measured(module: str, args, *, cwd, timeout: float = 120, stdin: str | None = None,
                 memory_limit_mib: int = 4096, env: dict | None = None) -> Run:
    peak_file = Path(cwd if cwd is not None else ".").resolve() / f".peak-{os.getpid()}-{time.monotonic_ns()}"
    full_env = env or clean_env()
    full_env = {**full_env, "TC_ROBUSTNESS_PEAK_FILE": str(peak_file)}
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-c", _MEASURED, module, *args], cwd=cwd, env=full_env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=_limit_memory(memory_limit_mib << 20))
    try:
        stdout, stderr = process.communicate(stdin, timeout=timeout)
        returncode = process.returncode
    except subprocess.TimeoutExpired:
        process.kill()
        stdout, stderr = process.communicate()
        returncode = None
    seconds = time.perf_counter() - start
    try:
        peak_mib = int(peak_file.read_text()) / 1024
        peak_file.unlink()
    except (OSError, ValueError):
        peak_mib = float("nan")
    return Run(returncode, stdout, stderr, seconds, peak_mib)


def tensorcost(*args: str, cwd, **kwargs) -> Run:
    return run_measured("tensorcost_lint.cli.main", args, cwd=cwd, **kwargs)


def flake8(*args: str, cwd, **kwargs) -> Run:
    # --isolated: a developer's own flake8 config must not change what runs.
    return run_measured("flake8", ("--isolated", *args), cwd=cwd, **kwargs)


def assert_one_line_error(run: Run, *fragments: str) -> None:
    """Exit 2, exactly one line on stderr, no traceback, naming every fragment."""
    assert run.returncode == 2, (run.returncode, run.stdout[-2000:], run.stderr[-2000:])
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr[-3000:]
    assert "Traceback" not in run.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
