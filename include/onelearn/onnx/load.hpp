#pragma once
/**
 * \file
 * \brief Reading ONNX protobuf files, ModelProto or TensorProto, and TensorProto to Tensor.
 * \ingroup onnx
 *
 * \code
 * #include <onelearn/onnx/load.hpp>
 * ::onnx::ModelProto model = onelearn::onnx::read_model_proto("model.onnx");
 * onelearn::onnx::Tensor x = onelearn::onnx::read_tensor("test_data_set_0/input_0.pb");
 * onelearn::onnx::Tensor w =                           // the model's first initializer
 *     onelearn::onnx::tensor_from_proto(model.graph().initializer(0), "initializer 0");
 * std::cout << onelearn::onnx::shape_string(x.shape()) << ' '
 *           << onelearn::onnx::shape_string(w.shape()) << '\n';
 * \endcode
 *
 * Reading ONNX protobuf files: a ModelProto (model.onnx) or a TensorProto (the input_*.pb and
 * output_*.pb of ONNX's backend test data), and converting a TensorProto into a Tensor.
 *
 * Needs `ONNX_ML=1` and `ONNX_NAMESPACE=onnx` (as Debian's ONNXConfig.cmake defines them) and
 * links onnx_proto and protobuf: the target onelearn::onnx.
 *
 * Errors: a file that cannot be read is an `onelearn::io_error`; bytes that do not parse as the
 * message (truncated or malformed) or a tensor whose data does not match its dims are an
 * `onnx::format_error`; element types outside the executor's (onnx/tensor.hpp) are an
 * `onnx::unsupported_error` (kind data_type); tensors stored outside the file (data_location
 * EXTERNAL) are an `unsupported_error` (kind attribute).
 */

#include <onnx/onnx_pb.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

#include "onelearn/onnx/errors.hpp"
#include "onelearn/onnx/tensor.hpp"

namespace onelearn::onnx {

/// The name ONNX gives to a TensorProto element type ("float16", "uint8").
inline std::string onnx_type_name(std::int32_t elem_type) {
  switch (elem_type) {
    case ::onnx::TensorProto::FLOAT: return "float32";
    case ::onnx::TensorProto::UINT8: return "uint8";
    case ::onnx::TensorProto::INT8: return "int8";
    case ::onnx::TensorProto::UINT16: return "uint16";
    case ::onnx::TensorProto::INT16: return "int16";
    case ::onnx::TensorProto::INT32: return "int32";
    case ::onnx::TensorProto::INT64: return "int64";
    case ::onnx::TensorProto::STRING: return "string";
    case ::onnx::TensorProto::BOOL: return "bool";
    case ::onnx::TensorProto::FLOAT16: return "float16";
    case ::onnx::TensorProto::DOUBLE: return "float64";
    case ::onnx::TensorProto::UINT32: return "uint32";
    case ::onnx::TensorProto::UINT64: return "uint64";
    case ::onnx::TensorProto::COMPLEX64: return "complex64";
    case ::onnx::TensorProto::COMPLEX128: return "complex128";
    case ::onnx::TensorProto::BFLOAT16: return "bfloat16";
    case ::onnx::TensorProto::UNDEFINED: return "undefined";
    default: return "unknown element type " + std::to_string(elem_type);
  }
}

/// The executor's DataType for an ONNX element type; `where` prefixes the error for the others.
inline DataType data_type_from_onnx(std::int32_t elem_type, const std::string& where) {
  for (std::size_t i = 0; i < data_type_count; ++i) {
    if (onnx_code(static_cast<DataType>(i)) == elem_type) return static_cast<DataType>(i);
  }
  const std::string name = onnx_type_name(elem_type);
  throw unsupported_error(unsupported_kind::data_type, name,
                          where + ": unsupported data type " + name + " (supported: " +
                              types::all.names() + ")");
}

inline std::int32_t onnx_elem_type(DataType t) { return onnx_code(t); }

static_assert(onnx_code(DataType::float32) == ::onnx::TensorProto::FLOAT &&
              onnx_code(DataType::float64) == ::onnx::TensorProto::DOUBLE &&
              onnx_code(DataType::int64) == ::onnx::TensorProto::INT64 &&
              onnx_code(DataType::int32) == ::onnx::TensorProto::INT32 &&
              onnx_code(DataType::int8) == ::onnx::TensorProto::INT8 &&
              onnx_code(DataType::uint8) == ::onnx::TensorProto::UINT8 &&
              onnx_code(DataType::boolean) == ::onnx::TensorProto::BOOL,
              "ONELEARN_ONNX_ELEMENT_TYPES disagrees with onnx.proto's codes");

namespace detail {

template <tensor_scalar T, class Field>
Tensor tensor_from_fields(const ::onnx::TensorProto& proto, Shape shape, std::size_t n,
                          const Field& field, const std::string& where) {
  // The sizes are checked before anything is allocated: a corrupt file's dims may claim
  // terabytes while the file holds a few bytes.
  std::vector<T> values;
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    if (raw.size() != n * sizeof(T)) {
      throw format_error(where + ": raw_data holds " + std::to_string(raw.size()) +
                         " bytes, the shape " + shape_string(shape) + " of " +
                         to_string(data_type_of<T>()) + " needs " +
                         std::to_string(n * sizeof(T)));
    }
    // ONNX stores raw_data little-endian, as the hosts onelearn targets are (see core/io.hpp).
    values.resize(n);
    if constexpr (std::is_same_v<T, boolean>) {
      for (std::size_t i = 0; i < n; ++i) values[i] = raw[i] != 0;  // any nonzero byte is true
    } else if (n > 0) {
      std::memcpy(values.data(), raw.data(), raw.size());
    }
  } else {
    if (static_cast<std::size_t>(field.size()) != n) {
      throw format_error(where + ": holds " + std::to_string(field.size()) +
                         " values, the shape " + shape_string(shape) + " needs " +
                         std::to_string(n));
    }
    values.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const auto v = field.Get(static_cast<int>(i));
      if constexpr (std::is_same_v<T, boolean>) {
        values[i] = v != 0;
      } else {
        values[i] = static_cast<T>(v);
      }
    }
  }
  return Tensor(std::move(shape), std::move(values));
}

}  // namespace detail

