// The one header shared by the runtime and the transpiler: the names that
// make up the contract between `agc` and the runtime (docs/codegen-contract.md).
// Plain preprocessor definitions, so that g++ builds without Clang use it too.
//
// AG_FUNCTION marks a function, method, function template or lambda for `agc`.
// Under Clang it becomes an annotation that `agc` looks for; other compilers
// see nothing, so a plain g++ build stays warning-free and runs eagerly.
#pragma once

// The annotation string `agc` matches on.
#define AG_FUNCTION_ANNOTATION "autograph"

#if defined(__clang__)
#define AG_FUNCTION __attribute__((annotate(AG_FUNCTION_ANNOTATION)))
#else
#define AG_FUNCTION
#endif

// The prefix of the variable that holds a function's return value when `agc`
// lowers a `return` out of staged code. A staged construct's state entry
// whose name starts with it may stay undefined on the paths that do not
// return (the runtime's collect_leaves).
#define AG_RETVAL_PREFIX "agc_retval"
