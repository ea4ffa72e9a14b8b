"""A run's cost summary as numbers: each site costed once by the per-file costing, multiplied by
its executions; training adds the backward by the requires-grad rule. Unknown stays unknown: a
site that cannot be costed is listed with its reason and adds nothing."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from decimal import Decimal


from ...analysis import convolutions
from ...rules import describe
from ...costing.site_costs import cost_site
from ..library.backward_matmuls import backward_flops
from ..library.einsum_execution import torch_einsum_flops
from ..values.objects import BackwardMatmul, Called, Checkpointed, Choice, Repeat, SiteEntry, known_count, Visit

MAX_COUNT = 2**63 - 1


@dataclass(slots=True)  # one per site and call (a 100,000-statement forward: 200,000)
class SiteRow:
    entry: SiteEntry
    executions: int | None
    flops: int | None  # forward + backward per execution times executions
    forward: int | None
    backward: int | None
    traffic_bytes: int | None
    seconds: Decimal | None
    reason: str | None
    alternative: bool = False  # on the cheaper side of an undecided branch: not in the max
    traffic_bound: bool = False  # its bound is its traffic over the bandwidth, not its FLOPs over the peak


@dataclass
class Part:
    """One run's numbers along its cheapest (low) and its most expensive (high) branch choices."""

    forward: list = field(default_factory=lambda: [0, 0])
    backward: list = field(default_factory=lambda: [0, 0])
    traffic: list = field(default_factory=lambda: [0, 0])
    seconds: list = field(default_factory=lambda: [Decimal(0), Decimal(0)])  # None: some site has no bound
    # the part of `seconds` from sites whose bound is their traffic (decode: most of it)
    traffic_seconds: list = field(default_factory=lambda: [Decimal(0), Decimal(0)])

    def total(self, side: int) -> int:
        return self.forward[side] + self.backward[side]

    def add(self, other: "Part", side: int | None = None) -> None:
        for index in (0, 1):
            source = index if side is None else side
            self.forward[index] += other.forward[source]
            self.backward[index] += other.backward[source]
            self.traffic[index] += other.traffic[source]
            mine, theirs = self.seconds[index], other.seconds[source]
            self.seconds[index] = None if mine is None or theirs is None else mine + theirs
            mine, theirs = self.traffic_seconds[index], other.traffic_seconds[source]
            self.traffic_seconds[index] = None if mine is None or theirs is None else mine + theirs


@dataclass
class Totals:
    rows: list = field(default_factory=list)
    part: Part = field(default_factory=Part)
    visits: dict = field(default_factory=dict)  # module path -> executions of its forward (None: unknown)
    # undecided condition -> FLOPs between its dearest and cheapest sides, over every place it decides a
    # Choice (the text report lists the conditions that matter most first)
    at_stake: dict = field(default_factory=dict)
    # id(summary), enclosing reason, recompute, executions known -> _Summary: each callee summary
    # costed once per way it is reached, then multiplied (a call tree costs its distinct calls)
    summaries: dict = field(default_factory=dict)
    costs: dict = field(default_factory=dict)  # costing fields of a site -> its SiteCost (_site_cost)


@dataclass
class _Summary:
    part: Part  # one execution's numbers
    rows: list  # one execution's rows, one per site and module path
    visits: dict  # module path -> executions of its forward in one execution
    at_stake: dict = field(default_factory=dict)  # condition -> FLOPs between its sides in one execution


def _checked(value: int, what: str) -> int:
    if value > MAX_COUNT:
        raise OverflowError(f"{what} exceeds 2**63-1")
    return value


def attention_flops(site, cost, dense: bool):
    """(forward, backward) FLOPs of one fused attention as FlopCounterMode counts them: the two
    matmuls forward, five (with the score recompute) backward; `unmasked` causal counts only the
    scores the mask keeps."""
    query, key, value = cost.operand_shapes
    if site.attention.layout == "bshd":
        query, key, value = ((s[0], s[2], s[1], s[3]) if len(s) == 4 else s for s in (query, key, value))
    batch = 1
    for size in query[:-2]:
        batch *= size
    q_len, k_len, d, e = query[-2], key[-2], query[-1], value[-1]
    forward = 2 * batch * q_len * k_len * (d + e)
    backward = 2 * batch * q_len * k_len * (3 * d + 2 * e)
    if site.attention.is_causal and not dense and q_len == k_len:
        forward = batch * q_len * (q_len + 1) * (d + e)
        backward = batch * q_len * (q_len + 1) * (3 * d + 2 * e)
    return forward, backward


