"""`dflow inspect-checkpoint PATH`: a checkpoint's variables, like TF's inspect_checkpoint tool.

One line per variable, sorted by name: `name (dtype) [shape] sha256:...` (TF prints
`name (DT_FLOAT) [2,3]`; the checksum is the one stored with each variable: sha256 in dflow's
format, crc32c in TensorFlow's). `--tensor-name` / `--all-tensors` print values too, `--verify`
reads every variable and checks its checksum. Either format, found from the files.
"""

from __future__ import annotations

import sys

import numpy as np

from ..errors import OpError
from ..io.checkpoint import CheckpointReader

__all__ = ["inspect_checkpoint"]


def inspect_checkpoint(path, tensor_name=None, all_tensors=False, verify=False, out=None):
    """Prints the checkpoint's table (and values asked for); returns the exit status (1 on an error)."""
    out = out or sys.stdout
    reader = None
    try:
        reader = CheckpointReader(path)
        shapes = reader.get_variable_to_shape_map()
        dtypes = reader.get_variable_to_dtype_name_map()
        checksums = reader.get_variable_to_checksum_map()
        if tensor_name is not None and not reader.has_tensor(tensor_name):
            print(f"dflow inspect-checkpoint: no variable {tensor_name!r} in {reader.path} (it has: "
                  f"{', '.join(sorted(shapes)) or 'none'})", file=sys.stderr)
            return 1
        kind = " (TensorFlow V2 format)" if reader.format == "tensorflow" else ""
        print(f"checkpoint {reader.path}{kind}: {len(shapes)} variable{'s' if len(shapes) != 1 else ''}", file=out)
        for name in sorted(shapes):
            shape = "[" + ",".join(str(d) for d in shapes[name]) + "]"
            print(f"{name} ({dtypes[name]}) {shape} {checksums[name]}", file=out)
        shown = sorted(shapes) if all_tensors else [tensor_name] if tensor_name is not None else []
        for name in shown:
            print(f"tensor_name:  {name}", file=out)
            print(np.array2string(np.asarray(reader.get_tensor(name)), threshold=1000), file=out)
        if verify:
            for name in sorted(set(shapes) - set(shown)):
                reader.get_tensor(name)  # DataLossError on a checksum mismatch
            print("verified: every variable matches its checksum", file=out)
    except OpError as e:
        print(f"dflow inspect-checkpoint: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    finally:
        if reader is not None:
            reader.close()
    return 0
