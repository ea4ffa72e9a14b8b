"""`tensorcost lsp`: the language server (pygls 2.x, stdio).

- Diagnostics on open and save at once, on change after a pause in typing (debounced per
  document), from `lint_source` and the same config discovery as `tensorcost check`. The config
  is re-read for every run, so an edited tensorcost.yaml takes effect on the next keystroke.
- Hover on a matmul/einsum/attention call: its cost ledger (`cost_hover`), and when the config
  has `models:`, its cost in each shape context a model reaches it in, with executions
  (`model_hover`; models are analysed from the files on disk, in the lint thread).
- Code actions: a finding's `Fix`, as a quick fix (TCL403's `optimize="optimal"`).
- Hover and code actions answer at once from the document's last finished lint, never waiting
  for one (a hover used to wait 5 s behind the lint of a 2 MB document): hover when the hovered
  line is unchanged since, code actions when the whole text is. A lint superseded by a newer
  version is dropped if not started, and its result discarded if it was running.
- Transport (`lsp_transport`): requests with invalid params get error -32602, frames are capped,
  and `exit` leaves at once without joining a running lint.
- Inlay hints with each tensor assignment's inferred shape, and hover on any tensor variable
  (`tensor_hints`; the analysis records the bindings, that module words them).

Engine positions are 1-based code points; LSP positions are 0-based in the negotiated encoding
(UTF-16 unless the client offers another), so every position goes through the document's codec.
This module imports pygls: only `tensorcost lsp` imports it.
"""

from __future__ import annotations

import asyncio
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from .. import __version__
from ..config.config_discovery import ConfigResolver, Overrides
from ..driver.engine import SYNTAX_ERROR_CODE, LintResult, lint_source
from ..formats.sarif import rule_help_uri
from .config_problems import resolve_config
from .lsp_transport import AnsweringProtocol, exit_now, serve_stdio
from .cost_hover import hover_markdown, site_at
from .model_hover import ModelContexts, contexts_markdown
from .tensor_hints import binding_at, inlay_hints, variable_hover

SOURCE = "tensorcost"
SEVERITIES = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}
PYTHON_SUFFIXES = (".py", ".pyi")
CONFIG_FILENAMES = ("tensorcost.yaml", "pyproject.toml")
# LSP ends lines at \n, \r\n or \r only (str.splitlines would also split at \f, \x1c, \u2028 ...).
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def document_lines(text: str) -> list[str]:
    return _LINE.findall(text)


@dataclass
class Linted:
    """One lint of one exact text: what hover and code actions answer from."""

    text: str
    path: str
    config: object  # ProjectConfig, or None when the config is broken
    result: LintResult
    model_sites: list = field(default_factory=list)  # whole_model.in_check.ContextSite in this file


