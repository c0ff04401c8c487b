"""docs/tf1_coverage.md is up to date, and a name dflow lacks fails with a message that says so."""

import subprocess
import sys
from pathlib import Path

import pytest

import dflow as tf
from dflow.tf1_names import missing_attribute, reference

ROOT = Path(__file__).resolve().parents[1]

# modules whose missing names must explain themselves (the ones that exist in this checkout)
MODULES = [m for m in ["", "nn", "train", "losses", "io", "math", "compat", "layers", "metrics", "image", "contrib",
                       "strings"] if m == "" or hasattr(tf, m)]


def test_the_coverage_page_is_up_to_date():
    # a fresh interpreter: the page is a function of the public namespace and the op registry, which
    # other tests extend (test op types, imported submodules)
    out = subprocess.run([sys.executable, "tools/tf1_coverage.py", "--check"], cwd=ROOT, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, (out.stdout + out.stderr)[-4000:]  # the diff, and the command that rewrites it


def test_the_reference_list_knows_tf1():
    ref = reference()
    assert ref.tf_version.count(".") == 2 and ref.dumped.startswith("20")
    top, by_hand = ref.modules[""]
    assert not by_hand and {"placeholder", "Session", "nn", "contrib", "estimator", "layers"} <= top
    assert {"conv2d", "max_pool", "softmax"} <= ref.modules["nn"][0]
    assert ref.modules["contrib.layers"][1] and "fully_connected" in ref.modules["contrib.layers"][0]
    assert not any(n.startswith("_") for names, _ in ref.modules.values() for n in names)


@pytest.mark.parametrize("path", MODULES)
def test_a_tf1_name_dflow_lacks(path):
    module = tf
    for part in filter(None, path.split(".")):
        module = getattr(module, part)
    names = sorted(reference().modules[path][0])
    lacking = [n for n in names if n not in vars(module)]
    if not lacking:
        pytest.skip(f"dflow provides every name of tf.{path}")
    name = lacking[0]
    tf_name = "tf." + (f"{path}.{name}" if path else name)
    with pytest.raises(AttributeError) as err:
        getattr(module, name)
    msg = str(err.value)
    assert msg.startswith(f"dflow does not provide {tf_name}, a TF1 name"), msg
    assert "docs/tf1_coverage.md" in msg and "Did you mean" not in msg
    assert not hasattr(module, name)


@pytest.mark.parametrize("path", MODULES)
def test_a_name_that_is_not_tf1(path):
    module = tf
    for part in filter(None, path.split(".")):
        module = getattr(module, part)
    with pytest.raises(AttributeError) as err:
        module.zeross  # noqa: B018 - one letter from `zeros`: Python would suggest it
    msg = str(err.value)
    tf_name = "tf." + (f"{path}.zeross" if path else "zeross")
    assert f"has no attribute 'zeross', and {tf_name} is not a TF1 name either" in msg, msg
    assert "docs/tf1_coverage.md" in msg
    assert not hasattr(module, "zeross")


def test_messages_in_detail():
    with pytest.raises(AttributeError, match=r"^dflow does not provide tf\.nn\.quantized_conv2d, a TF1 name \(module "
                                             r"'dflow\.nn' has no attribute 'quantized_conv2d'\)\. `python -m dflow\.cli coverage "
                                             r"tf\.nn` \(or `dflow coverage tf\.nn`\) lists what dflow provides"):
        tf.nn.quantized_conv2d  # noqa: B018
    # a name TF1 has in another module: the message says where
    with pytest.raises(AttributeError, match=r"tf\.train\.relu is not a TF1 name either .*TF1 has .*tf\.nn\.relu"):
        tf.train.relu  # noqa: B018
    if not hasattr(tf, "contrib"):
        with pytest.raises(AttributeError, match=r"^dflow does not provide tf\.contrib, a TF1 name"):
            tf.contrib  # noqa: B018
    # private and dunder names: the plain message, without reading the list
    with pytest.raises(AttributeError, match=r"^module 'dflow' has no attribute '__wrapped__'$"):
        tf.__wrapped__  # noqa: B018
    assert getattr(tf.nn, "_private", None) is None


def test_import_of_a_missing_name_is_an_import_error():
    with pytest.raises(ImportError, match="cannot import name 'quantized_conv2d'"):
        from dflow.nn import quantized_conv2d  # noqa: F401
    with pytest.raises(ImportError):
        from dflow import zeross  # noqa: F401


def test_missing_attribute_for_a_module_outside_the_reference():
    getattr_ = missing_attribute("dflow.regularizers")
    with pytest.raises(AttributeError, match=r"^module 'dflow\.regularizers' has no attribute 'foo' "
                                             r"\(`python -m dflow\.cli coverage tf`"):
        getattr_("foo")


def test_contrib_modules_are_tf1_names():
    """TF1's contrib modules are TF1 names, provided or not (the error said 'not a TF1 name' for these)."""
    for name in ("summary", "lookup", "graph_editor", "data", "training", "keras"):
        if not hasattr(tf.contrib, name):
            with pytest.raises(AttributeError, match=f"^dflow does not provide tf.contrib.{name}, a TF1 name"):
                getattr(tf.contrib, name)


def test_coverage_command_works_from_the_installed_package(capsys):
    """The page the missing-name error points to is a command of the package, not a file of the source tree."""
    from dflow.cli import main

    assert main(["coverage", "tf.nn"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("tf.nn: dflow provides ") and "  + tf.nn.relu\n" in out and "  - tf.nn.quantized_conv2d  (missing)" in out
    assert main(["coverage"]) == 0
    assert "  tf.contrib " in capsys.readouterr().out
    assert main(["coverage", "tf.nope"]) == 1
    assert "not a TF1 module" in capsys.readouterr().err
