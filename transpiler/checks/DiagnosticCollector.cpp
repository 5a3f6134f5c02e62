#include "checks/DiagnosticCollector.h"

#include "checks/Nolint.h"

#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

namespace agc {

using namespace clang;

namespace {

// Whether a NOLINT comment in the file of `loc` suppresses `check` there.
bool isSuppressed(const SourceManager& sm, SourceLocation loc, const std::string& check) {
  if (loc.isInvalid()) return false;
  SourceLocation fileLoc = sm.getExpansionLoc(loc);
  bool invalid = false;
  llvm::StringRef text = sm.getBufferData(sm.getFileID(fileLoc), &invalid);
  return !invalid && isSuppressedByNolint(text, sm.getFileOffset(fileLoc), check);
}

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

}  // namespace

void DiagnosticCollector::HandleDiagnostic(DiagnosticsEngine::Level level, const Diagnostic& info) {
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
  std::string key = std::to_string(info.getLocation().getRawEncoding()) + " " + message.str().str();
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

void DiagnosticCollector::forward(DiagnosticsEngine::Level level, const Diagnostic& info) {
  DiagnosticConsumer::HandleDiagnostic(level, info);
  next_.HandleDiagnostic(level, info);
}

void DiagnosticCollector::addNote(const Diagnostic& info) {
  llvm::SmallString<128> message;
  info.FormatDiagnostic(message);
  FindingNote note{message.str().str(), locationOf(info.getSourceManager(), info.getLocation())};
  if (!info.getRanges().empty())
    setEnd(note.location, info.getSourceManager(), lang_, info.getRange(0));
  findings_.back().notes.push_back(std::move(note));
  addFixes(info);
}

void DiagnosticCollector::addFixes(const Diagnostic& info) {
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

}  // namespace agc
