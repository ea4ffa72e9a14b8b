"""Reading a user's file without trusting it: regular files only, never more than a cap.

A FIFO would block `read()` forever and `/dev/zero` would fill memory; both can sit in a cloned
repository under a `.py` or `.yaml` name (or be named in `evidence:`).
"""

from __future__ import annotations

import os
import stat


class NotARegularFile(OSError):
    pass


class TooLarge(OSError):
    pass


class UnusablePath(OSError):
    pass


def read_capped(path, limit: int, *, follow_symlinks: bool = True) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; OSError subclasses otherwise (a
    symlink too, when `follow_symlinks` is false)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)  # opening a FIFO must not block either
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(path, flags)
    except ValueError as error:  # a NUL byte in the name: no file can have it (an OSError, as callers expect)
        raise UnusablePath(f"unusable file name ({error})") from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise NotARegularFile(f"not a regular file ({_kind(info.st_mode)})")
        if info.st_size > limit:
            raise TooLarge(f"file larger than {limit} bytes")
        chunks, total = [], 0
        while True:
            chunk = os.read(descriptor, min(1 << 20, limit + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:  # the file grew while we read it
                raise TooLarge(f"file larger than {limit} bytes")
        return b"".join(chunks)
    finally:
        os.close(descriptor)


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory")):
        if test(mode):
            return name
    return "not a plain file"
