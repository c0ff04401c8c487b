"""TF1's image colour spaces YIQ and YUV, image-quality measures (PSNR, SSIM, MS-SSIM) and Sobel
edges: composites of registered ops, as TF1 writes them, so gradients come from those ops' rules.

YIQ/YUV are a 3x3 matrix product on the channel axis (TF's constants). PSNR compares the mean
squared error with `max_val`; SSIM is TF's Gaussian-windowed version (11x11, sigma 1.5, a VALID
depthwise convolution per channel, biased covariances); MS-SSIM repeats it on 2x2 average-pooled
images (SYMMETRIC padding for odd sizes) and multiplies the scales' contrast-structure terms
with `power_factors`. Integer images are first scaled to [0, 1] as `convert_image_dtype` does.
dflow needs the image height, width and depth known when building (TF checks them at run time).
"""

from __future__ import annotations

import numpy as np

from ..graph import dtypes
from ..graph.graph import name_scope
from .array_ops import identity, reshape, stack
from .array_ops import shape as shape_of
from .common import convert_to_tensor
from .depthwise_ops import depthwise_conv2d
from .linalg_ops import tensordot
from .manip_ops import concat
from .math_ops import cast, log, multiply, relu, square, squared_difference, subtract
from .math_ops import pow as pow_
from .pad_ops import pad
from .pool_ops import avg_pool
from .reduction_ops import reduce_mean, reduce_prod

__all__: list[str] = []

# TF's matrices (tensorflow/python/ops/image_ops_impl.py), rows: input channel, columns: output
_RGB_TO_YIQ = [[0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617], [0.114, -0.32134392, 0.31119955]]
_YIQ_TO_RGB = [[1, 1, 1], [0.95598634, -0.27201283, -1.10674021], [0.6208248, -0.64720424, 1.70423049]]
_RGB_TO_YUV = [[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512], [0.114, 0.43601035, -0.10001026]]
_YUV_TO_RGB = [[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]]


def _color_matrix(images, matrix, fn):
    with name_scope(None, fn, [images]):
        x = convert_to_tensor(images, name="images")
        if not x.dtype.is_floating:
            raise TypeError(f"{fn}: images must be a float tensor, got {x.dtype.name} ({x.name!r})")
        if x.shape.ndims is None or x.shape.ndims < 1 or x.shape[-1].value not in (None, 3):
            raise ValueError(f"{fn}: the last dimension of images must be 3 (known rank), got shape {x.shape}")
        kernel = convert_to_tensor(np.asarray(matrix, x.dtype.np_dtype), name="kernel")
        return tensordot(x, kernel, axes=[[x.shape.ndims - 1], [0]])


def rgb_to_yiq(images):
    """[..., 3] float RGB -> YIQ (TF1's matrix); Y in [0, 1], I in [-0.5957, 0.5957], Q in [-0.5226, 0.5226]."""
    return _color_matrix(images, _RGB_TO_YIQ, "rgb_to_yiq")


def yiq_to_rgb(images):
    """[..., 3] float YIQ -> RGB (TF1's matrix)."""
    return _color_matrix(images, _YIQ_TO_RGB, "yiq_to_rgb")


def rgb_to_yuv(images):
    """[..., 3] float RGB -> YUV (TF1's matrix); Y in [0, 1], U in [-0.436, 0.436], V in [-0.615, 0.615]."""
    return _color_matrix(images, _RGB_TO_YUV, "rgb_to_yuv")


def yuv_to_rgb(images):
    """[..., 3] float YUV -> RGB (TF1's matrix)."""
    return _color_matrix(images, _YUV_TO_RGB, "yuv_to_rgb")


# ---- PSNR, SSIM, MS-SSIM --------------------------------------------------------------------------


