"""An element whose making fails (an error in a `map` or `filter` function) is raised by its own
`get_next`, and the iterator goes on with the next element, as TF1's does; every stage hands the
error on in order. The expected sequences are TensorFlow's (2.21's tf.compat.v1 graph mode, over
string_to_number of ["1", "x", "3", "4", "5"]; "ERR" where it raised InvalidArgumentError), except
where noted."""

import numpy as np
import pytest

import dflow as tf


def drain(ds, limit=12):
    nxt = ds.make_one_shot_iterator().get_next()
    out = []
    with tf.Session() as sess:
        for _ in range(limit):
            try:
                v = sess.run(nxt)
            except tf.errors.OutOfRangeError:
                return out + ["END"]
            except tf.errors.InvalidArgumentError:
                out.append("ERR")
                continue
            out.append(v.tolist() if hasattr(v, "tolist") else [np.asarray(c).tolist() for c in v])
    return out


def numbers():
    return tf.data.Dataset.from_tensor_slices(["1", "x", "3", "4", "5"]).map(tf.string_to_number)


@pytest.mark.parametrize("stages,want", [
    (lambda d: d, [1.0, "ERR", 3.0, 4.0, 5.0, "END"]),
    (lambda d: d.batch(2), ["ERR", [3.0, 4.0], [5.0], "END"]),  # the 1 gathered before the error is dropped
    (lambda d: d.take(2), [1.0, "ERR", 3.0, "END"]),
    (lambda d: d.skip(1), ["ERR", 3.0, 4.0, 5.0, "END"]),
    # TF 1.15's SkipDataset counts only the elements it skipped (TF 2.21 gives ERR, 5.0, its skip
    # restarting after an error)
    (lambda d: d.skip(2), ["ERR", 4.0, 5.0, "END"]),
    (lambda d: d.shard(2, 0), [1.0, "ERR", 4.0, "END"]),
    (lambda d: d.shard(2, 1), ["ERR", 3.0, 5.0, "END"]),
    (lambda d: d.map(lambda v: v * 2, num_parallel_calls=2).prefetch(2), [2.0, "ERR", 6.0, 8.0, 10.0, "END"]),
    (lambda d: d.filter(lambda v: v > 2), ["ERR", 3.0, 4.0, 5.0, "END"]),
    (lambda d: d.window(2).flat_map(lambda w: w.batch(2)), ["ERR", [3.0, 4.0], [5.0], "END"]),
    (lambda d: d.cache(), [1.0, "ERR", 3.0, 4.0, 5.0, "END"]),
    (lambda d: d.apply(tf.data.experimental.ignore_errors()), [1.0, 3.0, 4.0, 5.0, "END"]),
    (lambda d: d.batch(2).unbatch(), ["ERR", 3.0, 4.0, 5.0, "END"]),
], ids=["map", "batch", "take", "skip1", "skip2", "shard0", "shard1", "parallel-map-prefetch", "filter", "window",
        "cache", "ignore_errors", "unbatch"])
def test_an_element_error_is_raised_for_that_element_and_the_iterator_goes_on(stages, want):
    assert drain(stages(numbers())) == want


def test_zip_loses_the_other_elements_of_the_failed_round():
    got = drain(tf.data.Dataset.zip((numbers(), tf.data.Dataset.range(10))))
    assert got == [[1.0, 0], "ERR", [3.0, 2], [4.0, 3], [5.0, 4], "END"]


def test_shuffle_raises_the_error_and_keeps_every_other_element():
    got = drain(numbers().shuffle(2, seed=1))
    assert got.count("ERR") == 1 and got[-1] == "END"
    assert sorted(v for v in got if v not in ("ERR", "END")) == [1.0, 3.0, 4.0, 5.0]


def test_a_csv_file_with_a_bad_line_reads_the_others():
    lines = ["1,2", "3,oops", "5,6"]
    ds = tf.data.Dataset.from_tensor_slices(lines).map(lambda s: tf.decode_csv(s, [[0.0], [0.0]]))
    got = drain(ds)
    assert got == [[1.0, 2.0], "ERR", [5.0, 6.0], "END"]
    assert drain(ds.apply(tf.data.experimental.ignore_errors())) == [[1.0, 2.0], [5.0, 6.0], "END"]
