"""tf.train.Checkpoint and tf.train.CheckpointManager: TF's object-based checkpoints, in graph mode
(through a session) and eagerly, against TensorFlow's own file (tests/fixtures/tf_object_checkpoint,
tools/make_tf_object_checkpoint_fixture.py) and, with -m slow, TensorFlow reading dflow's.

Eager variables' names are unique in the process (one eager context), so the eager tests name
theirs `ckpt_*`: other test files expect `v`, `x`, ... to be free."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import numpy as np
import pytest

import dflow as tf
from dflow import errors
from dflow.eager import eager_mode
from tests.conftest import run_tf

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "tf_object_checkpoint"

# TF 2.21's compat.v1 Checkpoint(model=, optimizer=, v=, step=) after one Adam step: its keys
TF_KEYS = sorted([
    "_CHECKPOINTABLE_OBJECT_GRAPH",
    "model/layer_with_weights-0/bias/.ATTRIBUTES/VARIABLE_VALUE",
    "model/layer_with_weights-0/bias/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE",
    "model/layer_with_weights-0/bias/.OPTIMIZER_SLOT/optimizer/v/.ATTRIBUTES/VARIABLE_VALUE",
    "model/layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE",
    "model/layer_with_weights-0/kernel/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE",
    "model/layer_with_weights-0/kernel/.OPTIMIZER_SLOT/optimizer/v/.ATTRIBUTES/VARIABLE_VALUE",
    "optimizer/beta1_power/.ATTRIBUTES/VARIABLE_VALUE",
    "optimizer/beta2_power/.ATTRIBUTES/VARIABLE_VALUE",
    "save_counter/.ATTRIBUTES/VARIABLE_VALUE",
    "step/.ATTRIBUTES/VARIABLE_VALUE",
    "v/.ATTRIBUTES/VARIABLE_VALUE",
    "v/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE",
    "v/.OPTIMIZER_SLOT/optimizer/v/.ATTRIBUTES/VARIABLE_VALUE",
])


def _program(v_init=(1.0, 2.0)):
    """The fixture's program: a Dense model, a variable, Adam on both, the global step."""
    v = tf.Variable(list(v_init), name="v")
    model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,), kernel_initializer="ones",
                                                       bias_initializer="zeros")])
    opt = tf.train.AdamOptimizer(0.1)
    loss = tf.reduce_sum(model(tf.ones([1, 3]))) + tf.reduce_sum(v * v)
    train = opt.minimize(loss, var_list=model.trainable_variables + [v])
    step = tf.train.get_or_create_global_step()
    ckpt = tf.train.Checkpoint(model=model, optimizer=opt, v=v, step=step)
    return ckpt, train, v, opt


def test_graph_mode_save_writes_tfs_keys_and_restore_brings_every_value_back(tmp_path):
    ckpt, train, v, opt = _program()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        path = ckpt.save(str(tmp_path / "ck"), session=sess)
        assert path == str(tmp_path / "ck-1")
        saved = {k: tf.train.load_variable(path, k) for k in TF_KEYS[1:]}
        sess.run(train)
        status = ckpt.restore(path)
        status.run_restore_ops(sess)
        status.assert_consumed().assert_existing_objects_matched().assert_nontrivial_match()
        np.testing.assert_array_equal(sess.run(v), saved["v/.ATTRIBUTES/VARIABLE_VALUE"])
        np.testing.assert_array_equal(sess.run(opt.get_slot(v, "m")),
                                      saved["v/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE"])
        with sess.as_default():
            assert ckpt.save(str(tmp_path / "ck")) == str(tmp_path / "ck-2")  # the default session
    assert sorted(name for name, _ in tf.train.list_variables(path)) == TF_KEYS
    assert tf.train.latest_checkpoint(str(tmp_path)) == str(tmp_path / "ck-2")
    assert tf.train.load_variable(str(tmp_path / "ck-2"), "save_counter/.ATTRIBUTES/VARIABLE_VALUE") == 2


def test_a_tensorflow_checkpoint_restores_into_the_same_program():
    want = np.load(FIXTURE / "expected.npz")
    ckpt, train, v, opt = _program(v_init=(0.0, 0.0))
    with tf.Session() as sess:
        status = ckpt.restore(str(FIXTURE / "ck-1"))
        status.initialize_or_restore(sess)
        status.assert_consumed()
        model, step = ckpt.model, ckpt.step
        dense = model.layers[0]
        got = {
            "v/.ATTRIBUTES/VARIABLE_VALUE": sess.run(v),
            "step/.ATTRIBUTES/VARIABLE_VALUE": sess.run(step),
            "save_counter/.ATTRIBUTES/VARIABLE_VALUE": sess.run(ckpt.save_counter),
            "optimizer/beta1_power/.ATTRIBUTES/VARIABLE_VALUE": sess.run(opt._non_slot["beta1_power"]),
            "model/layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE": sess.run(dense.kernel),
            "model/layer_with_weights-0/kernel/.OPTIMIZER_SLOT/optimizer/v/.ATTRIBUTES/VARIABLE_VALUE":
                sess.run(opt.get_slot(dense.kernel, "v")),
        }
    for key, value in got.items():
        np.testing.assert_array_equal(value, want[key], err_msg=key)


