// The allow-list unpickler of PyTorch checkpoints' data.pkl.
//
// Note [Allow-list unpickler]
// A pickle is a program for Python's pickle machine: most opcodes build values on a stack, but
// GLOBAL imports any `module.name` and REDUCE calls it, so loading an untrusted pickle can run
// anything (`os.system`). torch.load(weights_only=True) answers with an unpickler that resolves
// only a few globals; this is the same idea, written for Locus: the machine knows the opcodes
// torch.save writes (protocol 2: containers, strings, numbers, the memo, GLOBAL, REDUCE, BUILD,
// BINPERSID) and refuses every other opcode by name. GLOBAL resolves only collections.OrderedDict,
// torch._utils' tensor and parameter rebuilders and the torch.<Type>Storage of the ten dtypes
// Locus has, and REDUCE "calls" them by building the value they stand for (an empty dict, a tensor
// description); nothing from the file is ever executed. Every length and count is checked against
// the bytes that remain before it is used, the machine is a loop with explicit stacks (no
// recursion), and every object lives in the Pickle's arena, so a malformed pickle is an IOError
// naming the byte and the problem, never a crash or a leak. Debian has no C++ pickle library to
// use instead; Python's own unpickler (through an embedded interpreter) would bring the problem
// back.

#include "src/serialize/pickle.h"

#include <cstring>
#include <unordered_map>
#include <utility>

#include "locus/errors.h"

namespace locus::serialize {
namespace {

using Object = PickleObject;
using Kind = PickleObject::Kind;

// The torch.<Type>Storage globals of the dtypes Locus has; torch 2 still names typed storages in
// the persistent ids it writes.
struct StorageType {
  const char* name;
  DType dtype;
};
constexpr StorageType kStorageTypes[] = {
    {"FloatStorage", DType::Float32}, {"DoubleStorage", DType::Float64}, {"HalfStorage", DType::Float16},
    {"BFloat16Storage", DType::BFloat16}, {"LongStorage", DType::Int64}, {"IntStorage", DType::Int32},
    {"ShortStorage", DType::Int16}, {"CharStorage", DType::Int8}, {"ByteStorage", DType::UInt8},
    {"BoolStorage", DType::Bool}};

constexpr const char* kOrderedDict = "collections.OrderedDict";
constexpr const char* kRebuildTensor = "torch._utils._rebuild_tensor_v2";
constexpr const char* kRebuildParameter = "torch._utils._rebuild_parameter";
constexpr const char* kRebuildParameterWithState = "torch._utils._rebuild_parameter_with_state";

constexpr size_t kMaxDims = 64;

// The names of opcodes outside the list that a hostile or foreign pickle is likely to hold, so the
// error says which one it met.
const char* refused_opcode_name(unsigned char op) {
  switch (op) {
    case 'i': return "INST";
    case 'o': return "OBJ";
    case 0x81: return "NEWOBJ";
    case 0x92: return "NEWOBJ_EX";
    case 0x93: return "STACK_GLOBAL";
    case 'P': return "PERSID";
    case 0x82: case 0x83: case 0x84: return "EXT";
    case 'I': return "INT";
    case 'L': return "LONG";
    case 0x8b: return "LONG4";
    case 'F': return "FLOAT";
    case 'S': return "STRING";
    case 'V': return "UNICODE";
    case 'p': return "PUT";
    case 'g': return "GET";
    case '0': return "POP";
    case '1': return "POP_MARK";
    case '2': return "DUP";
    case 'B': case 'C': case 0x8e: return "BINBYTES";
    case 0x8f: return "EMPTY_SET";
    case 0x90: return "ADDITEMS";
    case 0x91: return "FROZENSET";
    case 0x96: return "BYTEARRAY8";
    case 0x97: return "NEXT_BUFFER";
    case 0x98: return "READONLY_BUFFER";
    default: return nullptr;
  }
}

std::string hex_byte(unsigned char b) {
  static const char* digits = "0123456789abcdef";
  return std::string("0x") + digits[b >> 4] + digits[b & 15];
}

class Machine {
 public:
  Machine(std::string_view bytes, const std::string& path) : bytes_(bytes), path_(path) {}

