#!/usr/bin/env python3
"""The onnx.ort_judge test: ONNX Runtime runs the models of our op cases and
must give what our eager calls give.

  ort_judge.py DIR [--export PROGRAM]

With --export, DIR is emptied and `PROGRAM DIR` (export_op_cases) writes
there a folder per (case, dtype) in the layout of ONNX's test data: model.onnx
and test_data_set_0/{input,output}_<k>.pb. Each model then runs in ONNX
Runtime (CPUExecutionProvider, one thread) on the inputs, and each output is
compared with ours: integers and bools exactly, floats within the tolerance
of their dtype. One line per model that fails, then a summary; the exit
status is 1 when a model not in ALLOWED (or a family of RULES) fails (ONNX Runtime rejects it, fails
running it, or gives other values), one in ALLOWED agrees or fails otherwise
than it says, or (with --export) one in ALLOWED was not written.
Without onnxruntime the test is skipped (exit status 77, ctest's
SKIP_RETURN_CODE).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

try:
    import numpy as np
    import onnxruntime as ort
except ImportError:  # onnxruntime needs numpy
    np = ort = None

SKIPPED = 77

# Floats: |ort - ours| <= ULPS * eps * max(1, |ours|), eps the dtype's
# machine epsilon: relative above 1 and absolute below it (our samples'
# values are around 1). Arithmetic, data movement, comparisons and rounding
# agree to the bit; transcendental functions (exp, tanh, acos, ...) come from
# different libraries here and in ONNX Runtime (its own vectorised
# approximations in MLAS), which differ in the last bits, and so do the ops
# composed of them (softmax, the losses). The largest difference seen is
# 1.5 eps in float32 (acos) and 1.8 eps in float64 (categorical
# crossentropy); 4 leaves room for another version's approximations.
ULPS = 4


def no_kernel(what, *names):
    return dict.fromkeys(names, (f"ONNX Runtime's CPU provider has no kernel of {what}, which "
                                 "ONNX's schema of the op allows", "NOT_IMPLEMENTED"))


# The models that fail for a reason of ONNX Runtime's, not of our exporter:
# model folder -> (why, what ONNX Runtime's error says). Most are ops whose
# ONNX schema (opset 17) takes the type, but whose kernel ONNX Runtime
# registers for fewer types: it rejects the model (NOT_IMPLEMENTED).
ALLOWED = {
    **no_kernel("Acos on float64", "acos_float64"),
    **no_kernel("Acosh on float64", "acosh_float64", "acosh_scalars_float64"),
    **no_kernel("Asin on float64", "asin_float64"),
    **no_kernel("Asinh on float64", "asinh_float64", "asinh_scalars_float64"),
    **no_kernel("Atan on float64", "atan_float64", "atan_scalars_float64"),
    **no_kernel("Atanh on float64", "atanh_float64"),
    **no_kernel("Cosh on float64", "cosh_float64", "cosh_scalars_float64"),
    **no_kernel("Sinh on float64", "sinh_float64", "sinh_scalars_float64"),
    **no_kernel("Tan on float64", "tan_float64", "tan_scalars_float64"),
    **no_kernel("Erf on float64", "erf_float64", "erf_scalars_float64", "gelu_float64",
                "gelu_scalars_float64"),
    **no_kernel("Elu on float64", "elu_float64", "elu_scalars_float64"),
    **no_kernel("Selu on float64", "selu_float64", "selu_scalars_float64"),
    **no_kernel("Softplus on float64", "softplus_float64", "softplus_scalars_float64"),
    **no_kernel("Softsign on float64", "softsign_float64", "softsign_scalars_float64"),
    **no_kernel("HardSigmoid on float64", "hard_sigmoid_alpha_beta_float64"),
    **no_kernel("Conv on float64", "conv1d_float64", "conv2d_groups_float64",
                "conv2d_nchw_explicit_dilated_float64", "conv2d_same_float64",
                "conv2d_valid_strided_float64", "conv3d_ncdhw_float64",
                "depthwise_conv2d_float64", "fused_conv_float64"),
    **no_kernel("ConvTranspose on float64", "conv2d_transpose_float64"),
    **no_kernel("AveragePool on float64", "avg_pool2d_same_nchw_float64",
                "avg_pool3d_valid_float64"),
    **no_kernel("Relu on int64", "relu_int64", "relu_scalars_int64"),
    **no_kernel("Where on bool", "where_bool", "where_scalars_false_bool",
                "where_scalars_true_bool"),
    # ONNX's OneHot takes any numeric indices and depth, and values of any
    # type; ONNX Runtime has some combinations only. Of those we write
    # (indices and depth of one type) it has int32 ones with float32 values,
    # and int64 ones with float32 or int64 values.
    **no_kernel("OneHot with int32 indices and depth and these values",
                *(f"one_hot_int32_axis{axis}_{values}" for axis in ("0", "1", "m1")
                  for values in ("bool", "float64", "int32", "int64"))),
    **no_kernel("OneHot with int64 indices and depth and these values",
                *(f"one_hot_int64_axis{axis}_{values}" for axis in ("0", "1", "m1")
                  for values in ("bool", "float64", "int32"))),
    # ONNX Runtime's LSTM takes float64 models and fails running them.
    **dict.fromkeys(["lstm_float64", "lstm_reverse_float64"],
                    ("ONNX Runtime's LSTM kernel computes float32 only",
                     "LSTM operator does not support double")),
    **dict.fromkeys(["gru_float64", "gru_reset_before_reverse_float64"],
                    ("ONNX Runtime's GRU kernel computes float32 only",
                     "GRU operator does not support double")),
    **dict.fromkeys(["simple_rnn_float64", "simple_rnn_relu_reverse_float64"],
                    ("ONNX Runtime's CPU provider has RNN of float32 only",
                     "Could not find an implementation for RNN")),
    # A dropout's mask is random: another runtime's generator keeps other elements.
    **dict.fromkeys(["dropout_float32", "dropout_float64"],
                    ("a random mask, drawn by ONNX Runtime's generator", "output 0: max |error|")),
}

# Families of models that fail for a reason of ONNX Runtime's, by name:
# (pattern, why, what each of ONNX Runtime's errors says: one of these).
RULES = [
    (r".*bfloat16.*", "NumPy has no bfloat16: ONNX Runtime's Python API can neither take one "
     "nor give one back",
     ("Unexpected input data type", "Unable to handle object", "No corresponding Numpy type")),
    (r"one_hot_int(32|64)_axis(0|1|m1)_(u?int(8|16)|uint(32|64))",
     "ONNX Runtime's CPU provider has no OneHot of these values", ("NOT_IMPLEMENTED",)),
    (r"unique(_first_indices)?(_sorted_axis)?_(bool|u?int(8|16|32))",
     "ONNX Runtime's CPU provider has Unique of float32, int64, int8 and string only",
     ("NOT_IMPLEMENTED",)),
    (r"relu(_scalars)?_uint(32|64)", "ONNX Runtime's CPU provider has no Relu of these",
     ("NOT_IMPLEMENTED",)),
    (r"quantize_linear_.*_int32", "ONNX Runtime's CPU provider quantizes float inputs only",
     ("NOT_IMPLEMENTED",)),
    (r"(pow|pow_fractional|reduce_prod_[0-9m_]+(keepdims_)?)_?uint(8|16|32)",
     "ONNX Runtime does not wrap unsigned powers and products around; ours wrap modulo "
     "2^bits, as NumPy and TensorFlow do", ("max |error|",)),
    (r"dropout_float16", "a random mask, drawn by ONNX Runtime's generator", ("max |error|",)),
    (r"(gather_int(32|64)_axis0|index_(int|negative|tensor))_string",
     "ONNX Runtime 1.32's Gather of strings keeps the first string of each gathered row and "
     "empties the others (a one-node model shows it); ours is NumPy's x[indices]",
     ("strings differ",)),
]


def ruled(name, problems):
    """Whether a rule of RULES names the model and explains each of its problems."""
    for pattern, _, symptoms in RULES:
        if re.fullmatch(pattern, name) and all(
                any(symptom in problem for symptom in symptoms) for problem in problems):
            return True
    return False


# ONNX's TensorProto.DataType codes of the dtypes we export (bfloat16, which
# NumPy lacks, is read as its bits and widened to float32 by read_tensor).
DTYPES = {1: "<f4", 2: "|u1", 3: "|i1", 4: "<u2", 5: "<i2", 6: "<i4", 7: "<i8", 9: "?",
          10: "<f2", 11: "<f8", 12: "<u4", 13: "<u8", 16: "<u2"}
BFLOAT16 = 16
STRING = 8  # held in string_data (field 6); NumPy arrays of Python str, as ONNX Runtime's


def varint(buf, i):
    """The varint at buf[i:] and the index after it."""
    value = shift = 0
    while True:
        byte = buf[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def read_tensor(path):
    """The name and the array of a TensorProto file that holds its values in raw_data, as
    ours do."""
    with open(path, "rb") as f:
        buf = f.read()
    dims, fields, strings, i = [], {}, [], 0
    while i < len(buf):
        key, i = varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = varint(buf, i)
        elif wire == 2:
            size, i = varint(buf, i)
            value, i = buf[i:i + size], i + size
        else:
            raise ValueError(f"{path}: field {number} has wire type {wire}")
        if number == 1 and wire == 0:
            dims.append(value)
        elif number == 1:  # packed
            j = 0
            while j < len(value):
                dim, j = varint(value, j)
                dims.append(dim)
        elif number in (2, 8, 9):  # data_type, name, raw_data
            fields[number] = value
        elif number == 6:  # string_data
            strings.append(value.decode())
        else:
            raise ValueError(f"{path}: field {number} of TensorProto is not read here")
    if fields[2] == STRING:
        return fields.get(8, b"").decode(), np.array(strings, dtype=object).reshape(dims)
    array = np.frombuffer(fields.get(9, b""), dtype=DTYPES[fields[2]]).reshape(dims)
    if fields[2] == BFLOAT16:
        array = (array.astype(np.uint32) << 16).view(np.float32)
    return fields.get(8, b"").decode(), array


def read_data_set(folder, prefix):
    arrays = []
    while os.path.exists(path := os.path.join(folder, f"{prefix}_{len(arrays)}.pb")):
        arrays.append(read_tensor(path))
    return arrays


def mismatch(got, want):
    """Empty when `got` (ONNX Runtime's) equals `want` (ours); otherwise how they differ."""
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"got {got.dtype}{list(got.shape)}, want {want.dtype}{list(want.shape)}"
    if want.dtype.kind == "O":  # strings
        bad = got != want
        return f"{np.count_nonzero(bad)} of {want.size} strings differ" if bad.any() else ""
    if want.dtype.kind == "f":
        with np.errstate(invalid="ignore"):  # inf - inf
            error = np.abs(got.astype(np.float64) - want)
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        tolerance = ULPS * np.finfo(want.dtype).eps * np.maximum(1, np.abs(want))
        bad = ~(same | (error <= tolerance))
    else:
        error = np.abs(got.astype(np.int64) - want.astype(np.int64))
        bad = got != want
    if not bad.any():
        return ""
    worst = np.unravel_index(np.argmax(np.where(bad, np.nan_to_num(error, nan=np.inf), -1)),
                             want.shape)
    return (f"max |error| {error[worst]:.3g} at {list(map(int, worst))} "
            f"({np.count_nonzero(bad)} of {want.size} elements differ): "
            f"ONNX Runtime {got[worst].item()!r}, ours {want[worst].item()!r}")


def judge(folder):
    """Empty when ONNX Runtime runs folder/model.onnx to our outputs; otherwise why not."""
    data = os.path.join(folder, "test_data_set_0")
    inputs, wants = read_data_set(data, "input"), read_data_set(data, "output")
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.log_severity_level = 4  # its errors come back as exceptions
    try:
        session = ort.InferenceSession(os.path.join(folder, "model.onnx"), options,
                                       providers=["CPUExecutionProvider"])
    except Exception as e:  # ORT's errors have several types
        return [f"ONNX Runtime rejects the model: {str(e).strip()}"]
    try:
        gots = session.run(None, dict(inputs))
    except Exception as e:
        return [f"ONNX Runtime fails running it: {str(e).strip()}"]
    if len(gots) != len(wants):
        return [f"{len(gots)} outputs, want {len(wants)}"]
    return [f"output {k}: {diff}" for k, (got, (_, want)) in enumerate(zip(gots, wants))
            if (diff := mismatch(got, want))]


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir")
    p.add_argument("--export", help="the program that writes the models into DIR")
    a = p.parse_args()
    if ort is None:
        print("skipped: onnxruntime is not installed (pip install onnxruntime)")
        return SKIPPED
    if a.export:
        shutil.rmtree(a.dir, ignore_errors=True)
        os.makedirs(a.dir)
        if subprocess.run([a.export, a.dir]).returncode != 0:
            print(f"ort_judge.py: '{a.export} {a.dir}' failed")
            return 1
    names = sorted(n for n in os.listdir(a.dir)
                   if os.path.exists(os.path.join(a.dir, n, "model.onnx")))
    agree = allowed = failed = 0
    for name in names:
        problems = judge(os.path.join(a.dir, name))
        why, symptom = ALLOWED.get(name, (None, None))
        if problems and symptom and all(symptom in problem for problem in problems):
            allowed += 1
        elif problems and ruled(name, problems):
            allowed += 1
        elif problems:
            failed += 1
            for problem in problems:
                print(f"FAIL {name}: {problem}")
        elif why:
            failed += 1
            print(f"FAIL {name}: agrees, but ALLOWED says it fails: {why}")
        else:
            agree += 1
    stale = sorted(set(ALLOWED) - set(names)) if a.export else []
    for name in stale:
        print(f"FAIL {name}: in ALLOWED, but there is no such model")
    print(f"onnxruntime {ort.__version__}: {len(names)} models judged: {agree} agree with our "
          f"eager calls, {allowed} allowed to differ, {failed} failed")
    return 1 if failed or stale or not names else 0


if __name__ == "__main__":
    sys.exit(main())
