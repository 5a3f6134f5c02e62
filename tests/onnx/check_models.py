#!/usr/bin/env python3
"""The onnx.python_check test: the models our tests export, checked by ONNX's
Python library (python3-onnx) as well as by the C++ checker that
ag::onnx::save runs.

  check_models.py --dir DIR [--run 'COMMAND'...]

Each COMMAND runs first, with AG_ONNX_SAVE_DIR=DIR in its environment (the
exporting tests write each model there, tests/onnx/round_trip.h); `{dir}` in
a COMMAND stands for DIR. Then every DIR/*.onnx must pass
onnx.checker.check_model(model, full_check=True): the checker and strict
shape inference. Fails when a command fails, a model fails, or there is none.
"""
import argparse
import glob
import os
import shlex
import shutil
import subprocess
import sys

import onnx
import onnx.checker


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dir", required=True)
    p.add_argument("--run", action="append", default=[])
    a = p.parse_args()
    shutil.rmtree(a.dir, ignore_errors=True)
    os.makedirs(a.dir)
    env = dict(os.environ, AG_ONNX_SAVE_DIR=a.dir)
    for command in a.run:
        args = [arg.replace("{dir}", a.dir) for arg in shlex.split(command)]
        if subprocess.run(args, env=env, stdout=subprocess.DEVNULL).returncode != 0:
            sys.exit(f"check_models.py: '{command}' failed")
    models = sorted(glob.glob(os.path.join(a.dir, "*.onnx")))
    failed = 0
    for path in models:
        try:
            onnx.checker.check_model(onnx.load(path), full_check=True)
        except Exception as e:  # the checker's errors have several types
            failed += 1
            print(f"FAIL {os.path.basename(path)}: {e}")
    print(f"python3-onnx {onnx.__version__}: {len(models) - failed} of {len(models)} models pass "
          "check_model(full_check=True)")
    if failed or not models:
        sys.exit(1)


if __name__ == "__main__":
    main()