def _site_cost(site, sizes, config, costs: dict | None):
    """The per-file costing of `site`; sites equal in everything costing reads (a forward of
    100,000 `h = self.lin(h)`) share one costing within a run's totals."""
    if costs is None:
        return cost_site(site, sizes, config, describe)
    try:
        shapes = site.shapes
        shapes_key = None if shapes is None else (shapes.inputs, shapes.output, tuple(shapes.dims.items()),
                                                  shapes.output_shape, shapes.broadcast, shapes.problems,
                                                  shapes.undecided, shapes.attention, shapes.operands)
        key = (site.spec, site.framework, site.function, site.operands, shapes_key, site.precision, site.einsum,
               site.attention, site.chain, site.unresolved)
        found = costs.get(key)
    except TypeError:  # a field that is not hashable: costed on its own
        return cost_site(site, sizes, config, describe)
    if found is None:
        found = cost_site(site, sizes, config, describe)
        if found.resolved:  # numbers only; a reason may name the site's own line
            costs[key] = found
    return found


UNKNOWN_TRIPS = "loop trip count is not known statically"


def cost_row(entry: SiteEntry, executions: int | None, sizes, config, training: bool,
             recompute: bool = False, costs: dict | None = None) -> SiteRow:
    """`recompute`: inside a checkpointed call, whose forward runs again in the backward."""
    site = entry.site
    cost = _site_cost(site, sizes, config, costs)
    if not cost.resolved:
        return SiteRow(entry, executions, None, None, None, None, None, cost.reason)
    if executions is None:
        return SiteRow(entry, None, None, None, None, None, None, UNKNOWN_TRIPS)
    if site.operation == "attention":
        forward, backward = attention_flops(site, cost, config.causal_attention_flops == "dense")
        backward = backward if training and any(entry.grads) else 0
    else:
        forward = cost.flops
        if site.operation == "einsum" and site.framework in ("torch", "einops"):  # eager torch.einsum's own count
            forward = torch_einsum_flops(cost.plans)
            if forward is None:
                return SiteRow(entry, executions, None, None, None, None, None,
                               "an einsum step over more than two operands: not a path torch executes")
        backward = forward * sum(1 for g in entry.grads[:2] if g) if training else 0
        if training and site.operation == "convolution" and len(entry.grads) > 1 and entry.grads[1]:
            factor = convolutions.weight_gradient_factor(site, sizes)
            if factor is None:
                return SiteRow(entry, executions, None, None, None, None, None,
                               "a grouped convolution's weight gradient needs the group count as a number")
            backward += forward * (factor - 1)
    if recompute and training:
        backward += forward
    seconds = cost.lower_bound_seconds
    try:
        if executions == 1:  # the numbers of a shared costing as they are (one site a line: no copies)
            return SiteRow(entry, 1, _checked(forward + backward, "FLOPs"), forward, backward, cost.traffic_bytes,
                           seconds, None, traffic_bound=cost.bottleneck == "TRAFFIC")
        total = _checked((forward + backward) * executions, "FLOPs")
        row = SiteRow(entry, executions, total, _checked(forward * executions, "FLOPs"),
                      _checked(backward * executions, "FLOPs"), _checked(cost.traffic_bytes * executions, "bytes"),
                      None if seconds is None else seconds * executions, None,
                      traffic_bound=cost.bottleneck == "TRAFFIC")
    except OverflowError as error:  # exact counts only: a site run too often is unresolved, with why
        return SiteRow(entry, executions, None, None, None, None, None, f"too large to cost: {error}")
    return row


