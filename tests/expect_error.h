#pragma once
// An exact check of an error's type and message, for the tests that pin PyTorch's wording.

#include <gtest/gtest.h>

#include <exception>
#include <string>

namespace locus::testing {

/// Fails unless `f()` throws exactly E with exactly `message`.
template <class E, class F>
void expect_error(F&& f, const std::string& message) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected: " << message;
  } catch (const E& e) {
    EXPECT_EQ(std::string(e.what()), message);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
  }
}

}  // namespace locus::testing
