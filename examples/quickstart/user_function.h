// The functions of user_function.cpp, as main.cpp sees them.
#pragma once

#include <ag/ag.h>

// x^y for a 10x10 int32 matrix, by y matrix products.
ag::Tensor power(ag::Tensor x, int y);
// Applies tanh until the sum of x is at most 1.
ag::Tensor tanh_loop(ag::Tensor x);
// The mean of (a - b)^2 over all elements.
ag::Tensor mean_squared_error(ag::Tensor a, ag::Tensor b);
