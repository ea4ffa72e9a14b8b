"""The language server never runs what it analyses: `tensorcost lsp` (the console script) over
stdio, driven by pytest-lsp as an editor would: initialize, open the trapped model, diagnostics,
hover on the matmul, hover on the eval-bait annotation, shutdown."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from .booby_trapped_repo import build, fired
from .cli_runs import clean_env

pytestmark = pytest.mark.slow
TIMEOUT = 30


@pytest.fixture
def trapped(tmp_path):
    repo, sentinels = tmp_path / "repo", tmp_path / "sentinels"
    build(repo, sentinels)
    return repo, sentinels


@pytest_lsp.fixture(config=ClientServerConfig(
    server_command=[str(Path(sys.executable).parent / "tensorcost"), "lsp", "--debounce", "0"],
    server_env=clean_env()))
async def client(lsp_client: LanguageClient, trapped):
    repo, _ = trapped
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=repo.as_uri()))
    yield
    await lsp_client.shutdown_session()


async def _diagnostics(client: LanguageClient, uri: str):
    async def wait():
        while True:
            params = await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
            if params.uri == uri:
                return params

    return await asyncio.wait_for(wait(), TIMEOUT)


def _line_of(text: str, fragment: str) -> tuple[int, int]:
    for number, line in enumerate(text.splitlines()):
        if fragment in line:
            return number, line.index(fragment)
    raise AssertionError(fragment)


@pytest.mark.asyncio
async def test_open_and_hover_run_nothing(client: LanguageClient, trapped):
    repo, sentinels = trapped
    path = repo / "pkg" / "model.py"
    text = path.read_text()
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=text)))
    diagnostics = await _diagnostics(client, uri)
    assert "TCL401" in {d.code for d in diagnostics.diagnostics}  # analysed, statically
    line, column = _line_of(text, "q @ k")
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=column + 2)))
    assert hover is not None and "FLOP" in hover.contents.value
    for fragment in ("__import__('os').system", "Evil", "attention"):  # hovers over the bait itself
        line, column = _line_of(text, fragment)
        await client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=column)))
    for name in ("conftest.py", "setup.py", "pkg/__init__.py"):  # other trapped files, opened too
        other = repo / name
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=other.as_uri(), language_id="python", version=1, text=other.read_text())))
        await _diagnostics(client, other.as_uri())
    assert fired(sentinels) == []


@pytest.mark.asyncio
async def test_hostile_documents_do_not_take_the_server_down(client: LanguageClient, trapped):
    """Every keystroke reaches the server: a 10,000-deep expression, a megabyte annotation, NUL
    bytes, a broken file. Each gets its diagnostics, and the server still answers afterwards."""
    from .hostile_files import GOOD, hostile_files

    repo, _ = trapped
    files = hostile_files()
    for name in ("deep_sums.py", "long_matmul_chain.py", "megabyte_annotation.py", "nul_byte.py",
                 "syntax_error.py", "huge_annotation_size.py", "crlf.py"):
        path = repo / name
        uri = path.as_uri()
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
            uri=uri, language_id="python", version=1, text=files[name][0].decode("utf-8"))))
        params = await _diagnostics(client, uri)
        assert len(params.diagnostics) <= 2, (name, params.diagnostics)
    path = repo / "after.py"
    path.write_text(GOOD)
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=path.as_uri(), language_id="python", version=1, text=GOOD)))
    params = await _diagnostics(client, path.as_uri())
    assert [d.code for d in params.diagnostics] == ["TCL401"]
