"""`tf.contrib.learn.learn_runner`: `run(experiment_fn, ...)` builds the Experiment and runs the
schedule (a method of it) the flags name, as TF 1.x's learn_runner does for one process."""

from __future__ import annotations

import inspect

from ...tf1_names import missing_attribute
from .experiment import Experiment, RunConfig

__all__ = ["run", "tune"]


def _schedules(experiment):
    return sorted(n for n, v in inspect.getmembers(type(experiment)) if callable(v) and not n.startswith("_"))


def run(experiment_fn, output_dir=None, schedule=None, run_config=None, hparams=None):
    """Makes the Experiment (`experiment_fn(run_config, hparams)`, or TF 1.x's older
    `experiment_fn(output_dir)`) and calls its `schedule` method (default "train_and_evaluate" in
    one process); returns what that returns."""
    if not callable(experiment_fn):
        raise TypeError(f"Experiment builder \"{experiment_fn}\" is not callable.")
    if output_dir is not None and run_config is not None:
        raise ValueError("`output_dir` and `run_config` are mutually exclusive; set model_dir in run_config.")
    if run_config is not None:
        if not isinstance(run_config, RunConfig.__mro__[1]):
            raise ValueError(f"`run_config` must be a RunConfig, got {type(run_config).__name__}")
        experiment = experiment_fn(run_config, hparams)
    else:
        if not output_dir:
            raise ValueError("Must specify an output directory")
        if hparams is not None:
            raise ValueError("hparams can only be passed together with run_config")
        experiment = experiment_fn(output_dir)
    if not isinstance(experiment, Experiment):
        raise TypeError(f"Experiment builder did not return an Experiment instance, got {type(experiment).__name__} "
                        "instead.")
    schedule = schedule or "train_and_evaluate"
    valid = _schedules(experiment)
    if schedule not in valid:
        raise ValueError(f"Schedule references non-existent task {schedule}. Allowed tasks: {valid}")
    return getattr(experiment, schedule)()


def tune(experiment_fn, tuner):
    raise NotImplementedError("learn_runner.tune needs a hyperparameter tuner service, which dflow does not have; "
                              "call learn_runner.run for each set of hparams")


__getattr__ = missing_attribute(__name__)
