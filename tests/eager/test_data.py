"""Datasets in eager mode: `for x in dataset` and `tfe.Iterator(dataset)`."""

import numpy as np
import pytest

import dflow as tf
import dflow.contrib.eager as tfe


def test_the_seeds_iterator(eager):
    dataset = tf.data.Dataset.from_tensor_slices([1, 2, 3, 4, 5, 6])
    dataset = dataset.map(tf.square).shuffle(2).batch(2)
    batches = [x.numpy().tolist() for x in tfe.Iterator(dataset)]
    assert len(batches) == 3 and sorted(sum(batches, [])) == [1, 4, 9, 16, 25, 36]
    assert all(isinstance(x, tfe.EagerTensor) for x in tfe.Iterator(dataset))


def test_for_loop_over_structures_and_eager_inputs(eager):
    features = tf.ones([5, 2]) * tf.reshape(tf.cast(tf.range(5), tf.float32), [5, 1])
    ds = tf.data.Dataset.from_tensor_slices({"x": features, "y": tf.range(5)}).batch(2)
    got = [(b["x"].numpy(), b["y"].numpy()) for b in ds]
    assert [y.tolist() for _, y in got] == [[0, 1], [2, 3], [4]]
    np.testing.assert_array_equal(got[2][0], [[4, 4]])
    it = tfe.Iterator(tf.data.Dataset.range(3))
    assert [it.next().numpy(), it.get_next().numpy()] == [0, 1]
    assert next(it).numpy() == 2
    with pytest.raises(tf.errors.OutOfRangeError):
        it.get_next()


def test_iteration_in_graph_mode_is_refused():
    with pytest.raises(RuntimeError, match="eager"):
        iter(tf.data.Dataset.range(3))


def test_one_shot_iterators_work_eagerly_and_initializable_ones_are_refused(eager):
    it = tf.data.Dataset.range(2).make_one_shot_iterator()
    assert [it.get_next().numpy(), it.get_next().numpy()] == [0, 1]
    with pytest.raises(tf.errors.OutOfRangeError):
        it.get_next()
    with pytest.raises(RuntimeError, match="not supported when eager"):
        tf.data.Dataset.range(2).make_initializable_iterator()
