// Function converter: marking, wrappers and recursive conversion.
//
// Needs: a parsed translation unit. Guarantees, as docs/codegen-contract.md
// says: a marked free function becomes a static `agc_impl_NAME` holding the
// converted body, a `MarkedFunction` static, and the original declaration
// whose body calls it; a marked method of an `ag::Module` becomes a member
// `agc_impl_NAME` and a wrapper through `ag::call_method`; a marked lambda is
// converted in place. Functions of the main file that marked code calls, and
// that take or return tensors or hold tensor control flow, are converted in
// place (analysis/ConvertedFunctions finds them).
#include "converters/FunctionConverter.h"

#include "analysis/AstPredicates.h"
#include "analysis/ConvertedFunctions.h"
#include "analysis/TensorTypes.h"
#include "converters/Pipeline.h"

#include "ag/annotate.h"

#include "clang/AST/Attr.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

#include <algorithm>
#include <map>

namespace agc {

using namespace clang;

namespace {

using Unit = ConvertedUnit;

// One replacement inside a copied range.
struct Substitution {
  std::size_t begin, end;
  std::string text;
};

class FileConverter {
 public:
  FileConverter(ASTContext& ast, SourceText& source, Diagnostics& diags)
      : ast_(ast),
        sm_(ast.getSourceManager()),
        file_{ast, source, diags, NameAllocator(source.buffer()), {}} {}

  void run(TranspileResult& result) {
    // Marked code and what it calls from this file, transitively. Calls it
    // cannot convert are reported by the ag-unconverted-call check.
    ConvertedFunctions found = findConvertedFunctions(ast_);
    std::vector<Unit> units = std::move(found.units);
    if (units.empty()) return;
    // Unmarked lambdas with tensor control flow inside converted code run
    // while it traces: staged in place, like the functions it calls.
    units.insert(units.end(), found.nestedLambdas.begin(), found.nestedLambdas.end());
    // In source order, inner code first: a marked lambda inside a function
    // is converted before the function copies it.
    std::stable_sort(units.begin(), units.end(),
                     [&](const Unit& a, const Unit& b) { return endOf(a) < endOf(b); });
    for (const Unit& unit : units) convert(unit, result);
    result.changed = true;
  }

 private:
  std::size_t offsetOf(SourceLocation loc) const {
    return sm_.getFileOffset(sm_.getExpansionLoc(loc));
  }

  std::size_t endOf(const Unit& unit) const {
    return offsetOf(unit.lambda ? unit.lambda->getEndLoc() : unit.function->getEndLoc());
  }

  static std::string returnTypeText(const FunctionDecl* function, const SourceText& source,
                                    const SourceManager& sm, const PrintingPolicy& policy) {
    QualType type = function->getReturnType();
    SourceRange range = function->getReturnTypeSourceRange();
    if (range.isValid() && !type->getContainedAutoType() && !range.getBegin().isMacroID()) {
      std::size_t begin = sm.getFileOffset(range.getBegin());
      std::size_t end =
          sm.getFileOffset(Lexer::getLocForEndOfToken(range.getEnd(), 0, sm, LangOptions()));
      return std::string(source.buffer().substr(begin, end - begin));
    }
    return type.getAsString(policy);
  }

  std::optional<Text> convertedBody(const FunctionDecl* function) {
    FunctionBody body{function->getBody(), function->getReturnType(), "", {}};
    body.returnTypeText = returnTypeText(function, file_.source, sm_, ast_.getPrintingPolicy());
    for (const ParmVarDecl* param : function->parameters())
      if (param->getType()->isLValueReferenceType() &&
          !param->getType().getNonReferenceType().isConstQualified())
        body.liveAtExit.insert(param);
    bool changed = false;
    return convertBody(file_, body, changed);
  }

