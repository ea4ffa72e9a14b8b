"""YAML through `yaml.safe_load` only, with bounds against hostile files.

safe_load never builds Python objects from tags (`!!python/object` is refused), but alias
expansion ("billion laughs") still yields a structure whose walk is exponential; we cap aliases and
file size instead of trusting every consumer to walk carefully.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from ..safe_io.bounded_read import NotARegularFile, TooLarge, read_capped
from .errors import ConfigError

MAX_FILE_BYTES = 1 << 20
MAX_ALIASES = 64
MAX_INTEGER_CHARACTERS = 100  # far above 2**63 (19 digits) with `_` separators; far below the digit limit


class _BoundedLoader(yaml.SafeLoader):
    def __init__(self, stream) -> None:
        super().__init__(stream)
        self._aliases = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise yaml.YAMLError(f"more than {MAX_ALIASES} aliases (refused as a possible alias bomb)")
        return super().compose_node(parent, index)

    def construct_yaml_int(self, node):
        # int() of more than 4,300 digits raises ValueError (Python's digit limit) deep inside the
        # loader; no size a config names needs more than 19, so a long one is refused by its length
        if len(node.value) > MAX_INTEGER_CHARACTERS:
            raise yaml.constructor.ConstructorError(
                None, None, f"an integer of {len(node.value)} characters is too large", node.start_mark)
        return super().construct_yaml_int(node)


_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _BoundedLoader.construct_yaml_int)


MAX_EXPANDED_NODES = 100_000


def _check_expansion(document, source: str) -> None:
    """Anchors let 64 aliases stand for 2**64 nodes; everything after loading walks the expanded
    document, so its size is bounded here, counting shared nodes every time they are reached."""
    budget = MAX_EXPANDED_NODES
    pending = [document]
    while pending:
        node = pending.pop()
        budget -= 1
        if budget < 0:
            raise ConfigError(source, "", f"invalid YAML: expands to more than {MAX_EXPANDED_NODES} values "
                                          "(refused as a possible alias bomb)")
        if isinstance(node, dict):
            pending.extend(node.keys())
            pending.extend(node.values())
        elif isinstance(node, list):
            pending.extend(node)


def load_yaml_text(text: str, source: str):
    if len(text) > MAX_FILE_BYTES:
        raise ConfigError(source, "", f"file larger than {MAX_FILE_BYTES} bytes")
    try:
        document = yaml.load(text, Loader=_BoundedLoader)  # noqa: S506 - a SafeLoader subclass
        _check_expansion(document, source)
        return document
    except yaml.YAMLError as error:
        reason = " ".join(str(error).split())
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(source, where, f"invalid YAML: {reason[:300]}") from None
    except RecursionError:
        raise ConfigError(source, "", "invalid YAML: nesting too deep") from None


def read_text_file(path: Path | str, source: str | None = None) -> str:
    source = source or str(path)
    try:
        raw = read_capped(path, MAX_FILE_BYTES)
    except FileNotFoundError:
        raise ConfigError(source, "", "file not found") from None
    except IsADirectoryError:
        raise ConfigError(source, "", "is a directory, expected a file") from None
    except (NotARegularFile, TooLarge) as error:
        raise ConfigError(source, "", str(error)) from None
    except OSError as error:
        raise ConfigError(source, "", f"cannot read: {error.strerror or error}") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ConfigError(source, "", f"not UTF-8 (byte {error.start})") from None


def load_yaml_file(path: Path | str, source: str | None = None):
    source = source or str(path)
    return load_yaml_text(read_text_file(path, source), source)
