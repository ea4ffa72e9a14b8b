"""`tensorcost model [NAME…]`: whole-model totals (Contract 7) for configured models or one
`--entry`, as a module tree or JSON."""

from __future__ import annotations

import math

from pathlib import Path

from ..config.errors import ConfigError
from ..formats.indented_json import Streamed
from ..config.build_expressions import parse_build
from ..config.model_entries import MODES, ModelEntry, dims_of_config, parse_entry_text, parse_input_spec, \
    parse_method_entry, read_config_json
from ..config.memory_settings import OPTIMIZERS, MemorySettings, Precision
from ..config.config_discovery import ConfigResolver, Overrides, parse_dim_override
from ..whole_model.report.analyse import analyse_model
from ..whole_model.run.build_entry import BuildError
from ..whole_model.report.report import model_document
from ..whole_model.report.report_text import model_text
from ..whole_model.values.source_error import SourceError
from .output import write_output


def add_arguments(parser) -> None:
    parser.add_argument("names", nargs="*", metavar="NAME", help="configured models to analyse (default: all)")
    parser.add_argument("--entry", metavar="FILE:QUALNAME", help="analyse this entry instead of configured models "
                        "(with --build: a method name of the built object, default forward)")
    parser.add_argument("--build", metavar="EXPR", help="a Python call that builds the model, e.g. "
                        "\"VisionTransformer(depth=4)\" (Contract 7a; parsed, never run)")
    parser.add_argument("--input", action="append", default=[], metavar="NAME=SPEC",
                        help="an entry input, e.g. idx='int64 B T' (repeatable; with --entry)")
    parser.add_argument("--dims-from", metavar="JSON", help="a Hugging Face config.json whose integer fields are dims")
    parser.add_argument("--mode", choices=MODES, help="inference (default), training (forward + backward), prefill or decode (Contract 9)")
    parser.add_argument("--optimizer", choices=OPTIMIZERS, help="training: the optimizer whose states count (default adamw)")
    parser.add_argument("--precision", action="append", default=[], metavar="CATEGORY=DTYPE",
                        help="training: parameters, gradients, optimizer_states or master_weights in DTYPE (repeatable)")
    parser.add_argument("--cache-len", type=int, metavar="N", help="decode: the tokens already in the KV cache")
    parser.add_argument("--sequence-dim", metavar="NAME", help="decode: the inputs' dim that is cache_len in the "
                        "prefill and 1 in the step (default seq)")
    parser.add_argument("--cache-parameter", metavar="NAME", help="decode: the forward's parameter the prefill's "
                        "cache goes back into (default: the returned field's name)")
    parser.add_argument("--assume", action="append", default=[], metavar="EXPR=VALUE",
                        help="a value for a condition the code cannot decide, e.g. self.flash=false (repeatable)")
    parser.add_argument("--config", metavar="FILE", help="config file (default: discovered from the current directory)")
    parser.add_argument("--dim", action="append", default=[], metavar="NAME=SIZE", help="declare a dim size")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="a module tree with totals, or JSON (Contract 7)")
    parser.add_argument("--output", metavar="FILE", help="write to FILE instead of stdout")


def _assume_value(text: str):
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)  # a probability or scale (`config.dropout=0.1`)
    except ValueError:
        return text.strip()
    return number if math.isfinite(number) else text.strip()


def _command_line_entry(args) -> ModelEntry:
    if args.build is not None:  # names resolve as in a module of the working directory
        parse_build(args.build, lambda reason: ConfigError("--build", args.build, reason))
        entry_text = args.entry or "forward"
        qualname = parse_method_entry(entry_text, lambda reason: ConfigError("--entry", entry_text, reason))
        path, readable = str(Path.cwd() / "command line"), ()
    else:
        path, qualname = parse_entry_text(args.entry, Path.cwd(),
                                          lambda reason: ConfigError("--entry", args.entry, reason))
        entry_text, readable = args.entry, (_package_root(Path(path)),)
    inputs = []
    for text in args.input:
        name, sep, spec = text.partition("=")
        if not sep or not name.strip().isidentifier():
            raise ConfigError("--input", text, "expected NAME=SPEC, e.g. idx='int64 B T'")
        inputs.append(parse_input_spec(name.strip(), spec, lambda reason, t=text: ConfigError("--input", t, reason)))
    values = read_config_json(Path(args.dims_from), "--dims-from", args.dims_from) if args.dims_from else {}
    assume = {}
    for text in args.assume:
        condition, sep, value = text.partition("=")
        if not sep or not condition.strip():
            raise ConfigError("--assume", text, "expected EXPR=VALUE, e.g. self.flash=false")
        assume[" ".join(condition.split())] = _assume_value(value)
    return ModelEntry(args.build or args.entry, entry_text, path, qualname, tuple(inputs), dims_of_config(values),
                      args.mode or "inference", assume, config_values=values, memory=_memory_flags(args),
                      readable=readable, build=args.build)