  Pickle run() {
    while (true) {
      op_at_ = pos_;
      const unsigned char op = *take(1);
      if (step(op)) break;
    }
    if (!marks_.empty()) fail("STOP inside an unclosed MARK");
    if (stack_.size() != 1) fail("STOP with " + std::to_string(stack_.size()) + " objects on the stack, not 1");
    out_.root = stack_.back();
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const {
    throw IOError("cannot load '" + path_ + "': its data.pkl, at byte " + std::to_string(op_at_) + ": " + problem);
  }

  const unsigned char* take(uint64_t n) {
    if (n > bytes_.size() - pos_)
      fail("truncated: needs " + std::to_string(n) + " bytes, " + std::to_string(bytes_.size() - pos_) + " remain");
    const auto* p = reinterpret_cast<const unsigned char*>(bytes_.data() + pos_);
    pos_ += static_cast<size_t>(n);
    return p;
  }
  uint64_t little(size_t n) {
    const unsigned char* p = take(n);
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v |= uint64_t{p[i]} << (8 * i);
    return v;
  }
  std::string text(uint64_t n) {
    const unsigned char* p = take(n);
    return std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(n));
  }
  // A GLOBAL argument: text up to a newline.
  std::string line() {
    const size_t end = bytes_.find('\n', pos_);
    if (end == std::string_view::npos) fail("truncated: GLOBAL without its newline");
    std::string s(bytes_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return s;
  }

  Object* make(Kind kind) {
    Object& o = out_.objects.emplace_back();
    o.kind = kind;
    return &o;
  }
  void push(Object* o) { stack_.push_back(o); }
  Object* pop() {
    if (stack_.empty()) fail(marks_.empty() ? "pops an empty stack" : "pops past a MARK");
    Object* o = stack_.back();
    stack_.pop_back();
    return o;
  }
  Object* top() {
    if (stack_.empty()) fail(marks_.empty() ? "needs an object on an empty stack" : "needs an object after a MARK");
    return stack_.back();
  }
  // The objects pushed since the last MARK, which it removes.
  std::vector<Object*> pop_mark() {
    if (marks_.empty()) fail("needs a MARK and there is none");
    std::vector<Object*> items = std::move(stack_);
    stack_ = std::move(marks_.back());
    marks_.pop_back();
    return items;
  }
  Object* container(Kind kind, const char* opcode) {
    Object* o = top();
    if (o->kind != kind) fail(std::string(opcode) + " on an object that is not a " + (kind == Kind::List ? "list" : "dict"));
    return o;
  }
  void memo_put(uint64_t index) { memo_[index] = top(); }
  void memo_get(uint64_t index) {
    const auto it = memo_.find(index);
    if (it == memo_.end()) fail("reads memo entry " + std::to_string(index) + ", which was never stored");
    push(it->second);
  }
  Object* integer(int64_t v) {
    Object* o = make(Kind::Int);
    o->integer = v;
    return o;
  }
  Object* string(std::string s) {
    Object* o = make(Kind::String);
    o->text = std::move(s);
    return o;
  }

  // Returns whether `op` was STOP.
  bool step(unsigned char op) {
    switch (op) {
      case 0x80: {  // PROTO
        const unsigned version = *take(1);
        if (version > 5) fail("pickle protocol " + std::to_string(version) + " is newer than 5");
        return false;
      }
      case 0x95: take(8); return false;  // FRAME: a read-ahead hint; the whole pickle is in memory
      case '.': return true;             // STOP
      case '(':                          // MARK
        marks_.push_back(std::move(stack_));
        stack_.clear();
        return false;
      case '}': push(make(Kind::Dict)); return false;
      case ']': push(make(Kind::List)); return false;
      case ')': push(make(Kind::Tuple)); return false;
      case 't': case 'l': {  // TUPLE, LIST
        Object* o = make(op == 't' ? Kind::Tuple : Kind::List);
        o->items = pop_mark();
        push(o);
        return false;
      }
      case 0x85: case 0x86: case 0x87: {  // TUPLE1, TUPLE2, TUPLE3
        const size_t n = op - 0x84u;
        if (stack_.size() < n) fail("TUPLE" + std::to_string(n) + " with " + std::to_string(stack_.size()) + " objects on the stack");
        Object* o = make(Kind::Tuple);
        o->items.assign(stack_.end() - static_cast<std::ptrdiff_t>(n), stack_.end());
        stack_.resize(stack_.size() - n);
        push(o);
        return false;
      }
      case 'd': {  // DICT
        Object* o = make(Kind::Dict);
        o->items = pop_mark();
        if (o->items.size() % 2) fail("DICT with a key and no value");
        push(o);
        return false;
      }
      case 'a': {  // APPEND
        Object* v = pop();
        container(Kind::List, "APPEND")->items.push_back(v);
        return false;
      }
      case 'e': {  // APPENDS
        std::vector<Object*> items = pop_mark();
        Object* list = container(Kind::List, "APPENDS");
        list->items.insert(list->items.end(), items.begin(), items.end());
        return false;
      }
      case 's': {  // SETITEM
        Object* v = pop();
        Object* k = pop();
        Object* dict = container(Kind::Dict, "SETITEM");
        dict->items.push_back(k);
        dict->items.push_back(v);
        return false;
      }
      case 'u': {  // SETITEMS
        std::vector<Object*> items = pop_mark();
        if (items.size() % 2) fail("SETITEMS with a key and no value");
        Object* dict = container(Kind::Dict, "SETITEMS");
        dict->items.insert(dict->items.end(), items.begin(), items.end());
        return false;
      }
      case 'X': push(string(text(little(4)))); return false;     // BINUNICODE
      case 0x8c: push(string(text(little(1)))); return false;    // SHORT_BINUNICODE
      case 0x8d: push(string(text(little(8)))); return false;    // BINUNICODE8
      case 'U': push(string(text(little(1)))); return false;     // SHORT_BINSTRING
      case 'T': {                                                // BINSTRING: a signed length
        const auto n = static_cast<int32_t>(static_cast<uint32_t>(little(4)));
        if (n < 0) fail("BINSTRING of negative length " + std::to_string(n));
        push(string(text(static_cast<uint64_t>(n))));
        return false;
      }
      case 'J': push(integer(static_cast<int32_t>(static_cast<uint32_t>(little(4))))); return false;  // BININT
      case 'K': push(integer(static_cast<int64_t>(little(1)))); return false;                         // BININT1
      case 'M': push(integer(static_cast<int64_t>(little(2)))); return false;                         // BININT2
      case 0x8a: {  // LONG1: n little-endian two's-complement bytes
        const size_t n = *take(1);
        if (n > 8) fail("an integer of " + std::to_string(n) + " bytes, wider than 64 bits");
        uint64_t v = little(n);
        if (n > 0 && n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n);  // sign-extend
        push(integer(static_cast<int64_t>(v)));
        return false;
      }
      case 'G': {  // BINFLOAT: big-endian IEEE double
        const unsigned char* p = take(8);
        uint64_t bits = 0;
        for (int i = 0; i < 8; ++i) bits = (bits << 8) | p[i];
        Object* o = make(Kind::Float);
        std::memcpy(&o->real, &bits, 8);
        push(o);
        return false;
      }
      case 'N': push(make(Kind::None)); return false;
      case 0x88: case 0x89: {  // NEWTRUE, NEWFALSE
        Object* o = make(Kind::Bool);
        o->integer = op == 0x88;
        push(o);
        return false;
      }
      case 'q': memo_put(little(1)); return false;             // BINPUT
      case 'r': memo_put(little(4)); return false;             // LONG_BINPUT
      case 0x94: memo_put(memo_.size()); return false;         // MEMOIZE
      case 'h': memo_get(little(1)); return false;             // BINGET
      case 'j': memo_get(little(4)); return false;             // LONG_BINGET
      case 'c': global(); return false;
      case 'R': reduce(); return false;
      case 'b': {  // BUILD: only state_dict's `_metadata` attribute and a parameter's state arrive this way
        pop();
        const Kind target = top()->kind;
        if (target != Kind::Dict && target != Kind::Tensor) fail("BUILD on an object that is neither a dict nor a tensor");
        return false;
      }
      case 'Q': persistent_id(); return false;  // BINPERSID
      default: {
        const char* name = refused_opcode_name(op);
        fail("refuses opcode " + hex_byte(op) + (name ? std::string(" (") + name + ")" : std::string()) +
             ": not one torch.save writes for tensors");
      }
    }
  }

  void global() {
    const std::string module = line();
    const std::string name = line();
    const std::string qualified = module + "." + name;
    const bool allowed = qualified == kOrderedDict || qualified == kRebuildTensor || qualified == kRebuildParameter ||
                         qualified == kRebuildParameterWithState;
    bool storage = false;
    if (module == "torch")
      for (const StorageType& s : kStorageTypes) storage = storage || name == s.name;
    if (!allowed && !storage) {
      if (module == "torch" && name.size() > 7 && name.ends_with("Storage"))
        fail("storage type '" + qualified + "' holds a dtype Locus does not have");
      fail("refuses global '" + qualified +
           "' (only collections.OrderedDict, torch._utils' tensor rebuilders and torch's storage types are allowed)");
    }
    Object* o = make(Kind::Global);
    o->text = qualified;
    push(o);
  }

  static bool is_int(const Object* o) { return o->kind == Kind::Int; }

  void reduce() {
    Object* args = pop();
    Object* callable = pop();
    if (callable->kind != Kind::Global) fail("REDUCE of an object that is not an allowed global");
    if (args->kind != Kind::Tuple) fail("REDUCE of '" + callable->text + "' with arguments that are not a tuple");
    const std::vector<Object*>& a = args->items;
    const std::string& f = callable->text;
    if (f == kOrderedDict) {
      if (!a.empty()) fail("collections.OrderedDict with arguments; torch.save writes it empty");
      push(make(Kind::Dict));
    } else if (f == kRebuildTensor) {
      push(rebuild_tensor(a));
    } else if (f == kRebuildParameter || f == kRebuildParameterWithState) {
      const size_t want = f == kRebuildParameter ? 3 : 4;
      if (a.size() != want || a[0]->kind != Kind::Tensor)
        fail("'" + f + "' needs " + std::to_string(want) + " arguments, a tensor first");
      push(a[0]);  // requires_grad, hooks and state are training-time properties
    } else {
      fail("'" + f + "' cannot be called");
    }
  }

  // _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks[, metadata])
  Object* rebuild_tensor(const std::vector<Object*>& a) {
    if (a.size() != 6 && a.size() != 7) fail(std::string(kRebuildTensor) + " with " + std::to_string(a.size()) + " arguments, not 6 or 7");
    if (a[0]->kind != Kind::Storage) fail(std::string(kRebuildTensor) + " of something that is not a storage");
    if (!is_int(a[1]) || a[1]->integer < 0) fail(std::string(kRebuildTensor) + " with a storage offset that is not a non-negative integer");
    if (a[2]->kind != Kind::Tuple || a[3]->kind != Kind::Tuple || a[2]->items.size() != a[3]->items.size())
      fail(std::string(kRebuildTensor) + " with size and stride that are not two tuples of one length");
    if (a[2]->items.size() > kMaxDims) fail("a tensor of " + std::to_string(a[2]->items.size()) + " dimensions, more than 64");
    Object* t = make(Kind::Tensor);
    t->storage = a[0];
    t->integer = a[1]->integer;
    for (size_t d = 0; d < a[2]->items.size(); ++d) {
      const Object* size = a[2]->items[d];
      const Object* stride = a[3]->items[d];
      if (!is_int(size) || size->integer < 0 || !is_int(stride) || stride->integer < 0)
        fail(std::string(kRebuildTensor) + " with a size or stride that is not a non-negative integer");
      t->shape.push_back(size->integer);
      t->stride.push_back(stride->integer);
    }
    return t;
  }

  // ('storage', torch.<Type>Storage, key, location, numel); one key is one storage, shared by
  // every tensor that names it (tied weights, views).
  void persistent_id() {
    const Object* pid = pop();
    const std::vector<Object*>& a = pid->items;
    if (pid->kind != Kind::Tuple || a.size() != 5 || a[0]->kind != Kind::String || a[0]->text != "storage")
      fail("a persistent id that is not ('storage', type, key, location, numel)");
    if (a[1]->kind != Kind::Global || a[2]->kind != Kind::String || a[3]->kind != Kind::String || !is_int(a[4]) ||
        a[4]->integer < 0)
      fail("a storage persistent id with a malformed type, key, location or size");
    DType dtype = DType::Float32;
    bool found = false;
    for (const StorageType& s : kStorageTypes)
      if (a[1]->text == std::string("torch.") + s.name) {
        dtype = s.dtype;
        found = true;
      }
    if (!found) fail("a storage of type '" + a[1]->text + "', which is not a storage type");
    const auto [it, fresh] = storages_.try_emplace(a[2]->text, nullptr);
    if (fresh) {
      Object* s = make(Kind::Storage);
      s->text = a[2]->text;
      s->dtype = dtype;
      s->integer = a[4]->integer;
      it->second = s;
    } else if (it->second->dtype != dtype || it->second->integer != a[4]->integer) {
      fail("storage '" + a[2]->text + "' is named twice with different types or sizes");
    }
    push(it->second);
  }

  std::string_view bytes_;
  const std::string& path_;
  size_t pos_ = 0, op_at_ = 0;
  Pickle out_;
  std::vector<Object*> stack_;
  std::vector<std::vector<Object*>> marks_;
  std::unordered_map<uint64_t, Object*> memo_;
  std::unordered_map<std::string, Object*> storages_;
};

}  // namespace

Pickle unpickle(std::string_view bytes, const std::string& path) { return Machine(bytes, path).run(); }

}  // namespace locus::serialize
