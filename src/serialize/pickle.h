#pragma once
// The restricted unpickler of PyTorch checkpoints' data.pkl (pickle.cpp): the pickle machine for
// the opcodes torch.save writes, with an allow-list of globals in place of Python's imports, so
// no input can name code to run (Note [Allow-list unpickler]). It builds the object tree only;
// pytorch_checkpoint.cpp reads the storages and makes the tensors.

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "locus/dtype.h"

namespace locus::serialize {

/// One value of the pickle. The unpickler owns every object (Pickle::objects), so values refer to
/// each other by plain pointers and a pickle that builds a cycle frees like any other.
struct PickleObject {
  enum class Kind : uint8_t {
    None, Bool, Int, Float, String,
    Tuple, List, Dict,
    Global,   ///< an allowed callable or storage type: `text` is "module.name"
    Storage,  ///< a persistent id ('storage', type, key, location, numel)
    Tensor,   ///< the result of torch._utils._rebuild_tensor_v2 (or _rebuild_parameter)
  };
  Kind kind = Kind::None;
  int64_t integer = 0;  ///< Bool, Int; Storage: numel; Tensor: storage offset
  double real = 0;      ///< Float
  std::string text;     ///< String; Global: "module.name"; Storage: the key of data/<key>
  DType dtype = DType::Float32;        ///< Storage
  std::vector<PickleObject*> items;    ///< Tuple, List; Dict: key, value, key, value, ...
  const PickleObject* storage = nullptr;  ///< Tensor
  std::vector<int64_t> shape, stride;     ///< Tensor
};

/// An unpickled data.pkl: the top-level object and everything it owns.
struct Pickle {
  std::deque<PickleObject> objects;  // a deque: growing it keeps the pointers valid
  const PickleObject* root = nullptr;
};

/// Runs the pickle `bytes` on the allow-list machine. IOError "cannot load '<path>': data.pkl
/// ..." naming the byte offset and the problem: an opcode outside the list, a global outside the
/// allow-list ("refuses global 'os.system'"), a length past the end, a malformed argument, an
/// unbalanced stack or mark, a missing STOP.
Pickle unpickle(std::string_view bytes, const std::string& path);

}  // namespace locus::serialize