/// Converts a TensorProto; `where` names it in errors (for example "initializer 'W'").
inline Tensor tensor_from_proto(const ::onnx::TensorProto& proto, const std::string& where) {
  if (proto.data_location() == ::onnx::TensorProto::EXTERNAL) {
    throw unsupported_error(unsupported_kind::attribute, "external data",
                            where + ": data stored in an external file is not supported");
  }
  if (proto.has_segment()) {
    throw unsupported_error(unsupported_kind::attribute, "segment",
                            where + ": segmented tensors are not supported");
  }
  const DataType type = data_type_from_onnx(proto.data_type(), where);
  Shape shape(proto.dims().begin(), proto.dims().end());
  std::size_t n = 0;
  try {
    n = element_count(shape);
  } catch (const shape_error& e) {
    throw format_error(where + ": " + e.what());
  }
  // The typed field each element type is stored in when there is no raw_data: the ones
  // narrower than 32 bits (and bool) live in int32_data.
  return dispatch(type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, float>) {
      return detail::tensor_from_fields<T>(proto, std::move(shape), n, proto.float_data(), where);
    } else if constexpr (std::is_same_v<T, double>) {
      return detail::tensor_from_fields<T>(proto, std::move(shape), n, proto.double_data(), where);
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
      return detail::tensor_from_fields<T>(proto, std::move(shape), n, proto.int64_data(), where);
    } else {
      return detail::tensor_from_fields<T>(proto, std::move(shape), n, proto.int32_data(), where);
    }
  });
}

/// The reverse conversion, with the data in raw_data.
inline ::onnx::TensorProto tensor_to_proto(const Tensor& t, const std::string& name = {}) {
  ::onnx::TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(onnx_elem_type(t.dtype()));
  for (const std::int64_t d : t.shape()) proto.add_dims(d);
  std::visit(
      [&](const auto& v) {
        proto.set_raw_data(std::string(reinterpret_cast<const char*>(v.data()),
                                       v.size() * sizeof(v[0])));
      },
      t.storage());
  return proto;
}

/// The whole content of a file.
inline std::string read_file_bytes(const std::filesystem::path& path) {
  const std::string where = path.string();
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw io_error(where + ": cannot open for reading: it is a directory");
  }
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) {
    throw io_error(where + ": cannot open for reading: " +
                   (errno != 0 ? std::generic_category().message(errno) : "unknown error"));
  }
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw io_error(where + ": read error");
  return bytes;
}

namespace detail {

template <class Message>
void parse_proto(Message& message, std::string_view bytes, const std::string& where,
                 const char* what) {
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw format_error(where + ": " + std::to_string(bytes.size()) +
                       " bytes is more than protobuf can parse (2 GiB)");
  }
  if (bytes.empty()) throw format_error(where + ": empty file, expected a " + what);
  if (!message.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    throw format_error(where + ": truncated or malformed " + what + " (" +
                       std::to_string(bytes.size()) + " bytes do not parse)");
  }
}

}  // namespace detail

/// Parses a serialized ModelProto. A model must have a graph and at least one opset import
/// (ONNX's own rule): bytes that parse by accident as something else are rejected.
inline ::onnx::ModelProto parse_model_proto(std::string_view bytes,
                                            const std::string& where = "onnx model") {
  ::onnx::ModelProto model;
  detail::parse_proto(model, bytes, where, "ModelProto");
  if (!model.has_graph()) throw format_error(where + ": ModelProto without a graph");
  if (model.ir_version() < 3 && model.opset_import_size() == 0) {
    throw format_error(where + ": ModelProto without ir_version and opset_import");
  }
  return model;
}

inline ::onnx::ModelProto read_model_proto(const std::filesystem::path& path) {
  return parse_model_proto(read_file_bytes(path), path.string());
}

inline Tensor read_tensor(const std::filesystem::path& path) {
  ::onnx::TensorProto proto;
  detail::parse_proto(proto, read_file_bytes(path), path.string(), "TensorProto");
  return tensor_from_proto(proto, path.string());
}

}  // namespace onelearn::onnx
