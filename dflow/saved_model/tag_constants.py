"""TF1's `tf.saved_model.tag_constants`: the tags of a SavedModel's meta graphs."""

__all__ = ["SERVING", "TRAINING", "GPU", "TPU"]

SERVING = "serve"
TRAINING = "train"
GPU = "gpu"
TPU = "tpu"
