"""D9 (issue 15): the language server under a careless or hostile client, over raw stdio frames
(what pytest-lsp's typed client cannot send): invalid params answered with -32602, an oversized
frame ends the server cleanly with a message, hover answers at once while a long lint runs, and
exit does not wait for that lint."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time

import pytest

from .conftest import clean_env

pytest.importorskip("pygls")
pytestmark = pytest.mark.slow
SMALL = '''import torch
from jaxtyping import Float
from torch import Tensor


def project(a: Float[Tensor, "n n"], b: Float[Tensor, "n n"]):
    return a @ b
'''
# Hundreds of costed functions: a lint of this document takes seconds (the "2 MB document").
SLOW = "import torch\nfrom jaxtyping import Float\nfrom torch import Tensor\n" + "".join(
    f'\n\ndef f{i}(a: Float[Tensor, "n n"], b: Float[Tensor, "n n"]):\n    c = a @ b\n'
    f'    return torch.einsum("ij,jk->ik", c, b)\n' for i in range(250))


class RawClient:
    """An LSP client at the byte level: frames written as given, every message read back."""

    def __init__(self, cwd) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tensorcost_lint.cli.main", "lsp", "--debounce", "0"], cwd=cwd,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=clean_env())
        self.messages: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.request(1, "initialize", {"processId": None, "rootUri": cwd.as_uri(), "capabilities": {}})
        self.notify("initialized", {})

    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            length = None
            while (line := stream.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not line or length is None:
                self.messages.put(None)
                return
            self.messages.put(json.loads(stream.read(length)))

    def send_bytes(self, data: bytes) -> None:
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        self.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def request(self, id_, method: str, params) -> None:
        self.send({"jsonrpc": "2.0", "id": id_, "method": method, "params": params})

    def notify(self, method: str, params) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def wait_for(self, matches, timeout: float = 30.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            message = self.messages.get(timeout=max(deadline - time.monotonic(), 0.01))
            if message is None:
                raise EOFError("the server closed its output")
            if matches(message):
                return message

    def response(self, id_, timeout: float = 30.0) -> dict:
        return self.wait_for(lambda m: m.get("id") == id_ and "method" not in m, timeout)

    def diagnostics(self, uri: str, timeout: float = 60.0) -> dict:
        def published(message) -> bool:
            return message.get("method") == "textDocument/publishDiagnostics" and message["params"]["uri"] == uri

        return self.wait_for(published, timeout)["params"]

    def open(self, path, text: str, version: int = 1) -> str:
        path.write_text(text)
        document = {"uri": path.as_uri(), "languageId": "python", "version": version, "text": text}
        self.notify("textDocument/didOpen", {"textDocument": document})
        return path.as_uri()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(10)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            stream.close()


@pytest.fixture
def repo(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "tensorcost.yaml").write_text("dims: {n: 64}\n")
    return tmp_path


@pytest.fixture
def client(repo):
    client = RawClient(repo)
    client.response(1)
    yield client
    client.close()


def test_d9_invalid_params_answered_with_32602(client, repo):
    client.request(2, "textDocument/hover", {"textDocument": 5})
    error = client.response(2, timeout=10)["error"]
    assert error["code"] == -32602
    assert error["message"].startswith("Invalid params for textDocument/hover: ")
    assert "required field missing @ $.params.position" in error["message"]
    # an invalid notification has nothing to answer; the server keeps serving
    client.notify("textDocument/didOpen", {"textDocument": None})
    uri = client.open(repo / "model.py", SMALL)
    assert client.diagnostics(uri)["diagnostics"] == []
    client.request(3, "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 6, "character": 12}})
    assert "FLOP" in client.response(3)["result"]["contents"]["value"]


def test_d9_oversized_frame_ends_the_server_cleanly_with_a_message(client):
    client.send_bytes(b"Content-Length: 99999999999\r\n\r\n{}")
    shown = client.wait_for(lambda m: m.get("method") == "window/showMessage", timeout=10)
    assert shown["params"]["type"] == 1 and "over the 128 MiB frame limit" in shown["params"]["message"]
    assert client.process.wait(10) == 1
    stderr = client.process.stderr.read().decode()
    assert stderr.strip().splitlines()[-1] == (
        "tensorcost lsp: error: a message declares Content-Length 99999999999 bytes, over the 128 MiB frame limit; "
        "the stream cannot be resynchronised; exiting so that the editor restarts the server")
    assert "MemoryError" not in stderr and "Traceback" not in stderr


def test_d9_hover_answers_from_the_last_lint_while_a_long_lint_runs(client, repo):
    uri = client.open(repo / "model.py", SMALL)
    client.diagnostics(uri)
    client.open(repo / "slow.py", SLOW)
    time.sleep(0.3)  # the long lint is running now
    # an edit below the hovered line queues a lint of model.py behind the long one
    edited = SMALL + "\n\nx = 1\n"
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                             "contentChanges": [{"text": edited}]})
    started = time.monotonic()
    client.request(2, "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 6, "character": 12}})
    hover = client.response(2)["result"]
    waited = time.monotonic() - started
    assert "FLOP" in hover["contents"]["value"]
    assert waited < 1.0, waited
    # the edited line itself has no finished lint yet: nothing, at once, rather than a wait
    client.request(3, "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 9, "character": 0}})
    assert client.response(3, timeout=1.0)["result"] is None


def test_d9_superseded_versions_are_not_published(client, repo):
    path = repo / "slow.py"
    uri = client.open(path, SLOW)
    time.sleep(0.3)
    for version in (2, 3):
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                 "contentChanges": [{"text": SLOW + "\n" * version}]})
    published = client.diagnostics(uri, timeout=120)
    assert published["version"] == 3


def test_d9_exit_does_not_wait_for_a_running_lint(client, repo):
    client.open(repo / "slow.py", SLOW)
    time.sleep(0.3)
    started = time.monotonic()
    client.request(2, "shutdown", None)
    assert client.response(2, timeout=5)["result"] is None
    client.notify("exit", None)
    assert client.process.wait(10) == 0
    assert time.monotonic() - started < 2.0
