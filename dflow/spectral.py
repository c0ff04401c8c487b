"""`dflow.spectral`: TF1's `tf.spectral`, the older name of `tf.signal`'s FFTs: the very names of
`dflow.signal` (fft, ifft, rfft, irfft and their 2-D and 3-D forms)."""

from .signal import *  # noqa: F403
from .signal import __all__  # noqa: F401
