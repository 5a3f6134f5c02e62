// ag::data::CsvDataset: rows of a CSV file (RFC 4180 quoting) as scalars of
// the column types, any dtype (a string column keeps the field's bytes).
// Each pass reads the file anew, a record at a time.
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "ag/strings.h"
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

[[noreturn]] void bad_field(const std::string& field, DType dtype, const std::string& where_field,
                            const std::string& why) {
  throw InvalidArgumentError(where_field + " \"" + field + "\" " + why + " " +
                             std::string(dtype_name(dtype)));
}

// A scalar of `dtype` holding the bits of `v` (a storage dtype's own type).
template <class T>
Tensor scalar_of(DType dtype, T v) {
  Tensor t = ag::empty(Shape(), dtype);
  std::memcpy(t.raw_mutable_data(), &v, sizeof v);
  return t;
}

// The whole of `field` as an integer of type T (strtoll's syntax: leading
// spaces, a sign), or an error saying why not: not a number, or out of T's
// range (a negative number for an unsigned T).
template <class T>
T parse_integer(const std::string& field, DType dtype, const std::string& where_field) {
  const size_t first = field.find_first_not_of(" \t\n\v\f\r");
  const bool negative = first != std::string::npos && field[first] == '-';
  char* end = nullptr;
  errno = 0;
  bool in_range = false;
  T value{};
  if constexpr (std::is_signed_v<T>) {
    const long long v = std::strtoll(field.c_str(), &end, 10);
    in_range =
        errno != ERANGE && v >= std::numeric_limits<T>::min() && v <= std::numeric_limits<T>::max();
    value = T(v);
  } else if (negative) {
    in_range = std::strtoll(field.c_str(), &end, 10) == 0;  // "-0"
  } else {
    const unsigned long long v = std::strtoull(field.c_str(), &end, 10);
    in_range = errno != ERANGE && v <= std::numeric_limits<T>::max();
    value = T(v);
  }
  if (end == field.c_str() || *end) bad_field(field, dtype, where_field, "is not a valid");
  if (!in_range) {
    bad_field(field, dtype, where_field,
              "is out of the range [" + std::to_string(std::numeric_limits<T>::min()) + ", " +
                  std::to_string(std::numeric_limits<T>::max()) + "] of");
  }
  return value;
}

// The whole of `field` as a float of `dtype`: a finite value that the dtype
// cannot hold (rounds to infinity) is out of range; "inf" and "nan" are not.
Tensor parse_floating(const std::string& field, DType dtype, const std::string& where_field) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(field.c_str(), &end);
  const bool overflow = errno == ERANGE && std::isinf(v);
  if (end == field.c_str() || *end) bad_field(field, dtype, where_field, "is not a valid");
  Tensor out;
  double stored = 0;
  if (dtype == DType::float64) {
    out = constant(v, DType::float64);
    stored = v;
  } else if (dtype == DType::float32) {
    out = Tensor(float(v));
    stored = double(float(v));
  } else if (dtype == DType::float16) {
    const float16_t h(v);
    out = scalar_of(dtype, h);
    stored = float(h);
  } else {
    const bfloat16_t h(v);
    out = scalar_of(dtype, h);
    stored = float(h);
  }
  if (std::isinf(stored) && (overflow || !std::isinf(v)))
    bad_field(field, dtype, where_field, "is out of the range of");
  return out;
}

Tensor parse_field(const std::string& field, DType dtype, const std::string& where_field) {
  if (dtype == DType::string) return constant(std::vector<std::string>{field}, Shape());
  if (field.empty()) bad_field(field, dtype, where_field, "is not a valid");
  switch (dtype) {
    case DType::float32:
    case DType::float64:
    case DType::float16:
    case DType::bfloat16:
      return parse_floating(field, dtype, where_field);
    case DType::int32:
      return Tensor(parse_integer<int32_t>(field, dtype, where_field));
    case DType::int64:
      return Tensor(parse_integer<int64_t>(field, dtype, where_field));
    case DType::int8:
      return scalar_of(dtype, parse_integer<int8_t>(field, dtype, where_field));
    case DType::int16:
      return scalar_of(dtype, parse_integer<int16_t>(field, dtype, where_field));
    case DType::uint8:
      return scalar_of(dtype, parse_integer<uint8_t>(field, dtype, where_field));
    case DType::uint16:
      return scalar_of(dtype, parse_integer<uint16_t>(field, dtype, where_field));
    case DType::uint32:
      return scalar_of(dtype, parse_integer<uint32_t>(field, dtype, where_field));
    case DType::uint64:
      return scalar_of(dtype, parse_integer<uint64_t>(field, dtype, where_field));
    case DType::bool_:
      if (field == "true" || field == "1") return Tensor(true);
      if (field == "false" || field == "0") return Tensor(false);
      bad_field(field, dtype, where_field, "is not a valid");
    case DType::string:
      break;
  }
  throw InternalError(where_field + ": no parser for dtype " + std::to_string(int(dtype)));
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
  for (DType t : column_types) {
    if (uint8_t(t) >= kNumDTypes)
      throw InvalidArgumentError(where(site) + "CsvDataset: column type " + std::to_string(int(t)) +
                                 " is not a dtype");
  }
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
