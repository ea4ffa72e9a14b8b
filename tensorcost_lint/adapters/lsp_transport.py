"""The language server's stdio transport: bounded frames, answered invalid requests, prompt exit.

pygls 2 reads `Content-Length` bytes in one `read` (a header claiming 99999999999 bytes was a
MemoryError that killed the server), drops requests whose params do not validate without
answering them (the client waits forever for that id), and exits through the interpreter's
shutdown, which joins the lint thread (13-30 s behind a large document). This module replaces
those three behaviours and nothing else; messages are still handled by pygls.

Frames over MAX_FRAME_BYTES: the stream cannot be resynchronised (the declared body is either
that large or the header lies, and either way the next header's position is unknown), so the
server tells the client (window/showMessage), writes one line on stderr and exits with status 1.
Editors restart a language server that exits (VS Code up to 4 times in 3 minutes), which recovers
far better than a server blocked reading a body that never comes.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading

from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams
from pygls.io_ import StdinAsyncReader, StdoutWriter, run_async
from pygls.protocol import LanguageServerProtocol

from ..safe_io.files import MAX_SOURCE_BYTES

# A frame holds a whole document, JSON-escaped: up to twice the largest source `check` reads.
MAX_FRAME_BYTES = 2 * MAX_SOURCE_BYTES
MAX_HEADER_LINE = 1024  # `Content-Length: N` and `Content-Type: ...` are far shorter
logger = logging.getLogger(__name__)


class FrameTooLarge(Exception):
    def __init__(self, size: int) -> None:
        super().__init__(f"a message declares Content-Length {size} bytes, over the {MAX_FRAME_BYTES >> 20} MiB "
                         "frame limit; the stream cannot be resynchronised")
        self.size = size


class CappedStdinReader(StdinAsyncReader):
    """stdin with bounded reads: header lines cut at MAX_HEADER_LINE, bodies refused over MAX_FRAME_BYTES."""

    def readline(self):
        return self.loop.run_in_executor(self.executor, self.stdin.readline, MAX_HEADER_LINE)

    def readexactly(self, n: int):
        if n > MAX_FRAME_BYTES:
            raise FrameTooLarge(n)
        return super().readexactly(n)


class _Answered:
    """What a request that failed validation becomes once its error is sent: handle_message
    ignores it (its jsonrpc field is not "2.0")."""

    jsonrpc = None


class AnsweringProtocol(LanguageServerProtocol):
    """pygls' protocol, except that a request whose params do not validate gets JSON-RPC's
    -32602 (invalid params) error instead of silence. Notifications have no response to send:
    an invalid one is logged and dropped, as JSON-RPC prescribes."""

    def structure_message(self, data):
        try:
            return super().structure_message(data)
        except (JsonRpcInvalidParams, JsonRpcInternalError) as error:
            if not (isinstance(data, dict) and "method" in data and "id" in data and _valid_id(data["id"])):
                raise
            detail = _describe(error.__cause__ or error)
            code = JsonRpcInvalidParams.CODE if isinstance(error, JsonRpcInvalidParams) else JsonRpcInternalError.CODE
            message = "Invalid params" if code == JsonRpcInvalidParams.CODE else "Internal error"
            self._send_data({"jsonrpc": "2.0", "id": data["id"], "error": {
                "code": code, "message": f"{message} for {str(data['method'])[:100]}: {detail}"}})
            return _Answered()

    def handle_message(self, message):
        if isinstance(message, _Answered):
            return None
        return super().handle_message(message)


def _describe(error: BaseException) -> str:
    """cattrs' own account of what failed ("required field missing @ $.position"), one line."""
    try:
        from cattrs import transform_error

        text = "; ".join(transform_error(error, path="$"))
    except Exception:  # noqa: BLE001 - not a cattrs validation error
        text = str(error)
    return " ".join(text.split())[:300]


def _valid_id(value) -> bool:
    return type(value) in (int, str)


def serve_stdio(server, stdin=None, stdout=None) -> int:
    """Run `server` over stdio until exit, EOF or an oversized frame; returns the exit status
    (LSP: 0 after shutdown then exit, 1 otherwise) and never joins a running lint."""
    server._stop_event = stop = threading.Event()
    reader = CappedStdinReader(stdin or sys.stdin.buffer, server.thread_pool)
    server.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
    status = 0
    try:
        asyncio.run(run_async(stop_event=stop, reader=reader, protocol=server.protocol, logger=logger,
                              error_handler=server.report_server_error))
        status = 0 if server.protocol._shutdown else 1  # EOF: the client went away
    except FrameTooLarge as error:
        status = 1
        try:
            server.protocol.notify(types.WINDOW_SHOW_MESSAGE, types.ShowMessageParams(
                type=types.MessageType.Error, message=f"tensorcost lsp: {error}; restarting the server"))
        except Exception:  # noqa: BLE001 - the client may be gone already
            pass
        print(f"tensorcost lsp: error: {error}; exiting so that the editor restarts the server", file=sys.stderr)
    except SystemExit as exit_:  # the `exit` notification
        status = exit_.code if isinstance(exit_.code, int) else 1
    except (KeyboardInterrupt, BrokenPipeError):
        status = 1
    return status


def exit_now(status: int) -> None:
    """Leave without joining the lint thread: a lint of a large document may run for seconds more,
    and its result is no longer wanted. Output is flushed first."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)
