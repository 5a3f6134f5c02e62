// A test fixture with a folder of its own per test, made empty before the
// test and removed after it.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace ag_test {

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
    dir_ = std::filesystem::temp_directory_path() /
           ("ag_" + std::string(unit.current_test_info()->test_suite_name()) + "_" +
            std::to_string(unit.random_seed()) + "_" + unit.current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  std::filesystem::path dir_;
};

}  // namespace ag_test