def _to_float32(x):
    """convert_image_dtype(x, float32): integers scaled by 1 / dtype.max, floats cast."""
    if x.dtype.is_integer:
        return multiply(cast(x, dtypes.float32), np.float32(1.0 / x.dtype.max))
    return cast(x, dtypes.float32) if x.dtype != dtypes.float32 else x


def _image_pair(a, b, fn):
    a = convert_to_tensor(a, name="img1")
    b = convert_to_tensor(b, dtype=a.dtype, name="img2")
    for t in (a, b):
        if t.shape.ndims is None or t.shape.ndims < 3:
            raise ValueError(f"{fn}: images must have at least 3 dimensions [..., height, width, depth], got "
                             f"{t.name!r} of shape {t.shape}")
    if not a.shape[-3:].is_compatible_with(b.shape[-3:]):
        raise ValueError(f"{fn}: the images' last three dimensions must match, got {a.shape} and {b.shape}")
    return a, b


def _max_val(max_val, dtype):
    return _to_float32(cast(convert_to_tensor(max_val, name="max_val"), dtype))


def psnr(a, b, max_val, name=None):
    """Peak signal-to-noise ratio per image of two batches ([..., h, w, d], same dtype): float32 of
    the leading shape, 20 log10(max_val) - 10 log10(mse). Infinite for equal images (TF1)."""
    with name_scope(name, "PSNR", [a, b]):
        a, b = _image_pair(a, b, "psnr")
        mv = _max_val(max_val, a.dtype)
        mse = reduce_mean(squared_difference(_to_float32(a), _to_float32(b)), [-3, -2, -1])
        return identity(subtract(20.0 * log(mv) / np.float32(np.log(10.0)),
                                 np.float32(10 / np.log(10)) * log(mse), name="psnr"))


def _gauss_window(size, sigma):
    """TF's _fspecial_gauss: a [size, size, 1, 1] float32 Gaussian summing to 1 (softmax of -r^2/2s^2)."""
    coords = np.arange(size, dtype=np.float32) - np.float32(size - 1) / np.float32(2.0)
    g = np.square(coords) * np.float32(-0.5 / np.square(np.float32(sigma)))
    g = (g[None, :] + g[:, None]).astype(np.float64)
    g = np.exp(g - g.max())
    return (g / g.sum()).astype(np.float32).reshape(size, size, 1, 1)


def _ssim_per_channel(x, y, max_val, filter_size, filter_sigma, k1, k2, fn):
    """(ssim, cs) per channel, [..., depth], of float32 images with static [h, w, depth]."""
    h, w, depth = x.shape[-3].value, x.shape[-2].value, x.shape[-1].value
    if None in (h, w, depth):
        raise ValueError(f"{fn}: dflow needs the images' height, width and depth when building, got {x.shape}")
    if h < filter_size or w < filter_size:
        raise ValueError(f"{fn}: images of {h}x{w} are smaller than the filter ({filter_size}x{filter_size})")
    kernel = convert_to_tensor(np.tile(_gauss_window(filter_size, filter_sigma), [1, 1, depth, 1]), name="kernel")
    lead = x.shape[:-3]

    def reducer(t):
        t4 = reshape(t, [-1, h, w, depth])
        out = depthwise_conv2d(t4, kernel, strides=[1, 1, 1, 1], padding="VALID")
        oh, ow = h - filter_size + 1, w - filter_size + 1
        return reshape(out, (lead.as_list() if lead.is_fully_defined() else [-1]) + [oh, ow, depth])

    c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
    mean0, mean1 = reducer(x), reducer(y)
    num0 = mean0 * mean1 * 2.0
    den0 = square(mean0) + square(mean1)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = reducer(x * y) * 2.0
    den1 = reducer(square(x) + square(y))
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    return reduce_mean(luminance * cs, [-3, -2]), reduce_mean(cs, [-3, -2])


