"""Stand-in for slam_llm/utils/model_utils.py: get_custom_model_factory.

Like the official function it loads ``model_config.file`` ("path.py:func") from a path that must
exist as given (relative paths resolve against the working directory).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path


def get_custom_model_factory(model_config, logger):
    module_path, func_name = model_config.get("file").split(":")
    path = Path(module_path)
    if not path.is_file():
        raise FileNotFoundError(f"model file {path} does not exist")
    spec = importlib.util.spec_from_file_location("slam_model_s2s", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, func_name)