def backward_matmul_row(entry: BackwardMatmul, executions: int | None, sizes) -> SiteRow:
    """A matmul only the backward runs: backward FLOPs alone (no forward, traffic or bound: a
    site's backward adds none of those either)."""
    flops, reason = backward_flops(entry, sizes)
    if reason is not None:
        return SiteRow(entry, executions, None, None, None, None, None, reason)
    if executions is None:
        return SiteRow(entry, None, None, None, None, None, None, UNKNOWN_TRIPS)
    try:
        backward = _checked(flops * executions, "FLOPs")
    except OverflowError as error:
        return SiteRow(entry, executions, None, None, None, None, None, f"too large to cost: {error}")
    return SiteRow(entry, executions, backward, 0, backward, 0, Decimal(0), None)


def total(entries, sizes, config, training: bool) -> Totals:
    result = Totals()
    result.part = _walk(entries, 1, sizes, config, training, result, None)
    return result


def _walk(entries, executions, sizes, config, training, result: Totals, reason, recompute: bool = False) -> Part:
    part = Part()
    for entry in entries:
        if type(entry) is SiteEntry or type(entry) is BackwardMatmul and training and entry.grads[0]:
            row = cost_row(entry, executions, sizes, config, training, recompute, result.costs) \
                if type(entry) is SiteEntry else backward_matmul_row(entry, executions, sizes)
            overflowed = reason is not None and reason.startswith("too large to cost") and row.executions is None
            # the loop's own why (a carried shape that changes) over the generic unknown count
            if reason is not None and (row.reason is None or overflowed or row.reason == UNKNOWN_TRIPS):
                row = SiteRow(entry, None, None, None, None, None, None, reason)
            result.rows.append(row)
            if row.reason is None:
                for index in (0, 1):
                    part.forward[index] += row.forward
                    part.backward[index] += row.backward
                    part.traffic[index] += row.traffic_bytes
                    part.seconds[index] = None if part.seconds[index] is None or row.seconds is None \
                        else part.seconds[index] + row.seconds
                    if row.traffic_bound:
                        part.traffic_seconds[index] = None if part.traffic_seconds[index] is None \
                            or row.seconds is None else part.traffic_seconds[index] + row.seconds
        elif type(entry) is Visit:
            known = result.visits.get(entry.module, 0)
            result.visits[entry.module] = None if known is None or executions is None else known + executions
        elif type(entry) is Repeat:
            count = known_count(entry.count, sizes)
            inner, too_large = _times(executions, count)
            part.add(_walk(entry.entries, inner, sizes, config, training, result,
                           reason or too_large or (entry.reason if count is None else None), recompute))
        elif type(entry) is Called:
            inner, too_large = _times(executions, entry.count)
            summary = _summary(entry.entries, inner is not None, sizes, config, training, result, reason or too_large,
                               recompute)
            try:
                scaled_part, scaled_rows = _scaled(summary.part, inner or 0), [_scaled_row(r, inner) for r in summary.rows]
            except OverflowError as error:  # the call's numbers pass 2**63-1: its sites unresolved, with why
                summary = _summary(entry.entries, False, sizes, config, training, result, f"too large to cost: {error}",
                                   recompute)
                inner, scaled_part, scaled_rows = None, Part(), [_scaled_row(r, None) for r in summary.rows]
            part.add(scaled_part)
            result.rows.extend(scaled_rows)
            for module, count in summary.visits.items():
                known = result.visits.get(module, 0)
                result.visits[module] = None if known is None or count is None or inner is None \
                    else known + count * inner
            for condition, stake in summary.at_stake.items():  # what the call's conditions move, per call
                result.at_stake[condition] = result.at_stake.get(condition, 0) + stake * (inner or 1)
        elif type(entry) is Checkpointed:
            part.add(_walk(entry.entries, executions, sizes, config, training, result, reason, True))
        elif type(entry) is Choice:
            sides, spans, visits, before = [], [], [], result.visits
            for side in entry.sides:
                start = len(result.rows)
                result.visits = dict(before)
                sides.append(_walk(side, executions, sizes, config, training, result, reason, recompute))
                spans.append((start, len(result.rows)))
                visits.append(result.visits)
            result.visits = _most_visits(visits)  # one side runs: a module shared by the sides runs once
            low = min(sides, key=lambda p: p.total(0))
            high = max(sides, key=lambda p: p.total(1))
            result.at_stake[entry.condition] = result.at_stake.get(entry.condition, 0) + high.total(1) - low.total(0)
            rows = result.rows
            for side, (start, end) in zip(sides, spans):
                if side is not high:  # a copy: a summary's rows are shared by every call of it (_scaled_row)
                    for index in range(start, end):
                        rows[index] = replace(rows[index], alternative=True)
            chosen = Part()
            chosen.add(low, 0)
            both = Part()
            both.add(high, 1)
            for name in ("forward", "backward", "traffic", "seconds", "traffic_seconds"):
                getattr(chosen, name)[1] = getattr(both, name)[1]
            part.add(chosen)
    return part


