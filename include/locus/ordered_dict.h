#pragma once
/// \file ordered_dict.h
/// OrderedDict: a dictionary that remembers insertion order, as LibTorch's torch::OrderedDict and
/// Python's dict (what state_dict() and load() return).

#include "locus/export.h"
LOCUS_API_BEGIN

#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <list>
#include <map>
#include <sstream>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "locus/errors.h"

namespace locus {

/// One entry of an OrderedDict: `first`/`second` as a std::pair's (so `auto& [key, value]`
/// unpacks it), and LibTorch's `key()`/`value()`.
template <class Key, class Value>
struct OrderedDictItem {
  /// The item `key` with `value`.
  OrderedDictItem(Key key, Value value) : first(std::move(key)), second(std::move(value)) {}
  /// The key, which cannot change in place.
  const Key first;
  /// The value.
  Value second;
  /// The key, as LibTorch's Item::key().
  const Key& key() const noexcept { return first; }
  /// The value, as LibTorch's Item::value().
  Value& value() noexcept { return second; }
  /// The value, as LibTorch's Item::value().
  const Value& value() const noexcept { return second; }
  /// The item as a std::pair, as LibTorch's Item::pair().
  std::pair<Key, Value> pair() const { return {first, second}; }
  /// The item as a std::pair, so code written when items were pairs keeps compiling.
  operator std::pair<Key, Value>() const { return pair(); }  // NOLINT(google-explicit-constructor)
};

/// Keys with values, iterated in the order they were inserted: `for (const auto& [name, t] : sd)`
/// visits `0.weight, 0.bias, 2.weight, ...` as the module registered them. Lookup by key is
/// constant time (`sd["fc1.weight"]`, `at`, `find`, `contains`). Converts to and from std::map,
/// so code written against the std::map Locus used to return keeps compiling (a std::map
/// brings its alphabetical order along). Not thread-safe for concurrent writers.
template <class Key, class Value>
class OrderedDict {
 public:
  using key_type = Key;
  using mapped_type = Value;
  /// What iteration yields: an item whose key cannot be changed in place.
  using value_type = OrderedDictItem<Key, Value>;
  /// LibTorch's name for it.
  using Item = value_type;
  using iterator = typename std::list<value_type>::iterator;
  using const_iterator = typename std::list<value_type>::const_iterator;
  using size_type = size_t;

  OrderedDict() = default;
  /// The items in the order given; ValueError when a key appears twice.
  OrderedDict(std::initializer_list<std::pair<Key, Value>> items) {
    for (const auto& [key, value] : items) insert(key, value);
  }
  /// A std::map's items, in the map's (sorted) order.
  OrderedDict(const std::map<Key, Value>& items) {  // NOLINT(google-explicit-constructor): as before
    for (const auto& [key, value] : items) insert(key, value);
  }
  OrderedDict(const OrderedDict& other) { *this = other; }
  OrderedDict(OrderedDict&& other) noexcept = default;
  OrderedDict& operator=(const OrderedDict& other) {
    if (this == &other) return *this;
    OrderedDict copy;
    for (const auto& [key, value] : other) copy.insert(key, value);
    return *this = std::move(copy);
  }
  OrderedDict& operator=(OrderedDict&& other) noexcept = default;
  /// The items as a std::map (sorted by key): what state_dict() and load() returned before.
  operator std::map<Key, Value>() const {  // NOLINT(google-explicit-constructor): as before
    std::map<Key, Value> out;
    for (const auto& item : items_) out.emplace(item.first, item.second);
    return out;
  }

