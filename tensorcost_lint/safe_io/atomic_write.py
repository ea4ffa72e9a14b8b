"""Writing a file so that readers see the old content or the new, never a torn or truncated one.

The bytes go to a fresh temporary file in the target's own directory (created with O_EXCL, so a
planted name or symlink there is never opened), and `os.replace` then swaps it in. A rename replaces
the directory entry itself: when the target is a symlink, the link is replaced, and nothing is ever
written through it to wherever it points. Whatever fails (a full disk, a file size limit, an
interrupt), the temporary file is removed and the previous content stays as it was.
"""

from __future__ import annotations

import os
import stat
import tempfile

_UMASK: list = []


def _default_mode() -> int:
    """0o666 less the process umask: what `open(path, "w")` would have given a new file."""
    if not _UMASK:
        current = os.umask(0o022)
        os.umask(current)
        _UMASK.append(current)
    return 0o666 & ~_UMASK[0]


def write_atomically(path: str | os.PathLike, data, *, mode: int | None = None) -> None:
    """Replace `path` with `data`; OSError when it cannot, with `path` untouched and no temporary
    file left behind. `mode` defaults to the existing regular file's mode, else 0o666 less umask.
    `data` is bytes, or a function that writes them to the binary stream it is given (whatever it
    raises leaves `path` as it was)."""
    path = os.fspath(path)
    directory = os.path.dirname(path) or "."
    if mode is None:
        try:
            info = os.lstat(path)
            mode = info.st_mode & 0o7777 if stat.S_ISREG(info.st_mode) else _default_mode()
        except FileNotFoundError:
            mode = _default_mode()
    handle, temporary = tempfile.mkstemp(dir=directory, prefix=".tensorcost-", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            os.fchmod(stream.fileno(), mode)
            stream.write(data) if isinstance(data, bytes) else data(stream)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
