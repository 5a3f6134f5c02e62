#include "converters/ConversionContext.h"

#include "analysis/AstPredicates.h"
#include "analysis/TensorTypes.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cctype>

namespace agc {

using namespace clang;

// --- Diagnostics ------------------------------------------------------------

Diagnostics::Diagnostics(DiagnosticsEngine& engine)
    : engine_(engine),
      errorId_(engine.getCustomDiagID(DiagnosticsEngine::Error, "%0")),
      noteId_(engine.getCustomDiagID(DiagnosticsEngine::Note, "%0")) {}

DiagnosticBuilder Diagnostics::error(SourceLocation loc, llvm::StringRef text) {
  ++errors_;
  return engine_.Report(loc, errorId_) << text;
}

DiagnosticBuilder Diagnostics::note(SourceLocation loc, llvm::StringRef text) {
  return engine_.Report(loc, noteId_) << text;
}

// --- Names ------------------------------------------------------------------

NameAllocator::NameAllocator(std::string_view text) {
  auto isWordChar = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (std::size_t at = text.find("agc_"); at != std::string_view::npos;
       at = text.find("agc_", at + 1)) {
    if (at > 0 && isWordChar(text[at - 1])) continue;
    std::size_t end = at;
    while (end < text.size() && isWordChar(text[end])) ++end;
    fileWords_.insert(std::string(text.substr(at, end - at)));
  }
}

std::string NameAllocator::fresh(const std::string& base, std::set<std::string>& scope) const {
  std::string name = base;
  for (int suffix = 2; fileWords_.count(name) || scope.count(name); ++suffix)
    name = base + "_" + std::to_string(suffix);
  scope.insert(name);
  return name;
}

// --- Source ranges ----------------------------------------------------------

ConversionContext::ConversionContext(FileContext& file, const Stmt* body, QualType returnType,
                                     llvm::SmallPtrSet<const ValueDecl*, 4> liveAtExit)
    : file(file), body(body), returnType(returnType), liveness(body, std::move(liveAtExit)) {
  liveness.setMayEscape([this](const Stmt* stmt) { return mayEscape(stmt); });
  liveness.setIsStaged([this](const Stmt* stmt) { return staged.contains(stmt); });
}

std::size_t ConversionContext::offsetOf(SourceLocation loc) const {
  return sourceManager().getFileOffset(sourceManager().getExpansionLoc(loc));
}

CharRange ConversionContext::rangeOf(const Stmt* stmt) const {
  const SourceManager& sm = sourceManager();
  CharSourceRange range = Lexer::makeFileCharRange(
      CharSourceRange::getTokenRange(stmt->getSourceRange()), sm, file.ast.getLangOpts());
  if (range.isInvalid() || !sm.isInMainFile(range.getBegin())) return {};
  return {sm.getFileOffset(range.getBegin()), sm.getFileOffset(range.getEnd()), true};
}

// Whether a statement's source range stops before the `;` that ends it.
static bool endsBeforeSemicolon(const Stmt* stmt) {
  if (const auto* ifStmt = dyn_cast<IfStmt>(stmt))
    return endsBeforeSemicolon(ifStmt->getElse() ? ifStmt->getElse() : ifStmt->getThen());
  if (const auto* loop = dyn_cast<WhileStmt>(stmt)) return endsBeforeSemicolon(loop->getBody());
  if (const auto* loop = dyn_cast<ForStmt>(stmt)) return endsBeforeSemicolon(loop->getBody());
  if (const auto* loop = dyn_cast<CXXForRangeStmt>(stmt))
    return endsBeforeSemicolon(loop->getBody());
  if (const auto* switchStmt = dyn_cast<SwitchStmt>(stmt))
    return endsBeforeSemicolon(switchStmt->getBody());
  if (const auto* label = dyn_cast<LabelStmt>(stmt))
    return endsBeforeSemicolon(label->getSubStmt());
  if (const auto* switchCase = dyn_cast<SwitchCase>(stmt))
    return endsBeforeSemicolon(switchCase->getSubStmt());
  if (const auto* attributed = dyn_cast<AttributedStmt>(stmt))
    return endsBeforeSemicolon(attributed->getSubStmt());
  return isa<Expr, ReturnStmt, BreakStmt, ContinueStmt, GotoStmt, IndirectGotoStmt, DoStmt,
             CoreturnStmt, GCCAsmStmt>(stmt);
}

CharRange ConversionContext::fullRangeOf(const Stmt* stmt) const {
  CharRange range = rangeOf(stmt);
  if (!range.valid || !endsBeforeSemicolon(stmt)) return range;
  std::string_view text = file.source.buffer();
  std::size_t at = range.end;
  while (at < text.size()) {
    if (std::isspace(static_cast<unsigned char>(text[at]))) {
      ++at;
    } else if (text.substr(at, 2) == "//") {
      at = text.find('\n', at);
    } else if (text.substr(at, 2) == "/*") {
      std::size_t close = text.find("*/", at + 2);
      at = close == std::string_view::npos ? text.size() : close + 2;
    } else {
      break;
    }
  }
  if (at < text.size() && text[at] == ';') range.end = at + 1;
  return range;
}

// --- Emission ---------------------------------------------------------------

void ConversionContext::markDirty(const Stmt* stmt) {
  for (; stmt && dirty_.insert(stmt).second; stmt = liveness.parentOf(stmt)) {
  }
}

Text ConversionContext::emit(const Stmt* stmt) {
  CharRange range = fullRangeOf(stmt);
  if (!range.valid) {
    // Never drop code silently: a statement we cannot locate cannot be copied.
    error(stmt->getBeginLoc(),
          "cannot rewrite a statement that is partly inside a macro expansion");
    note(stmt->getBeginLoc(), "expand the macro by hand, or move it out of the staged code");
    return {};
  }
  if (!isDirty(stmt)) return copy(range);
  if (lowered.contains(stmt)) return lowerJump(*this, stmt);
  if (const auto* block = dyn_cast<CompoundStmt>(stmt)) return emitBlock(*this, block, {}, {});
  if (staged.contains(stmt)) {
#define AG_STAGED_STATEMENT(Class, construct, condition, body, loop, function) \
  if (const auto* typed = dyn_cast<Class>(stmt)) return function(*this, typed);
#include "analysis/StagedStatements.def"
#undef AG_STAGED_STATEMENT
  }
  return emitUnstaged(stmt);
}

Text ConversionContext::emitUnstaged(const Stmt* stmt) {
  std::vector<std::pair<CharRange, const Stmt*>> parts;
  for (const Stmt* child : stmt->children())
    if (child && isDirty(child)) parts.emplace_back(fullRangeOf(child), child);
  llvm::sort(parts, [](const auto& a, const auto& b) { return a.first.begin < b.first.begin; });
  CharRange whole = fullRangeOf(stmt);
  Text out;
  std::size_t position = whole.begin;
  for (const auto& [range, child] : parts) {
    out += file.source.copy(position, range.begin);
    // An unstaged loop whose continue is lowered still resets its flag.
    auto flags = loopFlags.find(stmt);
    bool isLoopBody = isa<WhileStmt, ForStmt, CXXForRangeStmt, DoStmt>(stmt) && !isa<Expr>(child) &&
                      !isa<DeclStmt>(child);
    if (isLoopBody && flags != loopFlags.end() && !flags->second.continueFlag.empty())
      out +=
          emitBody(child, " ag::Tensor " + flags->second.continueFlag + " = ag::constant(false);");
    else
      out += emit(child);
    position = range.end;
  }
  out += file.source.copy(position, whole.end);
  return out;
}

Text ConversionContext::emitBody(const Stmt* stmt, const Text& prefix, const Text& suffix) {
  if (const auto* block = dyn_cast<CompoundStmt>(stmt))
    return emitBlock(*this, block, prefix, suffix);
  Text out = "{ ";
  out += prefix;
  out += emit(stmt);
  out += suffix;
  out += " }";
  return out;
}

// --- Jumps ------------------------------------------------------------------

const Stmt* ConversionContext::jumpTarget(const Stmt* jump) const {
  if (isa<ReturnStmt>(jump)) return nullptr;
  bool breaks = isa<BreakStmt>(jump);
  for (const Stmt* at = liveness.parentOf(jump); at; at = liveness.parentOf(at)) {
    if (isa<WhileStmt, ForStmt, CXXForRangeStmt, DoStmt>(at)) return at;
    if (breaks && isa<SwitchStmt>(at)) return at;
  }
  return nullptr;
}

static bool isInside(const Liveness& liveness, const Stmt* inner, const Stmt* outer) {
  for (; inner; inner = liveness.parentOf(inner))
    if (inner == outer) return true;
  return false;
}

static void addUnique(std::vector<std::string>& names, const std::string& name) {
  if (!name.empty() && !llvm::is_contained(names, name)) names.push_back(name);
}

const Stmt* ConversionContext::loopLeftByCppBreak(const Stmt* jump) const {
  if (!isa<ReturnStmt>(jump)) return nullptr;
  for (const Stmt* at = liveness.parentOf(jump); at; at = liveness.parentOf(at)) {
    if (staged.contains(at) || isa<SwitchStmt, LambdaExpr>(at)) return nullptr;
    if (isa<WhileStmt, ForStmt, CXXForRangeStmt, DoStmt>(at))
      return isGuarded(jump, at) ? nullptr : at;
  }
  return nullptr;
}

bool ConversionContext::isGuarded(const Stmt* stmt, const Stmt* outer) const {
  const Stmt* child = stmt;
  for (const Stmt* at = liveness.parentOf(stmt); at && at != outer;
       child = at, at = liveness.parentOf(at)) {
    const auto* block = dyn_cast<CompoundStmt>(at);
    if (!block) continue;
    for (const Stmt* sibling : block->body()) {
      if (sibling == child) break;
      if (mayEscape(sibling)) return true;
    }
  }
  return false;
}

bool ConversionContext::mayEscape(const Stmt* stmt) const {
  return llvm::any_of(lowered, [&](const Stmt* jump) {
    if (!isInside(liveness, jump, stmt)) return false;
    const Stmt* target = jumpTarget(jump);
    return !target || !isInside(liveness, target, stmt);
  });
}

std::vector<std::string> ConversionContext::escapingFlags(const Stmt* stmt) const {
  std::vector<std::string> flags;
  for (const Stmt* jump : lowered) {
    if (!isInside(liveness, jump, stmt)) continue;
    const Stmt* target = jumpTarget(jump);
    if (!target) {
      addUnique(flags, doReturnFlag);
    } else if (!isInside(liveness, target, stmt)) {
      const LoopFlags& loop = loopFlags.find(target)->second;
      addUnique(flags, isa<BreakStmt>(jump) ? loop.breakFlag : loop.continueFlag);
    }
  }
  llvm::sort(flags);
  return flags;
}

std::vector<std::string> ConversionContext::modifiedFlags(llvm::ArrayRef<const Stmt*> parts,
                                                          const Stmt* loop) const {
  std::vector<std::string> flags;
  for (const Stmt* jump : lowered) {
    if (!llvm::any_of(parts,
                      [&](const Stmt* part) { return part && isInside(liveness, jump, part); }))
      continue;
    const Stmt* target = jumpTarget(jump);
    // A loop's break and continue flags are declared next to it (break) or in
    // its body (continue): when the loop is inside the parts, so are they.
    if (target && llvm::any_of(parts, [&](const Stmt* part) {
          return part && isInside(liveness, target, part);
        }))
      continue;
    if (!target) {
      addUnique(flags, doReturnFlag);
      addUnique(flags, returnValue);
    } else if (isa<BreakStmt>(jump)) {
      addUnique(flags, loopFlags.find(target)->second.breakFlag);
    } else if (target != loop) {
      addUnique(flags, loopFlags.find(target)->second.continueFlag);
    }
  }
  llvm::sort(flags);
  return flags;
}

std::string ConversionContext::noneOf(const std::vector<std::string>& flags) {
  std::string any = flags.back();
  for (auto it = flags.rbegin() + 1; it != flags.rend(); ++it)
    any = "ag::or_(" + *it + ", [&] { return " + any + "; })";
  return "ag::not_(" + any + ")";
}

// --- State ------------------------------------------------------------------

bool ConversionContext::containsOffset(llvm::ArrayRef<const Stmt*> parts,
                                       std::size_t offset) const {
  return llvm::any_of(parts, [&](const Stmt* part) {
    if (!part) return false;
    CharRange range = rangeOf(part);
    return range.valid && range.begin <= offset && offset < range.end;
  });
}

std::vector<const ValueDecl*> ConversionContext::stateVariables(llvm::ArrayRef<const Stmt*> parts,
                                                                const Stmt* anchor,
                                                                const Stmt* loop,
                                                                llvm::StringRef constructName,
                                                                bool branches) {
  std::vector<const ValueDecl*> vars;
  for (const Stmt* part : parts) {
    if (!part) continue;
    for (const ValueDecl* var : liveness.activity(part).written()) {
      if (llvm::is_contained(vars, var) || var->isImplicit() || isStaticLocal(var) ||
          isAgClass(var->getType(), "Variable"))
        continue;
      if (containsOffset(parts, offsetOf(var->getLocation()))) continue;
      // A range for's variable is the parameter of its body's lambda.
      if (const auto* rangeLoop = dyn_cast_or_null<CXXForRangeStmt>(loop);
          rangeLoop && rangeLoop->getLoopVarStmt() &&
          declares(cast<DeclStmt>(rangeLoop->getLoopVarStmt()), var))
        continue;
      bool liveIntoOtherBranch = branches && liveness.readByOtherBranch(cast<IfStmt>(anchor), var);
      if (!liveness.liveAfter(anchor, var) &&
          !(loop && liveness.liveIntoNextIteration(loop, var)) && !liveIntoOtherBranch)
        continue;
      if (!isStageableType(var->getType())) {
        if (reportedVars_.insert(var).second) reportUnstageable(var, parts, constructName, loop);
        continue;
      }
      vars.push_back(var);
    }
  }
  llvm::sort(vars, [&](const ValueDecl* a, const ValueDecl* b) {
    return offsetOf(a->getLocation()) < offsetOf(b->getLocation());
  });
  return vars;
}

void ConversionContext::reportUnstageable(const ValueDecl* var, llvm::ArrayRef<const Stmt*> parts,
                                          llvm::StringRef constructName, const Stmt* loop) {
  const DeclRefExpr* write = nullptr;
  for (const Stmt* p : parts)
    if (p && !write) write = liveness.activity(p).firstWrite(var);
  std::string type = var->getType().getAsString(file.ast.getPrintingPolicy());
  if (loop && reportCounterOfLoopStagedByJump(var, loop)) return;
  if (isStructWithoutFields(var->getType())) {
    error(write->getBeginLoc(),
          ("'" + var->getName() + "' of type '" + type + "' is modified inside a staged " +
           constructName + ", and its struct has no ag_fields hook to carry it as state")
              .str())
        << write->getSourceRange();
    noteFieldsHook(var->getType());
    return;
  }
  error(write->getBeginLoc(), ("non-tensor variable '" + var->getName() + "' of type '" + type +
                               "' is modified inside a staged " + constructName)
                                  .str())
      << write->getSourceRange();
  {  // the note is emitted when `hint` ends, before any further note
    auto hint = note(var->getLocation(),
                     ("'" + var->getName() +
                      "' would be evaluated once, at trace time; make it an ag::Tensor, or move "
                      "it out of the " +
                      constructName)
                         .str());
    const auto* declarator = dyn_cast<DeclaratorDecl>(var);
    if (TypeSourceInfo* typeInfo = declarator ? declarator->getTypeSourceInfo() : nullptr) {
      SourceRange typeRange = typeInfo->getTypeLoc().getSourceRange();
      if (typeRange.isValid() && !typeRange.getBegin().isMacroID())
        hint << FixItHint::CreateReplacement(typeRange, "ag::Tensor");
    }
  }
  if (loop) explainStagedByJump(loop, var);
}

// A note at the struct: the hook to declare, with its tensor fields.
void ConversionContext::noteFieldsHook(QualType type) {
  const CXXRecordDecl* record = type.getNonReferenceType()->getAsCXXRecordDecl();
  if (!record || !record->hasDefinition()) return;
  std::string name = record->getNameAsString();
  std::string fields;
  for (const FieldDecl* field : record->getDefinition()->fields())
    fields += (fields.empty() ? "s." : ", s.") + field->getNameAsString();
  note(record->getLocation(), "declare next to '" + name + "': auto ag_fields(" + name +
                                  "& s) { return std::tie(" + fields +
                                  "); }, so that staged code can carry its fields");
}

// Whether `loop` starts `var` at 0 and steps it by one: `++k`, `k++` or `k += 1`.
static bool isCountingUpFromZero(const ForStmt* loop, const ValueDecl* var) {
  const auto* counter = dyn_cast<VarDecl>(var);
  const auto* start = counter && counter->getInit()
                          ? dyn_cast<IntegerLiteral>(counter->getInit()->IgnoreParenImpCasts())
                          : nullptr;
  if (!start || start->getValue() != 0 || !loop->getInc()) return false;
  const Expr* inc = loop->getInc()->IgnoreParenImpCasts();
  auto namesVar = [&](const Expr* e) {
    const auto* ref = dyn_cast<DeclRefExpr>(e->IgnoreParenImpCasts());
    return ref && ref->getDecl() == var;
  };
  if (const auto* unary = dyn_cast<UnaryOperator>(inc))
    return unary->isIncrementOp() && namesVar(unary->getSubExpr());
  if (const auto* compound = dyn_cast<CompoundAssignOperator>(inc)) {
    const auto* one = dyn_cast<IntegerLiteral>(compound->getRHS()->IgnoreParenImpCasts());
    return compound->getOpcode() == BO_AddAssign && namesVar(compound->getLHS()) && one &&
           one->getValue() == 1;
  }
  return false;
}

// The counter of `for (int k = 0; k < n; ++k)` (a declaration in its init
// statement); null for another loop or variable.
static const ForStmt* countedLoop(const Stmt* loop, const ValueDecl* var) {
  const auto* forLoop = dyn_cast<ForStmt>(loop);
  const auto* init = forLoop ? dyn_cast_or_null<DeclStmt>(forLoop->getInit()) : nullptr;
  return init && declares(init, var) ? forLoop : nullptr;
}

void ConversionContext::explainStagedByJump(const Stmt* loop, const ValueDecl* var) {
  auto found = stagedByJump.find(loop);
  if (found == stagedByJump.end()) return;
  const Stmt* jump = found->second;
  note(jump->getBeginLoc(), std::string("the loop is staged because this '") +
                                (isa<BreakStmt>(jump) ? "break" : "return") +
                                "' leaves staged code");
  if (const ForStmt* forLoop = countedLoop(loop, var)) suggestRangeLoop(forLoop, var);
}

bool ConversionContext::reportCounterOfLoopStagedByJump(const ValueDecl* var, const Stmt* loop) {
  auto found = stagedByJump.find(loop);
  const ForStmt* forLoop = countedLoop(loop, var);
  if (found == stagedByJump.end() || !forLoop) return false;
  const Stmt* jump = found->second;
  std::string kind = isa<BreakStmt>(jump) ? "break" : "return";
  std::string type = var->getType().getAsString(file.ast.getPrintingPolicy());
  error(jump->getBeginLoc(), ("this '" + kind +
                              "' leaves staged code, so the C++ for loop around it must be "
                              "staged too, and its counter '" +
                              var->getName() + "' of type '" + type + "' cannot be staged")
                                 .str());
  note(var->getLocation(),
       ("'" + var->getName() + "' is the loop's counter, a C++ value fixed while tracing").str());
  suggestRangeLoop(forLoop, var);
  return true;
}

void ConversionContext::suggestRangeLoop(const ForStmt* loop, const ValueDecl* var) {
  // `for (int k = 0; k < n; ++k)`: the tensor range loop that stages cleanly.
  std::string bound = "n";
  const auto* test = dyn_cast_or_null<BinaryOperator>(
      loop->getCond() ? loop->getCond()->IgnoreParenImpCasts() : nullptr);
  if (test && test->getOpcode() == BO_LT) {
    CharRange range = rangeOf(test->getRHS());
    if (range.valid)
      bound = std::string(file.source.buffer().substr(range.begin, range.end - range.begin));
  }
  std::string header = "(ag::Tensor " + var->getName().str() + " : ag::range(" + bound + "))";
  auto hint =
      note(loop->getForLoc(), "to stage the loop, iterate over a tensor range: for " + header);
  // The whole header, so that the fix compiles (`++k` goes with `int k`).
  if (test && test->getOpcode() == BO_LT && isCountingUpFromZero(loop, var) &&
      !loop->getLParenLoc().isMacroID() && !loop->getRParenLoc().isMacroID())
    hint << FixItHint::CreateReplacement(
        CharSourceRange::getTokenRange(loop->getLParenLoc(), loop->getRParenLoc()), header);
}

Text ConversionContext::stateText(const std::vector<const ValueDecl*>& vars,
                                  const std::vector<std::string>& flags) {
  std::vector<std::string> names;
  for (const ValueDecl* var : vars) names.push_back(var->getName().str());
  names.insert(names.end(), flags.begin(), flags.end());
  if (names.empty()) return "ag::state()";
  std::string quoted, refs;
  for (const std::string& name : names) {
    quoted += (quoted.empty() ? "\"" : ", \"") + name + "\"";
    refs += ", " + name;
  }
  return "ag::state({" + quoted + "}" + refs + ")";
}

// Whether `stmt` lies in one branch of an `if` and `construct` in the other
// (`if (a) { y = 1; } else if (b) { ... }`): then `stmt` never runs first.
bool ConversionContext::inOtherBranch(const Stmt* stmt, const Stmt* construct) const {
  for (const Stmt* at = construct; at; at = liveness.parentOf(at)) {
    const auto* ifStmt = dyn_cast_or_null<IfStmt>(liveness.parentOf(at));
    if (!ifStmt || !ifStmt->getElse()) continue;
    const Stmt* other = at == ifStmt->getThen()   ? ifStmt->getElse()
                        : at == ifStmt->getElse() ? ifStmt->getThen()
                                                  : nullptr;
    if (other && isInside(liveness, stmt, other)) return true;
  }
  return false;
}

bool ConversionContext::maybeDefinedBefore(const Stmt* construct, const ValueDecl* var) {
  // Parameters and structured bindings always start with a value.
  const auto* local = dyn_cast<VarDecl>(var);
  if (!local || isa<ParmVarDecl>(local)) return true;
  if (const Expr* init = local->getInit()) {
    const auto* construction = dyn_cast<CXXConstructExpr>(init->IgnoreImplicit());
    if (!construction || construction->getNumArgs() != 0) return true;
    // An empty vector is a value; a default ag::Tensor (alone or in a
    // struct, pair or array) is undefined.
    if (const CXXRecordDecl* record = local->getType()->getAsCXXRecordDecl();
        record && record->isInStdNamespace() && record->getName() == "vector")
      return true;
  }
  // The init statement of a for loop runs before the loop proper.
  if (const auto* forLoop = dyn_cast<ForStmt>(construct);
      forLoop && forLoop->getInit() && liveness.activity(forLoop->getInit()).writes(var))
    return true;
  std::size_t start = offsetOf(construct->getBeginLoc());
  for (const VarUse& use : liveness.activity(body).uses())
    if (use.write && use.ref->getDecl() == var && offsetOf(use.ref->getBeginLoc()) < start &&
        !inOtherBranch(use.ref, construct))
      return true;
  // A write later in an enclosing loop reaches the next iteration.
  std::size_t declared = offsetOf(var->getLocation());
  CharRange inner = rangeOf(construct);
  for (const Stmt* at = liveness.parentOf(construct); at; at = liveness.parentOf(at)) {
    if (!isa<WhileStmt, ForStmt, CXXForRangeStmt, DoStmt>(at)) continue;
    CharRange loopRange = rangeOf(at);
    if (loopRange.begin <= declared && declared < loopRange.end) break;
    for (const VarUse& use : liveness.activity(at).uses()) {
      std::size_t offset = offsetOf(use.ref->getBeginLoc());
      if (use.write && use.ref->getDecl() == var && (offset < inner.begin || offset >= inner.end))
        return true;
    }
  }
  return false;
}

const DeclRefExpr* ConversionContext::firstReadAfter(const Stmt* stmt, const ValueDecl* var) {
  std::size_t end = rangeOf(stmt).end;
  const DeclRefExpr* first = nullptr;
  for (const VarUse& use : liveness.activity(body).uses()) {
    if (!use.read || use.ref->getDecl() != var || offsetOf(use.ref->getBeginLoc()) < end) continue;
    if (!first || offsetOf(use.ref->getBeginLoc()) < offsetOf(first->getBeginLoc()))
      first = use.ref;
  }
  return first;
}

DiagnosticBuilder ConversionContext::error(SourceLocation loc, llvm::StringRef text) {
  failed = true;
  return file.diags.error(loc, text);
}

}  // namespace agc
