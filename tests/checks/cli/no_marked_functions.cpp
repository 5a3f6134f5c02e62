// Real-world numeric C++ without marked functions: nothing to report, even
// with I/O, globals and random numbers.
#include <Eigen/Dense>

#include <cstdio>
#include <iostream>
#include <random>
#include <vector>

int calls = 0;

double mean(const std::vector<double>& values) {
  ++calls;
  double total = 0;
  for (double v : values) total += v;
  return values.empty() ? 0 : total / static_cast<double>(values.size());
}

int main() {
  std::mt19937 engine(7);
  std::normal_distribution<double> normal;
  std::vector<double> samples;
  for (int i = 0; i < 100; ++i) samples.push_back(normal(engine));
  Eigen::MatrixXd m = Eigen::MatrixXd::Random(3, 3);
  std::cout << mean(samples) << " " << (m * m.transpose()).trace() << "\n";
  std::printf("%d\n", calls);
}
