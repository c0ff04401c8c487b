"""`dflow.layers`: TF1's `tf.layers`, the layers API (functions and classes).

Built from the public ops and variables: a layer's variables come from `get_variable` in its
variable scope (`dense/kernel:0`, `dense_1/bias:0`, `conv2d/kernel:0`,
`batch_normalization/moving_mean:0`), so checkpoints and reuse follow TF1.
"""

from ..tf1_names import missing_attribute
from .base import InputSpec, Layer
from .convolutional import (
    Conv1D,
    Conv2D,
    Conv2DTranspose,
    Convolution1D,
    Convolution2D,
    Convolution2DTranspose,
    Deconvolution2D,
    SeparableConv2D,
    SeparableConvolution2D,
    conv1d,
    conv2d,
    conv2d_transpose,
    separable_conv2d,
)
from .core import Dense, Dropout, Flatten, dense, dropout, flatten
from .normalization import BatchNormalization, batch_normalization
from .pooling import (
    AveragePooling1D,
    AveragePooling2D,
    MaxPooling1D,
    MaxPooling2D,
    average_pooling1d,
    average_pooling2d,
    max_pooling1d,
    max_pooling2d,
)

__all__ = [
    "Layer", "InputSpec", "Dense", "Dropout", "Flatten", "Conv1D", "Conv2D", "Conv2DTranspose", "SeparableConv2D",
    "Convolution1D", "Convolution2D", "Convolution2DTranspose", "Deconvolution2D", "SeparableConvolution2D",
    "MaxPooling1D", "MaxPooling2D", "AveragePooling1D", "AveragePooling2D", "BatchNormalization",
    "dense", "dropout", "flatten", "conv1d", "conv2d", "conv2d_transpose", "separable_conv2d",
    "max_pooling1d", "max_pooling2d", "average_pooling1d", "average_pooling2d", "batch_normalization",
]

from .convolutional import Conv3D, Conv3DTranspose, conv3d, conv3d_transpose  # noqa: E402
from .pooling import AveragePooling3D, MaxPooling3D, average_pooling3d, max_pooling3d  # noqa: E402

__all__ += ["Conv3D", "Conv3DTranspose", "conv3d", "conv3d_transpose", "MaxPooling3D", "AveragePooling3D",
            "max_pooling3d", "average_pooling3d"]

__getattr__ = missing_attribute(__name__)