def ssim(img1, img2, max_val, filter_size=11, filter_sigma=1.5, k1=0.01, k2=0.03):
    """Structural similarity per image of two batches ([..., h, w, d]; h, w >= filter_size),
    averaged over the channels: float32 of the leading shape (TF1's Gaussian-window SSIM)."""
    with name_scope(None, "SSIM", [img1, img2]):
        a, b = _image_pair(img1, img2, "ssim")
        mv = _max_val(max_val, a.dtype)
        val, _ = _ssim_per_channel(_to_float32(a), _to_float32(b), mv, filter_size, filter_sigma, k1, k2, "ssim")
        return reduce_mean(val, [-1])


_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def ssim_multiscale(img1, img2, max_val, power_factors=_MSSSIM_WEIGHTS, filter_size=11, filter_sigma=1.5, k1=0.01,
                    k2=0.03):
    """Multi-scale SSIM ([..., h, w, d]): one scale per power factor, each a 2x2 average pool of the
    last (odd sizes padded SYMMETRIC first); the smallest scale must still hold the filter."""
    with name_scope(None, "MS-SSIM", [img1, img2]):
        a, b = _image_pair(img1, img2, "ssim_multiscale")
        mv = _max_val(max_val, a.dtype)
        imgs = [_to_float32(a), _to_float32(b)]
        lead = a.shape[:-3]
        mcs = []
        for k in range(len(power_factors)):
            with name_scope(None, f"Scale{k}", imgs):
                if k > 0:
                    h, w, depth = (imgs[0].shape[i].value for i in (-3, -2, -1))
                    flat = [reshape(x, [-1, h, w, depth]) for x in imgs]
                    if h % 2 or w % 2:
                        flat = [pad(x, [[0, 0], [0, h % 2], [0, w % 2], [0, 0]], mode="SYMMETRIC") for x in flat]
                    down = [avg_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID") for x in flat]
                    h, w = (h + h % 2) // 2, (w + w % 2) // 2
                    shape = (lead.as_list() if lead.is_fully_defined() else [-1]) + [h, w, depth]
                    imgs = [reshape(x, shape) for x in down]
                val, cs = _ssim_per_channel(imgs[0], imgs[1], mv, filter_size, filter_sigma, k1, k2,
                                            "ssim_multiscale")
                mcs.append(relu(cs))
        mcs.pop()  # the last scale contributes its SSIM, not its contrast-structure term
        both = stack(mcs + [relu(val)], axis=-1)
        weights = convert_to_tensor(np.asarray(power_factors, np.float32), name="power_factors")
        return reduce_mean(reduce_prod(pow_(both, weights), [-1]), [-1])


# ---- Sobel edges --------------------------------------------------------------------------------


def sobel_edges(image):
    """Sobel gradients of [batch, h, w, d] images: [batch, h, w, d, 2] float (dy then dx), each
    pixel's 3x3 neighbourhood REFLECT-padded at the border (TF1)."""
    with name_scope(None, "sobel_edges", [image]):
        x = convert_to_tensor(image, name="image")
        if x.shape.ndims != 4 or x.shape[-1].value is None:
            raise ValueError(f"sobel_edges: image must be 4-D [batch, h, w, d] with a known depth, got {x.shape}")
        depth = x.shape[-1].value
        k = np.asarray([[[-1, -2, -1], [0, 0, 0], [1, 2, 1]], [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]], np.float64)
        k = np.transpose(k, (1, 2, 0))[:, :, None, :]  # [3, 3, 1, 2]
        kernel = convert_to_tensor(np.tile(k, [1, 1, depth, 1]).astype(x.dtype.np_dtype), name="sobel_filters")
        padded = pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
        out = depthwise_conv2d(padded, kernel, strides=[1, 1, 1, 1], padding="VALID")  # [b, h, w, d*2]
        n, h, w = (x.shape[i].value for i in range(3))
        shape = [-1 if v is None else v for v in (n, h, w)] + [depth, 2]
        if shape.count(-1) > 1:
            shape = concat([shape_of(x), [2]], 0)
        return reshape(out, shape)
