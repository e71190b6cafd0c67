"""Linear text classifiers of our own (fastText's model): train, save, load, score.

>>> from thresher.classify import train, load_model
>>> model = train([("a fine essay", "good"), ("buy now!!!", "bad")], epochs=5)
>>> save_model(model, "model.thc")
>>> load_model("model.thc").scores("another essay")   # {"bad": 0.2..., "good": 0.7...}

Pure Python everywhere; NumPy (the `fast` extra) makes training and batch scoring faster and gives
the same scores bit for bit (see `thresher.classify.model`).
"""

from thresher.classify.features import FeatureSpec
from thresher.classify.format import ModelFileError, load_model
from thresher.classify.model import Model
from thresher.classify.train import TrainConfig, TrainingError, train

__all__ = ["FeatureSpec", "Model", "ModelFileError", "TrainConfig", "TrainingError", "load_model", "train"]
