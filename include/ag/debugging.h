// tf.debugging's numerics checks: with enable_check_numerics() on, the first
// op whose floating-point output holds a NaN or an infinity raises an
// InvalidArgumentError naming the op and the user's line, eagerly and in
// graphs alike:
//
//   ag::debugging::enable_check_numerics();
//   ag::log(x);  // InvalidArgumentError: check_numerics: op 'log' produced
//                // NaN in 1 of 3 elements of its output (float32, shape (3,)),
//                // defined at model.cpp:12
//
// While it is on, an ag::function runs its traced graph node by node (as a
// call under several gradient tapes does), each node's output checked, so
// the first node to produce a NaN is the one named: the error reads the same
// as in the build without agc. Off (the default), it costs one relaxed
// atomic load per op and per call.
#pragma once

namespace ag::debugging {

void enable_check_numerics();
void disable_check_numerics();
bool check_numerics_enabled();

}  // namespace ag::debugging
