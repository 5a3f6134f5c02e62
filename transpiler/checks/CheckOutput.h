// What `agc check` reports, without Clang types: the options, the findings,
// and their JSON and SARIF 2.1.0 renderings. Included by driver/Driver.h,
// which tools/agc/main.cpp includes.
#pragma once

#include <string>
#include <vector>

namespace agc {

struct CheckOptions {
  bool enabled = true;
  // clang-tidy globs, applied after "ag-*" and the .agc.yaml `Checks`.
  std::string checks;
  // Every warning becomes an error (otherwise .agc.yaml `WarningsAsErrors`).
  bool werror = false;
  // Print findings as Clang does (stderr); otherwise only collect them.
  bool printText = true;
};

struct FindingLocation {
  std::string file;  // as Clang prints it (presumed name, #line aware)
  unsigned line = 0, column = 0;
  unsigned endLine = 0, endColumn = 0;  // exclusive end column; 0 when unknown
};

struct FindingNote {
  std::string message;
  FindingLocation location;
};

struct FindingFix {
  FindingLocation location;  // the range replaced (empty for an insertion)
  std::string replacement;
};

struct Finding {
  std::string check;    // "ag-side-effect"
  std::string level;    // "warning" or "error" (after --werror)
  std::string message;  // without the " [ag-name]" suffix
  FindingLocation location;
  std::vector<FindingNote> notes;
  std::vector<FindingFix> fixes;  // on the finding or its notes
};

struct CheckInfo {
  std::string name;
  std::string summary;
};

// Every registered check, in registry order.
std::vector<CheckInfo> registeredChecks();

// {"version": 1, "findings": [...]}: one object per finding.
std::string findingsToJson(const std::vector<Finding>& findings);
// A SARIF 2.1.0 log with one run of the tool "agc" (rules: every check).
std::string findingsToSarif(const std::vector<Finding>& findings, const std::string& toolVersion);

}  // namespace agc
