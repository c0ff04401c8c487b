"""Keras's layer wrappers as TF 1.15 shipped them: `TimeDistributed` (a layer applied to every
timestep: [batch, time, ...] reshaped to [batch·time, ...] and back; its weights in the wrapper's
scope, `time_distributed/kernel:0`) and `Bidirectional` (an RNN forward and a copy of it
backward, `bidirectional/forward_lstm/kernel:0`, `bidirectional/backward_lstm/kernel:0`, outputs
merged by `merge_mode`)."""

from __future__ import annotations

from ...graph.shape import TensorShape
from ...kernels.array_ops import reshape
from ...kernels.array_ops import shape as shape_op
from ...kernels.manip_ops import concat, reverse
from ...kernels.math_ops import add, multiply
from ..engine.base_layer import Layer
from ..utils.generic_utils import serialize_keras_object
from .recurrent import _call_args, deserialize_layer

__all__ = ["Wrapper", "TimeDistributed", "Bidirectional"]


class Wrapper(Layer):
    """A layer around another layer (`self.layer`)."""

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(f"Please initialize `{type(self).__name__}` layer with a `Layer` instance. "
                             f"You passed: {layer}")
        super().__init__(**kwargs)
        self.layer = layer

    def get_config(self):
        config = super().get_config()
        config["layer"] = serialize_keras_object(self.layer)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        layer = deserialize_layer(config.pop("layer"), custom_objects)
        return cls(layer, **config)


class TimeDistributed(Wrapper):
    """Applies `layer` to each slice along axis 1 of inputs of rank >= 3."""

    def __init__(self, layer, **kwargs):
        super().__init__(layer, **kwargs)
        self.supports_masking = True

    def _check(self, input_shape):
        shape = TensorShape(input_shape)
        if shape.ndims is not None and shape.ndims < 3:
            raise ValueError("`TimeDistributed` Layer should be passed an `input_shape ` with at least 3 dimensions, "
                             f"received: {tuple(shape.as_list())}")
        return shape

    def build(self, input_shape):
        shape = self._check(input_shape)
        if not self.layer.built:
            if self.layer._dtype is None:
                self.layer._dtype = self._dtype
            self.layer.build(TensorShape([None]).concatenate(shape[2:]))
            self.layer.built = True
        self.built = True

    def call(self, inputs, training=None, mask=None):
        shape = self._check(inputs.shape)
        kwargs = {"training": training} if "training" in _call_args(self.layer) and training is not None else {}
        dyn = shape_op(inputs)
        inner = [d if d is not None else dyn[i + 2] for i, d in enumerate(shape.as_list()[2:])]
        flat = reshape(inputs, [-1] + inner if all(isinstance(d, int) for d in inner) else concat([[-1], dyn[2:]], 0))
        y = self.layer.call(flat, **kwargs)
        out_inner = y.shape.as_list()[1:]
        time = shape[1].value if shape[1].value is not None else dyn[1]
        if all(isinstance(d, int) for d in out_inner) and isinstance(time, int):
            out = reshape(y, [-1, time] + out_inner)
        else:
            out = reshape(y, concat([[-1], [time] if isinstance(time, int) else time[None], shape_op(y)[1:]], 0))
        out.set_shape(TensorShape([shape[0].value, shape[1].value]).concatenate(y.shape[1:]))
        return out

    def compute_mask(self, inputs, mask=None):
        return mask

    def compute_output_shape(self, input_shape):
        shape = self._check(input_shape)
        child = TensorShape(self.layer.compute_output_shape(TensorShape([shape[0].value]).concatenate(shape[2:])))
        return TensorShape([shape[0].value, shape[1].value]).concatenate(child[1:])


