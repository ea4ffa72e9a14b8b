"""Hostile source files, each with what a user must see for it: one clear finding (or the same
findings as the well-formed file), never a hang, a traceback or a crash of the whole run."""

from __future__ import annotations

CONFIG = "dims: {batch: 8, seq: 8192, d: 64}\nsequence_dims: [seq]\n"

# The reference file: one TCL401 at 7:12 under CONFIG. Every re-encoding of it below must give the
# same finding at the same place (shifted by one line where a coding cookie is prepended).
GOOD = '''import torch
from torch import Tensor
from jaxtyping import Float


def f(q: Float[Tensor, "batch seq d"], k: Float[Tensor, "batch seq d"]):
    return q @ k.transpose(-2, -1)
'''
GOOD_FINDING = (7, 12, "TCL401")
DEPTH = 10_000


def _nested(open_: str, leaf: str, close: str) -> str:
    return "import torch\nx = " + open_ * DEPTH + leaf + close * DEPTH + "\ny = a @ b\n"


def _five_megabyte_data_module() -> str:
    """Generated modules (vocabularies, lookup tables) are the real 5 MB Python files."""
    rows = "".join(f'    "token_{i:07d}",\n' for i in range(265_000))
    return GOOD + "VOCAB = [\n" + rows + "]\n"


def hostile_files() -> dict[str, tuple[bytes, object]]:
    """name -> (bytes on disk, expectation). An expectation is either the exact list of
    (line, column, code) the file must produce, or a set of codes allowed for its one finding (None
    in the set: no finding is fine too), or (code, count): that many findings, all of that code."""
    good = GOOD.encode()
    same = [GOOD_FINDING]
    return {
        "good.py": (good, same),
        "crlf.py": (GOOD.replace("\n", "\r\n").encode(), same),
        "cr_only.py": (GOOD.replace("\n", "\r").encode(), same),
        "tabs.py": (GOOD.replace("    ", "\t").encode(), [(7, 9, "TCL401")]),
        "bom.py": (b"\xef\xbb\xbf" + good, same),
        "latin1_cookie.py": (b"# -*- coding: latin-1 -*-\n" + good + b"# caf\xe9\n", [(8, 12, "TCL401")]),
        "utf16_bom.py": ("\ufeff".encode("utf-16-le") + GOOD.encode("utf-16-le"), {"E902"}),
        "not_utf8.py": (good + b"# \xff\xfe\n", {"E902"}),
        "unknown_cookie.py": (b"# -*- coding: no-such-codec -*-\n" + good, {"E902"}),
        "nul_byte.py": (good.replace(b"import torch", b"import torch\x00"), {"E999"}),
        "syntax_error.py": (good + b"def broken(:\n", {"E999"}),
        "mixed_indentation.py": (b"import torch\nif True:\n        x = 1\n\ty = a @ b\n", {"E999"}),
        "unterminated.py": (b'import torch\nx = a @ b\ns = """never closed\n', {"E999"}),
        "deep_parentheses.py": (_nested("(", "1", ")").encode(), {"E999"}),
        "deep_sums.py": (_nested("a+(", "a", ")").encode(), {"E999"}),
        "deep_lists.py": (_nested("[", "", "]").encode(), {"E999"}),
        "deep_matmuls.py": (_nested("a@(", "a", ")").encode(), {"E999"}),
        # Python itself cannot compile a 10,000-term chain (RecursionError): one finding, never a crash.
        "long_matmul_chain.py": (("import torch\ndef f(a):\n    return " + "@".join(["a"] * DEPTH) + "\n").encode(),
                                 {"E999", "TCL900"}),
        "long_sum_chain.py": (("import torch\ndef f(a):\n    return " + "+".join(["a"] * DEPTH) + "\n").encode(),
                              {"E999", "TCL900", None}),
        "megabyte_annotation.py": (
            ('import torch\nfrom torch import Tensor\nfrom jaxtyping import Float\n\n\ndef f(q: Float[Tensor, "'
             + "batch " * 180_000 + '"]):\n    return q @ q\n').encode(), {"TCL001"}),
        # The refused pragma is reported and ignored: the config's sizes still apply.
        "huge_pragma_size.py": (b"# tensorcost: dims seq=" + str(10**30).encode() + b"\n" + good,
                                [(1, 24, "TCL001"), (8, 12, "TCL401")]),
        "huge_annotation_size.py": (GOOD.replace('"batch seq d"', f'"batch {10**30} d"').encode(), ("TCL001", 2)),
        "five_megabytes.py": (_five_megabyte_data_module().encode(), same),
    }
