#include "checks/CheckRunner.h"

#include "analysis/ConvertedFunctions.h"
#include "analysis/TensorTypes.h"
#include "checks/CheckRegistry.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/FileManager.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/YAMLTraits.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <optional>
#include <set>

namespace agc {

using namespace clang;

// --- Globs ------------------------------------------------------------------

bool globMatches(const std::string& pattern, const std::string& name) {
  // Iterative wildcard match with backtracking to the last `*`.
  std::size_t p = 0, n = 0, star = std::string::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (p < pattern.size() && pattern[p] == name[n]) {
      ++p;
      ++n;
    } else if (star != std::string::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

GlobList::GlobList(const std::string& globs) {
  llvm::SmallVector<llvm::StringRef, 8> pieces;
  llvm::StringRef(globs).split(pieces, ',', -1, false);
  for (llvm::StringRef piece : pieces) {
    llvm::SmallVector<llvm::StringRef, 4> lines;
    piece.split(lines, '\n', -1, false);
    for (llvm::StringRef item : lines) {
      item = item.trim();
      if (item.empty()) continue;
      bool positive = !item.consume_front("-");
      item = item.trim();
      if (!item.empty()) items_.push_back({positive, item.str()});
    }
  }
}

bool GlobList::contains(const std::string& name) const {
  for (auto item = items_.rbegin(); item != items_.rend(); ++item)
    if (globMatches(item->pattern, name)) return item->positive;
  return false;
}

namespace {

// --- .agc.yaml --------------------------------------------------------------

struct ConfigFile {
  std::optional<std::string> checks;
  std::optional<std::string> warningsAsErrors;
};

}  // namespace
}  // namespace agc

template <>
struct llvm::yaml::MappingTraits<agc::ConfigFile> {
  static void mapping(IO& io, agc::ConfigFile& config) {
    io.mapOptional("Checks", config.checks);
    io.mapOptional("WarningsAsErrors", config.warningsAsErrors);
  }
};

namespace agc {
namespace {

struct Config {
  std::string path;  // empty: no .agc.yaml
  ConfigFile file;
  std::string error;
};

// The .agc.yaml nearest to `directory` (it or an ancestor), cached.
const Config& configFor(llvm::StringRef directory) {
  static std::map<std::string, Config> cache;
  auto [entry, inserted] = cache.try_emplace(directory.str());
  if (!inserted) return entry->second;
  Config& config = entry->second;
  llvm::SmallString<256> candidate(directory);
  llvm::sys::path::append(candidate, ".agc.yaml");
  if (!llvm::sys::fs::exists(candidate)) {
    llvm::StringRef parent = llvm::sys::path::parent_path(directory);
    if (!parent.empty() && parent != directory) config = configFor(parent);
    return config;
  }
  config.path = candidate.str().str();
  auto buffer = llvm::MemoryBuffer::getFile(candidate);
  if (!buffer) {
    config.error = "cannot read '" + config.path + "': " + buffer.getError().message();
    return config;
  }
  std::string yamlError;
  llvm::yaml::Input input((*buffer)->getBuffer(), nullptr,
                          [](const llvm::SMDiagnostic& d, void* out) {
                            llvm::raw_string_ostream os(*static_cast<std::string*>(out));
                            d.print(nullptr, os, /*ShowColors=*/false);
                          },
                          &yamlError);
  input.setAllowUnknownKeys(true);
  if ((*buffer)->getBuffer().trim().empty()) return config;
  input >> config.file;
  if (input.error()) {
    config.error = "cannot parse '" + config.path + "'" +
                   (yamlError.empty() ? std::string() : ":\n" + yamlError);
    config.file = {};
  }
  return config;
}

// --- The converted code -------------------------------------------------------

class ConvertedScope : public CheckScope {
 public:
  ConvertedScope(ASTContext& ast, const ConvertedFunctions& found) : sm_(ast.getSourceManager()) {
    for (const ConvertedUnit& unit : found.units) {
      functions_.push_back(unit.function);
      converted_.insert(unit.function->getCanonicalDecl());
    }
    std::stable_sort(functions_.begin(), functions_.end(),
                     [&](const FunctionDecl* a, const FunctionDecl* b) {
                       return offsetOf(a->getBeginLoc()) < offsetOf(b->getBeginLoc());
                     });
    // Functions first, then lambdas from the outermost: a lambda already
    // walked as part of converted code is walked no more.
    std::vector<const ConvertedUnit*> order;
    for (const ConvertedUnit& unit : found.units) order.push_back(&unit);
    std::stable_sort(order.begin(), order.end(), [&](const auto* a, const auto* b) {
      if ((a->lambda != nullptr) != (b->lambda != nullptr)) return a->lambda == nullptr;
      return offsetOf(a->function->getBeginLoc()) < offsetOf(b->function->getBeginLoc());
    });
    std::vector<std::pair<unsigned, std::vector<DynTypedNode>>> walked;
    for (const ConvertedUnit* unit : order) {
      if (unit->lambda && owner_.count(unit->lambda)) continue;
      nodes_.clear();
      nodes_.push_back(DynTypedNode::create(*unit->function));
      for (const ParmVarDecl* param : unit->function->parameters())
        nodes_.push_back(DynTypedNode::create(*param));
      walk(unit->function->getBody(), unit->function, false, false);
      SourceLocation begin =
          unit->lambda ? unit->lambda->getBeginLoc() : unit->function->getBeginLoc();
      walked.emplace_back(offsetOf(begin), std::move(nodes_));
      addRoot(ast, begin);
    }
    // Matched in source order, so that findings come out in source order.
    std::stable_sort(walked.begin(), walked.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [offset, nodes] : walked)
      matchOrder.insert(matchOrder.end(), nodes.begin(), nodes.end());
  }

  llvm::ArrayRef<const FunctionDecl*> convertedFunctions() const override { return functions_; }

  bool isConverted(const FunctionDecl* function) const override {
    if (!function) return false;
    if (const FunctionDecl* pattern = function->getTemplateInstantiationPattern())
      function = pattern;
    return converted_.contains(function->getCanonicalDecl());
  }

  const FunctionDecl* enclosingConverted(const Stmt& node) const override {
    if (host_.contains(&node)) return nullptr;
    return owner_.lookup(&node);
  }

  bool isInStagedControlFlow(const Stmt& node) const override { return staged_.contains(&node); }
  bool isInHostFunction(const Stmt& node) const override { return host_.contains(&node); }

  // Whether the expansion location of `loc` lies in a host_function lambda.
  bool inHostRange(SourceLocation loc) const {
    if (hostRanges_.empty() || loc.isInvalid()) return false;
    SourceLocation fileLoc = sm_.getExpansionLoc(loc);
    if (sm_.getFileID(fileLoc) != sm_.getMainFileID()) return false;
    unsigned offset = sm_.getFileOffset(fileLoc);
    return llvm::any_of(hostRanges_,
                        [&](auto range) { return range.first <= offset && offset < range.second; });
  }

  // The top-level declarations holding converted code: the traversal scope,
  // over which the parent map (hasAncestor, getParents) is built.
  std::vector<Decl*> roots;
  // Every node of converted code outside ag::host_function, in source order:
  // the unit's declaration, its parameters, then its body in preorder (with
  // the declarations of DeclStmts).
  std::vector<DynTypedNode> matchOrder;

 private:
  void addRoot(ASTContext& ast, SourceLocation loc) {
    unsigned offset = offsetOf(loc);
    for (Decl* decl : ast.getTranslationUnitDecl()->decls()) {
      SourceLocation begin = decl->getBeginLoc(), end = decl->getEndLoc();
      if (begin.isInvalid() || end.isInvalid() ||
          sm_.getFileID(sm_.getExpansionLoc(begin)) != sm_.getMainFileID() ||
          sm_.getFileID(sm_.getExpansionLoc(end)) != sm_.getMainFileID())
        continue;
      if (offsetOf(begin) <= offset && offset <= offsetOf(end)) {
        if (!llvm::is_contained(roots, decl)) roots.push_back(decl);
        return;
      }
    }
  }

  unsigned offsetOf(SourceLocation loc) const {
    return sm_.getFileOffset(sm_.getExpansionLoc(loc));
  }

  void walk(const Stmt* stmt, const FunctionDecl* owner, bool staged, bool host) {
    if (!stmt) return;
    if (const auto* lambda = dyn_cast<LambdaExpr>(stmt);
        lambda && isConverted(lambda->getCallOperator()))
      owner = lambda->getCallOperator();
    owner_[stmt] = owner;
    if (staged) staged_.insert(stmt);
    if (host) host_.insert(stmt);
    if (!host) {
      nodes_.push_back(DynTypedNode::create(*stmt));
      if (const auto* declStmt = dyn_cast<DeclStmt>(stmt))
        for (const Decl* decl : declStmt->decls()) nodes_.push_back(DynTypedNode::create(*decl));
    }

    if (const auto* call = dyn_cast<CallExpr>(stmt); call && !host && isHostFunctionCall(call)) {
      const Expr* fn = call->getArg(0);
      SourceLocation end = sm_.getExpansionLoc(fn->getEndLoc());
      hostRanges_.emplace_back(
          offsetOf(fn->getBeginLoc()),
          sm_.getFileOffset(end) + Lexer::MeasureTokenLength(end, sm_, LangOptions()));
      for (const Stmt* child : stmt->children()) walk(child, owner, staged, /*host=*/child == fn);
      return;
    }
    // The parts of staged control flow that run once per trace but stand
    // for every iteration or branch.
    const Stmt* stagedPart[3] = {nullptr, nullptr, nullptr};
    if (const auto* ifStmt = dyn_cast<IfStmt>(stmt)) {
      if (!ifStmt->isConstexpr() && !ifStmt->isConsteval() && isTensorExpr(ifStmt->getCond())) {
        stagedPart[0] = ifStmt->getThen();
        stagedPart[1] = ifStmt->getElse();
      }
    } else if (const auto* loop = dyn_cast<WhileStmt>(stmt)) {
      if (isTensorExpr(loop->getCond())) stagedPart[0] = loop->getBody();
    } else if (const auto* loop = dyn_cast<ForStmt>(stmt)) {
      if (loop->getCond() && isTensorExpr(loop->getCond())) {
        stagedPart[0] = loop->getBody();
        stagedPart[1] = loop->getInc();
      }
    } else if (const auto* loop = dyn_cast<CXXForRangeStmt>(stmt)) {
      if (isTensorExpr(loop->getRangeInit())) stagedPart[0] = loop->getBody();
    }
    for (const Stmt* child : stmt->children()) {
      bool childStaged = staged || (child && llvm::is_contained(stagedPart, child));
      walk(child, owner, childStaged, host);
    }
  }

  const SourceManager& sm_;
  std::vector<const FunctionDecl*> functions_;
  llvm::DenseSet<const FunctionDecl*> converted_;
  llvm::DenseMap<const Stmt*, const FunctionDecl*> owner_;
  llvm::DenseSet<const Stmt*> staged_, host_;
  std::vector<std::pair<unsigned, unsigned>> hostRanges_;
  std::vector<DynTypedNode> nodes_;  // of the unit being walked
};

// --- Suppressions ---------------------------------------------------------------

bool isIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Whether `line` holds the marker `kind` (NOLINT, NOLINTNEXTLINE, NOLINTBEGIN,
// NOLINTEND) for `check`: bare, or with a list of globs in parentheses.
bool hasMarker(llvm::StringRef line, llvm::StringRef kind, const std::string& check) {
  for (std::size_t at = line.find(kind); at != llvm::StringRef::npos;
       at = line.find(kind, at + 1)) {
    std::size_t after = at + kind.size();
    if ((at > 0 && isIdentifierChar(line[at - 1])) ||
        (after < line.size() && isIdentifierChar(line[after])))
      continue;
    if (after >= line.size() || line[after] != '(') return true;
    std::size_t close = line.find(')', after);
    if (close == llvm::StringRef::npos) continue;
    llvm::SmallVector<llvm::StringRef, 4> globs;
    line.slice(after + 1, close).split(globs, ',', -1, false);
    for (llvm::StringRef glob : globs)
      if (globMatches(glob.trim().str(), check)) return true;
  }
  return false;
}

bool isSuppressed(const SourceManager& sm, SourceLocation loc, const std::string& check) {
  if (loc.isInvalid()) return false;
  SourceLocation fileLoc = sm.getExpansionLoc(loc);
  FileID file = sm.getFileID(fileLoc);
  bool invalid = false;
  llvm::StringRef text = sm.getBufferData(file, &invalid);
  if (invalid) return false;
  std::size_t offset = sm.getFileOffset(fileLoc);
  std::size_t lineBegin = text.rfind('\n', offset == 0 ? 0 : offset - 1);
  lineBegin = (lineBegin == llvm::StringRef::npos || offset == 0) ? 0 : lineBegin + 1;
  std::size_t lineEnd = std::min(text.find('\n', offset), text.size());
  if (hasMarker(text.slice(lineBegin, lineEnd), "NOLINT", check)) return true;
  if (lineBegin > 0) {
    std::size_t previousEnd = lineBegin - 1;  // the '\n' ending the previous line
    std::size_t previousBegin =
        previousEnd == 0 ? llvm::StringRef::npos : text.rfind('\n', previousEnd - 1);
    previousBegin = previousBegin == llvm::StringRef::npos ? 0 : previousBegin + 1;
    if (hasMarker(text.slice(previousBegin, previousEnd), "NOLINTNEXTLINE", check)) return true;
  }
  if (text.find("NOLINTBEGIN") == llvm::StringRef::npos) return false;
  int depth = 0;
  llvm::StringRef before = text.take_front(lineEnd);
  while (!before.empty()) {
    auto [line, rest] = before.split('\n');
    if (hasMarker(line, "NOLINTBEGIN", check)) ++depth;
    if (hasMarker(line, "NOLINTEND", check) && depth > 0) --depth;
    before = rest;
  }
  return depth > 0;
}

// --- The consumer ------------------------------------------------------------------

// The check of a finding: its format is "%0 [ag-name]" (see AgCheck::diag).
std::string checkNameOf(const Diagnostic& info) {
  if (info.getID() < diag::DIAG_UPPER_LIMIT) return "";
  llvm::StringRef format = info.getDiags()->getDiagnosticIDs()->getDescription(info.getID());
  if (!format.consume_front("%0 [") || !format.consume_back("]") || !format.starts_with("ag-"))
    return "";
  return format.str();
}

FindingLocation locationOf(const SourceManager& sm, SourceLocation loc) {
  FindingLocation out;
  if (loc.isInvalid()) return out;
  PresumedLoc presumed = sm.getPresumedLoc(sm.getExpansionLoc(loc));
  if (presumed.isInvalid()) return out;
  out.file = presumed.getFilename();
  out.line = presumed.getLine();
  out.column = presumed.getColumn();
  return out;
}

void setEnd(FindingLocation& out, const SourceManager& sm, const LangOptions& lang,
            CharSourceRange range) {
  if (range.isInvalid()) return;
  SourceLocation end = sm.getExpansionRange(range.getEnd()).getEnd();
  if (range.isTokenRange()) end = Lexer::getLocForEndOfToken(end, 0, sm, lang);
  if (end.isInvalid()) return;
  PresumedLoc presumed = sm.getPresumedLoc(end);
  if (presumed.isInvalid()) return;
  out.endLine = presumed.getLine();
  out.endColumn = presumed.getColumn();
}

class CheckConsumer : public DiagnosticConsumer {
 public:
  CheckConsumer(DiagnosticConsumer& next, const ConvertedScope& scope, const LangOptions& lang,
                const GlobList& warningsAsErrors, bool printText, std::vector<Finding>& findings)
      : next_(next),
        scope_(scope),
        lang_(lang),
        warningsAsErrors_(warningsAsErrors),
        printText_(printText),
        findings_(findings) {}

  void HandleDiagnostic(DiagnosticsEngine::Level level, const Diagnostic& info) override {
    if (level == DiagnosticsEngine::Note) {
      if (state_ == Dropped) return;
      if (state_ == InFinding) {
        addNote(info);
        if (!printText_) return;
      }
      forward(level, info);
      return;
    }
    std::string check = checkNameOf(info);
    if (check.empty()) {
      state_ = Other;
      forward(level, info);
      return;
    }
    const SourceManager& sm = info.getSourceManager();
    llvm::SmallString<128> message;
    info.FormatDiagnostic(message);
    std::string key =
        std::to_string(info.getLocation().getRawEncoding()) + " " + message.str().str();
    if (isSuppressed(sm, info.getLocation(), check) || scope_.inHostRange(info.getLocation()) ||
        !seen_.insert(key).second) {
      state_ = Dropped;
      return;
    }
    if (level == DiagnosticsEngine::Warning && warningsAsErrors_.contains(check))
      level = DiagnosticsEngine::Error;
    if (level >= DiagnosticsEngine::Error) ++errors;
    state_ = InFinding;
    Finding finding;
    finding.check = check;
    finding.level = level >= DiagnosticsEngine::Error ? "error" : "warning";
    llvm::StringRef text = message;
    text.consume_back(" [" + check + "]");
    finding.message = text.str();
    finding.location = locationOf(sm, info.getLocation());
    if (!info.getRanges().empty()) setEnd(finding.location, sm, lang_, info.getRange(0));
    findings_.push_back(std::move(finding));
    addFixes(info);
    if (printText_) forward(level, info);
  }

  unsigned errors = 0;

 private:
  enum State { Other, InFinding, Dropped };

  void forward(DiagnosticsEngine::Level level, const Diagnostic& info) {
    DiagnosticConsumer::HandleDiagnostic(level, info);
    next_.HandleDiagnostic(level, info);
  }

  void addNote(const Diagnostic& info) {
    llvm::SmallString<128> message;
    info.FormatDiagnostic(message);
    FindingNote note{message.str().str(), locationOf(info.getSourceManager(), info.getLocation())};
    if (!info.getRanges().empty())
      setEnd(note.location, info.getSourceManager(), lang_, info.getRange(0));
    findings_.back().notes.push_back(std::move(note));
    addFixes(info);
  }

  void addFixes(const Diagnostic& info) {
    const SourceManager& sm = info.getSourceManager();
    for (const FixItHint& hint : info.getFixItHints()) {
      if (hint.RemoveRange.isInvalid()) continue;
      FindingFix fix;
      fix.location = locationOf(sm, hint.RemoveRange.getBegin());
      setEnd(fix.location, sm, lang_, hint.RemoveRange);
      fix.replacement = hint.CodeToInsert;
      findings_.back().fixes.push_back(std::move(fix));
    }
  }

  DiagnosticConsumer& next_;
  const ConvertedScope& scope_;
  const LangOptions& lang_;
  const GlobList& warningsAsErrors_;
  bool printText_;
  std::vector<Finding>& findings_;
  State state_ = Other;
  std::set<std::string> seen_;
};

}  // namespace

CheckRunResult runChecks(ASTContext& ast, const CheckOptions& options,
                         std::vector<Finding>& findings) {
  CheckRunResult result;
  if (!options.enabled) return result;
  const SourceManager& sm = ast.getSourceManager();

  // The configuration: "ag-*", then .agc.yaml, then --checks.
  std::string checks = "ag-*", warningsAsErrors = options.werror ? "*" : "";
  if (OptionalFileEntryRef main = sm.getFileEntryRefForID(sm.getMainFileID())) {
    llvm::SmallString<256> path(main->getName());
    sm.getFileManager().makeAbsolutePath(path);
    llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
    const Config& config = configFor(llvm::sys::path::parent_path(path));
    if (!config.error.empty()) {
      llvm::errs() << "agc: error: " << config.error << "\n";
      result.toolFailure = true;
      return result;
    }
    if (config.file.checks) checks += "," + *config.file.checks;
    if (config.file.warningsAsErrors && !options.werror)
      warningsAsErrors = *config.file.warningsAsErrors;
  }
  checks += "," + options.checks;
  GlobList enabled(checks), promoted(warningsAsErrors);

  ConvertedFunctions found = findConvertedFunctions(ast);
  if (found.units.empty()) return result;
  ConvertedScope scope(ast, found);

  DiagnosticsEngine& engine = ast.getDiagnostics();
  std::vector<std::unique_ptr<AgCheck>> active;
  clang::ast_matchers::MatchFinder finder;
  for (const CheckFactory& factory : checkFactories()) {
    if (!enabled.contains(factory.name)) continue;
    active.push_back(factory.create(factory.name, engine, scope));
    active.back()->registerMatchers(finder);
  }
  if (active.empty()) return result;

  // Findings go through our consumer, then to the driver's printer.
  std::unique_ptr<DiagnosticConsumer> owner = engine.takeClient();
  DiagnosticConsumer* previous = engine.getClient();
  CheckConsumer consumer(*previous, scope, ast.getLangOpts(), promoted, options.printText,
                         findings);
  engine.setClient(&consumer, /*ShouldOwnClient=*/false);
  // Matching visits the converted code only, node by node, in source order
  // (MatchFinder::matchAST would walk whole declarations, and skips the body
  // of a lambda's call operator when given it as a root).
  ast.setTraversalScope(scope.roots);
  for (auto& check : active) check->onStartOfTranslationUnit();
  for (const DynTypedNode& node : scope.matchOrder) finder.match(node, ast);
  for (auto& check : active) check->onEndOfTranslationUnit();
  ast.setTraversalScope({ast.getTranslationUnitDecl()});
  engine.setClient(previous, /*ShouldOwnClient=*/false);
  if (owner) engine.setClient(owner.release(), /*ShouldOwnClient=*/true);
  result.errors = consumer.errors;
  return result;
}

std::vector<CheckInfo> registeredChecks() {
  std::vector<CheckInfo> out;
  for (const CheckFactory& factory : checkFactories())
    out.push_back({factory.name, factory.summary});
  return out;
}

}  // namespace agc
