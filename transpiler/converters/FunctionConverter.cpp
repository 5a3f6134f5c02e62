// Function converter: marking, wrappers and recursive conversion.
//
// Needs: a parsed translation unit. Guarantees, as docs/codegen-contract.md
// says: a marked free function becomes a static `agc_impl_NAME` holding the
// converted body, a `MarkedFunction` static, and the original declaration
// whose body calls it; a marked method of an `ag::Module` defined in its class
// becomes a member `agc_impl_NAME` and a wrapper through `ag::call_method`; a
// static member or hidden friend defined in its class gets a static impl and a
// function-local MarkedFunction. A method or static member defined outside its
// class (its class may be in a header agc does not rewrite) adds no member:
// its definition stays the wrapper and holds the converted body as a lambda
// (which captures `this`), given to `ag::call_method` or, for a static member,
// made the impl of a function-local MarkedFunction. A marked lambda is
// converted in place. Errors at the user's line: a parameter without a trace
// type (also in an instantiation), a reference result, a constexpr or consteval
// function, an explicit specialization, a declaration from a macro or holding
// a directive, a template parameter from a macro that has a default or no name
// (the wrapper repeats the declaration without defaults, naming its template
// parameters), a marked method of a class that is not an ag::Module.
// Functions of the main file that marked code calls, and that take or return
// tensors or hold tensor control flow, are converted in place
// (analysis/ConvertedFunctions finds them).
#include "converters/FunctionConverter.h"

#include "analysis/AstPredicates.h"
#include "analysis/ConvertedFunctions.h"
#include "analysis/TensorTypes.h"
#include "analysis/TraceTypes.h"
#include "converters/Pipeline.h"

#include "ag/annotate.h"

#include "clang/AST/Attr.h"
#include "clang/AST/DeclFriend.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/QualTypeNames.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

