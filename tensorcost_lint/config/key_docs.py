"""What each project-config key means, for the generated configuration reference
(docs/reference/configuration.md, `python -m tensorcost_lint.reference`).

The keys themselves are not listed by hand: the reference asks the parser which keys it reads
(tensorcost_lint/reference/config_keys.py), and a test fails when a key the parser reads has no
entry here, or an entry names a key the parser no longer reads. `default` is the YAML a user may
write to get the default explicitly (a test holds each against the parser); NO_DEFAULT means there
is none to write (a required key, a section, or a default computed from other keys).
"""

from __future__ import annotations

from dataclasses import dataclass


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT = _NoDefault()


@dataclass(frozen=True)
class KeyDoc:
    type: str
    default: object  # the YAML value equal to leaving the key out, or NO_DEFAULT
    meaning: str


# `NAME` stands for any model name under `models:`.
KEY_DOCS: dict[str, KeyDoc] = {
    "dims": KeyDoc("mapping of dim name → positive integer", {},
                   "Declared dim sizes (`{batch: 8, seq: 8192}`). A file pragma `# tensorcost: dims T=1024` "
                   "overrides them for that file, and `--dim NAME=SIZE` overrides both."),
    "sequence_dims": KeyDoc("list of dim names", ["seq", "T", "query_pos", "key_pos"],
                            "Dims whose pairs count as quadratic for TCL401 (`[seq, seq]` scores)."),
    "default_dtype": KeyDoc("dtype name", "float32",
                            "The dtype of a tensor whose annotation names none (`Shaped[...]`, a shape comment)."),
    "broadcast_policy": KeyDoc("`shared-weights` or `strict`", "shared-weights",
                               "`strict` also reports `x[b,s,d] @ w[d,f]` (a batched operand against an "
                               "unbatched weight) as TCL201."),
    "budgets": KeyDoc("mapping", NO_DEFAULT, "The thresholds of the cost rules (keys below)."),
    "budgets.quadratic_bytes": KeyDoc("byte size (`256MiB`, `1GiB`, `1.5GB` or an integer)", "256MiB",
                                      "TCL401: a quadratic output over this many bytes."),
    "budgets.intermediate_bytes": KeyDoc("byte size", "16GiB",
                                         "TCL402: any materialized output (or einsum intermediate) over this."),
    "budgets.contraction_regret": KeyDoc("number, 1 … 10**12", 4,
                                         "TCL403: the executed contraction order costs at least this many "
                                         "times the optimum (FLOPs)."),
    "budgets.latency_seconds": KeyDoc("number of seconds, 1e-12 … 31,536,000, or null", None,
                                      "TCL502: a roofline lower bound over this. Off when null (the default)."),
    "budgets.regression": KeyDoc("percentage string (`0%`, `5%`, `12.5%`)", "0%",
                                 "TCL601/TCL602 with `check --baseline`: the growth allowed against the "
                                 "baseline; `0%` reports any growth."),
    "hardware": KeyDoc("device id", "h100-sxm",
                       "The hardware evidence for bounds: a shipped id (`h100-sxm`, `h200`, `a100-80gb`, "
                       "`mi300x`, `l4`) or one from `evidence`."),
    "evidence": KeyDoc("list of file paths", [],
                       "Extra hardware-evidence YAML files (relative to the config file)."),
    "traffic_boundary": KeyDoc("boundary name", "hbm-to-compute",
                               "The traffic boundary bytes are counted across; a bound needs a bandwidth "
                               "record for it."),
    "execution": KeyDoc("mapping", NO_DEFAULT, "How often each site runs and how its outputs stay live (keys below)."),
    "execution.count": KeyDoc("positive integer", 1, "Executions of each call site."),
    "execution.liveness": KeyDoc("`serial-reuse`, `all-executions-live` or `not-retained`", "serial-reuse",
                                 "How executions' outputs are retained."),
    "execution.retained_copies": KeyDoc("integer ≥ 0", NO_DEFAULT,
                                        "Live copies of each output; when omitted, what the liveness policy "
                                        "requires (1 for serial-reuse, 0 for not-retained, `count` for "
                                        "all-executions-live)."),
    "frameworks": KeyDoc("mapping", NO_DEFAULT, "Execution models of frameworks (keys below)."),
    "frameworks.torch_einsum": KeyDoc("`left-to-right` or `opt-einsum`", "left-to-right",
                                      "How `torch.einsum` orders a multi-operand contraction: left to right, "
                                      "or opt_einsum's choice (torch with opt_einsum installed)."),
    "exclude": KeyDoc("list of globs", [], "Paths not walked into when checking a directory."),
    "extend_exclude": KeyDoc("list of globs", [], "More globs, on top of `exclude`."),
    "models": KeyDoc("mapping of model name → model entry", {},
                     "Whole-model analyses (`tensorcost model`, and `check` in context); see "
                     "[Whole models](../whole-models/index.md)."),
    "source_roots": KeyDoc("list of directory paths", [],
                           "Directories outside the project root (the config's repository) that whole-model "
                           "runs may read — imports, entries, `dims_from` (docs/limits-and-security.md). "
                           "Nothing outside the root is read without it."),
    "site_packages": KeyDoc("`auto`, `none` or a directory path", "none",
                            "Installed packages whose source whole-model runs may read, as text (Contract 7a): "
                            "`auto` is the site folders of the environment tensorcost runs in (read from "
                            "`sys.path`, nothing imported), a path is one site folder. `none` keeps runs "
                            "confined to the project and `source_roots`. torch, numpy and jax are never read "
                            "(the analysis models them); a package not found is one `not_followed` reason."),
    "work_budget": KeyDoc("mapping of `steps`, `contexts`, `entries` → positive integer", NO_DEFAULT,
                          "How much one whole-model run may do: statements interpreted (`steps`, default "
                          "50000), distinct (function, argument values) analyses (`contexts`, 5000), entries "
                          "walked for the retained bytes (`entries`, 1000000). When a part is spent the run "
                          "stops there, lists what was cut, and its total is partial."),
    "models.NAME": KeyDoc("mapping", NO_DEFAULT, "One whole-model analysis (keys below)."),
    "models.NAME.build": KeyDoc("Python call (text)", NO_DEFAULT,
                                "The model as you build it (Contract 7a): `\"VisionTransformer(depth=4)\"`, a "
                                "factory, `timm.create_model(\"vit_tiny_patch16_224\", depth=4)` or "
                                "`LlamaForCausalLM(config)` (`config`: the `dims_from` config). Parsed and "
                                "interpreted, never run; names resolve in the config's folder, `source_roots`, "
                                "then `site_packages`. Only calls, names, attributes and literals."),
    "models.NAME.entry": KeyDoc("`FILE:QUALNAME`, or a method name with `build`", NO_DEFAULT,
                                "The entry method, e.g. `model.py:GPT.forward` (FILE relative to the config "
                                "file; required without `build`), or with `build` a method of the built "
                                "object (default `forward`)."),
    "models.NAME.inputs": KeyDoc("mapping of parameter → `\"[dtype] shape\"`", {},
                                 "The entry's tensor parameters: an optional dtype, then a jaxtyping shape "
                                 "(`idx: \"int64 B T\"`)."),
    "models.NAME.dims_from": KeyDoc("path of a JSON file", NO_DEFAULT,
                                    "A Hugging Face `config.json`: each integer field is a dim of its name, "
                                    "and `config.x` reads its values."),
    "models.NAME.mode": KeyDoc("`inference`, `training`, `prefill` or `decode`", "inference",
                               "`training` adds the backward (FLOPs, retained bytes and the memory of a "
                               "training step); `prefill` and `decode` are serving (Contract 9, docs/memory.md)."),
    "models.NAME.optimizer": KeyDoc("`none`, `sgd`, `sgd-momentum`, `adam`, `adamw`, `adafactor` or `lion`",
                                    NO_DEFAULT, "Training only (`adamw` when unset): the optimizer whose states "
                                                "`totals.memory` counts."),
    "models.NAME.precision": KeyDoc("mapping of `parameters`, `gradients`, `optimizer_states`, `master_weights` "
                                    "→ dtype", NO_DEFAULT,
                                    "The dtype each memory category is held in (mixed precision: bf16 parameters "
                                    "with fp32 `master_weights`); unset categories take the model's dtype."),
    "models.NAME.cache_len": KeyDoc("positive integer", NO_DEFAULT,
                                    "Decode: the tokens already in the KV cache the new token attends to "
                                    "(the model's own prefill of that many tokens fills it)."),
    "models.NAME.sequence_dim": KeyDoc("dim name", NO_DEFAULT,
                                       "Decode only (`seq` when unset): the inputs' token dim, `cache_len` in the "
                                       "prefill that fills the cache, 1 in the decode step that is costed."),
    "models.NAME.cache_parameter": KeyDoc("parameter name", NO_DEFAULT,
                                          "Decode: the forward's parameter the prefill's cache goes back into "
                                          "(default: the name of the returned field holding it, `cache` or "
                                          "`past_key_values`)."),
    "models.NAME.cache_dtype": KeyDoc("dtype name", NO_DEFAULT,
                                      "Prefill and decode: the KV cache's dtype (default: the model's)."),
    "models.NAME.assume": KeyDoc("mapping of code → true, false, integer or string", {},
                                 "Values for conditions the code cannot decide, matched by the condition's "
                                 "code (`\"self.flash\": false`)."),
    "models.NAME.budgets": KeyDoc("mapping", NO_DEFAULT, "TCL503's budgets for this model (keys below; each null = off)."),
    "models.NAME.budgets.flops": KeyDoc("positive integer or null", None, "TCL503: total FLOPs over this."),
    "models.NAME.budgets.retained_bytes": KeyDoc("byte size or null", None,
                                                 "TCL503: `peak_retained_bytes` over this."),
    "models.NAME.budgets.latency_seconds": KeyDoc("number of seconds or null", None,
                                                  "TCL503: the model's lower bound over this."),
    "causal_attention_flops": KeyDoc("`unmasked` or `dense`", "unmasked",
                                     "How a causal fused attention is counted in whole models: only the scores "
                                     "the mask keeps, or the full square (FlopCounterMode's count)."),
    "select": KeyDoc("list of rule codes or prefixes", [],
                     "The rules to run; empty means the defaults. TCL501 only when named exactly."),
    "extend_select": KeyDoc("list of rule codes or prefixes", [], "Codes added on top of the selection (`TCL501`)."),
    "ignore": KeyDoc("list of rule codes or prefixes", [], "Codes not reported."),
    "extend_ignore": KeyDoc("list of rule codes or prefixes", [], "Codes ignored on top of `ignore`."),
    "per_file_ignores": KeyDoc("mapping of glob → list of codes (or `\"A,B\"`)", {},
                               "Codes ignored in matching files; globs relative to the config file (a bare "
                               "name matches any file of that name)."),
}
