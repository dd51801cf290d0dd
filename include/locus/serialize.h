#pragma once
/// \file serialize.h
/// Saving and loading named tensors in the safetensors format (readable by other tools), and
/// loading PyTorch's own checkpoints (torch.save's .pt/.pth/.bin).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <optional>
#include <string>

#include "locus/ordered_dict.h"
#include "locus/tensor.h"

namespace locus {

/// Writes the tensors (from any device; copied to the host) to `path` in safetensors format, in
/// the dict's order (a state_dict's registration order; a std::map converts, sorted), with a
/// CRC-32 of header and data under two `__metadata__` keys, `locus.crc32` and
/// `locus.crc32.copy` (Note [Checksum under two keys]). The write is atomic: a temporary file
/// (`<path>.tmp.<pid>.<n>`; one a killed save left behind is removed by the next save to the
/// path) flushed to disk and renamed into place, so the path always holds the old file or the
/// new one, also when several processes save to it at once. IOError naming the path on failure;
/// ValueError for an undefined tensor or the name `__metadata__`.
void save(const OrderedDict<std::string, Tensor>& tensors, const std::string& path);
/// Reads a safetensors file or a PyTorch checkpoint onto `map_location` (cpu by default), told
/// apart by content, not by the file's name.
///
/// A PyTorch checkpoint is what `torch.save(model.state_dict(), path)` writes (the zip format,
/// torch >= 1.6), read as `torch.load(path, weights_only=True)` reads it: its pickle runs on an
/// allow-list unpickler that executes nothing, so a hostile file is an IOError naming the opcode
/// or global it refused ("refuses global 'os.system'"). The saved object must be a dict; nested
/// dicts flatten with "." (`{"model": sd, "epoch": 3}` gives "model.fc.weight"), values that are
/// not tensors (numbers, strings, lists) are skipped, and the names keep the pickle's order. Every
/// tensor arrives contiguous and owns its data: views (transposed, offset) are materialised and
/// tensors sharing one storage (tied weights) become equal copies. All ten Locus dtypes load;
/// big-endian files are byte-swapped. IOError for a truncated or damaged archive, a missing
/// storage, a view outside its storage or one that repeats its elements (a saved expand(): save
/// a clone), and for torch < 1.6's legacy format, with how to re-save it. Its storages pass
/// through host memory one at a time.
///
/// A safetensors file loads in the order of its header. Every tensor is allocated on `map_location` before any data is read, so a checkpoint
/// too large for the device is an OutOfMemoryError naming that device, and the data then streams
/// through a bounded host buffer (16 MiB at most), never a host copy of the checkpoint. IOError
/// naming the file and the problem for a path that is not a readable regular file, a truncated
/// file, a header that is not one well-formed JSON object, data offsets that overlap, leave holes
/// or do not cover the data exactly, sizes that overflow, unknown dtypes, or a checksum that does
/// not match. Sizes are checked against the file before anything is allocated.
OrderedDict<std::string, Tensor> load(const std::string& path, std::optional<Device> map_location = std::nullopt);

}  // namespace locus

LOCUS_API_END