def test_eagerly_save_and_restore_act_at_once_as_the_eager_guides_use_them(tmp_path):
    with eager_mode():
        w = tf.Variable([1.0, 2.0], name="ckpt_eager_w")
        opt = tf.train.AdamOptimizer(0.1)
        opt.minimize(lambda: tf.reduce_sum(w * w))
        ckpt = tf.train.Checkpoint(optimizer=opt, w=w)
        prefix = os.path.join(str(tmp_path), "ckpt")
        path = ckpt.save(prefix)
        assert path.endswith("ckpt-1") and int(ckpt.save_counter.numpy()) == 1
        saved, m_saved = w.numpy().copy(), opt.get_slot(w, "m").numpy().copy()
        opt.minimize(lambda: tf.reduce_sum(w * w))
        status = ckpt.restore(tf.train.latest_checkpoint(str(tmp_path)))
        status.assert_consumed()
        np.testing.assert_array_equal(w.numpy(), saved)
        np.testing.assert_array_equal(opt.get_slot(w, "m").numpy(), m_saved)
        assert ckpt.write(str(tmp_path / "plain")) == str(tmp_path / "plain")
        assert tf.train.latest_checkpoint(str(tmp_path)) == path  # write records nothing
        status.run_restore_ops()  # nothing to do eagerly
        status.initialize_or_restore()


def test_the_assertions_say_what_did_not_match(tmp_path):
    with eager_mode():
        a, b = tf.Variable(1.0, name="ckpt_assert_a"), tf.Variable(2.0, name="ckpt_assert_b")
        path = tf.train.Checkpoint(a=a, b=b).save(str(tmp_path / "ck"))
        fewer = tf.train.Checkpoint(a=tf.Variable(0.0, name="ckpt_assert_a2"))
        status = fewer.restore(path)
        status.assert_existing_objects_matched()
        assert status.expect_partial() is status
        with pytest.raises(AssertionError, match="Unresolved object in checkpoint.*b/.ATTRIBUTES"):
            status.assert_consumed()
        more = tf.train.Checkpoint(a=tf.Variable(0.0, name="ckpt_assert_a3"), b=tf.Variable(0.0, name="ckpt_assert_b3"),
                                   c=tf.Variable(0.0, name="ckpt_assert_c3"))
        status = more.restore(path)
        with pytest.raises(AssertionError, match="not bound to checkpointed values.*ckpt_assert_c3"):
            status.assert_existing_objects_matched()
        with pytest.raises(AssertionError, match="not bound"):
            status.assert_consumed()
        other = tf.train.Checkpoint(x=tf.Variable(0.0, name="ckpt_assert_x"))
        other.restore(path).assert_nontrivial_match()  # save_counter matched: TF 2.21 does not raise either
        written = tf.train.Checkpoint(a=a).write(str(tmp_path / "no_counter"))  # write() counts nothing
        with pytest.raises(AssertionError, match="Nothing except the root object matched"):
            tf.train.Checkpoint(x=tf.Variable(0.0, name="ckpt_assert_x4")).restore(written).assert_nontrivial_match()


def test_restore_none_only_initializes_and_initialize_or_restore_initializes_the_rest(tmp_path):
    a = tf.Variable(1.0, name="a")
    ckpt = tf.train.Checkpoint(a=a)
    with tf.Session() as sess:
        status = ckpt.restore(None)
        with pytest.raises(AssertionError, match="No checkpoint specified"):
            status.assert_consumed()
        status.initialize_or_restore(sess)
        assert sess.run(a) == 1.0
        sess.run(a.assign(5.0))
        path = ckpt.save(str(tmp_path / "ck"), session=sess)
    tf.reset_default_graph()
    a, b = tf.Variable(0.0, name="a"), tf.Variable(7.0, name="b")
    ckpt = tf.train.Checkpoint(a=a, b=b)
    with tf.Session() as sess:
        ckpt.restore(path).initialize_or_restore(sess)
        assert sess.run([a, b]) == [5.0, 7.0]


def test_a_savers_checkpoint_is_restored_by_name(tmp_path):
    a = tf.Variable(3.0, name="a")
    with tf.Session() as sess:
        sess.run(a.initializer)
        prefix = tf.train.Saver([a]).save(sess, str(tmp_path / "model"))
    tf.reset_default_graph()
    a = tf.Variable(0.0, name="a")
    with tf.Session() as sess:
        status = tf.train.Checkpoint(v=a).restore(prefix)
        status.run_restore_ops(sess)
        assert sess.run(a) == 3.0
        status.assert_nontrivial_match()
        with pytest.raises(AssertionError, match="name-based tf.train.Saver checkpoint"):
            status.assert_consumed()


