// Which argument types have a trace type, as include/ag/trace_type.h decides
// (visit_trace_type, DESIGN §3), read from the AST: agc includes no runtime
// header, so the rule is mirrored here. Keep the two in sync: a type that
// visit_trace_type accepts must be accepted here, or agc rejects code that
// compiles.
//
// Needs: a parsed translation unit. Guarantees: hasTraceType is false only
// for types that visit_trace_type rejects. Dependent types are accepted (the
// compiler checks each instantiation), and so are user types with an
// `ag_trace_type` or `ag_fields` function that argument-dependent lookup may
// find (one declared in the type's namespace or as its friend).
#pragma once

#include "clang/AST/DeclCXX.h"
#include "clang/AST/Type.h"

namespace agc {

// The parameter type `type` (references and cv-qualifiers ignored).
bool hasTraceType(clang::QualType type);

// Whether the class derives from ag::Module (a dependent base counts: it may).
bool derivesFromModule(const clang::CXXRecordDecl* record);

}  // namespace agc
