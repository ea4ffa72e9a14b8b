"""Which measurements `calibrate` runs on which device, with which installed backends."""

from __future__ import annotations

from ..config.errors import ConfigError
from .calibration import CPU_BOUNDARY, CUDA_BOUNDARY, Calibration, Settings, new_calibration, run_steps
from .cpu_calibration import numpy_matmul_steps, numpy_stream_steps, torch_matmul_steps, torch_stream_steps
from .kernel_libraries import numpy_library, torch_cuda_library, torch_library
from .machine import cpu_description
from .optional_imports import require


def _optional_torch():
    """torch when it imports; None otherwise (numpy alone still calibrates float32/float64)."""
    try:
        import torch
    except ImportError:
        return None, "torch is not installed (bfloat16 needs it)"
    except Exception as error:  # noqa: BLE001 - a broken torch install must not stop calibration
        return None, f"torch failed to import: {type(error).__name__}"
    return torch, None


def calibrate_cpu(settings: Settings, device_id: str, progress_factory) -> Calibration:
    np = require("numpy", "calibrate", "it runs the CPU measurements")
    torch, torch_missing = _optional_torch()
    libraries = [numpy_library(np, settings.threads)]
    if torch is not None:
        libraries.append(torch_library(torch, settings.threads))
    calibration = new_calibration(device_id, cpu_description(), CPU_BOUNDARY, settings, libraries)
    steps = numpy_stream_steps(np, settings, settings.threads or libraries[0].threads)
    steps += numpy_matmul_steps(np, settings)
    if torch is not None:
        steps += torch_stream_steps(torch, settings) + torch_matmul_steps(torch, settings)
    else:
        calibration.skipped.append(("bfloat16 dense-matmul", torch_missing))
    return run_steps(steps, calibration, settings, progress_factory(len(steps)))


def cuda_device(torch, text: str):
    if not torch.cuda.is_available():
        raise ConfigError("--device", text, "no CUDA device is visible to torch (torch.cuda.is_available() is False)")
    device = torch.device(text)
    if device.index is not None and device.index >= torch.cuda.device_count():
        raise ConfigError("--device", text, f"only {torch.cuda.device_count()} CUDA device(s) visible")
    return device


def calibrate_cuda(settings: Settings, device_text: str, device_id: str, progress_factory) -> Calibration:
    from .cuda_calibration import cuda_matmul_steps, cuda_stream_steps

    torch = require("torch", "calibrate", "--device cuda measures through torch")
    device = cuda_device(torch, device_text)
    library = torch_cuda_library(torch, device)
    calibration = new_calibration(device_id, torch.cuda.get_device_name(device), CUDA_BOUNDARY, settings, [library])
    steps = cuda_stream_steps(torch, device, settings) + cuda_matmul_steps(torch, device, settings)
    return run_steps(steps, calibration, settings, progress_factory(len(steps)))
