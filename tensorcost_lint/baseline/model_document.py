"""The `models` section of a baseline file (Contract 8): every configured model's totals, and the
sites it reaches that the per-file analysis does not cost identically, each under its stable site
identity plus the model and the module paths that ran it.

```json
"models": {"gpt2": {"entry": "model.py:GPT.forward", "mode": "inference",
                    "totals": {"flops": 91959459840, "forward_flops": 91959459840, "backward_flops": 0,
                               "traffic_bytes": 1234, "peak_retained_bytes": null,
                               "lower_bound_seconds": "0.000123"},
                    "sites": [{"path": "model.py", "qualname": "MLP.forward", "expression": "self.c_fc(x)",
                               "occurrence": 0, "module": "transformer.h.mlp.c_fc", "flops": 1234, ...}]}}
```
Totals and site costs are exact (ints; the bound an exact decimal string; null when unknown, as
`peak_retained_bytes` until the analysis computes it). Site costs are per execution, as for
`sites`; how often a site runs is in the model's totals.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from .site_entries import _DECIMAL, MAX_COUNT, SiteCosts, _site, encoded_site
from .identity import SiteKey

MODEL_METRICS = ("flops", "forward_flops", "backward_flops", "traffic_bytes", "peak_retained_bytes",
                 "lower_bound_seconds")
_MODEL_KEYS = {"entry", "mode", "totals", "sites"}


@dataclass(frozen=True, order=True)
class ModelSiteKey(SiteKey):
    """A site as one model reaches it: the site's identity, the model, the module paths."""

    model: str = ""
    module: str = ""

    def label(self) -> str:
        return f"{super().label()} in model `{self.model}` at {self.module or '(root)'}"


@dataclass
class ModelBaseline:
    entry: str
    mode: str
    totals: dict  # MODEL_METRICS -> int | Decimal | None
    sites: dict = field(default_factory=dict)  # ModelSiteKey -> SiteCosts


def encode_models(models: dict) -> dict:
    document = {}
    for name in sorted(models):
        model = models[name]
        totals = {metric: (None if model.totals.get(metric) is None else
                           str(model.totals[metric]) if metric == "lower_bound_seconds" else model.totals[metric])
                  for metric in MODEL_METRICS}
        sites = [{**encoded_site(key, model.sites[key]), "module": key.module} for key in sorted(model.sites)]
        document[name] = {"entry": model.entry, "mode": model.mode, "totals": totals, "sites": sites}
    return document


def _total(value, metric: str, refuse):
    if value is None:
        return None
    if metric == "lower_bound_seconds":
        if not isinstance(value, str) or len(value) > 100 or not _DECIMAL.fullmatch(value):
            raise refuse(f"totals.{metric} must be null or a decimal string")
        try:
            return Decimal(value)
        except InvalidOperation:
            raise refuse(f"totals.{metric} must be null or a decimal string") from None
    if type(value) is not int or not 0 <= value <= MAX_COUNT:
        raise refuse(f"totals.{metric} must be null or an integer in 0..2**63-1")
    return value


def decode_models(raw: dict, refuse) -> dict:
    """{name: ModelBaseline}; `refuse(reason)` makes the one-line error."""
    models = {}
    for name, entry in raw.items():
        def here(reason, name=name):
            return refuse(f"models.{str(name)[:100]}: {reason}")

        if not isinstance(name, str) or not isinstance(entry, dict) or set(entry) != _MODEL_KEYS:
            raise here(f"expected the keys {', '.join(sorted(_MODEL_KEYS))}")
        if not all(isinstance(entry[k], str) and len(entry[k]) <= 10_000 for k in ("entry", "mode")):
            raise here("entry and mode must be strings")
        totals = entry["totals"]
        if not isinstance(totals, dict) or set(totals) != set(MODEL_METRICS):
            raise here(f"totals: expected the keys {', '.join(sorted(MODEL_METRICS))}")
        values = {metric: _total(totals[metric], metric, here) for metric in MODEL_METRICS}
        if not isinstance(entry["sites"], list):
            raise here("sites must be a list")
        sites = {}
        for index, item in enumerate(entry["sites"]):
            if not isinstance(item, dict) or not isinstance(item.get("module"), str) or len(item["module"]) > 10_000:
                raise here(f"sites[{index}]: module must be a string")
            plain = {k: v for k, v in item.items() if k != "module"}
            key, costs = _site(plain, lambda reason, index=index: here(f"sites[{index}]: {reason}"))
            model_key = ModelSiteKey(key.path, key.qualname, key.expression, key.occurrence, name, item["module"])
            if model_key in sites:
                raise here(f"sites[{index}]: duplicate site {model_key.label()}")
            sites[model_key] = costs
        models[name] = ModelBaseline(entry["entry"], entry["mode"], values, sites)
    return models


def site_costs(record: dict) -> SiteCosts:
    exact = record.get("lower_bound_seconds_exact")
    return SiteCosts(record["flops"], record["output_bytes"], record["traffic_bytes"],
                     None if exact is None else Decimal(exact))
