// Every check's header, for the registry (CheckRegistry.cpp), which expands
// Checks.def. One line per check, in any order.
#pragma once

#include "checks/FrozenValueCheck.h"
#include "checks/GlobalMutationCheck.h"
#include "checks/PythonStyleAccumulationCheck.h"
#include "checks/RecursionCheck.h"
#include "checks/SideEffectCheck.h"
#include "checks/TensorAsBoolCheck.h"
#include "checks/TensorLeakCheck.h"
#include "checks/UnconvertedCallCheck.h"
#include "checks/UnrolledLoopCheck.h"
#include "checks/VariableCreationCheck.h"
