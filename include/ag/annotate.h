// The one header shared by the runtime and the transpiler.
//
// AG_FUNCTION marks a function, method, function template or lambda for `agc`.
// Under Clang it becomes an annotation that `agc` looks for; other compilers
// see nothing, so a plain g++ build stays warning-free and runs eagerly.
#pragma once

#if defined(__clang__)
#define AG_FUNCTION __attribute__((annotate("autograph")))
#else
#define AG_FUNCTION
#endif

// The annotation string `agc` matches on.
#define AG_FUNCTION_ANNOTATION "autograph"
