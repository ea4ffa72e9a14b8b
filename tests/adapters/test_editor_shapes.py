"""Shapes in the editor (issue 14), over stdio as an editor drives `tensorcost lsp`: an inlay hint
with the inferred shape (and dtype) after each tensor assignment, and hover on any tensor variable —
a parameter, an assignment target, a later use — with its shape and dtype. Unknown shapes: nothing."""

from __future__ import annotations

import asyncio
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from .conftest import clean_env

pytestmark = pytest.mark.slow

BLOCK = '''"""nanoGPT's causal self-attention, annotated."""

import math

import torch.nn as nn
from jaxtyping import Float32
from torch import Tensor
from torch.nn import functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.n_head = config.n_head
        self.n_embd = config.n_embd

    def forward(self, h: Float32[Tensor, "B T C"]):
        B, T, C = h.size()
        x = self.c_attn(h)
        q, k, v = x.split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = F.softmax(att, dim=-1)
        mask = build_mask(T)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)
'''
CONFIG = "dims:\n  B: 8\n  T: 1024\n  C: 768\n  n_embd: 768\n  n_head: 12\n"
HEADS = "[B=8, n_head=12, T=1024, C//n_head=64] float32"
# (0-based line, character just after the target, label); `mask` (an unknown call) gets none
EXPECTED_HINTS = [
    (20, 9, ": [B=8, T=1024, 3*n_embd=2304] float32"),
    (21, 9, ": [B=8, T=1024, n_embd=768] float32"),
    (21, 12, ": [B=8, T=1024, n_embd=768] float32"),
    (21, 15, ": [B=8, T=1024, n_embd=768] float32"),
    (22, 9, f": {HEADS}"),
    (23, 9, f": {HEADS}"),
    (24, 9, f": {HEADS}"),
    (25, 11, ": [B=8, n_head=12, T=1024, T=1024] float32"),
    (26, 11, ": [B=8, n_head=12, T=1024, T=1024] float32"),
    (28, 9, f": {HEADS}"),
    (29, 9, ": [B=8, T=1024, C=768] float32"),
]


@pytest_lsp.fixture(config=ClientServerConfig(
    server_command=[sys.executable, "-m", "tensorcost_lint.cli.main", "lsp", "--debounce", "0"],
    server_env=clean_env()))
async def client(lsp_client: LanguageClient, tmp_path):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=tmp_path.as_uri()))
    yield
    await lsp_client.shutdown_session()


def _open_block(client: LanguageClient, tmp_path) -> str:
    (tmp_path / ".git").mkdir()
    (tmp_path / "tensorcost.yaml").write_text(CONFIG)
    path = tmp_path / "model.py"
    path.write_text(BLOCK)
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=path.as_uri(), language_id="python", version=1, text=BLOCK)))
    return path.as_uri()


async def _published(client: LanguageClient, uri: str) -> None:
    async def wait():
        while (await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)).uri != uri:
            pass

    await asyncio.wait_for(wait(), 60)


async def _hover(client: LanguageClient, uri: str, line: int, character: int):
    return await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=character)))


@pytest.mark.asyncio
async def test_inlay_hints_give_each_tensor_assignment_its_shape(client: LanguageClient, tmp_path):
    uri = _open_block(client, tmp_path)
    everything = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=31, character=0))
    hints = await client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=everything))
    assert [(h.position.line, h.position.character, h.label) for h in hints] == EXPECTED_HINTS
    assert {h.kind for h in hints} == {types.InlayHintKind.Type}
    # only the range asked for: the three lines of q, k, v views
    views = await client.text_document_inlay_hint_async(types.InlayHintParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(line=22, character=0), end=types.Position(line=24, character=80))))
    assert [(h.position.line, h.label) for h in views] == [(22, f": {HEADS}"), (23, f": {HEADS}"), (24, f": {HEADS}")]


@pytest.mark.asyncio
async def test_hover_on_a_parameter_a_target_and_a_later_use(client: LanguageClient, tmp_path):
    uri = _open_block(client, tmp_path)
    await _published(client, uri)  # hover answers from the last finished lint, never waiting for one
    parameter = await _hover(client, uri, 18, 22)  # `h` in `def forward(self, h: ...)`
    assert parameter.contents.value == "`h` (parameter): `[B=8, T=1024, C=768]` float32"
    assert (parameter.range.start.line, parameter.range.start.character, parameter.range.end.character) == (18, 22, 23)
    target = await _hover(client, uri, 22, 8)  # `k = k.view(...)`: the new k
    assert target.contents.value == "`k` (assigned here): `[B=8, n_head=12, T=1024, C//n_head=64]` float32"
    before = await _hover(client, uri, 22, 12)  # the k it is made from, as split left it
    assert before.contents.value == "`k` (as used here): `[B=8, T=1024, n_embd=768]` float32"
    use = await _hover(client, uri, 28, 13)  # `att` in `y = att @ v`
    assert use.contents.value == "`att` (as used here): `[B=8, n_head=12, T=1024, T=1024]` float32"
    assert (use.range.start.line, use.range.start.character, use.range.end.character) == (28, 12, 15)
    # between the names, on the `@`: the call site's cost ledger, as before
    ledger = await _hover(client, uri, 28, 16)
    assert ledger.contents.value.startswith("**tensorcost** · matmul `att @ v` (torch, `@`)")
    assert await _hover(client, uri, 27, 9) is None  # `mask`: shape unknown, nothing shown


def test_bindings_are_recorded_only_when_asked(tmp_path):
    """The CLI and flake8 never pay for binding positions; the language server asks for them."""
    from tensorcost_lint.config.project_config import parse_config
    from tensorcost_lint.driver.engine import lint_source

    config = parse_config({"dims": {"B": 8, "T": 1024, "C": 768, "n_embd": 768, "n_head": 12}}, "test", None)
    assert lint_source(BLOCK, "model.py", config).bindings == []
    recorded = lint_source(BLOCK, "model.py", config, bindings=True).bindings
    assert [(b.kind, b.name, b.line, b.column) for b in recorded[:3]] == [
        ("parameter", "h", 19, 23), ("use", "h", 20, 19), ("use", "h", 21, 25)]
    assert "mask" not in {b.name for b in recorded}  # an unknown call's result is no tensor fact
