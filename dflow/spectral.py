"""`dflow.spectral`: TF1's `tf.spectral` (the older name of tf.signal's FFTs: fft, ifft, rfft,
irfft and their 2-D and 3-D forms), the very functions of the top level (`dflow.fft` ...). Names dflow lacks (stft, frame,
mfccs, fftshift, ...) are absent (AttributeError), not stubs."""

from .kernels.fft_ops import (  # noqa: F401
    __all__,  # noqa: F401
    fft,
    fft2d,
    fft3d,
    ifft,
    ifft2d,
    ifft3d,
    irfft,
    irfft2d,
    irfft3d,
    rfft,
    rfft2d,
    rfft3d,
)
