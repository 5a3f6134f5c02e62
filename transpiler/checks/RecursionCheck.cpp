// ag-recursion. Tracing runs a converted function's body; a call to a
// converted function traces that one's body in turn. A cycle in these calls
// unrolls at trace time: once per level when the depth is a C++ value (a
// graph that grows with it, and a retrace per depth), forever when the
// condition that ends it is a tensor, since both branches are traced.
//
// The check builds the call graph of the converted functions (CheckScope)
// once per translation unit, on the first call the matcher sees, and reports
// every shortest cycle from the first function (in source order) on it, at its
// first call, with the rest of the chain as notes. Calls inside lambdas count
// for the function that holds them, unless the lambda is converted itself;
// calls in templates are followed through their unresolved overload sets.
#include "checks/RecursionCheck.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Basic/SourceManager.h"
#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <deque>
#include <vector>

namespace agc {

using namespace clang;
using namespace clang::ast_matchers;

namespace {

struct Edge {
  unsigned to;
  const Expr* call;  // the first call from one function to the other
};

struct CallGraph {
  std::vector<const FunctionDecl*> functions;   // source order
  llvm::DenseMap<const Decl*, unsigned> index;  // canonical decl -> position
  std::vector<std::vector<Edge>> edges;

  void addEdge(unsigned from, unsigned to, const Expr* call) {
    for (const Edge& edge : edges[from])
      if (edge.to == to) return;
    edges[from].push_back({to, call});
  }
};

const Decl* keyOf(const FunctionDecl* function) {
  if (const FunctionDecl* pattern = function->getTemplateInstantiationPattern()) function = pattern;
  return function->getCanonicalDecl();
}

class CalleeCollector {
 public:
  CalleeCollector(CallGraph& graph, const CheckScope& scope, unsigned from)
      : graph_(graph), scope_(scope), from_(from) {}

  void visit(const Stmt* stmt) {
    if (!stmt) return;
    if (const auto* lambda = dyn_cast<LambdaExpr>(stmt)) {
      // A converted lambda is a node of its own.
      if (scope_.isConverted(lambda->getCallOperator())) return;
    }
    if (const auto* call = dyn_cast<CallExpr>(stmt)) addCall(call);
    for (const Stmt* child : stmt->children()) visit(child);
  }

 private:
  void addTarget(const FunctionDecl* callee, const Expr* call) {
    if (!callee) return;
    auto found = graph_.index.find(keyOf(callee));
    if (found != graph_.index.end()) graph_.addEdge(from_, found->second, call);
  }

  void addCall(const CallExpr* call) {
    if (const FunctionDecl* callee = call->getDirectCallee()) {
      addTarget(callee, call);
      return;
    }
    // A dependent call in a template: any candidate of the overload set.
    const Expr* callee = call->getCallee();
    if (!callee) return;
    if (const auto* overloads = dyn_cast<OverloadExpr>(callee->IgnoreParenImpCasts())) {
      for (const NamedDecl* decl : overloads->decls()) {
        decl = decl->getUnderlyingDecl();
        if (const auto* tmpl = dyn_cast<FunctionTemplateDecl>(decl))
          addTarget(tmpl->getTemplatedDecl(), call);
        else
          addTarget(dyn_cast<FunctionDecl>(decl), call);
      }
    }
  }

  CallGraph& graph_;
  const CheckScope& scope_;
  unsigned from_;
};

std::string nameOf(const FunctionDecl* function) {
  if (const auto* method = dyn_cast<CXXMethodDecl>(function);
      method && method->getParent()->isLambda())
    return "lambda";
  return function->getNameAsString();
}

// The shortest cycle from `start` back to itself through functions that come
// no earlier than `start`, as the list of edges taken; empty when none.
std::vector<Edge> shortestCycle(const CallGraph& graph, unsigned start) {
  unsigned count = graph.functions.size();
  std::vector<int> previous(count, -1);
  std::vector<const Expr*> via(count, nullptr);
  std::vector<bool> seen(count, false);
  std::deque<unsigned> queue{start};
  while (!queue.empty()) {
    unsigned node = queue.front();
    queue.pop_front();
    for (const Edge& edge : graph.edges[node]) {
      if (edge.to < start) continue;
      if (edge.to == start) {
        std::vector<Edge> cycle{{start, edge.call}};
        for (unsigned at = node; at != start; at = previous[at])
          cycle.insert(cycle.begin(), {at, via[at]});
        return cycle;  // cycle[i].to is the callee of the i-th call
      }
      if (seen[edge.to]) continue;
      seen[edge.to] = true;
      previous[edge.to] = node;
      via[edge.to] = edge.call;
      queue.push_back(edge.to);
    }
  }
  return {};
}

}  // namespace

void RecursionCheck::registerMatchers(MatchFinder& finder) {
  finder.addMatcher(callExpr().bind("call"), this);
}

void RecursionCheck::check(const MatchFinder::MatchResult& result) {
  if (!analysed_.insert(result.Context).second) return;
  CallGraph graph;
  std::vector<const FunctionDecl*> functions(scope().convertedFunctions().begin(),
                                             scope().convertedFunctions().end());
  const SourceManager& sm = *result.SourceManager;
  std::stable_sort(functions.begin(), functions.end(),
                   [&](const FunctionDecl* a, const FunctionDecl* b) {
                     return sm.isBeforeInTranslationUnit(a->getBeginLoc(), b->getBeginLoc());
                   });
  for (const FunctionDecl* function : functions) {
    if (!function->hasBody()) continue;
    if (graph.index.try_emplace(keyOf(function), graph.functions.size()).second)
      graph.functions.push_back(function);
  }
  graph.edges.resize(graph.functions.size());
  for (unsigned i = 0; i < graph.functions.size(); ++i)
    CalleeCollector(graph, scope(), i).visit(graph.functions[i]->getBody());

  for (unsigned start = 0; start < graph.functions.size(); ++start) {
    std::vector<Edge> cycle = shortestCycle(graph, start);
    if (cycle.empty()) continue;
    std::string first = nameOf(graph.functions[start]);
    std::string text = cycle.size() == 1
                           ? "'" + first + "' calls itself"
                           : "'" + first + "' calls '" + nameOf(graph.functions[cycle[0].to]) +
                                 "', which calls back into '" + first + "'";
    text +=
        "; converted functions cannot recurse: tracing unrolls every call, and never "
        "ends when a tensor decides the depth";
    diag(cycle[0].call->getBeginLoc(), text, DiagnosticIDs::Error)
        << cycle[0].call->getSourceRange();
    unsigned caller = cycle[0].to;
    for (std::size_t i = 1; i < cycle.size(); ++i) {
      note(cycle[i].call->getBeginLoc(), "'" + nameOf(graph.functions[caller]) + "' calls '" +
                                             nameOf(graph.functions[cycle[i].to]) + "' here")
          << cycle[i].call->getSourceRange();
      caller = cycle[i].to;
    }
  }
}

}  // namespace agc
