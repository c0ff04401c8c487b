"""The CIFAR python pickles' reader (cifar10 and cifar100)."""

from __future__ import annotations

import pickle

from ... import errors

__all__ = ["load_batch"]


def load_batch(fpath, label_key="labels"):
    """(data [n, 3, 32, 32] uint8, labels) of one CIFAR pickle; DataLossError for a bad file."""
    try:
        with open(fpath, "rb") as f:
            d = pickle.load(f, encoding="bytes")
        d = {k.decode("utf8") if isinstance(k, bytes) else k: v for k, v in d.items()}
        data, labels = d["data"], d[label_key]
        return data.reshape(data.shape[0], 3, 32, 32), labels
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"CIFAR batch file {fpath} not found") from None
    except (pickle.UnpicklingError, EOFError, KeyError, ValueError, AttributeError) as e:
        raise errors.DataLossError(None, None, f"{fpath} is not a CIFAR batch pickle with 'data' and "
                                               f"{label_key!r}: {e!r}") from None
