"""TF1's `tf.estimator.RunConfig`: where an Estimator writes and how often it saves."""

from __future__ import annotations

import copy

__all__ = ["RunConfig"]

_USE_DEFAULT = object()
_DEFAULT_CHECKPOINT_SECS = 600


class TaskType:
    MASTER = "master"
    PS = "ps"
    WORKER = "worker"
    CHIEF = "chief"
    EVALUATOR = "evaluator"


class RunConfig:
    """Settings of an Estimator's runs: model_dir, the graph-level random seed, summaries every
    `save_summary_steps`, checkpoints every `save_checkpoints_steps` or `save_checkpoints_secs`
    (600 s when neither is given; ValueError when both are), `keep_checkpoint_max`, the step
    rate logged every `log_step_count_steps`, and the `session_config` (a ConfigProto) of its sessions.
    A single process is always the chief; distribution settings are kept but not used."""

    def __init__(self, model_dir=None, tf_random_seed=None, save_summary_steps=100,
                 save_checkpoints_steps=_USE_DEFAULT, save_checkpoints_secs=_USE_DEFAULT, session_config=None,
                 keep_checkpoint_max=5, keep_checkpoint_every_n_hours=10000, log_step_count_steps=100,
                 train_distribute=None, device_fn=None, protocol=None, eval_distribute=None,
                 experimental_distribute=None, experimental_max_worker_delay_secs=None,
                 session_creation_timeout_secs=7200):
        if save_checkpoints_steps is _USE_DEFAULT and save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_steps, save_checkpoints_secs = None, _DEFAULT_CHECKPOINT_SECS
        elif save_checkpoints_steps is _USE_DEFAULT:
            save_checkpoints_steps = None
        elif save_checkpoints_secs is _USE_DEFAULT:
            save_checkpoints_secs = None
        if save_checkpoints_steps and save_checkpoints_secs:
            raise ValueError("Can not specify both save_checkpoints_steps and save_checkpoints_secs.")
        for name, value in (("save_summary_steps", save_summary_steps), ("log_step_count_steps", log_step_count_steps),
                            ("keep_checkpoint_max", keep_checkpoint_max),
                            ("save_checkpoints_steps", save_checkpoints_steps),
                            ("save_checkpoints_secs", save_checkpoints_secs)):
            if value is not None and value < 0:
                raise ValueError(f"{name} should be >= 0, given: {value}")
        if tf_random_seed is not None and not isinstance(tf_random_seed, int):
            raise ValueError(f"tf_random_seed must be integer, given: {tf_random_seed!r}")
        self._model_dir = str(model_dir) if model_dir is not None else None
        self._tf_random_seed = tf_random_seed
        self._save_summary_steps = save_summary_steps
        self._save_checkpoints_steps = save_checkpoints_steps
        self._save_checkpoints_secs = save_checkpoints_secs
        self._session_config = session_config
        self._keep_checkpoint_max = keep_checkpoint_max
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._log_step_count_steps = log_step_count_steps
        self._train_distribute, self._eval_distribute = train_distribute, eval_distribute
        self._device_fn, self._protocol = device_fn, protocol
        self._experimental_distribute = experimental_distribute
        self._experimental_max_worker_delay_secs = experimental_max_worker_delay_secs
        self._session_creation_timeout_secs = session_creation_timeout_secs

    _REPLACEABLE = ("model_dir", "tf_random_seed", "save_summary_steps", "save_checkpoints_steps",
                    "save_checkpoints_secs", "session_config", "keep_checkpoint_max",
                    "keep_checkpoint_every_n_hours", "log_step_count_steps", "train_distribute", "device_fn",
                    "protocol", "eval_distribute", "experimental_distribute", "experimental_max_worker_delay_secs",
                    "session_creation_timeout_secs")

    def replace(self, **kwargs):
        """A copy with the given properties changed; ValueError for one that cannot be replaced."""
        for key in kwargs:
            if key not in self._REPLACEABLE:
                raise ValueError(f"{key} is not in the list of allowed properties to replace: "
                                 f"{', '.join(self._REPLACEABLE)}")
        new = copy.copy(self)
        args = {k: getattr(self, k) for k in self._REPLACEABLE}
        args.update(kwargs)
        if "save_checkpoints_steps" in kwargs and "save_checkpoints_secs" not in kwargs and kwargs[
                "save_checkpoints_steps"]:
            args["save_checkpoints_secs"] = None
        if "save_checkpoints_secs" in kwargs and "save_checkpoints_steps" not in kwargs and kwargs[
                "save_checkpoints_secs"]:
            args["save_checkpoints_steps"] = None
        new.__init__(**args)
        return new

    model_dir = property(lambda self: self._model_dir)
    tf_random_seed = property(lambda self: self._tf_random_seed)
    save_summary_steps = property(lambda self: self._save_summary_steps)
    save_checkpoints_steps = property(lambda self: self._save_checkpoints_steps)
    save_checkpoints_secs = property(lambda self: self._save_checkpoints_secs)
    session_config = property(lambda self: self._session_config)
    keep_checkpoint_max = property(lambda self: self._keep_checkpoint_max)
    keep_checkpoint_every_n_hours = property(lambda self: self._keep_checkpoint_every_n_hours)
    log_step_count_steps = property(lambda self: self._log_step_count_steps)
    train_distribute = property(lambda self: self._train_distribute)
    eval_distribute = property(lambda self: self._eval_distribute)
    device_fn = property(lambda self: self._device_fn)
    protocol = property(lambda self: self._protocol)
    experimental_distribute = property(lambda self: self._experimental_distribute)
    experimental_max_worker_delay_secs = property(lambda self: self._experimental_max_worker_delay_secs)
    session_creation_timeout_secs = property(lambda self: self._session_creation_timeout_secs)
    cluster_spec = property(lambda self: {})
    task_type = property(lambda self: TaskType.WORKER)
    task_id = property(lambda self: 0)
    master = property(lambda self: "")
    evaluation_master = property(lambda self: "")
    is_chief = property(lambda self: True)
    num_ps_replicas = property(lambda self: 0)
    num_worker_replicas = property(lambda self: 1)
    global_id_in_cluster = property(lambda self: 0)
    service = property(lambda self: None)
