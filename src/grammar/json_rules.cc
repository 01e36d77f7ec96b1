#include "grammar/json_rules.h"

#include <algorithm>
#include <string>

namespace qvl::grammar {
namespace {

constexpr char32_t kMaxCodepoint = 0x10FFFF;

int EncodedLength(char32_t c) { return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4; }

void Encode(char32_t c, uint8_t* out) {
  switch (EncodedLength(c)) {
    case 1:
      out[0] = static_cast<uint8_t>(c);
      break;
    case 2:
      out[0] = static_cast<uint8_t>(0xC0 | c >> 6);
      out[1] = static_cast<uint8_t>(0x80 | (c & 0x3F));
      break;
    case 3:
      out[0] = static_cast<uint8_t>(0xE0 | c >> 12);
      out[1] = static_cast<uint8_t>(0x80 | (c >> 6 & 0x3F));
      out[2] = static_cast<uint8_t>(0x80 | (c & 0x3F));
      break;
    default:
      out[0] = static_cast<uint8_t>(0xF0 | c >> 18);
      out[1] = static_cast<uint8_t>(0x80 | (c >> 12 & 0x3F));
      out[2] = static_cast<uint8_t>(0x80 | (c >> 6 & 0x3F));
      out[3] = static_cast<uint8_t>(0x80 | (c & 0x3F));
  }
}

// Splits [first, last] (same encoded length) until each piece is a product of byte
// ranges (the construction of RE2 and Rust's utf8-ranges).
void AddUtf8Ranges(char32_t first, char32_t last, GrammarBuilder& b, std::vector<Sequence>* out) {
  const int length = EncodedLength(first);
  for (int i = 1; i < length; ++i) {
    const char32_t m = (char32_t{1} << (6 * i)) - 1;
    if ((first & ~m) != (last & ~m)) {
      if ((first & m) != 0) {
        AddUtf8Ranges(first, first | m, b, out);
        AddUtf8Ranges((first | m) + 1, last, b, out);
        return;
      }
      if ((last & m) != m) {
        AddUtf8Ranges(first, (last & ~m) - 1, b, out);
        AddUtf8Ranges(last & ~m, last, b, out);
        return;
      }
    }
  }
  uint8_t low[4], high[4];
  Encode(first, low);
  Encode(last, high);
  Sequence seq;
  for (int i = 0; i < length; ++i) {
    const Sequence part = b.Bytes(ByteSet::Range(low[i], high[i]));
    seq.insert(seq.end(), part.begin(), part.end());
  }
  out->push_back(std::move(seq));
}

}  // namespace

CodepointSet CodepointSet::All() {
  CodepointSet set;
  set.Add(0, kMaxCodepoint);
  return set;
}

void CodepointSet::Add(char32_t first, char32_t last) {
  // Surrogates are not characters: UTF-8 cannot carry them.
  if (first <= 0xDFFF && last >= 0xD800) {
    if (first < 0xD800) ranges_.push_back({first, 0xD7FF});
    if (last > 0xDFFF) ranges_.push_back({0xE000, last});
  } else if (first <= last) {
    ranges_.push_back({first, last});
  }
  Normalize();
}

void CodepointSet::Add(const CodepointSet& other) {
  ranges_.insert(ranges_.end(), other.ranges_.begin(), other.ranges_.end());
  Normalize();
}

CodepointSet CodepointSet::Complement() const {
  CodepointSet out;
  char32_t next = 0;
  for (const auto& [first, last] : ranges_) {
    if (first > next) out.Add(next, first - 1);
    next = last + 1;
  }
  if (next <= kMaxCodepoint) out.Add(next, kMaxCodepoint);
  return out;
}

CodepointSet CodepointSet::Intersect(const CodepointSet& other) const {
  CodepointSet out;
  for (const auto& [a, b] : ranges_) {
    for (const auto& [c, d] : other.ranges_) {
      if (std::max(a, c) <= std::min(b, d)) out.ranges_.push_back({std::max(a, c), std::min(b, d)});
    }
  }
  out.Normalize();
  return out;
}

void CodepointSet::Normalize() {
  std::sort(ranges_.begin(), ranges_.end());
  std::vector<std::pair<char32_t, char32_t>> merged;
  for (const auto& range : ranges_) {
    if (!merged.empty() && range.first <= merged.back().second + 1) {
      merged.back().second = std::max(merged.back().second, range.second);
    } else {
      merged.push_back(range);
    }
  }
  ranges_ = std::move(merged);
}

Sequence JsonRules::Utf8(const CodepointSet& set) {
  std::vector<Sequence> alternatives;
  static constexpr char32_t kLengthEnds[] = {0x7F, 0x7FF, 0xFFFF, kMaxCodepoint};
  for (auto [first, last] : set.ranges()) {
    char32_t low = 0;
    for (char32_t end : kLengthEnds) {
      const char32_t a = std::max(first, low), z = std::min(last, end);
      if (a <= z) AddUtf8Ranges(a, z, b_, &alternatives);
      low = end + 1;
    }
  }
  // Single-byte alternatives fold into one byte set: fewer stacks per character.
  ByteSet single;
  std::vector<Sequence> folded;
  for (Sequence& alt : alternatives) {
    if (alt.size() == 1) {
      const ByteSet& set = b_.set(alt[0].value);
      for (int i = 0; i < 4; ++i) single.bits[i] |= set.bits[i];
    } else {
      folded.push_back(std::move(alt));
    }
  }
  if (!single.Empty()) folded.insert(folded.begin(), b_.Bytes(single));
  return b_.Alt(std::move(folded));
}

Sequence JsonRules::Space() {
  if (!space_) {
    space_ = b_.NewRule();
    ByteSet indent = ByteSet::Of(' ');
    indent.Add('\t');
    b_.Define(*space_, {{},
                        b_.Literal(" "),
                        Concat({b_.Literal("\n"), b_.Repeat(b_.Bytes(indent), 0, kMaxIndent)})});
  }
  return GrammarBuilder::Ref(*space_);
}

Sequence JsonRules::StringChar() {
  if (!string_char_) {
    CodepointSet raw;
    raw.Add(0x20, 0x21);
    raw.Add(0x23, 0x5B);
    raw.Add(0x5D, 0x10FFFF);
    ByteSet simple_escape;
    for (char c : std::string_view("\"\\/bfnrt")) simple_escape.Add(c);
    ByteSet hex = ByteSet::Range('0', '9');
    hex.AddRange('a', 'f');
    hex.AddRange('A', 'F');
    ByteSet hex_no_d = ByteSet::Range('0', '9');
    hex_no_d.AddRange('a', 'c');
    hex_no_d.AddRange('e', 'f');
    hex_no_d.AddRange('A', 'C');
    hex_no_d.AddRange('E', 'F');
    ByteSet d = ByteSet::Of('d');
    d.Add('D');
    const Sequence h = b_.Bytes(hex);
    // \uXXXX outside D800-DFFF: a lone surrogate is not text.
    const Sequence unicode =
        b_.Alt({Concat({b_.Bytes(hex_no_d), h, h, h}),
                Concat({b_.Bytes(d), b_.Bytes(ByteSet::Range('0', '7')), h, h})});
    string_char_ = b_.NewRule();
    b_.Define(*string_char_, {Utf8(raw), Concat({b_.Literal("\\"), b_.Bytes(simple_escape)}),
                              Concat({b_.Literal("\\u"), unicode})});
  }
  return GrammarBuilder::Ref(*string_char_);
}

Sequence JsonRules::String(int64_t min_length, int64_t max_length) {
  if (min_length == 0 && max_length < 0) {
    if (!string_) {
      string_ = b_.NewRule();
      b_.Define(*string_, {Concat({b_.Literal("\""), b_.Star(StringChar()), b_.Literal("\"")})});
    }
    return GrammarBuilder::Ref(*string_);
  }
  return Concat(
      {b_.Literal("\""), b_.Repeat(StringChar(), min_length, max_length), b_.Literal("\"")});
}

Sequence JsonRules::CharIn(const CodepointSet& set) {
  CodepointSet raw;
  std::vector<Sequence> alternatives;
  for (auto [first, last] : set.ranges()) {
    for (char32_t c = first; c <= last && c < 0x20; ++c) {
      static constexpr std::string_view kShort[] = {"b", "t", "n", "", "f", "r"};
      std::string escape = "\\";
      if (c >= 8 && c <= 13 && !kShort[c - 8].empty()) {
        escape += kShort[c - 8];
      } else {
        static constexpr char kHex[] = "0123456789abcdef";
        escape += "u00";
        escape += kHex[c >> 4];
        escape += kHex[c & 15];
      }
      alternatives.push_back(b_.Literal(escape));
    }
    if (first <= '"' && last >= '"') alternatives.push_back(b_.Literal("\\\""));
    if (first <= '\\' && last >= '\\') alternatives.push_back(b_.Literal("\\\\"));
    raw.Add(std::max<char32_t>(first, 0x20), last);
  }
  CodepointSet unescaped;
  for (auto [first, last] : raw.ranges()) {
    for (const auto& [a, z] : {std::pair<char32_t, char32_t>{first, std::min<char32_t>(last, 0x21)},
                               {std::max<char32_t>(first, 0x23), std::min<char32_t>(last, 0x5B)},
                               {std::max<char32_t>(first, 0x5D), last}}) {
      if (a <= z) unescaped.Add(a, z);
    }
  }
  if (!unescaped.Empty()) alternatives.push_back(Utf8(unescaped));
  return b_.Alt(std::move(alternatives));
}

Sequence JsonRules::AnyFraction() {
  return b_.Optional(Concat({b_.Literal("."), b_.Repeat(Digit(), 1, kMaxFractionDigits)}));
}

Sequence JsonRules::NonzeroFraction() {
  return Concat({b_.Literal("."), b_.Repeat(b_.Literal("0"), 0, kMaxFractionDigits - 1),
                 b_.Bytes(ByteSet::Range('1', '9')),
                 b_.Repeat(Digit(), 0, kMaxFractionDigits - 1)});
}

Sequence JsonRules::ZeroFraction() {
  return b_.Optional(Concat({b_.Literal("."), b_.Repeat(b_.Literal("0"), 1, kMaxFractionDigits)}));
}

Sequence JsonRules::Integer() {
  if (!integer_) {
    integer_ = b_.NewRule();
    b_.Define(*integer_, {Concat({b_.Optional(b_.Literal("-")), b_.Alt(Digits(0, std::nullopt))})});
  }
  return GrammarBuilder::Ref(*integer_);
}

Sequence JsonRules::Number() {
  if (!number_) {
    number_ = b_.NewRule();
    ByteSet e = ByteSet::Of('e');
    e.Add('E');
    ByteSet sign = ByteSet::Of('-');
    sign.Add('+');
    const Sequence exponent = b_.Optional(Concat(
        {b_.Bytes(e), b_.Optional(b_.Bytes(sign)), b_.Repeat(Digit(), 1, kMaxExponentDigits)}));
    b_.Define(*number_, {Concat({Integer(), AnyFraction(), exponent})});
  }
  return GrammarBuilder::Ref(*number_);
}

Sequence JsonRules::Boolean() { return b_.Alt({b_.Literal("true"), b_.Literal("false")}); }

Sequence JsonRules::Value() {
  if (!value_) {
    value_ = b_.NewRule();
    object_ = b_.NewRule();
    array_ = b_.NewRule();
    const Sequence value = GrammarBuilder::Ref(*value_);
    b_.Define(*value_, {GrammarBuilder::Ref(*object_), GrammarBuilder::Ref(*array_), String(),
                        Number(), b_.Literal("true"), b_.Literal("false"), Null()});
    const Sequence member = Concat({String(), Space(), b_.Literal(":"), Space(), value, Space()});
    const Sequence comma = Concat({b_.Literal(","), Space()});
    b_.Define(*object_, {Concat({b_.Literal("{"), Space(),
                                 b_.Optional(Concat({member, b_.Star(Concat({comma, member}))})),
                                 b_.Literal("}")})});
    const Sequence item = Concat({value, Space()});
    b_.Define(*array_, {Concat({b_.Literal("["), Space(),
                                b_.Optional(Concat({item, b_.Star(Concat({comma, item}))})),
                                b_.Literal("]")})});
  }
  return GrammarBuilder::Ref(*value_);
}

Sequence JsonRules::Object() {
  Value();
  return GrammarBuilder::Ref(*object_);
}

Sequence JsonRules::Array() {
  Value();
  return GrammarBuilder::Ref(*array_);
}

Sequence JsonRules::SameLengthDigits(std::string_view low, std::string_view high) {
  if (low.empty()) return {};
  if (low[0] == high[0]) {
    return Concat({b_.Literal(low.substr(0, 1)), SameLengthDigits(low.substr(1), high.substr(1))});
  }
  const size_t rest = low.size() - 1;
  const bool low_full = low.find_first_not_of('0', 1) == std::string_view::npos;
  const bool high_full = high.find_first_not_of('9', 1) == std::string_view::npos;
  std::vector<Sequence> alternatives;
  if (!low_full) {
    alternatives.push_back(Concat(
        {b_.Literal(low.substr(0, 1)), SameLengthDigits(low.substr(1), std::string(rest, '9'))}));
  }
  const char mid_first = low_full ? low[0] : low[0] + 1;
  const char mid_last = high_full ? high[0] : high[0] - 1;
  if (mid_first <= mid_last) {
    alternatives.push_back(
        Concat({b_.Bytes(ByteSet::Range(mid_first, mid_last)), b_.Repeat(Digit(), rest, rest)}));
  }
  if (!high_full) {
    alternatives.push_back(Concat(
        {b_.Literal(high.substr(0, 1)), SameLengthDigits(std::string(rest, '0'), high.substr(1))}));
  }
  return b_.Alt(std::move(alternatives));
}

std::vector<Sequence> JsonRules::Digits(uint64_t lo, std::optional<uint64_t> hi) {
  const std::string low = std::to_string(lo);
  const size_t max_length = hi ? std::to_string(*hi).size() : kMaxIntegerDigits;
  std::vector<Sequence> alternatives;
  if (hi && *hi < lo) return alternatives;
  for (size_t length = low.size(); length <= max_length; ++length) {
    std::string first = low;
    if (length != low.size()) {
      first.assign(length, '0');
      first[0] = '1';
    }
    const std::string last =
        hi && length == max_length ? std::to_string(*hi) : std::string(length, '9');
    alternatives.push_back(SameLengthDigits(first, last));
  }
  return alternatives;
}

}  // namespace qvl::grammar
