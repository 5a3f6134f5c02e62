// The umbrella header of the autograph-cpp runtime. ag/eigen.h and ag/onnx.h
// are included on their own: Eigen's headers would add half again to the
// compile time of every file that includes this one.
#pragma once

#include "ag/annotate.h"
#include "ag/checkpoint.h"
#include "ag/control_flow.h"
#include "ag/data.h"
#include "ag/debugging.h"
#include "ag/dtype.h"
#include "ag/effects.h"
#include "ag/error.h"
#include "ag/function.h"
#include "ag/gradients.h"
#include "ag/image.h"
#include "ag/layers.h"
#include "ag/losses.h"
#include "ag/ops.h"
#include "ag/optimizers.h"
#include "ag/rnn.h"
#include "ag/shape.h"
#include "ag/strings.h"
#include "ag/tensor.h"
#include "ag/tensor_array.h"
#include "ag/threading.h"
#include "ag/trace_type.h"
#include "ag/variable.h"