def _memory_flags(args) -> MemorySettings:
    """`--optimizer` and `--precision CATEGORY=DTYPE`, read as the config's keys are."""
    from ..config.fields import MappingReader
    from ..config.memory_settings import parse_memory_settings

    precision = {}
    for text in args.precision:
        key, sep, dtype = text.partition("=")
        if not sep:
            raise ConfigError("--precision", text, "expected CATEGORY=DTYPE, e.g. parameters=bfloat16")
        precision[key.strip()] = dtype.strip()
    given = {"optimizer": args.optimizer} if args.optimizer else {}
    for key, value in (("cache_len", args.cache_len), ("sequence_dim", args.sequence_dim),
                       ("cache_parameter", args.cache_parameter)):
        if value is not None:
            given[key] = value
    if precision:
        given["precision"] = precision
    reader = MappingReader(given, "command line", "")
    return parse_memory_settings(reader, args.mode or "inference") if given else MemorySettings(precision=Precision())



def _package_root(path: Path) -> str:
    """The top package holding `path` (transformers/ for .../models/llama/modeling_llama.py), or
    its folder: what an entry named on the command line may import."""
    folder = path.resolve().parent
    while (folder / "__init__.py").is_file() and (folder.parent / "__init__.py").is_file():
        folder = folder.parent
    return str(folder)


def run(args) -> int:
    dims = tuple(parse_dim_override(text) for text in args.dim)
    config = ConfigResolver(Overrides(config_file=args.config, dims=dims)).for_path(Path.cwd())
    if args.entry or args.build is not None:
        if args.names:
            raise ConfigError("tensorcost model", args.names[0], "give model NAMEs or --entry/--build, not both")
        entries = [_command_line_entry(args)]
    else:
        for flag, given in (("--input", args.input), ("--dims-from", args.dims_from), ("--mode", args.mode),
                            ("--assume", args.assume), ("--optimizer", args.optimizer), ("--precision", args.precision)):
            if given:
                raise ConfigError(flag, "", "only with --entry (a configured model sets it in `models:`)")
        configured = {entry.name: entry for entry in config.models}
        if not configured:
            raise ConfigError(config.source, "models", "no models configured; add `models:` or pass --entry")
        for name in args.names:
            if name not in configured:
                raise ConfigError(config.source, f"models.{name}", "no such model")
        entries = [configured[name] for name in args.names] if args.names else list(configured.values())
    results = analyse_entries(entries, config, command_line=bool(args.entry or args.build is not None))
    if args.format == "json":
        text = Streamed(model_document(results, config.hardware_id), indent=2, end="\n", consume=True)
    else:
        text = "\n\n".join(model_text(r, config.hardware_id) for r in results) + "\n"
    write_output(text, args.output)
    return 0


def analyse_entries(entries, config, command_line: bool = False) -> list:
    """Each model entry analysed; a failure is one ConfigError line naming the entry."""
    results = []
    for entry in entries:
        try:
            results.append(analyse_model(entry, config, dict(config.cli_dims)))
        except BuildError as error:  # the file and key that hold the build expression
            if command_line:
                raise ConfigError("--build", entry.build, str(error)) from None
            raise ConfigError(config.source, f"models.{entry.name}.build", str(error)) from None
        except SourceError as error:
            raise ConfigError(entry.entry, "entry", str(error)) from None
        except (RecursionError, MemoryError) as error:
            reason = f"too deep or too large to analyse ({type(error).__name__})"
            raise ConfigError(entry.entry, "entry", reason) from None
        except Exception as error:  # noqa: BLE001 - one line, never a traceback
            raise ConfigError(entry.entry, "entry",
                              f"internal error while analysing: {type(error).__name__}: {error}") from None
    return results

