#pragma once
// The examples' main: runs example() and turns a Locus error (LOCUS_DEVICE=cuda on a machine
// without a GPU, say) into a message and exit code 1 instead of std::terminate.

#include <iostream>

#include "locus/errors.h"

/// The example's body, defined by each example file.
void example();

int main() {
  try {
    example();
    return 0;
  } catch (const locus::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
