// JSON and SARIF 2.1.0 renderings of the findings. The SARIF log follows what
// GitHub code scanning reads: runs[0].tool.driver.{name, rules[].id,
// rules[].shortDescription}, results[].{ruleId, level, message.text,
// locations[].physicalLocation}, and relatedLocations for the notes.
#include "checks/CheckOutput.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string_view>

namespace agc {

namespace {

llvm::json::Object locationJson(const FindingLocation& location) {
  llvm::json::Object out{
      {"file", location.file}, {"line", location.line}, {"column", location.column}};
  if (location.endLine) {
    out["endLine"] = location.endLine;
    out["endColumn"] = location.endColumn;
  }
  return out;
}

std::string render(llvm::json::Value value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", value) << "\n";
  return text;
}

// A URI reference for a path: relative paths stay relative (GitHub resolves
// them against the checkout), absolute ones become file:// URIs.
std::string uriOf(const std::string& path) {
  std::string generic = path;
  std::replace(generic.begin(), generic.end(), '\\', '/');
  std::string out;
  for (unsigned char c : generic) {
    if (std::isalnum(c) ||
        std::string_view("/-._~").find(static_cast<char>(c)) != std::string_view::npos) {
      out += static_cast<char>(c);
    } else {
      char buffer[4];
      std::snprintf(buffer, sizeof buffer, "%%%02X", c);
      out += buffer;
    }
  }
  if (llvm::sys::path::is_absolute(path)) return "file://" + out;
  while (out.rfind("./", 0) == 0) out.erase(0, 2);
  return out;
}

llvm::json::Object regionJson(const FindingLocation& location) {
  llvm::json::Object region{{"startLine", std::max(location.line, 1u)}};
  if (location.column) region["startColumn"] = location.column;
  if (location.endLine >= location.line && location.endLine && location.endColumn) {
    region["endLine"] = location.endLine;
    region["endColumn"] = location.endColumn;
  }
  return region;
}

llvm::json::Object physicalLocation(const FindingLocation& location) {
  return llvm::json::Object{{"artifactLocation", llvm::json::Object{{"uri", uriOf(location.file)}}},
                            {"region", regionJson(location)}};
}

}  // namespace

std::string findingsToJson(const std::vector<Finding>& findings) {
  llvm::json::Array array;
  for (const Finding& finding : findings) {
    llvm::json::Object object{
        {"check", finding.check}, {"level", finding.level}, {"message", finding.message}};
    object["location"] = locationJson(finding.location);
    llvm::json::Array notes;
    for (const FindingNote& note : finding.notes)
      notes.push_back(
          llvm::json::Object{{"message", note.message}, {"location", locationJson(note.location)}});
    object["notes"] = std::move(notes);
    llvm::json::Array fixes;
    for (const FindingFix& fix : finding.fixes)
      fixes.push_back(llvm::json::Object{{"location", locationJson(fix.location)},
                                         {"replacement", fix.replacement}});
    object["fixes"] = std::move(fixes);
    array.push_back(std::move(object));
  }
  return render(llvm::json::Object{{"version", 1}, {"findings", std::move(array)}});
}

std::string findingsToSarif(const std::vector<Finding>& findings, const std::string& toolVersion) {
  std::vector<CheckInfo> checks = registeredChecks();
  std::map<std::string, std::size_t> ruleIndex;
  llvm::json::Array rules;
  for (const CheckInfo& check : checks) {
    ruleIndex[check.name] = rules.size();
    rules.push_back(llvm::json::Object{
        {"id", check.name},
        {"name", check.name},
        {"shortDescription", llvm::json::Object{{"text", check.summary}}},
        {"help", llvm::json::Object{{"text", "see docs/checks.md, section " + check.name}}}});
  }
  llvm::json::Array results;
  for (const Finding& finding : findings) {
    llvm::json::Object result{
        {"ruleId", finding.check},
        {"level", finding.level == "error" ? "error" : "warning"},
        {"message", llvm::json::Object{{"text", finding.message}}},
        {"locations", llvm::json::Array{llvm::json::Object{
                          {"physicalLocation", physicalLocation(finding.location)}}}}};
    if (auto index = ruleIndex.find(finding.check); index != ruleIndex.end())
      result["ruleIndex"] = static_cast<int64_t>(index->second);
    if (!finding.notes.empty()) {
      llvm::json::Array related;
      int id = 0;
      for (const FindingNote& note : finding.notes) {
        if (note.location.file.empty()) continue;
        related.push_back(
            llvm::json::Object{{"id", id++},
                               {"message", llvm::json::Object{{"text", note.message}}},
                               {"physicalLocation", physicalLocation(note.location)}});
      }
      result["relatedLocations"] = std::move(related);
    }
    if (!finding.fixes.empty()) {
      // One fix per file touched; SARIF regions need an end for a deletion.
      llvm::json::Array changes;
      for (const FindingFix& fix : finding.fixes) {
        llvm::json::Object deleted = regionJson(fix.location);
        if (!deleted.get("endColumn")) {
          deleted["endLine"] = fix.location.line;
          deleted["endColumn"] = fix.location.column;
        }
        changes.push_back(llvm::json::Object{
            {"artifactLocation", llvm::json::Object{{"uri", uriOf(fix.location.file)}}},
            {"replacements",
             llvm::json::Array{llvm::json::Object{
                 {"deletedRegion", std::move(deleted)},
                 {"insertedContent", llvm::json::Object{{"text", fix.replacement}}}}}}});
      }
      result["fixes"] = llvm::json::Array{llvm::json::Object{
          {"description", llvm::json::Object{{"text", "suggested by " + finding.check}}},
          {"artifactChanges", std::move(changes)}}};
    }
    results.push_back(std::move(result));
  }
  llvm::json::Object driver{
      {"name", "agc"}, {"semanticVersion", toolVersion}, {"rules", std::move(rules)}};
  llvm::json::Object log{{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
                         {"version", "2.1.0"},
                         {"runs", llvm::json::Array{llvm::json::Object{
                                      {"tool", llvm::json::Object{{"driver", std::move(driver)}}},
                                      {"results", std::move(results)}}}}};
  return render(std::move(log));
}

}  // namespace agc
