"""`tensorcost lsp` end to end over stdio, driven by pytest-lsp as an editor would drive it:
initialize, open, change (debounced), save, hover, code action, close, shutdown."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from tests.conftest import run_tensorcost_process

from .conftest import clean_env

pytestmark = pytest.mark.slow
DEBOUNCE = 0.25
TIMEOUT = 30


def _recording_client() -> LanguageClient:
    """The stock test client, plus a log of every publishDiagnostics (to see debouncing)."""
    client = LanguageClient(converter_factory=default_converter)
    client.published = []
    features = dict(DEFAULT_CLIENT_FEATURES)
    stock = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def publish(client_: LanguageClient, params: types.PublishDiagnosticsParams):
        client_.published.append(params)
        stock(client_, params)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish
    register_lsp_features(client, features)
    return client


@pytest_lsp.fixture(config=ClientServerConfig(
    server_command=[sys.executable, "-m", "tensorcost_lint.cli.main", "lsp", "--debounce", str(DEBOUNCE)],
    client_factory=_recording_client, server_env=clean_env()))
async def client(lsp_client: LanguageClient, model_repo):
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"), root_uri=model_repo.as_uri()))
    yield
    await lsp_client.shutdown_session()


async def _diagnostics_for(client: LanguageClient, uri: str) -> types.PublishDiagnosticsParams:
    async def wait():
        while True:
            params = await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
            if params.uri == uri:
                return params

    return await asyncio.wait_for(wait(), TIMEOUT)


def _open(client: LanguageClient, path, text: str | None = None) -> str:
    uri = path.as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=types.TextDocumentItem(
        uri=uri, language_id="python", version=1, text=path.read_text() if text is None else text)))
    return uri


def _change(client, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


def _by_code(params) -> dict:
    found = {}
    for diagnostic in params.diagnostics:
        found.setdefault(diagnostic.code, []).append(diagnostic)
    return found


@pytest.mark.asyncio
async def test_diagnostics_follow_open_change_save_and_close(client: LanguageClient, model_repo):
    path = model_repo / "models" / "jaxtyping_attention.py"
    text = path.read_text()
    uri = _open(client, path, text)
    opened = _by_code(await _diagnostics_for(client, uri))
    assert set(opened) == {"TCL101", "TCL401", "TCL402"}  # TCL501 is off by default here too
    (scores,) = opened["TCL401"]
    assert scores.severity == types.DiagnosticSeverity.Warning and scores.source == "tensorcost"
    assert (scores.range.start.line, scores.range.start.character) == (11, 13)
    assert (scores.range.end.line, scores.range.end.character) == (11, 50)
    assert scores.code_description.href.startswith("https://") and "TCL401" in scores.code_description.href
    assert "[batch=8, heads=32, seq=8192, seq=8192]" in scores.message
    assert opened["TCL101"][0].severity == types.DiagnosticSeverity.Error

    # A burst of keystrokes: one lint, after the pause, of the last text.
    fixed = text.replace('w: Float[Tensor, "d_head d_ff"]', 'w: Float[Tensor, "d_model d_ff"]')
    client.published.clear()
    for version, partial in enumerate([fixed[:-10], fixed[:-5], fixed[:-2], fixed], start=2):
        _change(client, uri, version, partial)
    changed = await _diagnostics_for(client, uri)
    assert changed.version == 5 and set(_by_code(changed)) == {"TCL401", "TCL402"}
    await asyncio.sleep(DEBOUNCE * 2)
    assert [p.version for p in client.published if p.uri == uri] == [5]

    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    saved = await _diagnostics_for(client, uri)
    assert set(_by_code(saved)) == {"TCL401", "TCL402"}

    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    closed = await _diagnostics_for(client, uri)
    assert list(closed.diagnostics) == []


@pytest.mark.asyncio
async def test_hover_on_a_call_shows_its_cost_ledger(client: LanguageClient, model_repo):
    uri = _open(client, model_repo / "models" / "jaxtyping_attention.py")
    await _diagnostics_for(client, uri)
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=11, character=20)))
    assert hover is not None and hover.contents.kind == types.MarkupKind.Markdown
    text = hover.contents.value
    for expected in ("`[batch=8, heads=32, seq=8192, d_head=128]`",  # operands: names and sizes
                     "`[batch=8, heads=32, seq=8192, seq=8192]`",  # output
                     "4.4 TFLOP = `2*batch*heads*seq^2*d_head`", "(4,398,046,511,104)",
                     "output bytes | 68.7 GB", "traffic | 70.9 GB across hbm-to-compute",
                     "arithmetic intensity | 62.06 FLOP/B", "lower bound | **65.64 ms** on `h100-sxm`, COMPUTE-bound",
                     "NVIDIA H100 SXM5 80GB", "measured 2023-09-01", "float32 operands → float32 accumulation",
                     "67 TFLOP/s peak", "3.35 TB/s", "`TCL401`"):
        assert expected in text, (expected, text)
    assert (hover.range.start.line, hover.range.start.character, hover.range.end.character) == (11, 13, 50)

    nowhere = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=0, character=3)))
    assert nowhere is None


@pytest.mark.asyncio
async def test_hover_says_why_a_call_is_not_costed(client: LanguageClient, model_repo):
    path = model_repo / "models" / "gpt_attention.py"
    uri = _open(client, path)
    await _diagnostics_for(client, uri)  # hover answers from the finished lint, never waiting for one
    line = path.read_text().splitlines().index("        return F.scaled_dot_product_attention(q, k, v, is_causal=True)")
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=20)))
    assert hover is not None
    assert "**Not costed:**" in hover.contents.value and "no known shape" in hover.contents.value


@pytest.mark.asyncio
async def test_code_action_applies_the_safe_fix(client: LanguageClient, model_repo):
    path = model_repo / "models" / "einsum_chains.py"
    text = path.read_text()
    uri = _open(client, path, text)
    (order,) = [d for d in (await _diagnostics_for(client, uri)).diagnostics
                if d.code == "TCL403" and d.range.start.line == 10]
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=order.range,
        context=types.CodeActionContext(diagnostics=[order])))
    (action,) = actions
    assert action.kind == types.CodeActionKind.QuickFix and "optimize" in action.title
    assert [d.code for d in action.diagnostics] == ["TCL403"]
    (edit,) = action.edit.changes[uri]
    lines = text.splitlines(keepends=True)
    line = lines[edit.range.start.line]
    assert edit.range.start == edit.range.end  # an insertion
    lines[edit.range.start.line] = line[:edit.range.start.character] + edit.new_text + line[edit.range.start.character:]
    applied = "".join(lines)
    assert '    return np.einsum("ij,jk,kl->il", a, b, c, optimize="optimal")\n' in applied

    _change(client, uri, 2, applied)
    after = await _diagnostics_for(client, uri)
    assert [d.range.start.line for d in after.diagnostics if d.code == "TCL403"] == [17]  # only torch's is left

    elsewhere = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=3)),
        context=types.CodeActionContext(diagnostics=[])))
    assert not elsewhere


@pytest.mark.asyncio
async def test_positions_are_utf16_where_the_line_holds_wide_characters(client: LanguageClient, model_repo):
    path = model_repo / "models" / "chain_with_labels.py"
    path.write_text('import numpy as np\n\n\ndef chain():\n    a = np.zeros((1000, 1000))\n'
                    '    b = np.zeros((1000, 64))\n    c = np.zeros((64, 10))\n'
                    '    return {"🚀 ×": np.einsum("ij,jk,kl->il", a, b, c)}\n')
    uri = _open(client, path)
    (order,) = [d for d in (await _diagnostics_for(client, uri)).diagnostics if d.code == "TCL403"]
    # `np.einsum` is code point 19 but UTF-16 unit 20: the rocket takes two units.
    assert (order.range.start.line, order.range.start.character) == (7, 20)
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=7, character=21)))
    assert hover is not None and "einsum" in hover.contents.value
    (action,) = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=order.range,
        context=types.CodeActionContext(diagnostics=[order])))
    (edit,) = action.edit.changes[uri]
    assert edit.range.start.character == order.range.end.character - 1  # just before the closing parenthesis


@pytest.mark.asyncio
async def test_a_broken_config_is_a_diagnostic_and_a_fixed_one_is_picked_up(client: LanguageClient, model_repo):
    config = model_repo / "models" / "tensorcost.yaml"
    good = config.read_text()
    config.write_text(good.replace("budgets:", "budget:"))
    uri = _open(client, model_repo / "models" / "einsum_chains.py")
    (problem,) = (await _diagnostics_for(client, uri)).diagnostics
    assert problem.code == "TCL900" and problem.severity == types.DiagnosticSeverity.Error
    assert problem.range.start.line == 0 and "tensorcost.yaml" in problem.message and "budget" in problem.message

    config.write_text(good)
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
        types.FileEvent(uri=config.as_uri(), type=types.FileChangeType.Changed)]))
    assert "TCL403" in _by_code(await _diagnostics_for(client, uri))


def test_without_pygls_the_command_says_what_to_install(tmp_path):
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "pygls.py").write_text("raise ImportError(\"No module named 'pygls'\")\n")
    result = subprocess.run([sys.executable, "-m", "tensorcost_lint.cli.main", "lsp"], capture_output=True,
                            text=True, timeout=60, env=clean_env(PYTHONPATH=str(shadow)), stdin=subprocess.DEVNULL)
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert "pip install 'pygls>=2,<3' lsprotocol" in line and "Traceback" not in result.stderr


def test_a_wrong_config_flag_exits_2_at_once(tmp_path):
    # the `tensorcost lsp` entry point's smoke test: a process, as editors start it
    result = run_tensorcost_process("lsp", "--config", str(tmp_path / "missing.yaml"), cwd=tmp_path, input="")
    assert result.returncode == 2
    (line,) = result.stderr.strip().splitlines()
    assert "missing.yaml" in line


@pytest.mark.asyncio
async def test_hover_on_a_site_reached_from_a_model_shows_each_context(client: LanguageClient, model_repo):
    from tests.whole_model.gate_fixture import DIMS, MODEL, MODELS

    (model_repo / "gpt").mkdir()
    (model_repo / "gpt" / "tensorcost.yaml").write_text(DIMS + MODELS)
    path = model_repo / "gpt" / "model.py"
    path.write_text(MODEL)
    uri = _open(client, path)
    await _diagnostics_for(client, uri)
    line = MODEL.splitlines().index("        h = F.gelu(self.c_fc(x))")
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=line, character=22)))
    assert hover is not None
    text = hover.contents.value
    assert "**Not costed:**" in text  # the file alone cannot cost it: x has no shape in MLP.forward
    assert "**Reached from models** (cost per execution × executions):" in text
    assert ("| `gpt` | `h.mlp.c_fc` | `[B, T, n_embd] × [4*n_embd, n_embd] → [B, T, 4*n_embd]` | 262 kFLOP | 3 "
            "| 786 kFLOP | 16.4 kB |") in text, text
