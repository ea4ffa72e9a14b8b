"""`tensorcost calibrate`: measure this machine and write hardware evidence (Contract 3)."""

from __future__ import annotations

import getpass
import re
import sys
from pathlib import Path

from ..config.errors import ConfigError
from .output_files import write_file

ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def add_arguments(parser) -> None:
    parser.add_argument("--device", default="cpu", metavar="cpu|cuda[:N]",
                        help="what to measure (default: cpu; cuda needs torch with a visible GPU)")
    parser.add_argument("--id", dest="device_id", metavar="ID",
                        help="hardware id to write (default: local-cpu / local-cuda); name it in `hardware:`")
    parser.add_argument("--owner", metavar="NAME", help="who answers for this evidence (default: your user name)")
    parser.add_argument("--out", default="calibrated.yaml", metavar="FILE",
                        help="evidence file to write, '-' for stdout (default: calibrated.yaml; "
                             "other ids in it are kept)")
    parser.add_argument("--quick", action="store_true", help="small sizes and few repeats (seconds; for tests)")
    parser.add_argument("--threads", type=int, metavar="N", help="threads for BLAS/torch (default: their own default)")
    parser.add_argument("--budget", type=float, metavar="SECONDS",
                        help="time for all measurements (default: 45, or 6 with --quick)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def _settings(args):
    from ..measurement.calibration import Settings

    device = args.device.strip().lower()
    if device != "cpu" and not re.fullmatch(r"cuda(:\d+)?", device):
        raise ConfigError("--device", args.device, "expected cpu, cuda or cuda:N")
    if args.threads is not None and args.threads < 1:
        raise ConfigError("--threads", str(args.threads), "must be at least 1")
    budget = args.budget if args.budget is not None else (6.0 if args.quick else 45.0)
    if not 0 < budget <= 3600:
        raise ConfigError("--budget", str(args.budget), "must be between 0 and 3600 seconds")
    device_id = args.device_id or ("local-cpu" if device == "cpu" else "local-cuda")
    if not ID_PATTERN.match(device_id):
        raise ConfigError("--id", device_id, "use letters, digits, '.', '_' and '-'")
    return device, device_id, Settings(quick=args.quick, threads=args.threads, budget_seconds=budget)


def _owner(args) -> str:
    if args.owner is not None:
        if not args.owner.strip():
            raise ConfigError("--owner", args.owner, "must not be empty")
        return args.owner.strip()
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no user database in some containers
        return "unknown (pass --owner)"


def run(args) -> int:
    from ..measurement.calibration import CPU_BOUNDARY, CUDA_BOUNDARY
    from ..measurement.evidence_writer import calibration_evidence, detail_comment, merged_devices, render_evidence
    from ..measurement.machine_calibration import calibrate_cpu, calibrate_cuda
    from ..measurement.progress import ProgressBar

    device, device_id, settings = _settings(args)
    owner = _owner(args)
    out = None if args.out == "-" else Path(args.out)
    if out is not None and out.is_dir():
        raise ConfigError(args.out, "--out", "is a directory; name a .yaml file")
    if out is not None:
        merged_devices(out, None)  # refuse a file that is not evidence before a minute of measuring

    def progress(total: int) -> ProgressBar:
        return ProgressBar("calibrate", total, enabled=not args.no_progress)

    if device == "cpu":
        calibration = calibrate_cpu(settings, device_id, progress)
    else:
        calibration = calibrate_cuda(settings, device, device_id, progress)
    evidence = calibration_evidence(calibration, owner)
    boundary = CPU_BOUNDARY if device == "cpu" else CUDA_BOUNDARY
    devices = [evidence] if out is None else merged_devices(out, evidence)
    text = render_evidence(devices, {device_id: detail_comment(calibration)},
                           out.name if out is not None else "FILE", boundary)
    if out is None:
        sys.stdout.write(text)
        return 0
    write_file(str(out), text.encode("utf-8"), "--out")  # merged into whole, or left as it was
    print(f"wrote {device_id} evidence to {out}: use `evidence: [{out.name}]`, `hardware: {device_id}`, "
          f"`traffic_boundary: {boundary}` in tensorcost.yaml", file=sys.stderr)
    return 0
