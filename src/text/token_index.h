// Token string -> id lookup in one flat open-addressing table. The table stores only
// (hash, id); the strings stay in the caller's token arrays and are reached through
// `name_of(id)`, so the index holds no pointers and is cheap to build (the Qwen3
// vocabulary has 151k entries, looked up 3 times per merge rule while loading).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace qvl::text {

class TokenIndex {
 public:
  explicit TokenIndex(size_t expected_size = 0) {
    const size_t capacity = std::bit_ceil(std::max<size_t>(16, expected_size * 2));
    slots_.assign(capacity, Slot{0, kEmpty});
  }

  // Adds `name` -> `id` unless `name` is present; returns the id stored for it.
  template <typename NameOf>
  int32_t Insert(std::string_view name, int32_t id, NameOf&& name_of) {
    if ((size_ + 1) * 2 > slots_.size()) Grow();
    const auto hash = static_cast<uint32_t>(std::hash<std::string_view>()(name));
    for (size_t i = hash & Mask();; i = (i + 1) & Mask()) {
      Slot& slot = slots_[i];
      if (slot.id == kEmpty) {
        slot = Slot{hash, id};
        ++size_;
        return id;
      }
      if (slot.hash == hash && name_of(slot.id) == name) return slot.id;
    }
  }

  // The id of `name`, or -1.
  template <typename NameOf>
  int32_t Find(std::string_view name, NameOf&& name_of) const {
    const auto hash = static_cast<uint32_t>(std::hash<std::string_view>()(name));
    for (size_t i = hash & Mask();; i = (i + 1) & Mask()) {
      const Slot& slot = slots_[i];
      if (slot.id == kEmpty) return -1;
      if (slot.hash == hash && name_of(slot.id) == name) return slot.id;
    }
  }

 private:
  struct Slot {
    uint32_t hash;
    int32_t id;
  };
  static constexpr int32_t kEmpty = -1;

  size_t Mask() const { return slots_.size() - 1; }

  void Grow() {
    std::vector<Slot> old(slots_.size() * 2, Slot{0, kEmpty});
    old.swap(slots_);
    for (const Slot& slot : old) {
      if (slot.id == kEmpty) continue;
      size_t i = slot.hash & Mask();
      while (slots_[i].id != kEmpty) i = (i + 1) & Mask();
      slots_[i] = slot;
    }
  }

  std::vector<Slot> slots_;  // power-of-two size, at most half full
  size_t size_ = 0;
};

}  // namespace qvl::text