class TensorCostServer(LanguageServer):
    def __init__(self, overrides: Overrides = Overrides(), debounce_seconds: float = 0.3) -> None:
        super().__init__(SOURCE, __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         protocol_cls=AnsweringProtocol)
        self.overrides = overrides
        self.debounce_seconds = debounce_seconds
        self.open_documents: set[str] = set()
        self.linted: dict[str, Linted] = {}
        self.pending: dict[str, asyncio.Task] = {}
        # One lint at a time, off the event loop: reading messages (and cancelling a stale run)
        # never waits for a lint, and the engine is never entered from two threads at once.
        self.lint_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tensorcost-lint")
        self.model_contexts = ModelContexts()  # configured models, for hover (used in the lint thread only)

    # -- linting -----------------------------------------------------------------------------

    def lint_text(self, text: str, path: str) -> Linted:
        """Runs in a worker thread. A fresh resolver each time: config discovery is a few stat
        calls and one small YAML parse, and it means config edits need no file watching."""
        config, problem = resolve_config(ConfigResolver(self.overrides).for_path, path)
        if config is None:
            return Linted(text, path, None, LintResult(path, [problem]))
        return Linted(text, path, config, lint_source(text, path, config, bindings=True),
                      self.model_contexts.sites_in(path, config))

    async def lint_in_background(self, text: str, path: str) -> Linted:
        return await asyncio.get_running_loop().run_in_executor(self.lint_executor, self.lint_text, text, path)

    def finished_for_line(self, uri: str, line: int) -> Linted | None:
        """The last finished lint, when `line` (0-based) reads the same in it as in the text now:
        the sites on that line are where it says. None rather than a wait for a running lint."""
        linted = self.linted.get(uri)
        if linted is None:
            return None
        text = self.workspace.get_text_document(uri).source
        if linted.text == text:
            return linted
        then, now = document_lines(linted.text), document_lines(text)
        if not (0 <= line < len(then) and line < len(now)) or then[line].rstrip("\r\n") != now[line].rstrip("\r\n"):
            return None
        return linted

    async def current(self, uri: str) -> Linted:
        """The lint of the document's text as it is now, linting it if the last run is stale: inlay
        hints must sit where the text is (hover and code actions never wait; see above)."""
        document = self.workspace.get_text_document(uri)
        text = document.source
        linted = self.linted.get(uri)
        if linted is None or linted.text != text:
            linted = await self.lint_in_background(text, document.path)
            if self.workspace.get_text_document(uri).source == text:
                self.linted[uri] = linted
        return linted

    def finished_for_text(self, uri: str) -> Linted | None:
        """The last finished lint if it is of the text as it is now (edits must apply to it)."""
        linted = self.linted.get(uri)
        if linted is None or linted.text != self.workspace.get_text_document(uri).source:
            return None
        return linted

    async def lint_and_publish(self, uri: str) -> None:
        document = self.workspace.get_text_document(uri)
        text, version = document.source, document.version
        linted = await self.lint_in_background(text, document.path)
        if uri not in self.open_documents or self.workspace.get_text_document(uri).source != text:
            return  # edited or closed meanwhile: the run scheduled by that event publishes
        self.linted[uri] = linted
        lines = document_lines(text)
        diagnostics = [to_diagnostic(f, lines, document.position_codec) for f in linted.result.findings
                       if f.code != SYNTAX_ERROR_CODE]  # the editor's Python support reports syntax errors
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version))

    def schedule(self, uri: str, delay: float) -> None:
        """Lint `uri` after `delay` seconds, replacing any run not yet started for it."""
        previous = self.pending.pop(uri, None)
        if previous is not None:
            previous.cancel()
        self.pending[uri] = asyncio.ensure_future(self._after(uri, delay))

    async def _after(self, uri: str, delay: float) -> None:
        try:
            if delay > 0:
                await asyncio.sleep(delay)
            await self.lint_and_publish(uri)
        finally:
            if self.pending.get(uri) is asyncio.current_task():
                del self.pending[uri]

    def relint_open_documents(self) -> None:
        for uri in list(self.open_documents):
            self.schedule(uri, 0)

    def forget(self, uri: str) -> None:
        self.open_documents.discard(uri)
        self.linted.pop(uri, None)
        task = self.pending.pop(uri, None)
        if task is not None:
            task.cancel()


# -- translation between the engine and the protocol -----------------------------------------


def _end_of_line(lines: list[str], line: int) -> int:
    return len(lines[line].rstrip("\r\n")) if 0 <= line < len(lines) else 0


def finding_range(finding, lines, codec) -> types.Range:
    start = types.Position(line=finding.line - 1, character=finding.column - 1)
    if finding.end_line is not None and finding.end_column is not None:
        end = types.Position(line=finding.end_line - 1, character=finding.end_column - 1)
    else:  # a point finding (TCL001 in an annotation, TCL900): underline to the end of its line
        end = types.Position(line=start.line, character=max(_end_of_line(lines, start.line), start.character))
    return codec.range_to_client_units(lines, types.Range(start=start, end=end))


def to_diagnostic(finding, lines, codec) -> types.Diagnostic:
    href = rule_help_uri(finding.code)
    return types.Diagnostic(
        range=finding_range(finding, lines, codec),
        message=finding.message,
        severity=SEVERITIES.get(finding.severity, types.DiagnosticSeverity.Warning),
        code=finding.code,
        code_description=types.CodeDescription(href=href) if href else None,
        source=SOURCE,
    )


def _overlaps(a: types.Range, b: types.Range) -> bool:
    def key(position):
        return (position.line, position.character)

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def code_actions(uri: str, linted: Linted, lines, codec, wanted: types.Range) -> list[types.CodeAction]:
    actions = []
    for finding in linted.result.findings:
        fix = finding.fix
        if fix is None:
            continue
        diagnostic = to_diagnostic(finding, lines, codec)
        if not _overlaps(diagnostic.range, wanted):
            continue
        edit_range = codec.range_to_client_units(lines, types.Range(
            start=types.Position(line=fix.line - 1, character=fix.column - 1),
            end=types.Position(line=fix.end_line - 1, character=fix.end_column - 1)))
        actions.append(types.CodeAction(
            title=f"{fix.description} ({finding.code})",
            kind=types.CodeActionKind.QuickFix,
            diagnostics=[diagnostic],
            is_preferred=True,
            edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(range=edit_range, new_text=fix.replacement)]}),
        ))
    return actions


