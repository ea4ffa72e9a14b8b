"""A JSON report written as it is made (formats.indented_json.Streamed): the same bytes as
json.dumps, never held whole, and a file it replaces is replaced whole or not at all."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from tensorcost_lint.cli.output import write_output
from tensorcost_lint.formats.indented_json import Streamed
from tensorcost_lint.safe_io.atomic_write import write_atomically

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70), st.text(max_size=8),
                     st.floats(allow_nan=False))
_PLAIN = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=5), inner, max_size=5)), max_leaves=40)


def _streamed(value, **options) -> list[str]:
    chunks: list = []
    Streamed(value, **options).write_to(chunks.append)
    return chunks


@settings(max_examples=150, deadline=None)
@given(_PLAIN, st.booleans())
def test_the_chunks_joined_are_json_dumps_text(value, ascii_only):
    expected = json.dumps(value, indent=2, ensure_ascii=ascii_only) + "\n"
    assert "".join(_streamed(value, indent=2, ensure_ascii=ascii_only, end="\n")) == expected


def _sites(count: int) -> dict:
    return {"version": 1, "models": [{"name": "m", "sites": [
        {"path": "model.py", "line": i, "expression": "self.lin(h)", "flops": 16384, "resolved": True}
        for i in range(count)]}]}


def test_a_large_report_reaches_the_writer_in_many_chunks_none_near_its_size():
    chunks = _streamed(_sites(100_000), indent=2, end="\n")
    text = "".join(chunks)
    assert text == json.dumps(_sites(100_000), indent=2) + "\n"
    # the sites sit inside one model: the text is handed on between them, not once the model ends
    assert len(chunks) > 50 and max(map(len, chunks)) < len(text) // 20


def test_written_items_of_a_consumed_report_are_let_go():
    document = {"findings": [{"line": 1}, {"line": 2}], "sites": [[1, 2], [3]]}
    text = "".join(_streamed(document, indent=2, consume=True))
    assert json.loads(text) == {"findings": [{"line": 1}, {"line": 2}], "sites": [[1, 2], [3]]}
    assert document == {"findings": [None, None], "sites": [None, None]}


@pytest.mark.parametrize("odd", [{(1, 2): "a tuple key"}, {"a": {1, 2}}, {"a": (x for x in ())}])
def test_what_is_not_plain_json_data_is_refused_not_written_differently(odd):
    with pytest.raises(TypeError, match="not plain JSON data"):
        _streamed(odd, indent=2)


def test_write_output_streams_to_stdout_and_to_a_file_the_same_bytes(tmp_path, capsys):
    document = _sites(3)
    write_output(Streamed(json.loads(json.dumps(document)), indent=2, end="\n"), None)
    target = tmp_path / "report.json"
    write_output(Streamed(document, indent=2, end="\n"), str(target))
    assert capsys.readouterr().out == target.read_text() == json.dumps(_sites(3), indent=2) + "\n"


def test_a_stream_that_fails_half_way_leaves_the_previous_report(tmp_path):
    target = tmp_path / "report.json"
    target.write_text("the previous report\n")

    def fails_half_way(stream):
        stream.write(b"{\n  \"version\": 1,")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        write_atomically(target, fails_half_way)
    assert target.read_text() == "the previous report\n"
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no temporary file left
