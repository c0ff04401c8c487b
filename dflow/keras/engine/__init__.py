"""Keras's engine: the base layer, inputs, the functional/subclassed model and its training loop."""