def test_bad_input_gives_tf_errors_and_restores_nothing(tmp_path):
    with pytest.raises(ValueError, match="was expecting a trackable object"):
        tf.train.Checkpoint(x=3)
    a = tf.Variable([1.0, 2.0], name="a")
    ckpt = tf.train.Checkpoint(a=a)
    with pytest.raises(ValueError, match="needs a session"):
        ckpt.save(str(tmp_path / "ck"))
    with tf.Session() as sess:
        with pytest.raises(errors.FailedPreconditionError, match="uninitialized"):
            ckpt.write(str(tmp_path / "unset"), session=sess)
        assert not list(tmp_path.glob("unset*"))
        sess.run(a.initializer)
        path = ckpt.save(str(tmp_path / "ck"), session=sess)
    with pytest.raises(errors.NotFoundError):
        ckpt.restore(str(tmp_path / "missing"))
    data = Path(path + ".data-00000-of-00001")
    data.write_bytes(data.read_bytes()[:-3])
    tf.reset_default_graph()
    b = tf.Variable([9.0, 9.0], name="b")
    with tf.Session() as sess:
        sess.run(b.initializer)
        with pytest.raises(errors.DataLossError, match="ck-1"):
            tf.train.Checkpoint(a=b).restore(path).run_restore_ops(sess)
        np.testing.assert_array_equal(sess.run(b), [9.0, 9.0])
    tf.reset_default_graph()
    a = tf.Variable([1.0, 2.0], name="a")
    with tf.Session() as sess:
        sess.run(a.initializer)
        good = tf.train.Checkpoint(a=a).save(str(tmp_path / "good"), session=sess)
    tf.reset_default_graph()
    wrong = tf.Variable([0.0, 0.0, 0.0], name="a")
    with tf.Session() as sess:
        sess.run(wrong.initializer)
        with pytest.raises(errors.InvalidArgumentError):
            tf.train.Checkpoint(a=wrong).restore(good).run_restore_ops(sess)
        np.testing.assert_array_equal(sess.run(wrong), [0.0, 0.0, 0.0])


def test_checkpoint_manager_keeps_the_last_n_and_a_new_manager_picks_them_up(tmp_path):
    with eager_mode():
        v = tf.Variable(0.0, name="ckpt_manager_v")
        ckpt = tf.train.Checkpoint(v=v)
        manager = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=2)
        assert manager.latest_checkpoint is None and manager.checkpoints == []
        paths = []
        for i in range(3):
            v.assign(float(i))
            paths.append(manager.save())
        assert paths == [str(tmp_path / f"ckpt-{i}") for i in (1, 2, 3)]
        assert manager.checkpoints == paths[1:] and manager.latest_checkpoint == paths[2]
        assert not list(tmp_path.glob("ckpt-1.*"))  # deleted
        assert tf.train.latest_checkpoint(str(tmp_path)) == paths[2]
        again = tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=2)
        assert again.checkpoints == paths[1:] and again.latest_checkpoint == paths[2]
        ckpt.restore(again.checkpoints[0]).assert_consumed()
        assert v.numpy() == 1.0
        assert again.save(checkpoint_number=100).endswith("ckpt-100")
        with pytest.raises(ValueError, match="positive integer or `None` for `max_to_keep`"):
            tf.train.CheckpointManager(ckpt, str(tmp_path), max_to_keep=0)


def test_checkpoint_manager_in_graph_mode_numbers_by_the_global_step(tmp_path):
    step = tf.train.get_or_create_global_step()
    inc = tf.assign_add(step, 5)
    ckpt = tf.train.Checkpoint(step=step)
    manager = tf.train.CheckpointManager(ckpt, str(tmp_path / "run"), max_to_keep=None)
    with tf.Session() as sess, sess.as_default():
        sess.run(step.initializer)
        for _ in range(3):
            sess.run(inc)
            manager.save(checkpoint_number=step)
    assert [os.path.basename(p) for p in manager.checkpoints] == ["ckpt-5", "ckpt-10", "ckpt-15"]


def test_keras_save_weights_and_the_checkpoint_share_one_format(tmp_path):
    ckpt, train, v, opt = _program()
    model = ckpt.model
    with tf.Session() as sess:
        tf.keras.backend.set_session(sess)
        sess.run(tf.global_variables_initializer())
        model.save_weights(str(tmp_path / "w" / "weights"))
        path = tf.train.Checkpoint(model=model).save(str(tmp_path / "c" / "ck"), session=sess)
    weights_keys = {k for k, _ in tf.train.list_variables(str(tmp_path / "w" / "weights"))}
    ckpt_keys = {k for k, _ in tf.train.list_variables(path)}
    assert {"model/" + k for k in weights_keys if k != "_CHECKPOINTABLE_OBJECT_GRAPH"} <= ckpt_keys


