"""Linear text classifiers of our own (fastText's model): train, save, load, score.

>>> from thresher.classify import train, load_model
>>> model = train([("a fine essay", "good"), ("buy now!!!", "bad")], epochs=5)
>>> save_model(model, "model.thc")
>>> load_model("model.thc").scores("another essay")   # {"bad": 0.2..., "good": 0.7...}

Pure Python everywhere; NumPy (the `fast` extra) makes training and batch scoring faster and gives
the same scores bit for bit (see `thresher.classify.model`).
"""

# The package face is lazy (PEP 562): every command imports `thresher.classify.config` (the run
# config has a [classify] section), and that must not import the trainer, the feature hashing and
# the model format.
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from thresher.classify.features import FeatureSpec
    from thresher.classify.format import ModelFileError, load_model
    from thresher.classify.model import Model
    from thresher.classify.training import TrainConfig, TrainingError, train

_EXPORTS = {
    "FeatureSpec": "thresher.classify.features",
    "ModelFileError": "thresher.classify.format",
    "load_model": "thresher.classify.format",
    "Model": "thresher.classify.model",
    "TrainConfig": "thresher.classify.training",
    "TrainingError": "thresher.classify.training",
    "train": "thresher.classify.training",
}

__all__ = ["FeatureSpec", "Model", "ModelFileError", "TrainConfig", "TrainingError", "load_model", "train"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
