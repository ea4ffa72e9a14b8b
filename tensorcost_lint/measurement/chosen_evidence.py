"""`--evidence FILE`, `--hardware ID` and `--traffic-boundary NAME` for `measure` and `report`.

`check` takes its evidence from the project config only; these two commands are where a freshly
calibrated file is tried out, so they also accept it on the command line, on top of whatever
config governs each file. The traffic boundary is never switched silently: it changes only when
named with --traffic-boundary, or when the chosen device has evidence for exactly one boundary
and not the configured one — and then a note on stderr says so.
"""

from __future__ import annotations

import sys
from dataclasses import replace

from ..config.errors import ConfigError
from ..config.config_discovery import ConfigResolver, Overrides, parse_dim_override
from ..hardware.evidence_files import load_evidence_file, resolve_device


def add_evidence_arguments(parser) -> None:
    parser.add_argument("--evidence", action="append", default=[], metavar="FILE",
                        help="hardware-evidence YAML to use, e.g. from `tensorcost calibrate` (repeatable); "
                             "its only device becomes --hardware unless one is named")
    parser.add_argument("--traffic-boundary", metavar="NAME",
                        help="count traffic across this boundary (e.g. dram-to-cpu for CPU evidence)")


def load_extra_devices(paths) -> dict:
    devices: dict = {}
    for path in paths:
        devices.update(load_evidence_file(path))
    return devices


class EvidenceResolver(ConfigResolver):
    """A ConfigResolver whose configs also see the --evidence devices, and the chosen hardware and
    boundary. Sites are costed with these, so every bound printed uses the same evidence."""

    def __init__(self, args, *, notes=None) -> None:
        self.extra = load_extra_devices(args.evidence)
        hardware = args.hardware
        if hardware is None and len(self.extra) == 1:
            hardware = next(iter(self.extra))
        self.hardware = hardware
        self.boundary = args.traffic_boundary
        self.notes = notes if notes is not None else []
        dims = tuple(parse_dim_override(text) for text in args.dim)
        super().__init__(Overrides(config_file=args.config, dims=dims))
        self._chosen: dict[int, object] = {}

    def for_path(self, path):
        config = super().for_path(path)
        key = id(config)
        if key not in self._chosen:
            self._chosen[key] = self._apply(config)
        return self._chosen[key]

    def _apply(self, config):
        devices = {**config.devices, **self.extra}
        hardware_id = self.hardware or config.hardware_id
        try:
            device = resolve_device(hardware_id, devices, config.source, "hardware")
        except ConfigError:
            raise ConfigError("--hardware", hardware_id, "unknown hardware id (not shipped, not in --evidence "
                                                         f"and not in {config.source})") from None
        boundary = self._boundary(device, config.traffic_boundary, config.source)
        return replace(config, devices=devices, hardware_id=hardware_id, traffic_boundary=boundary)

    def _boundary(self, device, configured: str, source: str) -> str:
        if self.boundary is not None:
            return self.boundary
        known = [b.traffic_boundary for b in device.bandwidth]
        if configured in known or len(known) != 1:
            return configured
        note = (f"note: {device.id} has bandwidth evidence for {known[0]} only; counting traffic across "
                f"{known[0]} instead of {configured} (from {source}); pass --traffic-boundary to choose")
        if note not in self.notes:
            self.notes.append(note)
            print(note, file=sys.stderr)
        return known[0]

    def plan_with_evidence(self, plan, source: str):
        """A plan file carries its own evidence; --hardware/--evidence replace it (and its
        boundary, as for sites), so one plan can be held against this machine's calibration."""
        if self.hardware is None:
            return plan
        from estimator import TrafficModel

        device = resolve_device(self.hardware, self.extra, "--hardware", "--hardware")
        boundary = self._boundary(device, plan.traffic.boundary, source)
        return replace(plan, hardware=device, traffic=TrafficModel(boundary, plan.traffic.owner))
