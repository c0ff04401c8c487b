"""Writes tests/fixtures/tf_distributions/figures.json: TF 1.x `tf.distributions` figures (log_prob,
cdf, entropy, moments, KL divergences, shapes) for the cases below, which tests/test_distributions.py
rebuilds in dflow and compares.

    /tmp/tfenv/bin/python tools/make_tf_distributions_fixture.py
"""

import json
import math
import os

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "tf_distributions",
                   "figures.json")

CASES = {
    "normal": ("Normal", dict(loc=[0.0, 1.5], scale=[1.0, 2.0]), [[-1.0, 0.5], [2.0, 3.0]]),
    "bernoulli_probs": ("Bernoulli", dict(probs=[0.2, 0.7]), [[0, 1], [1, 1]]),
    "bernoulli_logits": ("Bernoulli", dict(logits=[-1.0, 2.0]), [[0, 1], [1, 0]]),
    "categorical": ("Categorical", dict(logits=[[0.0, 1.0, 2.0], [1.0, 1.0, -1.0]]), [[0, 2], [1, 1]]),
    "beta": ("Beta", dict(concentration1=[2.0, 0.5], concentration0=[3.0, 1.5]), [[0.3, 0.6], [0.9, 0.1]]),
    "gamma": ("Gamma", dict(concentration=[2.0, 0.5], rate=[1.5, 3.0]), [[0.5, 1.0], [2.0, 0.1]]),
    "exponential": ("Exponential", dict(rate=[0.5, 2.0]), [[0.5, 1.0], [2.0, 0.1]]),
    "dirichlet": ("Dirichlet", dict(concentration=[[1.0, 2.0, 3.0], [0.5, 0.5, 2.0]]),
                  [[0.2, 0.3, 0.5], [0.1, 0.6, 0.3]]),
    "laplace": ("Laplace", dict(loc=[0.0, 1.0], scale=[1.0, 0.5]), [[-1.0, 0.5], [2.0, 3.0]]),
    "multinomial": ("Multinomial", dict(total_count=[3.0, 5.0], probs=[[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]),
                    [[1.0, 1.0, 1.0], [0.0, 1.0, 4.0]]),
    "dirichlet_multinomial": ("DirichletMultinomial", dict(total_count=4.0, concentration=[[1.0, 2.0, 3.0],
                                                                                        [0.5, 0.5, 2.0]]),
                              [[1.0, 1.0, 2.0], [0.0, 4.0, 0.0]]),
    "student_t": ("StudentT", dict(df=[3.0, 1.5], loc=[0.0, 1.0], scale=[1.0, 2.0]), [[-1.0, 0.5], [2.0, 3.0]]),
    "uniform": ("Uniform", dict(low=[0.0, -1.0], high=[1.0, 3.0]), [[0.5, 2.0], [1.5, -2.0]]),
}
METHODS = ["log_prob", "prob", "cdf", "log_cdf", "survival_function", "log_survival_function"]
STATS = ["entropy", "mean", "stddev", "variance", "mode", "covariance"]
KL = {"normal": dict(loc=[1.0, -0.5], scale=[0.5, 3.0]), "bernoulli_probs": dict(probs=[0.5, 0.1]),
      "categorical": dict(logits=[[1.0, 0.0, 0.0], [0.0, 2.0, 1.0]]),
      "beta": dict(concentration1=[1.0, 2.0], concentration0=[1.0, 0.5]),
      "gamma": dict(concentration=[1.0, 3.0], rate=[0.5, 1.0]), "exponential": dict(rate=[1.0, 1.0]),
      "dirichlet": dict(concentration=[[2.0, 2.0, 2.0], [1.0, 3.0, 1.0]])}


def _value(x):
    x = np.asarray(x, np.float64)
    return [None if math.isnan(v) else ("inf" if v == math.inf else "-inf" if v == -math.inf else v)
            for v in x.ravel().tolist()], list(x.shape)


def main():
    out = {}
    with tf.Session() as sess:
        for case, (cls, kwargs, x) in CASES.items():
            dist = getattr(tf.distributions, cls)(**kwargs)
            fig = {"class": cls, "kwargs": kwargs, "x": x, "batch_shape": dist.batch_shape.as_list(),
                   "event_shape": dist.event_shape.as_list(),
                   "reparameterization_type": str(dist.reparameterization_type)}
            for name in METHODS:
                xs = np.asarray(x, dist.dtype.as_numpy_dtype)
                try:
                    fig[name] = _value(sess.run(getattr(dist, name)(xs)))
                except NotImplementedError:
                    fig[name] = "NotImplementedError"
                except ValueError:  # TF's Betainc does not broadcast ranks: row by row, then stacked
                    fig[name] = _value(np.stack([sess.run(getattr(dist, name)(row)) for row in xs]))
            for name in STATS:
                try:
                    fig[name] = _value(sess.run(getattr(dist, name)()))
                except NotImplementedError:
                    fig[name] = "NotImplementedError"
                except ValueError as e:  # a TF bug (Dirichlet.mode's where on mismatched ranks)
                    fig[name] = "TF error: " + str(e).split(" for ")[0]
            if case in KL:
                other = getattr(tf.distributions, cls)(**KL[case])
                fig["kl_other"] = KL[case]
                fig["kl"] = _value(sess.run(tf.distributions.kl_divergence(dist, other)))
            out[case] = fig
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
