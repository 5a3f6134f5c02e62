// A C++ type's name as its source spells it ("std::tuple<ag::Tensor,
// ag::Tensor>"), for messages. Internal.
#pragma once

#include <string>
#include <typeinfo>

namespace ag::detail {

std::string type_name(const std::type_info& type);

}  // namespace ag::detail
