#pragma once

#include <ag/ag.h>

// Applies tanh until the sum of x is at most 1.
ag::Tensor tanh_loop(ag::Tensor x);
