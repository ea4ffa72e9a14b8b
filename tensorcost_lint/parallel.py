"""`--jobs N`: lint files in N worker processes.

Workers share nothing but their inputs (file path, config overrides): no cross-file state, so the
result is the same as a serial run, in the same order. Results come back without their LibCST nodes
(they are large to pickle and only the in-process editor server needs them).
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor

_WORKER: dict = {}


def _start_worker(overrides, cache_directory) -> None:
    from .config.project_config import ConfigResolver

    _WORKER["resolver"] = ConfigResolver(overrides)
    if cache_directory is not None:
        from .cache import ResultCache

        _WORKER["cache"] = ResultCache(cache_directory)


def _lint_one(path: str):
    from .file_lint import lint_file

    result = lint_file(path, _WORKER["resolver"].for_path(path), cache=_WORKER.get("cache"))
    for site_result in result.sites:
        site_result.site.detach()  # the CST stays in the worker; position and text come along
    return result


def lint_in_parallel(files: list[str], resolver, *, cache=None, jobs: int = 2) -> list:
    cache_directory = cache.directory if cache is not None else None
    chunk = max(1, len(files) // (jobs * 8))
    with ProcessPoolExecutor(max_workers=jobs, initializer=_start_worker,
                             initargs=(resolver.overrides, cache_directory)) as pool:
        return list(pool.map(_lint_one, files, chunksize=chunk))
