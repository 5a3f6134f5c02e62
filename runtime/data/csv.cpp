// ag::data::CsvDataset: rows of a CSV file (RFC 4180 quoting) as scalars of
// the column types. Each pass reads the file anew, a record at a time.
#include <cerrno>
#include <cstdlib>
#include <fstream>

#include "data/node.h"

namespace ag::data::detail {

namespace {

struct CsvRecord {
  std::vector<std::string> fields;
  int64_t line = 0;  // where the record starts
};

// Reads the next record: a line, or more while a quoted field is open.
std::optional<CsvRecord> read_record(std::istream& in, int64_t& line, char delimiter,
                                     const std::string& path) {
  std::string text;
  if (!std::getline(in, text)) return std::nullopt;
  CsvRecord record;
  record.line = ++line;
  std::string field;
  bool quoted = false;
  for (size_t i = 0;; ++i) {
    if (i == text.size()) {
      if (!quoted) break;
      // A quoted field goes on to the next line.
      field += '\n';
      if (!std::getline(in, text))
        throw InvalidArgumentError(path + ":" + std::to_string(record.line) +
                                   ": a quoted field is not closed before the end of the file");
      ++line;
      i = size_t(-1);
      continue;
    }
    char c = text[i];
    if (quoted) {
      if (c != '"') {
        field += c;
      } else if (i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else {
        quoted = false;
      }
    } else if (c == '"' && field.empty()) {
      quoted = true;
    } else if (c == delimiter) {
      record.fields.push_back(std::move(field));
      field.clear();
    } else if (c != '\r' || i + 1 != text.size()) {
      field += c;
    }
  }
  record.fields.push_back(std::move(field));
  return record;
}

Tensor parse_field(const std::string& field, DType dtype, const std::string& where_field) {
  auto fail = [&]() -> Tensor {
    throw InvalidArgumentError(where_field + " \"" + field + "\" is not a valid " +
                               std::string(dtype_name(dtype)));
  };
  if (field.empty()) fail();
  char* end = nullptr;
  errno = 0;
  switch (dtype) {
    case DType::float32:
    case DType::float64: {
      double v = std::strtod(field.c_str(), &end);
      if (*end || errno) fail();
      return dtype == DType::float32 ? Tensor(float(v)) : constant(v, DType::float64);
    }
    case DType::int32:
    case DType::int64: {
      long long v = std::strtoll(field.c_str(), &end, 10);
      if (*end || errno) fail();
      if (dtype == DType::int32) {
        if (v < INT32_MIN || v > INT32_MAX) fail();
        return Tensor(int32_t(v));
      }
      return Tensor(int64_t(v));
    }
    case DType::bool_:
      if (field == "true" || field == "1") return Tensor(true);
      if (field == "false" || field == "0") return Tensor(false);
      return fail();
  }
  return fail();
}

}  // namespace

}  // namespace ag::data::detail

namespace ag::data::api {

Dataset<std::vector<Tensor>> CsvDataset(const std::string& path, std::vector<DType> column_types,
                                        CsvOptions options, CallSite site) {
  using namespace detail;
  if (!std::ifstream(path))
    throw NotFoundError(where(site) + "CsvDataset: cannot open '" + path + "'");
  if (column_types.empty()) throw InvalidArgumentError(where(site) + "CsvDataset: no column types");
  Specs spec;
  for (DType t : column_types) spec.push_back(TensorSpec(Shape(), t));
  auto node = make_node(
      spec,
      [path, column_types, options] {
        auto in = std::make_shared<std::ifstream>(path);
        if (!*in) throw NotFoundError("CsvDataset: cannot open '" + path + "'");
        return make_pass([in, path, column_types, options, line = int64_t{0},
                          started = false]() mutable -> std::optional<Flat> {
          if (!started && options.header) read_record(*in, line, options.delimiter, path);
          started = true;
          std::optional<CsvRecord> record = read_record(*in, line, options.delimiter, path);
          // A blank last line ends the file.
          while (record && record->fields.size() == 1 && record->fields[0].empty())
            record = read_record(*in, line, options.delimiter, path);
          if (!record) return std::nullopt;
          std::string at = path + ":" + std::to_string(record->line) + ": ";
          if (record->fields.size() != column_types.size())
            throw InvalidArgumentError(at + "expected " + std::to_string(column_types.size()) +
                                       " fields, found " + std::to_string(record->fields.size()));
          Flat out;
          for (size_t i = 0; i < column_types.size(); ++i)
            out.push_back(parse_field(record->fields[i], column_types[i],
                                      at + "field " + std::to_string(i + 1)));
          return out;
        });
      },
      {"CsvDataset('" + path + "')"});
  return Dataset<std::vector<Tensor>>(node);
}

}  // namespace ag::data::api
