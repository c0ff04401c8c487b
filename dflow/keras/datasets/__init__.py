"""`tf.keras.datasets`: TF 1.15's small datasets read from Keras's cache (~/.keras/datasets),
downloaded there on first use."""

from . import boston_housing, cifar10, cifar100, fashion_mnist, imdb, mnist, reuters

__all__ = ["boston_housing", "cifar10", "cifar100", "fashion_mnist", "imdb", "mnist", "reuters"]