def _engine_range(codec, lines, span) -> types.Range:
    """A span with 1-based engine columns (end exclusive) in the client's units."""
    return codec.range_to_client_units(lines, types.Range(
        start=types.Position(line=span.line - 1, character=span.column - 1),
        end=types.Position(line=span.end_line - 1, character=span.end_column - 1)))


def _wants_markdown(server: LanguageServer) -> bool:
    hover = getattr(getattr(server.client_capabilities, "text_document", None), "hover", None)
    formats = getattr(hover, "content_format", None)
    return not formats or types.MarkupKind.Markdown in formats


def _is_python(document) -> bool:
    return document.language_id == "python" or str(document.path).endswith(PYTHON_SUFFIXES)


def build_server(overrides: Overrides = Overrides(), debounce_seconds: float = 0.3) -> TensorCostServer:
    server = TensorCostServer(overrides, debounce_seconds)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        if _is_python(server.workspace.get_text_document(uri)):
            server.open_documents.add(uri)
            server.schedule(uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri in server.open_documents:
            server.schedule(uri, server.debounce_seconds)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri in server.open_documents:
            server.schedule(uri, 0)
        elif Path(server.workspace.get_text_document(uri).path).name in CONFIG_FILENAMES:
            server.relint_open_documents()

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri in server.open_documents:
            server.forget(uri)
            server.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched_files_changed(params: types.DidChangeWatchedFilesParams) -> None:
        server.relint_open_documents()

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(params: types.HoverParams) -> types.Hover | None:
        uri = params.text_document.uri
        if uri not in server.open_documents:
            return None
        linted = server.finished_for_line(uri, params.position.line)
        if linted is None or linted.config is None:
            return None
        document = server.workspace.get_text_document(uri)
        lines = document_lines(linted.text)
        codec = document.position_codec
        position = codec.position_from_client_units(lines, params.position)
        kind = types.MarkupKind.Markdown if _wants_markdown(server) else types.MarkupKind.PlainText
        variable = binding_at(linted.result.bindings, position.line + 1, position.character + 1)
        described = variable and variable_hover(variable, linted.result.sizes, kind == types.MarkupKind.Markdown)
        if described:
            return types.Hover(contents=types.MarkupContent(kind=kind, value=described),
                               range=_engine_range(codec, lines, variable))
        site_result = site_at(linted.result.sites, position.line + 1, position.character + 1)
        if site_result is None:
            return None
        site = site_result.site
        text = hover_markdown(site_result, linted.result.settings, linted.result.sizes, linted.result.findings)
        in_models = contexts_markdown(site, linted.model_sites)
        if in_models:
            text += "\n\n" + in_models
        site_range = codec.range_to_client_units(lines, types.Range(
            start=types.Position(line=site.line - 1, character=site.column - 1),
            end=types.Position(line=site.end_line - 1, character=site.end_column - 1)))
        return types.Hover(contents=types.MarkupContent(kind=kind, value=text), range=site_range)

    @server.feature(types.TEXT_DOCUMENT_INLAY_HINT, types.InlayHintOptions(resolve_provider=False))
    async def inlay_hint(params: types.InlayHintParams) -> list[types.InlayHint] | None:
        uri = params.text_document.uri
        if uri not in server.open_documents:
            return None
        linted = await server.current(uri)
        document = server.workspace.get_text_document(uri)
        lines = document_lines(linted.text)
        codec = document.position_codec
        wanted = codec.range_from_client_units(lines, params.range)
        return [types.InlayHint(
            position=codec.position_to_client_units(lines, types.Position(line=hint.line - 1, character=hint.column - 1)),
            label=hint.label, kind=types.InlayHintKind.Type, padding_left=False)
            for hint in inlay_hints(linted.result.bindings, linted.result.sizes, wanted.start.line + 1, wanted.end.line + 1)]

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
    def code_action(params: types.CodeActionParams) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        if uri not in server.open_documents:
            return None
        linted = server.finished_for_text(uri)
        if linted is None:
            return None
        document = server.workspace.get_text_document(uri)
        lines = document_lines(linted.text)
        return code_actions(uri, linted, lines, document.position_codec, params.range) or None

    return server


def serve(overrides: Overrides = Overrides(), debounce_seconds: float = 0.3) -> None:
    """Serve over stdio, then leave at once with LSP's exit status (never returns)."""
    exit_now(serve_stdio(build_server(overrides, debounce_seconds)))