  /// Appends `key` with `value`; ValueError naming the key when it is already there (as
  /// LibTorch's insert). Returns the stored value.
  Value& insert(const Key& key, Value value) {
    if (index_.count(key)) throw ValueError("OrderedDict::insert: key '" + describe(key) + "' is already defined");
    items_.emplace_back(key, std::move(value));
    const iterator it = std::prev(items_.end());
    index_.emplace(key, it);
    return it->second;
  }
  /// Replaces the value of `key` where it stands, or appends it.
  Value& insert_or_assign(const Key& key, Value value) {
    if (const auto found = index_.find(key); found != index_.end()) return found->second->second = std::move(value);
    return insert(key, std::move(value));
  }
  /// The value of `key`, appended (default-constructed) when absent, as `sd[key] = t` in Python
  /// and std::map.
  Value& operator[](const Key& key) {
    if (const auto found = index_.find(key); found != index_.end()) return found->second->second;
    return insert(key, Value());
  }
  /// The value of `key`; IndexError naming the key when it is absent.
  const Value& operator[](const Key& key) const { return at(key); }
  /// The item at position `index` in insertion order, as LibTorch's `dict[0]` (linear in
  /// `index`); IndexError past the end. Not for integer keys, which index by key.
  Item& operator[](size_t index)
    requires(!std::is_integral_v<Key>)
  {
    return const_cast<Item&>(std::as_const(*this)[index]);
  }
  /// The item at position `index`; IndexError past the end.
  const Item& operator[](size_t index) const
    requires(!std::is_integral_v<Key>)
  {
    if (index >= items_.size())
      throw IndexError("OrderedDict: index " + std::to_string(index) + " is out of range for " +
                       std::to_string(items_.size()) + " items");
    return *std::next(items_.begin(), static_cast<std::ptrdiff_t>(index));
  }
  /// The value of `key`; IndexError naming the key when it is absent.
  Value& at(const Key& key) { return const_cast<Value&>(std::as_const(*this).at(key)); }
  const Value& at(const Key& key) const {
    const auto found = index_.find(key);
    if (found == index_.end()) throw IndexError("OrderedDict: key '" + describe(key) + "' is not defined");
    return found->second->second;
  }
  /// The item of `key`, or end().
  iterator find(const Key& key) {
    const auto found = index_.find(key);
    return found == index_.end() ? items_.end() : found->second;
  }
  const_iterator find(const Key& key) const {
    const auto found = index_.find(key);
    return found == index_.end() ? items_.end() : const_iterator(found->second);
  }
  bool contains(const Key& key) const { return index_.count(key) != 0; }
  /// 1 when `key` is present, else 0 (std::map's spelling of contains).
  size_type count(const Key& key) const { return index_.count(key); }
  /// Removes `key`; returns how many items went (0 or 1). The others keep their order.
  size_type erase(const Key& key) {
    const auto found = index_.find(key);
    if (found == index_.end()) return 0;
    items_.erase(found->second);
    index_.erase(found);
    return 1;
  }
  void clear() noexcept {
    items_.clear();
    index_.clear();
  }

  size_type size() const noexcept { return items_.size(); }
  bool empty() const noexcept { return items_.empty(); }
  /// The keys, in insertion order.
  std::vector<Key> keys() const {
    std::vector<Key> out;
    out.reserve(size());
    for (const auto& item : items_) out.push_back(item.first);
    return out;
  }
  /// The values, in insertion order.
  std::vector<Value> values() const {
    std::vector<Value> out;
    out.reserve(size());
    for (const auto& item : items_) out.push_back(item.second);
    return out;
  }

  iterator begin() noexcept { return items_.begin(); }
  iterator end() noexcept { return items_.end(); }
  const_iterator begin() const noexcept { return items_.begin(); }
  const_iterator end() const noexcept { return items_.end(); }
  const_iterator cbegin() const noexcept { return items_.cbegin(); }
  const_iterator cend() const noexcept { return items_.cend(); }

 private:
  static std::string describe(const Key& key) {
    if constexpr (std::is_convertible_v<const Key&, std::string>) {
      return std::string(key);
    } else {
      std::ostringstream os;
      os << key;
      return os.str();
    }
  }

  // A list, so iterators (held by the index) survive inserting and erasing other items.
  std::list<value_type> items_;
  std::unordered_map<Key, iterator> index_;
};

}  // namespace locus

LOCUS_API_END