class Bidirectional(Wrapper):
    """`layer` (an RNN) over the sequence and a copy of it over the reversed sequence; the two
    outputs merged by 'concat' (default), 'sum', 'mul', 'ave', or None (a list of both)."""

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(f"Please initialize `Bidirectional` layer with a `Layer` instance. You passed: {layer}")
        if backward_layer is not None and not isinstance(backward_layer, Layer):
            raise ValueError(f"`backward_layer` need to be a `Layer` instance. You passed: {backward_layer}")
        if merge_mode not in ("sum", "mul", "ave", "concat", None):
            raise ValueError(f"Invalid merge mode. Merge mode should be one of {{'sum', 'mul', 'ave', 'concat', "
                             f"None}}, got {merge_mode!r}")
        config = layer.get_config()
        config["name"] = "forward_" + layer.name
        self._backward_given = backward_layer is not None
        forward = type(layer).from_config(config)
        if backward_layer is None:
            config = layer.get_config()
            config["go_backwards"] = not config["go_backwards"]
            config["name"] = "backward_" + layer.name
            backward = type(layer).from_config(config)
        else:
            backward = backward_layer
            for attr in ("return_sequences", "return_state", "stateful"):
                if getattr(backward, attr) != getattr(layer, attr):
                    raise ValueError(f"Forward layer and backward layer should have the same `{attr}`: forward "
                                     f"{getattr(layer, attr)}, backward {getattr(backward, attr)}")
            if backward.go_backwards == layer.go_backwards:
                raise ValueError("Forward layer and backward layer should have different `go_backwards` value.")
        super().__init__(layer, **kwargs)
        self.forward_layer = forward
        self.backward_layer = backward
        self.merge_mode = merge_mode
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state
        self.stateful = layer.stateful
        self.supports_masking = True
        if weights is not None:
            self._initial_weights = list(weights)

    def __call__(self, inputs, initial_state=None, **kwargs):
        if isinstance(inputs, (list, tuple)) and initial_state is None and len(inputs) > 1:
            inputs, initial_state = inputs[0], list(inputs[1:])
        if initial_state is None:
            return super().__call__(inputs, **kwargs)
        initial_state = list(initial_state) if isinstance(initial_state, (list, tuple)) else [initial_state]
        if len(initial_state) % 2:
            raise ValueError("When passing `initial_state` to a Bidirectional RNN, the state should be a list "
                             f"containing the states of the underlying RNNs. Found: {initial_state}")
        return super().__call__([inputs] + initial_state, **kwargs)

    @property
    def weights(self):
        return self.forward_layer.weights + self.backward_layer.weights

    @property
    def trainable_weights(self):
        return self.forward_layer.trainable_weights + self.backward_layer.trainable_weights if self.trainable else []

    @property
    def non_trainable_weights(self):
        trainable = {id(v) for v in self.trainable_weights}
        return [v for v in self.forward_layer.weights + self.backward_layer.weights if id(v) not in trainable]

    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights
    variables = weights

    def build(self, input_shape):
        self.built = True

    def call(self, inputs, training=None, mask=None, initial_state=None):
        if isinstance(inputs, (list, tuple)):
            inputs, initial_state = inputs[0], list(inputs[1:])
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        kwargs = {}
        if training is not None:
            kwargs["training"] = training
        if mask is not None:
            kwargs["mask"] = mask
        if initial_state:
            half = len(initial_state) // 2
            y = self.forward_layer(inputs, initial_state=initial_state[:half], **kwargs)
            y_rev = self.backward_layer(inputs, initial_state=initial_state[half:], **kwargs)
        else:
            y = self.forward_layer(inputs, **kwargs)
            y_rev = self.backward_layer(inputs, **kwargs)
        states = []
        if self.return_state:
            states = list(y[1:]) + list(y_rev[1:])
            y, y_rev = y[0], y_rev[0]
        if self.return_sequences:
            y_rev = reverse(y_rev, [1])
        if self.merge_mode == "concat":
            output = concat([y, y_rev], -1)
        elif self.merge_mode == "sum":
            output = add(y, y_rev)
        elif self.merge_mode == "ave":
            output = multiply(add(y, y_rev), 0.5)
        elif self.merge_mode == "mul":
            output = multiply(y, y_rev)
        else:
            output = [y, y_rev]
        if self.return_state:
            return (output if isinstance(output, list) else [output]) + states
        return output

    def compute_mask(self, inputs, mask):
        if isinstance(mask, (list, tuple)):
            mask = mask[0]
        output_mask = mask if self.return_sequences else None
        output_mask = [output_mask, output_mask] if self.merge_mode is None else [output_mask]
        if self.return_state:
            n = len(self.forward_layer.cell.state_size) if isinstance(self.forward_layer.cell.state_size,
                                                                      (list, tuple)) else 1
            return output_mask + [None] * (2 * n)
        return output_mask if self.merge_mode is None else output_mask[0]

    def reset_states(self):
        self.forward_layer.reset_states()
        self.backward_layer.reset_states()

    def get_config(self):
        config = super().get_config()
        config["merge_mode"] = self.merge_mode
        if self._backward_given:
            config["backward_layer"] = serialize_keras_object(self.backward_layer)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        layer = deserialize_layer(config.pop("layer"), custom_objects)
        backward = config.pop("backward_layer", None)
        if backward is not None:
            backward = deserialize_layer(backward, custom_objects)
        return cls(layer, backward_layer=backward, **config)
