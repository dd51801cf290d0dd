#pragma once
// PyTorch's checkpoint format, as torch.save writes it (pytorch_checkpoint.cpp); locus::load
// (safetensors.cpp) dispatches here by the file's first bytes.

#include <cstddef>
#include <optional>
#include <string>

#include "locus/ordered_dict.h"
#include "locus/tensor.h"

namespace locus::serialize {

/// Whether a file starting with the `n` bytes at `head` (16 suffice) is a PyTorch checkpoint: a
/// zip archive (torch >= 1.6) or the legacy format's pickled magic number (refused with advice).
bool is_pytorch_checkpoint(const unsigned char* head, size_t n);

/// The tensors of the torch.save checkpoint at `path`, materialised contiguous on `map_location`
/// (cpu by default), under the names of its dict flattened with "." (Note [PyTorch checkpoints]).
/// IOError "cannot load '<path>': <problem>" for anything malformed or outside what it reads.
OrderedDict<std::string, Tensor> load_pytorch_checkpoint(const std::string& path, std::optional<Device> map_location);

}  // namespace locus::serialize
