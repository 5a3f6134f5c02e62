// No marked function: agc must copy this file byte for byte.
#include <vector>

int sum(const std::vector<int>& values) {
  int total = 0;
  for (int v : values) total += v;   // trailing spaces and odd   spacing stay
  return total;
}