@pytest.mark.slow
def test_tensorflow_restores_dflows_checkpoint(tf_python, tmp_path):
    ckpt, train, v, opt = _program()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        path = ckpt.save(str(tmp_path / "ck"), session=sess)
        want = sess.run(v)
    out = run_tf(tf_python, textwrap.dedent(f"""
        import tensorflow.compat.v1 as tf
        import tf_keras as keras
        tf.disable_v2_behavior()
        v = tf.Variable([0.0, 0.0], name="v")
        model = keras.Sequential([keras.layers.Dense(2, input_shape=(3,))])
        opt = tf.train.AdamOptimizer(0.1)
        loss = tf.reduce_sum(model(tf.ones([1, 3]))) + tf.reduce_sum(v * v)
        train = opt.minimize(loss, var_list=model.trainable_variables + [v])
        step = tf.train.get_or_create_global_step()
        ckpt = tf.train.Checkpoint(model=model, optimizer=opt, v=v, step=step)
        with tf.Session() as sess:
            status = ckpt.restore({path!r})
            status.assert_consumed()
            status.run_restore_ops(sess)
            print(list(sess.run(v)), sess.run(ckpt.save_counter))
    """))
    values, counter = out.strip().rsplit(" ", 1)
    np.testing.assert_allclose(eval(values), want)  # noqa: S307 - our own subprocess's printed list
    assert counter == "1"


def _keys(path):
    return sorted(k for k, _ in tf.train.list_variables(path))


_ADAM_SLOTS = [".OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE",
               ".OPTIMIZER_SLOT/optimizer/v/.ATTRIBUTES/VARIABLE_VALUE"]


def test_an_eager_guides_subclassed_model_has_tfs_keys(tmp_path):
    # TF 2.21 compat.v1 eagerly (tf_keras): the attributes' names, then the tf.train optimizer's
    class Guide(tf.keras.Model):
        def __init__(self):
            super().__init__(name="ckpt_guide")
            self.dense1 = tf.keras.layers.Dense(3)
            self.out = tf.keras.layers.Dense(1)

        def call(self, x):
            return self.out(self.dense1(x))

    with eager_mode():
        model = Guide()
        opt = tf.train.AdamOptimizer(0.1)
        x = np.ones([2, 4], np.float32)
        opt.minimize(lambda: tf.reduce_sum(model(x)))
        path = tf.train.Checkpoint(model=model, optimizer=opt).save(str(tmp_path / "ck"))
        want = ["_CHECKPOINTABLE_OBJECT_GRAPH", "optimizer/beta1_power/.ATTRIBUTES/VARIABLE_VALUE",
                "optimizer/beta2_power/.ATTRIBUTES/VARIABLE_VALUE", "save_counter/.ATTRIBUTES/VARIABLE_VALUE"]
        for layer in ("dense1", "out"):
            for w in ("bias", "kernel"):
                want += [f"model/{layer}/{w}/.ATTRIBUTES/VARIABLE_VALUE"] + \
                    [f"model/{layer}/{w}/{s}" for s in _ADAM_SLOTS]
        assert _keys(path) == sorted(want)
        before = model.out.kernel.numpy().copy()
        opt.minimize(lambda: tf.reduce_sum(model(x)))
        tf.train.Checkpoint(model=model, optimizer=opt).restore(path).assert_consumed()
        np.testing.assert_array_equal(model.out.kernel.numpy(), before)


def test_a_compiled_keras_model_and_its_optimizer_have_tfs_keys(tmp_path):
    # TF 2.21 compat.v1 with tf_keras's legacy (1.x) Adam: iter and the hyperparameters, the slots
    model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="mse")
    model.fit(np.ones([4, 3], np.float32), np.ones([4, 2], np.float32), epochs=1, verbose=0)
    path = tf.train.Checkpoint(model=model, optimizer=model.optimizer).save(
        str(tmp_path / "ck"), session=tf.keras.backend.get_session())
    want = ["_CHECKPOINTABLE_OBJECT_GRAPH", "save_counter/.ATTRIBUTES/VARIABLE_VALUE"]
    want += [f"optimizer/{h}/.ATTRIBUTES/VARIABLE_VALUE" for h in ("beta_1", "beta_2", "decay", "iter",
                                                                    "learning_rate")]
    for w in ("bias", "kernel"):
        want += [f"model/layer_with_weights-0/{w}/.ATTRIBUTES/VARIABLE_VALUE"] + \
            [f"model/layer_with_weights-0/{w}/{s}" for s in _ADAM_SLOTS]
    assert _keys(path) == sorted(want)