  void convert(const Unit& unit, TranspileResult& result) {
    const FunctionDecl* function = unit.function;
    const Stmt* bodyStmt = function->getBody();
    if (bodyStmt->getBeginLoc().isMacroID() || bodyStmt->getEndLoc().isMacroID()) {
      file_.diags.error(function->getLocation(),
                        "cannot convert a function whose body comes from a macro");
      file_.diags.note(bodyStmt->getBeginLoc(), "write the body outside the macro");
      return;
    }
    std::optional<Text> body = convertedBody(function);
    if (!body) return;
    std::size_t bodyBegin = offsetOf(bodyStmt->getBeginLoc());
    std::size_t bodyEnd = offsetOf(bodyStmt->getEndLoc()) + 1;
    std::string name = function->getNameAsString();
    if (unit.kind == Unit::Lambda || unit.kind == Unit::InPlace) {
      result.functions[unit.lambda ? "lambda" : name] = body->str();
      file_.source.replace(bodyBegin, bodyEnd, std::move(*body));
      return;
    }
    if (!function->getDeclName().isIdentifier() || function->isVariadic()) {
      file_.diags.error(function->getLocation(),
                        "agc can only mark named functions with a fixed parameter list");
      return;
    }
    for (const ParmVarDecl* param : function->parameters()) {
      if (param->getName().empty() && param->isParameterPack()) {
        file_.diags.error(param->getBeginLoc(),
                          "a parameter pack of a marked function needs a name");
        return;
      }
    }
    Text generated = unit.kind == Unit::Method ? methodWrapper(cast<CXXMethodDecl>(function), *body)
                                               : functionWrapper(function, *body);
    if (generated.segments().empty()) return;
    result.functions[name] = generated.str();
    file_.source.replace(declBegin(function), bodyEnd, std::move(generated));
  }

  std::size_t declBegin(const FunctionDecl* function) const {
    if (const FunctionTemplateDecl* templ = function->getDescribedFunctionTemplate())
      return offsetOf(templ->getBeginLoc());
    return offsetOf(function->getBeginLoc());
  }

  // The source [begin, end) with substitutions applied (sorted, disjoint).
  Text copyWith(std::size_t begin, std::size_t end, std::vector<Substitution> subs) const {
    std::stable_sort(subs.begin(), subs.end(),
                     [](const auto& a, const auto& b) { return a.begin < b.begin; });
    Text out;
    std::size_t position = begin;
    for (const Substitution& sub : subs) {
      if (sub.begin < position || sub.end > end) continue;
      out += file_.source.copy(position, sub.begin);
      out += sub.text;
      position = sub.end;
    }
    out += file_.source.copy(position, end);
    return out;
  }

  std::size_t tokenEnd(SourceLocation loc) const {
    return offsetOf(loc) +
           Lexer::MeasureTokenLength(sm_.getExpansionLoc(loc), sm_, ast_.getLangOpts());
  }

  // Removes `AG_FUNCTION` (a macro expansion) from the declaration's header.
  std::vector<Substitution> withoutMarker(const FunctionDecl* function, std::size_t begin,
                                          std::size_t end) const {
    std::vector<Substitution> subs;
    for (const auto* attr : function->specific_attrs<AnnotateAttr>()) {
      if (attr->getAnnotation() != AG_FUNCTION_ANNOTATION || !attr->getLocation().isMacroID())
        continue;
      CharSourceRange expansion = sm_.getExpansionRange(attr->getLocation());
      std::size_t markerBegin = offsetOf(expansion.getBegin());
      std::size_t markerEnd = tokenEnd(expansion.getEnd());
      if (markerBegin >= begin && markerEnd <= end) subs.push_back({markerBegin, markerEnd, ""});
    }
    return subs;
  }

  std::size_t skipSpaces(std::size_t at) const {
    std::string_view text = file_.source.buffer();
    while (at < text.size() && (text[at] == ' ' || text[at] == '\t')) ++at;
    return at;
  }

  Text impl(const FunctionDecl* function, const std::string& implName, const Text& body,
            bool addStatic) const {
    std::size_t begin = declBegin(function),
                bodyBegin = offsetOf(function->getBody()->getBeginLoc());
    std::vector<Substitution> subs = withoutMarker(function, begin, bodyBegin);
    for (Substitution& sub : subs) sub.end = skipSpaces(sub.end);
    subs.push_back(
        {offsetOf(function->getLocation()), tokenEnd(function->getLocation()), implName});
    if (const auto* attr = function->getAttr<OverrideAttr>())
      subs.push_back({offsetOf(attr->getLocation()), tokenEnd(attr->getLocation()), ""});
    if (const auto* attr = function->getAttr<FinalAttr>())
      subs.push_back({offsetOf(attr->getLocation()), tokenEnd(attr->getLocation()), ""});
    if (addStatic && function->getStorageClass() != SC_Static) {
      std::size_t specifiers = offsetOf(function->getBeginLoc());
      auto marker =
          llvm::find_if(subs, [&](const Substitution& s) { return s.begin == specifiers; });
      if (marker != subs.end())
        marker->text = "static ";
      else
        subs.push_back({specifiers, specifiers, "static "});
    }
    return copyWith(begin, bodyBegin, subs) + body;
  }

