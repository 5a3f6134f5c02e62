// Record files, framed as TFRecord frames them: a little-endian uint64
// length, the masked CRC-32C of those 8 bytes, the data, and the masked
// CRC-32C of the data. RecordWriter::write stores an element as its
// tensors' dtype, shape and values; RecordDataset reads them back.
#include <array>
#include <cstring>
#include <fstream>

#include "data/node.h"

namespace ag::data {

namespace {

// CRC-32C (Castagnoli), reflected polynomial 0x82F63B78, table-driven.
uint32_t crc32c(const char* data, size_t size) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i) crc = table[(crc ^ uint8_t(data[i])) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

// TFRecord masks its checksums, so that a CRC of data holding CRCs is not
// trivially zero.
uint32_t masked_crc(const char* data, size_t size) {
  uint32_t crc = crc32c(data, size);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

template <class T>
void put(std::string& out, T value) {
  char bytes[sizeof(T)];
  for (size_t i = 0; i < sizeof(T); ++i) bytes[i] = char((uint64_t(value) >> (8 * i)) & 0xFF);
  out.append(bytes, sizeof(T));
}

template <class T>
T get(const char* bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= uint64_t(uint8_t(bytes[i])) << (8 * i);
  return T(v);
}

std::string encode(const std::vector<Tensor>& element) {
  std::string out;
  put(out, uint32_t(element.size()));
  for (const Tensor& t : element) {
    if (t.dtype() == DType::string)
      throw UnimplementedError("record files do not store string tensors");
    put(out, uint8_t(t.dtype()));
    put(out, uint8_t(t.rank()));
    for (int64_t d : t.shape().dims()) put(out, uint64_t(d));
    out.append(static_cast<const char*>(t.raw_data()),
               size_t(t.num_elements()) * dtype_size(t.dtype()));
  }
  return out;
}

// Reads exactly `size` bytes; false at a clean end of file (nothing read).
bool read_exactly(std::istream& in, char* out, size_t size, const std::string& path,
                  uint64_t offset) {
  in.read(out, std::streamsize(size));
  size_t got = size_t(in.gcount());
  if (got == size) return true;
  if (got == 0 && size != 0) return false;
  throw DataLossError(path + ": truncated record at offset " + std::to_string(offset));
}

// Decodes one element; `damaged` names the record for errors.
detail::Flat decode(const std::string& data, const detail::Specs& spec,
                    const std::string& damaged) {
  size_t pos = 0;
  auto need = [&](size_t n) {
    if (data.size() - pos < n) throw DataLossError(damaged + ": the element is cut short");
  };
  need(4);
  uint32_t count = get<uint32_t>(data.data());
  pos += 4;
  if (count != spec.size())
    throw InvalidArgumentError(damaged + ": the element has " + std::to_string(count) +
                               " tensors, the element spec " + std::to_string(spec.size()));
  detail::Flat out;
  for (uint32_t i = 0; i < count; ++i) {
    need(2);
    auto dtype = DType(uint8_t(data[pos]));
    if (uint8_t(dtype) >= kNumDTypes || dtype == DType::string)
      throw DataLossError(damaged + ": tensor " + std::to_string(i) + " has no stored dtype");
    int rank = uint8_t(data[pos + 1]);
    pos += 2;
    need(8 * size_t(rank));
    std::vector<int64_t> dims;
    for (int r = 0; r < rank; ++r, pos += 8) dims.push_back(get<int64_t>(data.data() + pos));
    Tensor t = empty(Shape(std::span<const int64_t>(dims)), dtype);
    if (!t.spec().is_compatible_with(spec[i]))
      throw InvalidArgumentError(damaged + ": tensor " + std::to_string(i) + " is " +
                                 t.spec().to_string() + ", the element spec says " +
                                 spec[i].to_string());
    size_t bytes = size_t(t.num_elements()) * dtype_size(dtype);
    need(bytes);
    std::memcpy(t.raw_mutable_data(), data.data() + pos, bytes);
    pos += bytes;
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

struct RecordWriter::File {
  std::ofstream out;
  std::string path;
};

RecordWriter::RecordWriter(const std::string& path, CallSite site)
    : file_(std::make_unique<File>()) {
  file_->out.open(path, std::ios::binary | std::ios::trunc);
  file_->path = path;
  if (!file_->out)
    throw NotFoundError(detail::where(site) + "RecordWriter: cannot create '" + path + "'");
}

RecordWriter::~RecordWriter() = default;

void RecordWriter::write_bytes(const std::string& bytes) {
  std::string frame;
  put(frame, uint64_t(bytes.size()));
  put(frame, masked_crc(frame.data(), 8));
  frame += bytes;
  put(frame, masked_crc(bytes.data(), bytes.size()));
  file_->out.write(frame.data(), std::streamsize(frame.size()));
  if (!file_->out) throw DataLossError("RecordWriter: cannot write to '" + file_->path + "'");
}

void RecordWriter::write(const std::vector<Tensor>& element) {
  write_bytes(encode(element));
}

void RecordWriter::close() {
  file_->out.close();
}

namespace api {

Dataset<std::vector<Tensor>> RecordDataset(const std::string& path,
                                           std::vector<TensorSpec> element_spec, CallSite site) {
  if (!std::ifstream(path))
    throw NotFoundError(detail::where(site) + "RecordDataset: cannot open '" + path + "'");
  auto node = detail::make_node(
      element_spec,
      [path, element_spec] {
        auto in = std::make_shared<std::ifstream>(path, std::ios::binary | std::ios::ate);
        if (!*in) throw NotFoundError("RecordDataset: cannot open '" + path + "'");
        const auto file_size = uint64_t(in->tellg());
        in->seekg(0);
        return detail::make_pass([in, path, element_spec, file_size,
                                  offset = uint64_t{0}]() mutable -> std::optional<detail::Flat> {
          const std::string damaged =
              path + ": corrupted record at offset " + std::to_string(offset);
          char header[12];
          if (!read_exactly(*in, header, sizeof header, path, offset)) return std::nullopt;
          if (get<uint32_t>(header + 8) != masked_crc(header, 8))
            throw DataLossError(damaged + ": the length's checksum does not match");
          uint64_t length = get<uint64_t>(header);
          if (length > file_size - offset - sizeof header)
            throw DataLossError(damaged + ": its length " + std::to_string(length) +
                                " runs past the end of the file");
          std::string data(size_t(length), '\0');
          char footer[4];
          if (!read_exactly(*in, data.data(), data.size(), path, offset) ||
              !read_exactly(*in, footer, sizeof footer, path, offset))
            throw DataLossError(path + ": truncated record at offset " + std::to_string(offset));
          if (get<uint32_t>(footer) != masked_crc(data.data(), data.size()))
            throw DataLossError(damaged + ": the data's checksum does not match");
          offset += sizeof header + length + sizeof footer;
          return decode(data, element_spec, damaged);
        });
      },
      {"RecordDataset('" + path + "')"});
  return Dataset<std::vector<Tensor>>(node);
}

}  // namespace api

}  // namespace ag::data
