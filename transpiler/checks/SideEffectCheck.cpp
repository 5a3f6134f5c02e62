// ag-side-effect. Converted code runs as C++ only while it is traced; the
// graph then runs on every call without it. So `std::cout << x` prints once,
// at the first call (the TensorFlow guide's `print` vs `tf.print`), and a file
// written or a sleep taken happens once per trace.
//
// Reported, in converted code outside ag::host_function:
//   - `<<` / `>>` chains on a stream that is not a string stream (std::cout,
//     std::cerr, std::cin, file streams, an std::ostream& parameter);
//   - non-const member calls on such a stream (`std::cout.flush()`);
//   - the construction of a file stream or file buffer;
//   - C stdio and process calls (printf, puts, fopen, system, ...), C++23
//     std::print/println, std::filesystem operations, and sleeps.
// A `std::cout` chain of tensors, strings and numbers gets a fix-it, on the
// note, to `ag::print(...)` (which separates its arguments by spaces).
#include "checks/SideEffectCheck.h"

#include "analysis/AstPredicates.h"
#include "analysis/TensorTypes.h"
#include "checks/StateAccess.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Lex/Lexer.h"

namespace agc {

using namespace clang;
using namespace clang::ast_matchers;

namespace {

enum class StreamKind { None, StringStream, Stream };

bool isStdNamed(const CXXRecordDecl* record, std::initializer_list<llvm::StringRef> names) {
  return record && record->isInStdNamespace() && llvm::is_contained(names, record->getName());
}

StreamKind streamKind(QualType type) {
  if (type.isNull()) return StreamKind::None;
  const CXXRecordDecl* record = type.getNonReferenceType()->getAsCXXRecordDecl();
  if (!record || !record->hasDefinition()) return StreamKind::None;
  const std::initializer_list<llvm::StringRef> stringStreams = {
      "basic_ostringstream", "basic_istringstream", "basic_stringstream", "basic_stringbuf",
      "basic_ospanstream",   "basic_ispanstream",   "basic_spanstream",   "strstream",
      "ostrstream",          "istrstream"};
  const std::initializer_list<llvm::StringRef> streams = {
      "basic_ostream", "basic_istream", "basic_iostream", "basic_ios", "ios_base"};
  if (isStdNamed(record, stringStreams)) return StreamKind::StringStream;
  bool isString = false, isStream = isStdNamed(record, streams);
  record->forallBases([&](const CXXRecordDecl* base) {
    isString |= isStdNamed(base, stringStreams);
    isStream |= isStdNamed(base, streams);
    return true;
  });
  if (isString) return StreamKind::StringStream;
  return isStream ? StreamKind::Stream : StreamKind::None;
}

bool isStreamOperator(const Expr* expr) {
  const auto* call = dyn_cast<CXXOperatorCallExpr>(expr);
  return call && (call->getOperator() == OO_LessLess || call->getOperator() == OO_GreaterGreater) &&
         call->getNumArgs() == 2;
}

// The stream at the start of `s << a << b`.
const Expr* streamRoot(const CXXOperatorCallExpr& call) {
  const Expr* object = call.getArg(0)->IgnoreImplicit()->IgnoreParens();
  while (isStreamOperator(object))
    object = cast<CXXOperatorCallExpr>(object)->getArg(0)->IgnoreImplicit()->IgnoreParens();
  return object;
}

std::string nameOf(const Expr* expr) {
  expr = expr->IgnoreImplicit()->IgnoreParens();
  if (const auto* ref = dyn_cast<DeclRefExpr>(expr)) {
    const ValueDecl* decl = ref->getDecl();
    return decl->isInStdNamespace() ? "std::" + decl->getNameAsString() : decl->getNameAsString();
  }
  if (const auto* member = dyn_cast<MemberExpr>(expr))
    return member->getMemberNameInfo().getAsString();
  return "";
}

bool isStdFunction(const Expr* expr, llvm::StringRef name) {
  expr = expr->IgnoreImplicit()->IgnoreParens();
  const auto* ref = dyn_cast<DeclRefExpr>(expr);
  if (!ref) return false;
  const auto* function = dyn_cast<FunctionDecl>(ref->getDecl());
  return function && function->isInStdNamespace() && function->getName() == name;
}

const char* const kCFunctions[] = {
    // output
    "printf", "fprintf", "vprintf", "vfprintf", "dprintf", "puts", "fputs", "putchar", "fputc",
    "putc", "fwrite", "perror", "fflush", "wprintf", "fwprintf", "putwchar", "fputws", "fputwc",
    // input
    "scanf", "fscanf", "vscanf", "vfscanf", "getchar", "fgets", "fgetc", "getc", "gets", "fread",
    "getwchar", "fgetws", "fgetwc",
    // files and processes
    "fopen", "freopen", "fclose", "remove", "rename", "tmpfile", "system", "popen", "pclose",
    // sleeping
    "sleep", "usleep", "nanosleep"};

}  // namespace

void SideEffectCheck::registerMatchers(MatchFinder& finder) {
  finder.addMatcher(cxxOperatorCallExpr(hasAnyOverloadedOperatorName("<<", ">>")).bind("stream"),
                    this);
  finder.addMatcher(cxxMemberCallExpr().bind("method"), this);
  finder.addMatcher(cxxConstructExpr().bind("construct"), this);
  finder.addMatcher(
      callExpr(unless(cxxOperatorCallExpr()), unless(cxxMemberCallExpr())).bind("call"), this);
}

void SideEffectCheck::check(const MatchFinder::MatchResult& result) {
  auto converted = [&](const Stmt* node) {
    return node && scope().enclosingConverted(*node) != nullptr;
  };
  if (const auto* call = result.Nodes.getNodeAs<CXXOperatorCallExpr>("stream"))
    if (converted(call)) checkStreamOperator(*call, *result.Context);
  if (const auto* call = result.Nodes.getNodeAs<CXXMemberCallExpr>("method"))
    if (converted(call)) checkStreamMethod(*call);
  if (const auto* construct = result.Nodes.getNodeAs<CXXConstructExpr>("construct"))
    if (converted(construct)) checkConstruct(*construct);
  if (const auto* call = result.Nodes.getNodeAs<CallExpr>("call"))
    if (converted(call)) checkCall(*call);
}

void SideEffectCheck::checkStreamOperator(const CXXOperatorCallExpr& call, ASTContext& ast) {
  if (call.getNumArgs() != 2) return;
  const Expr* root = streamRoot(call);
  if (streamKind(root->getType()) != StreamKind::Stream || !reportedStreams_.insert(root).second)
    return;
  // Matching is preorder, so `call` is the outermost operator of the chain.
  std::string name = nameOf(root);
  std::string shown = name.empty() ? "a stream" : "'" + name + "'";
  bool output = call.getOperator() == OO_LessLess;
  diag(root->getBeginLoc(), (output ? "output to " : "input from ") + shown +
                                " happens only while tracing, not on every call")
      << call.getSourceRange();
  if (!output) {
    note(root->getBeginLoc(), "pass the input as an argument, or read it in ag::host_function");
    return;
  }

  // A fix-it when the chain is a statement on std::cout of tensors, strings
  // and numbers, optionally ending with std::endl or "\n".
  const SourceManager& sm = ast.getSourceManager();
  std::optional<FixItHint> fix;
  auto parents = ast.getParents(call);
  while (!parents.empty() && parents[0].get<ExprWithCleanups>())
    parents = ast.getParents(*parents[0].get<ExprWithCleanups>());
  bool isStatement = !parents.empty() && parents[0].get<Stmt>() && !parents[0].get<Expr>();
  if (name == "std::cout" && isStatement && !call.getBeginLoc().isMacroID() &&
      !call.getEndLoc().isMacroID()) {
    std::vector<const Expr*> operands;
    for (const Expr* link = &call; isStreamOperator(link);
         link = cast<CXXOperatorCallExpr>(link)->getArg(0)->IgnoreImplicit()->IgnoreParens())
      operands.insert(operands.begin(), cast<CXXOperatorCallExpr>(link)->getArg(1));
    std::vector<std::string> texts;
    std::vector<bool> isLiteral;  // per text
    bool ok = true;
    for (std::size_t i = 0; i < operands.size() && ok; ++i) {
      const Expr* operand = operands[i]->IgnoreImplicit()->IgnoreParens();
      bool last = i + 1 == operands.size();
      std::string text =
          Lexer::getSourceText(CharSourceRange::getTokenRange(operand->getSourceRange()), sm,
                               ast.getLangOpts())
              .str();
      if (text.empty() || operand->getBeginLoc().isMacroID()) {
        ok = false;
      } else if (isStdFunction(operand, "endl") ||
                 (isa<UnresolvedLookupExpr>(operand) && text == "std::endl")) {
        ok = last;
      } else if (const auto* literal = dyn_cast<CharacterLiteral>(operand)) {
        ok = last && literal->getValue() == '\n';
      } else if (const auto* literal = dyn_cast<StringLiteral>(operand)) {
        ok = literal->isOrdinary() && text.front() == '"';
        if (ok && last && llvm::StringRef(text).ends_with("\\n\"")) {
          text = text.substr(0, text.size() - 3) + "\"";
          if (text == "\"\"") continue;
        }
        if (ok) {
          texts.push_back(text);
          isLiteral.push_back(true);
        }
      } else {
        QualType type = operand->getType();
        bool plain = isTensorType(type) || (type->isArithmeticType() &&
                                            !type->isAnyCharacterType() && !type->isBooleanType());
        if (const CXXRecordDecl* record = type.getNonReferenceType()->getAsCXXRecordDecl())
          plain |= record->isInStdNamespace() && (record->getName() == "basic_string" ||
                                                  record->getName() == "basic_string_view");
        ok = plain;
        if (ok) {
          texts.push_back(text);
          isLiteral.push_back(false);
        }
      }
    }
    // ag::print puts a space between its arguments: drop the one the
    // literals spelled there.
    for (std::size_t i = 0; ok && i < texts.size(); ++i) {
      if (!isLiteral[i]) continue;
      if (i + 1 < texts.size() && llvm::StringRef(texts[i]).ends_with(" \""))
        texts[i].erase(texts[i].size() - 2, 1);
      if (i > 0 && llvm::StringRef(texts[i]).starts_with("\" ")) texts[i].erase(1, 1);
    }
    if (ok) {
      std::string replacement = "ag::print(";
      for (std::size_t i = 0; i < texts.size(); ++i) replacement += (i ? ", " : "") + texts[i];
      replacement += ")";
      fix = FixItHint::CreateReplacement(CharSourceRange::getTokenRange(call.getSourceRange()),
                                         replacement);
    }
  }
  auto builder =
      note(root->getBeginLoc(),
           name == "std::cout" ? "use ag::print, which prints on every call"
                               : "use ag::print (see ag::set_print_stream) to print on every call, "
                                 "or ag::host_function for other effects");
  if (fix) builder << *fix;
}

void SideEffectCheck::checkStreamMethod(const CXXMemberCallExpr& call) {
  const CXXMethodDecl* method = call.getMethodDecl();
  const Expr* object = call.getImplicitObjectArgument();
  if (!method || !object || method->isConst() || isa<CXXConversionDecl>(method)) return;
  if (streamKind(object->getType()) != StreamKind::Stream) return;
  const Expr* root = object->IgnoreImplicit()->IgnoreParens();
  if (isStreamOperator(root)) root = streamRoot(*cast<CXXOperatorCallExpr>(root));
  if (reportedStreams_.contains(root)) return;
  std::string name = nameOf(root);
  diag(call.getExprLoc(), "call to '" + method->getNameAsString() + "' on " +
                              (name.empty() ? "a stream" : "'" + name + "'") +
                              " happens only while tracing, not on every call")
      << call.getSourceRange();
  note(call.getExprLoc(),
       "use ag::print to print on every call, or ag::host_function for "
       "other effects");
}

void SideEffectCheck::checkConstruct(const CXXConstructExpr& construct) {
  const CXXRecordDecl* record = construct.getType()->getAsCXXRecordDecl();
  if (!isStdNamed(record, {"basic_ofstream", "basic_ifstream", "basic_fstream", "basic_filebuf"}))
    return;
  diag(construct.getBeginLoc(),
       "opening a file stream happens only while tracing, not on "
       "every call")
      << construct.getSourceRange();
  note(construct.getBeginLoc(), "use ag::host_function to run it on every call, at execution time");
}

void SideEffectCheck::checkCall(const CallExpr& call) {
  const FunctionDecl* function = call.getDirectCallee();
  if (!function || !function->getDeclName().isIdentifier()) return;
  llvm::StringRef name = function->getName();
  std::string shown;
  bool printing = false;
  if (isCLibraryFunction(function) && llvm::is_contained(kCFunctions, name)) {
    shown = name.str();
    printing = name.contains("printf") || name.starts_with("put");
  } else if (function->isInStdNamespace() && (name == "print" || name == "println") &&
             !isInStdSubNamespace(function, "ranges")) {
    shown = "std::" + name.str();
    printing = true;
  } else if (isInStdSubNamespace(function, "this_thread") &&
             (name == "sleep_for" || name == "sleep_until")) {
    shown = "std::this_thread::" + name.str();
  } else if (isInStdSubNamespace(function, "filesystem") && !isa<CXXMethodDecl>(function) &&
             !function->isOverloadedOperator() && name != "swap" && name != "hash_value" &&
             name != "begin" && name != "end") {
    shown = "std::filesystem::" + name.str();
  } else {
    return;
  }
  diag(call.getBeginLoc(), "call to '" + shown + "' happens only while tracing, not on every call")
      << call.getSourceRange();
  note(call.getBeginLoc(), printing ? "use ag::print, which prints on every call"
                                    : "use ag::host_function to run it on every call, at "
                                      "execution time");
}

}  // namespace agc