  // The declaration header, as written, up to the body, without trailing spaces.
  Text header(const FunctionDecl* function, bool withDefaults) {
    std::size_t begin = declBegin(function),
                bodyBegin = offsetOf(function->getBody()->getBeginLoc());
    std::string_view text = file_.source.buffer();
    std::size_t end = bodyBegin;
    while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
    std::vector<Substitution> subs;
    // `&f` must not name a function whose return type is still to be deduced.
    QualType returnType = function->getReturnType();
    SourceRange returnRange = function->getReturnTypeSourceRange();
    if (returnType->getContainedDeducedType() && !returnType->isDependentType() &&
        returnRange.isValid())
      subs.push_back({offsetOf(returnRange.getBegin()), tokenEnd(returnRange.getEnd()),
                      returnTypeText(function, file_.source, sm_, ast_.getPrintingPolicy())});
    // The wrapper forwards every parameter: unnamed ones get a name.
    for (const ParmVarDecl* param : function->parameters())
      if (param->getName().empty()) {
        std::size_t at = offsetOf(param->getLocation());
        subs.push_back({at, at, " " + nameOf(param)});
      }
    if (!withDefaults) {
      for (const ParmVarDecl* param : function->parameters()) {
        if (!param->hasDefaultArg() || param->hasUninstantiatedDefaultArg()) continue;
        SourceRange range = param->getDefaultArgRange();
        std::size_t cut = offsetOf(range.getBegin());
        while (cut > begin && text[cut] != '=') --cut;  // the `=` before the default
        while (cut > begin && std::isspace(static_cast<unsigned char>(text[cut - 1]))) --cut;
        subs.push_back({cut, tokenEnd(range.getEnd()), ""});
      }
    }
    return copyWith(begin, end, subs);
  }

  // The parameter's name, or the one agc gives an unnamed parameter.
  std::string nameOf(const ParmVarDecl* param) {
    if (!param->getName().empty()) return param->getName().str();
    auto [it, inserted] = unnamedParameters_.try_emplace(param);
    if (inserted)
      it->second = file_.names.fresh(
          "agc_arg_" + std::to_string(param->getFunctionScopeIndex() + 1), file_.fileScopeNames);
    return it->second;
  }

  std::string forwardedArguments(const FunctionDecl* function) {
    std::string args;
    for (const ParmVarDecl* param : function->parameters()) {
      std::string name = nameOf(param);
      std::string arg = param->getType()->isRValueReferenceType()
                            ? "static_cast<decltype(" + name + ")&&>(" + name + ")"
                            : name;
      if (param->isParameterPack()) arg += "...";
      args += (args.empty() ? "" : ", ") + arg;
    }
    return args;
  }

  std::string parameterNames(const FunctionDecl* function) {
    std::string names;
    for (const ParmVarDecl* param : function->parameters())
      names += (names.empty() ? "\"" : ", \"") + nameOf(param) + "\"";
    return "{" + names + "}";
  }