#include <algorithm>
#include <map>
#include <set>

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
    // A deduced type is spelled from what it deduced to, fully qualified: the
    // generated declaration may be outside the namespaces the body uses.
    if (type->getContainedDeducedType() && !type->isDependentType()) type = type.getCanonicalType();
    return TypeName::getFullyQualifiedName(type, function->getASTContext(), policy);
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
    if (unit.kind != Unit::Lambda && function->getLocation().isMacroID()) {
      // A test framework's TEST_CASE(...) or similar: the declaration is the
      // macro's text, which agc cannot split into an impl and a wrapper.
      file_.diags.error(function->getLocation(),
                        "cannot convert a marked function declared by a macro expansion");
      file_.diags.note(function->getLocation(),
                       "declare the function without the macro, or call a marked function "
                       "from the macro's body");
      return;
    }
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
    if (!isCallableKind(function)) return;
    for (const ParmVarDecl* param : function->parameters()) {
      if (param->getName().empty() && param->isParameterPack()) {
        file_.diags.error(param->getBeginLoc(),
                          "a parameter pack of a marked function needs a name");
        return;
      }
    }
    if (!parametersHaveTraceTypes(function) || !returnsValue(function) ||
        !declarationCanBeRepeated(function))
      return;
    const auto* method = dyn_cast<CXXMethodDecl>(function);
    Text generated = method && method->isOutOfLine() ? outOfClassWrapper(method, *body)
                     : (method && method->isStatic()) || isFriend(function)
                         ? classScopeWrapper(function, *body)
                     : method ? methodWrapper(method, *body)
                              : functionWrapper(function, *body);
    if (generated.segments().empty()) return;
    result.functions[name] = generated.str();
    file_.source.replace(declBegin(function), bodyEnd, std::move(generated));
  }

  // A wrapper calls the impl as a function: constructors, destructors and
  // conversion functions have no call to wrap, a C variadic list no
  // arguments to forward.
  bool isCallableKind(const FunctionDecl* function) {
    const char* kind = isa<CXXConstructorDecl>(function)  ? "a constructor"
                       : isa<CXXDestructorDecl>(function) ? "a destructor"
                       : isa<CXXConversionDecl>(function) ? "a conversion function"
                                                          : nullptr;
    if (kind) {
      file_.diags.error(function->getLocation(), std::string("agc cannot convert ") + kind +
                                                     ", only functions, methods " +
                                                     "and operators");
      file_.diags.note(function->getLocation(), "call a marked method from it");
      return false;
    }
    if (function->isVariadic()) {
      file_.diags.error(function->getLocation(),
                        "agc cannot convert a function with a C variadic parameter list (...)");
      file_.diags.note(function->getLocation(), "take a parameter pack or a std::vector instead");
      return false;
    }
    return true;
  }

  // Each argument selects the trace: a type without a trace type is an error
  // at its parameter, not a static_assert inside ag/trace_type.h. A
  // template's parameters are checked as written and in each instantiation
  // the file makes (`buffer<Char>&` has none for any `Char`).
  bool parametersHaveTraceTypes(const FunctionDecl* function) {
    std::set<unsigned> reported;  // the parameters' locations, once each
    bool all = instanceHasTraceTypes(function, reported);
    if (const FunctionTemplateDecl* templ = function->getDescribedFunctionTemplate())
      for (const FunctionDecl* instance : templ->specializations())
        all = instanceHasTraceTypes(instance, reported) && all;
    return all;
  }

  bool instanceHasTraceTypes(const FunctionDecl* function, std::set<unsigned>& reported) {
    bool all = true;
    for (const ParmVarDecl* param : function->parameters()) {
      if (hasTraceType(param->getType())) continue;
      all = false;
      if (!reported.insert(param->getLocation().getRawEncoding()).second) continue;
      std::string type = param->getType().getNonReferenceType().getUnqualifiedType().getAsString(
          ast_.getPrintingPolicy());
      file_.diags.error(param->getLocation(),
                        "the argument type '" + type + "' of a marked function has no trace type");
      file_.diags.note(param->getLocation(),
                       "pass ag::Tensor, ag::Variable, scalars, strings, std containers of them "
                       "or an ag::Module; or give the type `auto ag_trace_type(const " +
                           type + "&)` (a value that identifies it), found by ADL");
    }
    return all;
  }

  // A traced function's result is a value the trace computes: a reference,
  // as written or in an instantiation, has nothing to refer to.
  bool returnsValue(const FunctionDecl* function) {
    const FunctionDecl* reference =
        function->getReturnType()->isReferenceType() ? function : nullptr;
    if (const FunctionTemplateDecl* templ = function->getDescribedFunctionTemplate())
      for (const FunctionDecl* instance : templ->specializations())
        if (!reference && instance->getReturnType()->isReferenceType()) reference = instance;
    if (!reference) return true;
    SourceRange written = function->getReturnTypeSourceRange();
    SourceLocation at =
        written.isValid() ? sm_.getExpansionLoc(written.getBegin()) : function->getLocation();
    QualType type = reference->getReturnType();
    if (reference != function) type = type.getCanonicalType();  // as instantiated
    file_.diags.error(at, "a marked function cannot return a reference ('" +
                              type.getAsString(ast_.getPrintingPolicy()) +
                              "'): its result comes out of a trace");
    file_.diags.note(at, "return by value");
    return false;
  }

  // The wrappers repeat the declaration's text (a forward declaration, the
  // impl, the wrapper) and call the impl at run time: errors at the user's
  // line for declarations that cannot be repeated or called so.
  bool declarationCanBeRepeated(const FunctionDecl* function) {
    if (function->getConstexprKind() != ConstexprSpecKind::Unspecified) {
      file_.diags.error(function->getLocation(),
                        std::string("a marked function cannot be ") +
                            (function->isConsteval() ? "consteval" : "constexpr") +
                            ": it traces when called, at run time");
      file_.diags.note(function->getLocation(),
                       "remove the specifier, or call a constexpr function from the marked one");
      return false;
    }
    if (function->getTemplateSpecializationKind() == TSK_ExplicitSpecialization) {
      file_.diags.error(function->getLocation(),
                        "cannot convert an explicit specialization of a function template");
      file_.diags.note(function->getLocation(),
                       "mark the primary template, or call a marked function from the "
                       "specialization");
      return false;
    }
    if (SourceLocation directive = directiveIn(function); directive.isValid()) {
      file_.diags.error(directive,
                        "cannot convert a marked function whose declaration holds a "
                        "preprocessor directive: agc repeats the declaration");
      file_.diags.note(directive, "put the directive around the whole function");
      return false;
    }
    return templateParametersCanBeRepeated(function);
  }

  // A `#` starting a line between the declaration's start and its body.
  SourceLocation directiveIn(const FunctionDecl* function) const {
    std::size_t begin = declBegin(function), end = offsetOf(function->getBody()->getBeginLoc());
    std::string_view text = file_.source.buffer();
    bool lineStart = false;
    for (std::size_t at = begin; at < end; ++at) {
      if (text[at] == '\n') {
        lineStart = true;
      } else if (text[at] == '#' && lineStart) {
        return sm_.getComposedLoc(sm_.getMainFileID(), static_cast<unsigned>(at));
      } else if (!std::isspace(static_cast<unsigned char>(text[at]))) {
        lineStart = false;
      }
    }
    return {};
  }

  // The wrapper drops default template arguments and names unnamed template
  // parameters, in its text: neither can be done inside a macro's expansion
  // (`FMT_ENABLE_IF(...)` for `enable_if_t<..., int> = 0`).
  bool templateParametersCanBeRepeated(const FunctionDecl* function) {
    const FunctionTemplateDecl* templ = function->getDescribedFunctionTemplate();
    if (!templ) return true;
    bool all = true;
    for (const NamedDecl* param : *templ->getTemplateParameters()) {
      if (!param->getBeginLoc().isMacroID() ||
          (!defaultTemplateArgumentRange(param).isValid() && !param->getName().empty()))
        continue;
      all = false;
      SourceLocation use = sm_.getExpansionLoc(param->getBeginLoc());
      std::string macro =
          Lexer::getImmediateMacroName(param->getBeginLoc(), sm_, ast_.getLangOpts()).str();
      file_.diags.error(
          use,
          "cannot convert a marked template whose template parameter comes "
          "from the macro '" +
              macro + "' and has " +
              (defaultTemplateArgumentRange(param).isValid() ? "a default argument" : "no name"));
      file_.diags.note(use,
                       "agc repeats the template's declaration without default arguments and "
                       "names its parameters: write the parameter without the macro, as "
                       "`std::enable_if_t<CONDITION, int> = 0`");
    }
    return all;
  }

  std::size_t declBegin(const FunctionDecl* function) const {
    std::size_t begin = offsetOf(function->getBeginLoc());
    if (const FunctionTemplateDecl* templ = function->getDescribedFunctionTemplate())
      begin = offsetOf(templ->getBeginLoc());
    // `AG_FUNCTION friend R f(...)`: the friend's range starts earlier.
    if (const FriendDecl* friendDecl = friendOf(function))
      begin = std::min(
          {begin, offsetOf(friendDecl->getBeginLoc()), offsetOf(friendDecl->getFriendLoc())});
    return begin;
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
    return renamed(function, implName, offsetOf(function->getBody()->getBeginLoc()), addStatic) +
           body;
  }

  // The declaration [its begin, end) named `implName`, without the marker,
  // `override` and `final`; `static` when `addStatic` (a friend's `friend`
  // becomes `static`).
  Text renamed(const FunctionDecl* function, const std::string& implName, std::size_t end,
               bool addStatic) const {
    std::size_t begin = declBegin(function);
    std::vector<Substitution> subs = withoutMarker(function, begin, end);
    for (Substitution& sub : subs) sub.end = skipSpaces(sub.end);
    DeclarationNameInfo nameInfo = function->getNameInfo();
    subs.push_back({offsetOf(nameInfo.getBeginLoc()), tokenEnd(nameInfo.getEndLoc()), implName});
    if (const FriendDecl* friendDecl = friendOf(function)) {
      subs.push_back(
          {offsetOf(friendDecl->getFriendLoc()), tokenEnd(friendDecl->getFriendLoc()), "static"});
      addStatic = false;
    }
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
    return copyWith(begin, end, subs);
  }

  static bool isFriend(const FunctionDecl* function) {
    return function->getFriendObjectKind() != Decl::FOK_None;
  }

  // The `friend` declaration of a hidden friend defined in its class.
  static const FriendDecl* friendOf(const FunctionDecl* function) {
    if (!isFriend(function)) return nullptr;
    const auto* record = dyn_cast<CXXRecordDecl>(function->getLexicalDeclContext());
    if (!record) return nullptr;
    const NamedDecl* declared = function->getDescribedFunctionTemplate();
    if (!declared) declared = function;
    for (const FriendDecl* friendDecl : record->friends())
      if (friendDecl->getFriendDecl() == declared) return friendDecl;
    return nullptr;
  }

  // The declaration header, as written, up to the body, without trailing spaces.
  Text header(const FunctionDecl* function, bool withDefaults) {
    std::size_t begin = declBegin(function),
                bodyBegin = offsetOf(function->getBody()->getBeginLoc());
    std::string_view text = file_.source.buffer();
    std::size_t end = bodyBegin;
    while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
    Text out = copyWith(begin, end, headerSubstitutions(function, withDefaults));
    // What follows the header (`;`, the wrapper's body) must not land in a
    // line comment that ends it (`R f()  // NOLINT`).
    std::size_t lineStart = text.rfind('\n', end == 0 ? 0 : end - 1);
    lineStart = lineStart == std::string_view::npos || lineStart < begin ? begin : lineStart;
    if (text.substr(lineStart, end - lineStart).find("//") != std::string_view::npos) out += "\n";
    return out;
  }

  // The parameter list `(...)` as written, every parameter named, without
  // default arguments.
  Text parameterList(const FunctionDecl* function) {
    FunctionTypeLoc type = function->getFunctionTypeLoc();
    return copyWith(offsetOf(type.getLParenLoc()), offsetOf(type.getRParenLoc()) + 1,
                    headerSubstitutions(function, /*withDefaults=*/false));
  }

  // What header() changes in the declaration: a deduced return type spelled
  // out, names for unnamed parameters, and without `withDefaults` no default
  // (template) arguments.
  std::vector<Substitution> headerSubstitutions(const FunctionDecl* function, bool withDefaults) {
    std::size_t begin = declBegin(function);
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
    if (const FunctionTemplateDecl* templ = function->getDescribedFunctionTemplate())
      for (const NamedDecl* param : *templ->getTemplateParameters())
        templateParameterSubstitution(param, begin, withDefaults, subs);
    if (!withDefaults) {
      for (const ParmVarDecl* param : function->parameters()) {
        if (!param->hasDefaultArg() || param->hasUninstantiatedDefaultArg()) continue;
        SourceRange range = param->getDefaultArgRange();
        subs.push_back({defaultCut(range, begin), endOf(range.getEnd()), ""});
      }
    }
    return subs;
  }

  // Where a default argument's removal starts: the spaces before its `=`.
  std::size_t defaultCut(SourceRange range, std::size_t declarationBegin) const {
    std::string_view text = file_.source.buffer();
    std::size_t cut = offsetOf(range.getBegin());
    while (cut > declarationBegin && text[cut] != '=') --cut;
    while (cut > declarationBegin && std::isspace(static_cast<unsigned char>(text[cut - 1]))) --cut;
    return cut;
  }

  // The end of the token at `loc`, of the macro invocation it comes from, or
  // of the half of a `>>` that Clang split (`char_t<S>>>`: a location of its
  // own, whose range ends where that `>` does).
  std::size_t endOf(SourceLocation loc) const {
    if (!loc.isMacroID()) return tokenEnd(loc);
    CharSourceRange range = sm_.getExpansionRange(loc);
    return range.isTokenRange() ? tokenEnd(range.getEnd()) : offsetOf(range.getEnd());
  }

  // A template parameter in the header: without its default argument unless
  // `withDefaults` (only the first declaration has them), and named when it
  // has no name (the wrapper passes it on to the impl). A parameter from a
  // macro is neither (templateParametersCanBeRepeated).
  void templateParameterSubstitution(const NamedDecl* param, std::size_t declarationBegin,
                                     bool withDefaults, std::vector<Substitution>& subs) {
    if (param->getBeginLoc().isMacroID()) return;
    SourceRange range = defaultTemplateArgumentRange(param);
    bool named = !param->getName().empty();
    if (range.isValid() && !withDefaults) {
      std::string name = named ? "" : " " + templateParameterName(param);
      subs.push_back({defaultCut(range, declarationBegin), endOf(range.getEnd()), name});
    } else if (!named) {
      subs.push_back(unnamedParameterName(param));
    }
  }

  // The name of an unnamed template parameter, inserted where a name goes:
  // after `typename`, `class` or `...`, or before a non-type parameter's `=`.
  Substitution unnamedParameterName(const NamedDecl* param) {
    std::string name = templateParameterName(param);
    std::string_view text = file_.source.buffer();
    if (!isa<TemplateTypeParmDecl>(param)) {
      std::size_t at = offsetOf(param->getLocation());
      bool spaced = at > 0 && std::isspace(static_cast<unsigned char>(text[at - 1]));
      return {at, at, (spaced ? "" : " ") + name + " "};
    }
    std::size_t at = tokenEnd(param->getBeginLoc());
    std::size_t next = skipSpaces(at);
    if (text.substr(next, 3) == "...") at = next + 3;
    return {at, at, " " + name};
  }

  // The template parameter's name, or the one agc gives an unnamed one.
  std::string templateParameterName(const NamedDecl* param) {
    if (!param->getName().empty()) return param->getNameAsString();
    auto [it, inserted] = unnamedTemplateParameters_.try_emplace(param);
    if (inserted)
      it->second = file_.names.fresh(
          "agc_tparam_" + std::to_string(templateParameterIndex(param) + 1), file_.fileScopeNames);
    return it->second;
  }

  static unsigned templateParameterIndex(const NamedDecl* param) {
    if (const auto* type = dyn_cast<TemplateTypeParmDecl>(param)) return type->getIndex();
    if (const auto* value = dyn_cast<NonTypeTemplateParmDecl>(param)) return value->getIndex();
    return cast<TemplateTemplateParmDecl>(param)->getIndex();
  }

  static SourceRange defaultTemplateArgumentRange(const NamedDecl* param) {
    if (const auto* type = dyn_cast<TemplateTypeParmDecl>(param))
      return type->hasDefaultArgument() ? type->getDefaultArgument().getSourceRange()
                                        : SourceRange();
    if (const auto* value = dyn_cast<NonTypeTemplateParmDecl>(param))
      return value->hasDefaultArgument() ? value->getDefaultArgument().getSourceRange()
                                         : SourceRange();
    if (const auto* templ = dyn_cast<TemplateTemplateParmDecl>(param))
      return templ->hasDefaultArgument() ? templ->getDefaultArgument().getSourceRange()
                                         : SourceRange();
    return {};
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
  // `<T, Ns...>` for a function template, else empty.
  std::string templateArguments(const FunctionDecl* function) {
    const FunctionTemplateDecl* templ = function->getDescribedFunctionTemplate();
    if (!templ) return "";
    std::string args;
    for (const NamedDecl* param : *templ->getTemplateParameters())
      args += (args.empty() ? "" : ", ") + templateParameterName(param) +
              (param->isParameterPack() ? "..." : "");
    return "<" + args + ">";
  }

  // A name part for generated names: the identifier, or for an operator its
  // kind (`operator()` gives `operator_call`).
  static std::string namePart(const FunctionDecl* function) {
    if (function->getDeclName().isIdentifier()) return function->getNameAsString();
    switch (function->getOverloadedOperator()) {
#define OVERLOADED_OPERATOR(Name, Spelling, Token, Unary, Binary, MemberOnly) \
  case OO_##Name:                                                             \
    return llvm::StringRef("operator_" #Name).lower();
#include "clang/Basic/OperatorKinds.def"
      default:
        return "operator";
    }
  }

  // Whether other functions of the same scope share the function's name.
  static bool isOverloaded(const FunctionDecl* function) {
    const Decl* self = function->getDescribedFunctionTemplate();
    if (!self) self = function;
    for (const NamedDecl* found :
         function->getDeclContext()->getRedeclContext()->lookup(function->getDeclName()))
      if (found->getCanonicalDecl() != self->getCanonicalDecl()) return true;
    return false;
  }

  // The address MarkedFunction registers for `ag::function_of(&f)`; an
  // overloaded name is resolved by the type of `impl`, a pointer to the impl,
  // which has the wrapper's type.
  std::string addressOf(const FunctionDecl* function, const std::string& impl) {
    std::string address = "&" + function->getNameAsString() + templateArguments(function);
    if (!isOverloaded(function)) return address;
    return "static_cast<decltype(" + impl + ")>(" + address + ")";
  }

  std::string implPointer(const FunctionDecl* function, const std::string& implName) {
    return "&" + implName + templateArguments(function);
  }

  Text functionWrapper(const FunctionDecl* function, const Text& body) {
    std::string name = function->getNameAsString();
    std::string implName =
        file_.names.fresh("agc_impl_" + namePart(function), file_.fileScopeNames);
    std::string fnName = file_.names.fresh("agc_fn_" + namePart(function), file_.fileScopeNames);
    std::string registration = parameterNames(function);
    std::string call = "return " + fnName + "(" + forwardedArguments(function) + "); }";
    if (function->getDescribedFunctionTemplate()) {
      // A function template takes its default arguments in its first
      // declaration, and needs one MarkedFunction per instantiation: a
      // function-local static.
      Text out = header(function, /*withDefaults=*/true);
      out += "; ";
      out += impl(function, implName, body, /*addStatic=*/true);
      out += "\n";
      out += header(function, /*withDefaults=*/false);
      out += " { static ag::MarkedFunction<&" + implName + templateArguments(function) + "> " +
             fnName + "{" + addressOf(function, implPointer(function, implName)) + ", \"" + name +
             "\", " + registration + "}; " + call;
      return out;
    }
    Text out = header(function, /*withDefaults=*/false);
    out += "; ";
    out += impl(function, implName, body, /*addStatic=*/true);
    out += "\nstatic ag::MarkedFunction<&" + implName + "> " + fnName + "{" +
           addressOf(function, implPointer(function, implName)) + ", \"" + name + "\", " +
           registration + "};\n";
    out += header(function, /*withDefaults=*/true);
    out += " { " + call;
    return out;
  }

  // A static member function or a hidden friend: the impl is a static member
  // next to it, and the MarkedFunction a function-local static of the wrapper
  // (a class body holds no namespace-scope static).
  Text classScopeWrapper(const FunctionDecl* function, const Text& body) {
    std::string part = namePart(function);
    std::string implName = file_.names.fresh("agc_impl_" + part, file_.fileScopeNames);
    std::string fnName = file_.names.fresh("agc_fn_" + part, file_.fileScopeNames);
    const auto* method = dyn_cast<CXXMethodDecl>(function);
    bool member = method != nullptr;
    // A hidden friend is not found by ordinary lookup: its impl's address is
    // registered instead of its own.
    std::string implAddress = implPointer(function, implName);
    std::string address = member ? addressOf(function, implAddress) : implAddress;
    Text out = impl(function, implName, body, /*addStatic=*/true);
    out += "\n";
    out += header(function, /*withDefaults=*/true);
    out += " { static ag::MarkedFunction<&" + implName + templateArguments(function) + "> " +
           fnName + "{" + address + ", \"" +
           (member ? registeredName(method) : function->getNameAsString()) + "\", " +
           parameterNames(function) + "}; return " + fnName + "(" + forwardedArguments(function) +
           "); }";
    return out;
  }

  // The note with the one-line fix: the base class to add.
  void moduleBaseFixIt(const CXXRecordDecl* record) {
    std::string base = "public ag::Module";
    SourceLocation at;
    if (record->getNumBases() > 0) {
      at = Lexer::getLocForEndOfToken((record->bases_end() - 1)->getEndLoc(), 0, sm_,
                                      ast_.getLangOpts());
      base = ", " + base;
    } else {
      at = Lexer::getLocForEndOfToken(record->getLocation(), 0, sm_, ast_.getLangOpts());
      base = " : " + base;
    }
    file_.diags.note(record->getLocation(),
                     "each ag::Module instance has its own traces, keyed by its id: derive "
                     "from ag::Module")
        << FixItHint::CreateInsertion(at, base);
  }

  // Whether the method's class derives from ag::Module; if not, the error
  // with the fix-it.
  bool checkModuleBase(const CXXMethodDecl* method) {
    const CXXRecordDecl* record = method->getParent();
    if (derivesFromModule(record)) return true;
    file_.diags.error(
        method->getLocation(),
        ("class '" + record->getName() + "' must derive from ag::Module to have marked methods")
            .str());
    moduleBaseFixIt(record);
    return false;
  }

  static std::string registeredName(const CXXMethodDecl* method) {
    return method->getParent()->getNameAsString() + "::" + method->getNameAsString();
  }

  Text methodWrapper(const CXXMethodDecl* method, const Text& body) {
    if (!checkModuleBase(method)) return {};
    std::string className = method->getParent()->getNameAsString();
    std::string implName = file_.names.fresh("agc_impl_" + namePart(method), file_.fileScopeNames);
    std::string args = forwardedArguments(method);
    Text out = impl(method, implName, body, /*addStatic=*/false);
    out += "\n";
    out += header(method, /*withDefaults=*/true);
    out += " { return ag::call_method<&" + className + "::" + implName + ">(this, \"" +
           registeredName(method) + "\", " + parameterNames(method) +
           (args.empty() ? "" : ", " + args) + "); }";
    return out;
  }

  // A method defined outside its class, whose class may be in a header that
  // agc does not rewrite: no member is added. The definition stays the
  // wrapper, and the converted body becomes a lambda in it (which sees the
  // private members and captures `this`), traced per method and module by
  // ag::call_method; a static member's lambda captures nothing and is the
  // impl of a function-local MarkedFunction.
  Text outOfClassWrapper(const CXXMethodDecl* method, const Text& body) {
    bool isStatic = method->isStatic();
    if (!isStatic && !checkModuleBase(method)) return {};
    std::string part = namePart(method);
    std::string bodyName = file_.names.fresh("agc_body_" + part, file_.fileScopeNames);
    std::string args = forwardedArguments(method);
    Text out = header(method, /*withDefaults=*/true);
    out += isStatic ? " { constexpr auto " + bodyName + " = []" : " { auto " + bodyName + " = [&]";
    out += parameterList(method);
    out += " -> " + returnTypeText(method, file_.source, sm_, ast_.getPrintingPolicy()) + " ";
    out += body;
    out += "; ";
    if (!isStatic) {
      out += "return ag::call_method(this, \"" + registeredName(method) + "\", " +
             parameterNames(method) + ", " + bodyName + (args.empty() ? "" : ", " + args) + "); }";
      return out;
    }
    std::string fnName = file_.names.fresh("agc_fn_" + part, file_.fileScopeNames);
    out += "static ag::MarkedFunction<" + bodyName + "> " + fnName + "{" +
           addressOf(method, "+" + bodyName) + ", \"" + registeredName(method) + "\", " +
           parameterNames(method) + "}; return " + fnName + "(" + args + "); }";
    return out;
  }

  ASTContext& ast_;
  const SourceManager& sm_;
  FileContext file_;
  std::map<const ParmVarDecl*, std::string> unnamedParameters_;
  std::map<const NamedDecl*, std::string> unnamedTemplateParameters_;
};

// Whether the file already sees the runtime names the generated code uses
// (the wrappers' ag::MarkedFunction, the statement forms' ag::State; the forms
// themselves are in ag::api, which a lookup in ag does not see): a file that
// includes only <ag/annotate.h> does not.
bool declaresRuntimeApi(ASTContext& ast) {
  auto declares = [&](const DeclContext* scope, llvm::StringRef name) -> const DeclContext* {
    for (const NamedDecl* found : scope->lookup(&ast.Idents.get(name)))
      if (const auto* context = dyn_cast<DeclContext>(found)) return context;
    return nullptr;
  };
  const auto* ag = declares(ast.getTranslationUnitDecl(), "ag");
  if (!ag) return false;
  return !ag->lookup(&ast.Idents.get("MarkedFunction")).empty() &&
         !ag->lookup(&ast.Idents.get("State")).empty();
}

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
  if (!declaresRuntimeApi(ast)) whole += "#include <ag/ag.h>  // what the generated code calls\n";
  whole += source.copy(0, buffer.size());
  result.text = lineDirectives ? renderWithLineDirectives(whole, source) : whole.str();
  return result;
}

}  // namespace agc
