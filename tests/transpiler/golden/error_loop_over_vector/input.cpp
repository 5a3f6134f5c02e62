#include <ag/ag.h>

#include <vector>

AG_FUNCTION ag::Tensor first_positive(std::vector<ag::Tensor> values) {
  ag::Tensor found = 0;
  for (const ag::Tensor& v : values) {
    if (v > 0) {
      found = v;
      break;
    }
  }
  return found;
}