  // The wrapper is declared first, so that the impl may call it (recursion).
  Text functionWrapper(const FunctionDecl* function, const Text& body) {
    std::string name = function->getNameAsString();
    std::string implName = file_.names.fresh("agc_impl_" + name, file_.fileScopeNames);
    std::string fnName = file_.names.fresh("agc_fn_" + name, file_.fileScopeNames);
    std::string registration = parameterNames(function);
    std::string call = "return " + fnName + "(" + forwardedArguments(function) + "); }";
    if (const FunctionTemplateDecl* templ = function->getDescribedFunctionTemplate()) {
      // A function template takes its default arguments in its first
      // declaration, and needs one MarkedFunction per instantiation: a
      // function-local static.
      std::string templateArgs;
      for (const NamedDecl* param : *templ->getTemplateParameters())
        templateArgs += (templateArgs.empty() ? "" : ", ") + param->getNameAsString() +
                        (param->isParameterPack() ? "..." : "");
      Text out = header(function, /*withDefaults=*/true);
      out += "; ";
      out += impl(function, implName, body, /*addStatic=*/true);
      out += "\n";
      out += header(function, /*withDefaults=*/false);
      out += " { static ag::MarkedFunction<&" + implName + "<" + templateArgs + ">> " + fnName +
             "{&" + name + "<" + templateArgs + ">, \"" + name + "\", " + registration + "}; " +
             call;
      return out;
    }
    Text out = header(function, /*withDefaults=*/false);
    out += "; ";
    out += impl(function, implName, body, /*addStatic=*/true);
    out += "\nstatic ag::MarkedFunction<&" + implName + "> " + fnName + "{&" + name + ", \"" +
           name + "\", " + registration + "};\n";
    out += header(function, /*withDefaults=*/true);
    out += " { " + call;
    return out;
  }

  static bool derivesFromModule(const CXXRecordDecl* record) {
    if (!record->hasDefinition()) return false;
    for (const CXXBaseSpecifier& base : record->bases()) {
      if (base.getType()->isDependentType() || isAgClass(base.getType(), "Module")) return true;
      if (const CXXRecordDecl* baseRecord = base.getType()->getAsCXXRecordDecl())
        if (derivesFromModule(baseRecord)) return true;
    }
    return false;
  }

  Text methodWrapper(const CXXMethodDecl* method, const Text& body) {
    const CXXRecordDecl* record = method->getParent();
    if (method->isStatic() || method->isOutOfLine() || !derivesFromModule(record)) {
      if (method->isStatic()) {
        file_.diags.error(method->getLocation(),
                          "a marked static member function is not supported");
        file_.diags.note(method->getLocation(),
                         "make it a free function, or a non-static method of an ag::Module");
      } else if (method->isOutOfLine()) {
        file_.diags.error(method->getLocation(),
                          "a marked method must be defined inside its class");
        file_.diags.note(method->getLocation(), "move the definition into the class body");
      } else {
        file_.diags.error(
            method->getLocation(),
            ("class '" + record->getName() + "' must derive from ag::Module to have marked methods")
                .str());
        file_.diags.note(record->getLocation(),
                         "each ag::Module instance has its own traces, keyed by its id");
      }
      return {};
    }
    std::string name = method->getNameAsString();
    std::string className = record->getNameAsString();
    std::string implName = file_.names.fresh("agc_impl_" + name, file_.fileScopeNames);
    std::string args = forwardedArguments(method);
    Text out = impl(method, implName, body, /*addStatic=*/false);
    out += "\n";
    out += header(method, /*withDefaults=*/true);
    out += " { return ag::call_method<&" + className + "::" + implName + ">(this, \"" + className +
           "::" + name + "\", " + parameterNames(method) + (args.empty() ? "" : ", " + args) +
           "); }";
    return out;
  }

  ASTContext& ast_;
  const SourceManager& sm_;
  FileContext file_;
  std::map<const ParmVarDecl*, std::string> unnamedParameters_;
};

}  // namespace

std::optional<TranspileResult> transpileMainFile(ASTContext& ast, const std::string& displayName,
                                                 bool lineDirectives) {
  const SourceManager& sm = ast.getSourceManager();
  std::string_view buffer = sm.getBufferData(sm.getMainFileID());
  TranspileResult result;
  if (buffer.substr(0, std::string_view(kGeneratedMarker).size()) == kGeneratedMarker) {
    result.text = std::string(buffer);
    return result;
  }
  SourceText source(buffer, displayName);
  Diagnostics diags(ast.getDiagnostics());
  FileConverter(ast, source, diags).run(result);
  if (diags.errorCount() > 0) return std::nullopt;
  if (!result.changed) {
    result.text = std::string(buffer);
    return result;
  }
  Text whole = std::string(kGeneratedMarker) + " from " + displayName + ". Do not edit.\n";
  whole += source.copy(0, buffer.size());
  result.text = lineDirectives ? renderWithLineDirectives(whole, source) : whole.str();
  return result;
}

}  // namespace agc
