#include "text/pcre2_pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "base/error.h"
#include "text/pretokenizer.h"
#include "text/utf8.h"

namespace qvl::text {

struct Pcre2PreTokenizer::Compiled {
  explicit Compiled(const std::string& pattern) {
    int error = 0;
    PCRE2_SIZE offset = 0;
    code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                         PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
    if (code == nullptr) {
      PCRE2_UCHAR message[256];
      pcre2_get_error_message(error, message, sizeof(message));
      Fail(ErrorCode::kInternal, "PCRE2 rejects ", pattern, " at ", offset, ": ",
           reinterpret_cast<const char*>(message));
    }
    pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
    match_data = pcre2_match_data_create_from_pattern(code, nullptr);
  }
  ~Compiled() {
    pcre2_match_data_free(match_data);
    pcre2_code_free(code);
  }

  // The [begin, end) of the first match at or after `start`, or false.
  bool Match(std::string_view text, size_t start, size_t* begin, size_t* end) const {
    const int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), start,
                               PCRE2_NO_UTF_CHECK, match_data, nullptr);
    if (rc < 0) return false;
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match_data);
    *begin = ovector[0];
    *end = ovector[1];
    return true;
  }

  pcre2_code* code = nullptr;
  pcre2_match_data* match_data = nullptr;
};

namespace {

constexpr std::string_view kWhiteSpace = R"(\t-\r\x{85}\p{Z})";

std::string SpellOutWhiteSpace(std::string_view pattern) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const std::string_view rest = pattern.substr(i);
    if (rest.starts_with(R"([^\s)")) {
      out.append("[^").append(kWhiteSpace);
      i += 3;
    } else if (rest.starts_with(R"(\s)")) {
      out.append("[").append(kWhiteSpace).append("]");
      ++i;
    } else if (rest.starts_with(R"(\S)")) {
      out.append("[^").append(kWhiteSpace).append("]");
      ++i;
    } else {
      out.push_back(pattern[i]);
    }
  }
  return out;
}

}  // namespace

Pcre2PreTokenizer::Pcre2PreTokenizer()
    : pattern_(SpellOutWhiteSpace(kQwen2SplitPattern)),
      split_(std::make_unique<Compiled>(pattern_)),
      letter_(std::make_unique<Compiled>(R"(^\p{L}$)")),
      number_(std::make_unique<Compiled>(R"(^\p{N}$)")),
      space_(std::make_unique<Compiled>(StrCat("^[", kWhiteSpace, "]$"))) {}

Pcre2PreTokenizer::~Pcre2PreTokenizer() = default;

std::vector<std::string_view> Pcre2PreTokenizer::Split(std::string_view text) const {
  std::vector<std::string_view> pieces;
  size_t pos = 0;
  size_t begin = 0;
  size_t end = 0;
  while (pos < text.size() && split_->Match(text, pos, &begin, &end)) {
    if (begin != pos || end == begin) {
      Fail(ErrorCode::kInternal, "the split regex leaves a gap at byte ", pos);
    }
    pieces.push_back(text.substr(begin, end - begin));
    pos = end;
  }
  if (pos != text.size()) Fail(ErrorCode::kInternal, "the split regex stops at byte ", pos);
  return pieces;
}

CharClass Pcre2PreTokenizer::Classify(char32_t code_point) const {
  if (code_point == '\r' || code_point == '\n') return CharClass::kNewline;
  std::string utf8;
  AppendUtf8(code_point, &utf8);
  size_t begin = 0;
  size_t end = 0;
  if (letter_->Match(utf8, 0, &begin, &end)) return CharClass::kLetter;
  if (number_->Match(utf8, 0, &begin, &end)) return CharClass::kNumber;
  if (space_->Match(utf8, 0, &begin, &end)) return CharClass::kSpace;
  return CharClass::kOther;
}

}  // namespace qvl::text