def _times(executions, count):
    """(executions × count, None), or (None, why) when either is unknown or the product passes 2**63-1."""
    if executions is None or count is None:
        return None, None
    if executions * count > MAX_COUNT:
        return None, "too large to cost: executions exceed 2**63-1"
    return executions * count, None


def _summary(entries, known: bool, sizes, config, training, result: Totals, reason, recompute) -> _Summary:
    key = (id(entries), reason, recompute, known)
    found = result.summaries.get(key)
    if found is None:
        inner = Totals(summaries=result.summaries, costs=result.costs)
        part = _walk(entries, 1 if known else None, sizes, config, training, inner, reason, recompute)
        found = result.summaries[key] = _Summary(part, _merged_rows(inner.rows), inner.visits, inner.at_stake)
    return found


def _merged_rows(rows: list) -> list:
    """One row per site, module path, reason and side: what the reports group by anyway. `rows` are
    a summary's own (nothing else holds them): a row is copied only when another adds to it."""
    merged: dict = {}
    copied: set = set()  # keys whose row is a copy of its own
    for row in rows:
        site = row.entry.site if type(row.entry) is SiteEntry else row.entry  # a BackwardMatmul: its own
        key = (id(site), row.entry.module, row.reason, row.alternative)
        current = merged.get(key)
        if current is None:
            merged[key] = row
            continue
        if key not in copied:
            current = merged[key] = replace(current)
            copied.add(key)
        for name in ("executions", "flops", "forward", "backward", "traffic_bytes", "seconds"):
            mine, theirs = getattr(current, name), getattr(row, name)
            setattr(current, name, None if mine is None or theirs is None else mine + theirs)
    return list(merged.values())


def _scaled_row(row: SiteRow, factor) -> SiteRow:
    """`row` times `factor`; `row` itself for a factor of 1 (rows are never changed in place once
    made: a call run once shares its summary's rows, which a 100,000-site forward copied whole)."""
    if factor == 1:
        return row
    def scaled(value):
        return None if value is None or factor is None else value * factor
    return SiteRow(row.entry, scaled(row.executions), _scaled_int(row.flops, factor), _scaled_int(row.forward, factor),
                   _scaled_int(row.backward, factor), _scaled_int(row.traffic_bytes, factor), scaled(row.seconds),
                   row.reason, row.alternative, row.traffic_bound)


def _scaled_int(value, factor):
    return None if value is None or factor is None else _checked(value * factor, "FLOPs")


def _scaled(part: Part, factor: int) -> Part:
    out = Part()
    for index in (0, 1):
        out.forward[index] = _checked(part.forward[index] * factor, "FLOPs")
        out.backward[index] = _checked(part.backward[index] * factor, "FLOPs")
        out.traffic[index] = _checked(part.traffic[index] * factor, "bytes")
        out.seconds[index] = None if part.seconds[index] is None else part.seconds[index] * factor
        out.traffic_seconds[index] = None if part.traffic_seconds[index] is None \
            else part.traffic_seconds[index] * factor
    return out


def _most_visits(sides: list) -> dict:
    """Each module's executions on the side that runs it most (None: unknown on some side)."""
    merged: dict = {}
    for visits in sides:
        for module, count in visits.items():
            known = merged.get(module, 0)
            merged[module] = None if known is None or count is None else max(known, count)
    return merged
