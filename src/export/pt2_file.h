#pragma once
// A .pt2 file as torch.export.save writes it (pt2_file.cpp): the program and its stored tensors.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "locus/tensor.h"
#include "src/export/program.h"

namespace locus::exported {

/// What a .pt2 file holds, read and checked.
struct Pt2Contents {
  Program program;
  /// The weights by state_dict name, in the file's order; names that share a stored blob (tied
  /// weights) share one tensor.
  std::vector<std::pair<std::string, Tensor>> weights;
  /// The tensor constants by name, likewise.
  std::vector<std::pair<std::string, Tensor>> constants;
};

/// Reads `path` on the CPU. IOError "cannot load '<path>': <problem>" for anything malformed
/// or outside what Locus reads (Note [pt2 archives]).
Pt2Contents read_pt2(const std::string& path);

}  // namespace locus::exported
