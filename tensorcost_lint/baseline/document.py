"""The baseline file: every resolved site's exact cost under its stable identity (Contract 8).

```json
{"baseline_version": 1, "tool": "tensorcost", "tool_version": "0.1.0",
 "config_fingerprint": "sha256:…",
 "sites": [{"path": "model.py", "qualname": "MLP.forward", "expression": "self.c_fc(x)", "occurrence": 0,
            "flops": 1234, "output_bytes": 1234, "traffic_bytes": 1234, "lower_bound_seconds": "0.0000123"}]}
```
Counts are exact integers, the lower bound an exact decimal string (null without hardware
evidence). Sites are sorted by identity and the JSON by key, so two runs write the same bytes.
A `models` section (whole-model totals and the sites reached from each model, keyed by model name:
`model_document`) is a top-level key beside `sites`, written only when the config has `models:`;
`baseline_version` stays 1 and no existing field changes meaning.

Reading is bounded (size, nesting, every field typed): a file that is not a baseline is one
ConfigError, never a traceback.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from .. import __version__
from ..safe_io.bounded_read import read_capped
from ..config.errors import ConfigError
from .model_document import decode_models, encode_models
from .site_entries import SiteCosts, _site, encoded_site  # noqa: F401 - SiteCosts is read from here too

BASELINE_VERSION = 1
MAX_BASELINE_BYTES = 64 * 2**20
_TOP_KEYS = {"baseline_version", "tool", "tool_version", "config_fingerprint", "sites"}
METRICS = ("flops", "output_bytes", "traffic_bytes", "lower_bound_seconds")


@dataclass
class Baseline:
    tool_version: str
    config_fingerprint: str
    sites: dict  # SiteKey -> SiteCosts
    models: dict | None = None  # name -> model_document.ModelBaseline


def cost_fingerprint(configs) -> str:
    """What the costs depend on, hashed: dims, dtypes, policies, execution, hardware. Budgets,
    rule selection and the config file's location are left out: they change findings, not costs."""
    parts = []
    for config in configs:
        parts.append("\n".join([repr(sorted(config.dims.items())), repr(sorted(config.cli_dims.items())),
                                config.default_dtype, config.broadcast_policy, config.hardware_id,
                                config.traffic_boundary, repr(config.execution), config.torch_einsum,
                                repr(config.hardware)]))
    return "sha256:" + hashlib.sha256("\n\0".join(sorted(set(parts))).encode("utf-8")).hexdigest()


def encode(baseline: Baseline) -> bytes:
    sites = [encoded_site(key, baseline.sites[key]) for key in sorted(baseline.sites)]
    document = {"baseline_version": BASELINE_VERSION, "tool": "tensorcost", "tool_version": baseline.tool_version,
                "config_fingerprint": baseline.config_fingerprint, "sites": sites}
    if baseline.models:
        document["models"] = encode_models(baseline.models)
    return (json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def current(sites: dict, configs, models: dict | None = None) -> Baseline:
    return Baseline(__version__, cost_fingerprint(configs), sites, models or None)


def load(path: str) -> Baseline:
    def refuse(reason: str) -> ConfigError:
        return ConfigError(path, "", f"not a tensorcost baseline: {reason}")

    try:
        raw = read_capped(path, MAX_BASELINE_BYTES)
    except OSError as error:
        raise ConfigError(path, "", f"cannot read the baseline: {error.strerror or error}") from None
    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise refuse(f"not JSON ({type(error).__name__})") from None
    if not isinstance(document, dict) or not _TOP_KEYS <= set(document) or set(document) - _TOP_KEYS - {"models"}:
        raise refuse(f"expected the keys {', '.join(sorted(_TOP_KEYS))}")
    if document["baseline_version"] != BASELINE_VERSION or type(document["baseline_version"]) is not int:
        raise refuse(f"baseline_version {str(document['baseline_version'])[:20]!r} is not {BASELINE_VERSION}")
    if document["tool"] != "tensorcost" or not all(isinstance(document[k], str) and len(document[k]) <= 200
                                                    for k in ("tool_version", "config_fingerprint")):
        raise refuse("tool, tool_version and config_fingerprint must be short strings naming tensorcost")
    models = document.get("models")
    if models is not None:
        if not isinstance(models, dict):
            raise refuse("models must be a mapping")
        models = decode_models(models, refuse)
    if not isinstance(document["sites"], list):
        raise refuse("sites must be a list")
    sites = {}
    for index, entry in enumerate(document["sites"]):
        key, costs = _site(entry, lambda reason: refuse(f"sites[{index}]: {reason}"))
        if key in sites:
            raise refuse(f"sites[{index}]: duplicate site {key.label()}")
        sites[key] = costs
    return Baseline(document["tool_version"], document["config_fingerprint"], sites, models)
