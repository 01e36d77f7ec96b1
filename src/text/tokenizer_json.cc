#include "text/tokenizer_json.h"

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "text/pretokenizer.h"

namespace qvl::text {
namespace {

using Json = nlohmann::json;

// A string as a JSON literal for error messages.
std::string Quote(const std::string& text) {
  return Json(text).dump(-1, ' ', false, Json::error_handler_t::replace);
}

// SAX consumer that builds a JSON tree for the small parts of the file and streams
// model.vocab and model.merges straight into TokenizerDefinition.
class TokenizerJsonReader final : public nlohmann::json_sax<Json> {
 public:
  TokenizerJsonReader(const std::string& source, TokenizerDefinition* out)
      : source_(source), out_(out) {}

  Json& root() { return root_; }
  bool saw_vocab() const { return saw_vocab_; }
  bool saw_merges() const { return saw_merges_; }

  bool null() override { return Value(nullptr); }
  bool boolean(bool value) override { return Value(value); }
  bool number_integer(number_integer_t value) override {
    if (section_ == Section::kVocab) return VocabId(value);
    return Value(value);
  }
  bool number_unsigned(number_unsigned_t value) override {
    if (section_ == Section::kVocab) {
      return VocabId(value > uint64_t{kMaxTokenId} ? kMaxTokenId : static_cast<int64_t>(value));
    }
    return Value(value);
  }
  bool number_float(number_float_t value, const string_t& /*text*/) override {
    return Value(value);
  }
  bool binary(binary_t& value) override { return Value(Json::binary(std::move(value))); }

  bool string(string_t& value) override {
    switch (section_) {
      case Section::kDocument:
        return Value(std::move(value));
      case Section::kVocab:
        FailVocabEntry();
      case Section::kMerges: {
        // Older files write a merge as one string "left right".
        const size_t space = value.find(' ');
        if (space == std::string::npos || space == 0 || space + 1 == value.size() ||
            value.find(' ', space + 1) != std::string::npos) {
          FailMerge();
        }
        out_->merges.emplace_back(value.substr(0, space), value.substr(space + 1));
        return true;
      }
      case Section::kMergePair:
        if (merge_pair_.size() == 2) FailMerge();
        merge_pair_.push_back(std::move(value));
        return true;
    }
    return true;
  }

  bool key(string_t& value) override {
    key_ = std::move(value);
    return true;
  }

  bool start_object(std::size_t /*elements*/) override {
    if (section_ == Section::kVocab) FailVocabEntry();
    if (section_ != Section::kDocument) FailMerge();
    if (InModelField("vocab")) {
      section_ = Section::kVocab;
      saw_vocab_ = true;
      return true;
    }
    const bool is_model = stack_.size() == 1 && key_ == "model";
    Json* object = Open(Json::object());
    if (is_model) model_ = object;
    return true;
  }

  bool end_object() override {
    if (section_ == Section::kVocab) {
      section_ = Section::kDocument;
    } else {
      stack_.pop_back();
    }
    return true;
  }

  bool start_array(std::size_t /*elements*/) override {
    switch (section_) {
      case Section::kDocument:
        if (InModelField("merges")) {
          section_ = Section::kMerges;
          saw_merges_ = true;
        } else {
          Open(Json::array());
        }
        return true;
      case Section::kVocab:
        FailVocabEntry();
      case Section::kMerges:
        section_ = Section::kMergePair;
        merge_pair_.clear();
        return true;
      case Section::kMergePair:
        FailMerge();
    }
    return true;
  }

  bool end_array() override {
    switch (section_) {
      case Section::kMergePair:
        if (merge_pair_.size() != 2 || merge_pair_[0].empty() || merge_pair_[1].empty()) {
          FailMerge();
        }
        out_->merges.emplace_back(std::move(merge_pair_[0]), std::move(merge_pair_[1]));
        section_ = Section::kMerges;
        return true;
      case Section::kMerges:
        section_ = Section::kDocument;
        return true;
      default:
        stack_.pop_back();
        return true;
    }
  }

  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& error) override {
    Fail(ErrorCode::kCorrupt, source_, ": malformed JSON near byte ", position, ": ", error.what());
  }

 private:
  enum class Section { kDocument, kVocab, kMerges, kMergePair };

  bool InModelField(std::string_view name) const {
    return model_ != nullptr && !stack_.empty() && stack_.back() == model_ && key_ == name;
  }

  // Adds `value` to the open container (or makes it the root) and returns it.
  Json* Insert(Json value) {
    if (stack_.empty()) {
      if (!value.is_object()) Fail(ErrorCode::kCorrupt, source_, ": expected a JSON object");
      root_ = std::move(value);
      return &root_;
    }
    Json& parent = *stack_.back();
    if (parent.is_object()) return &(parent[key_] = std::move(value));
    parent.push_back(std::move(value));
    return &parent.back();
  }

  Json* Open(Json container) {
    Json* opened = Insert(std::move(container));
    stack_.push_back(opened);
    return opened;
  }

  bool Value(Json value) {
    if (section_ == Section::kVocab) FailVocabEntry();
    if (section_ != Section::kDocument) FailMerge();
    Insert(std::move(value));
    return true;
  }

  bool VocabId(int64_t id) {
    if (id < 0 || id >= kMaxTokenId) {
      Fail(ErrorCode::kCorrupt, source_, ": model.vocab[", Quote(key_), "] = ", id,
           " is outside [0, ", kMaxTokenId, ")");
    }
    out_->vocab.emplace_back(std::move(key_), static_cast<int32_t>(id));
    return true;
  }

  [[noreturn]] void FailVocabEntry() const {
    Fail(ErrorCode::kCorrupt, source_, ": model.vocab[", Quote(key_),
         "] must be an integer token id");
  }

  [[noreturn]] void FailMerge() const {
    Fail(ErrorCode::kCorrupt, source_, ": model.merges[", out_->merges.size(),
         "] must be \"left right\" or [\"left\", \"right\"]");
  }

  const std::string& source_;
  TokenizerDefinition* out_;
  Json root_;
  std::vector<Json*> stack_;  // open containers of the tree, innermost last
  Json* model_ = nullptr;
  std::string key_;
  Section section_ = Section::kDocument;
  std::vector<std::string> merge_pair_;
  bool saw_vocab_ = false;
  bool saw_merges_ = false;
};

// Checks of the small JSON tree, each failing with "SOURCE: FIELD ...".
class FieldChecker {
 public:
  explicit FieldChecker(const std::string& source) : source_(source) {}

  [[noreturn]] void FailField(std::string_view field, std::string_view problem) const {
    Fail(ErrorCode::kCorrupt, source_, ": ", field, " ", problem);
  }

  // The member `key` of `object`, or nullptr when absent or null.
  static const Json* Find(const Json& object, const char* key) {
    const auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
  }

  const Json& Object(const Json& parent, const char* key, const std::string& field) const {
    const Json* value = Find(parent, key);
    if (value == nullptr) FailField(field, "is missing");
    if (!value->is_object()) FailField(field, "must be an object");
    return *value;
  }

  std::string String(const Json& parent, const char* key, const std::string& field) const {
    const Json* value = Find(parent, key);
    if (value == nullptr) FailField(field, "is missing");
    if (!value->is_string()) FailField(field, "must be a string");
    return value->get<std::string>();
  }

  bool Bool(const Json& parent, const char* key, const std::string& field, bool fallback) const {
    const Json* value = Find(parent, key);
    if (value == nullptr) return fallback;
    if (!value->is_boolean()) FailField(field, "must be true or false");
    return value->get<bool>();
  }

  void ExpectType(const Json& parent, const std::string& field, std::string_view type) const {
    const std::string actual = String(parent, "type", field + ".type");
    if (actual != type) {
      FailField(field + ".type",
                StrCat("must be \"", type, "\" (the Qwen2 tokenizer), got \"", actual, "\""));
    }
  }

  // A setting qvl does not implement must keep its neutral value.
  void ExpectNeutral(const Json& parent, const char* key, const std::string& field) const {
    const Json* value = Find(parent, key);
    if (value == nullptr) return;
    const bool neutral = (value->is_boolean() && !value->get<bool>()) ||
                         (value->is_string() && value->get<std::string>().empty()) ||
                         (value->is_number() && value->get<double>() == 0.0);
    if (!neutral) FailField(field, StrCat("= ", value->dump(), " is not supported"));
  }

 private:
  const std::string& source_;
};

void CheckModel(const FieldChecker& check, const Json& root) {
  const Json& model = check.Object(root, "model", "model");
  check.ExpectType(model, "model", "BPE");
  for (const char* key : {"dropout", "continuing_subword_prefix", "end_of_word_suffix",
                          "byte_fallback", "ignore_merges"}) {
    check.ExpectNeutral(model, key, StrCat("model.", key));
  }
}

void CheckPipeline(const FieldChecker& check, const Json& root) {
  if (const Json* normalizer = FieldChecker::Find(root, "normalizer")) {
    if (!normalizer->is_object()) check.FailField("normalizer", "must be an object or null");
    check.ExpectType(*normalizer, "normalizer", "NFC");
  }

  const Json& pre = check.Object(root, "pre_tokenizer", "pre_tokenizer");
  check.ExpectType(pre, "pre_tokenizer", "Sequence");
  const Json* steps = FieldChecker::Find(pre, "pretokenizers");
  if (steps == nullptr || !steps->is_array() || steps->size() != 2 || !(*steps)[0].is_object() ||
      !(*steps)[1].is_object()) {
    check.FailField("pre_tokenizer.pretokenizers", "must hold a Split and a ByteLevel step");
  }
  const Json& split = (*steps)[0];
  check.ExpectType(split, "pre_tokenizer.pretokenizers[0]", "Split");
  const Json& pattern = check.Object(split, "pattern", "pre_tokenizer.pretokenizers[0].pattern");
  if (check.String(pattern, "Regex", "pre_tokenizer.pretokenizers[0].pattern.Regex") !=
      kQwen2SplitPattern) {
    check.FailField("pre_tokenizer.pretokenizers[0].pattern.Regex",
                    "is not the Qwen2 split regex, the only one qvl implements");
  }
  if (check.String(split, "behavior", "pre_tokenizer.pretokenizers[0].behavior") != "Isolated") {
    check.FailField("pre_tokenizer.pretokenizers[0].behavior", "must be \"Isolated\"");
  }
  check.ExpectNeutral(split, "invert", "pre_tokenizer.pretokenizers[0].invert");
  const Json& byte_level = (*steps)[1];
  check.ExpectType(byte_level, "pre_tokenizer.pretokenizers[1]", "ByteLevel");
  for (const char* key : {"add_prefix_space", "use_regex"}) {
    check.ExpectNeutral(byte_level, key, StrCat("pre_tokenizer.pretokenizers[1].", key));
  }

  const Json& decoder = check.Object(root, "decoder", "decoder");
  check.ExpectType(decoder, "decoder", "ByteLevel");
}

std::vector<AddedTokenDefinition> ReadAddedTokens(const FieldChecker& check, const Json& root) {
  std::vector<AddedTokenDefinition> tokens;
  const Json* list = FieldChecker::Find(root, "added_tokens");
  if (list == nullptr) return tokens;
  if (!list->is_array()) check.FailField("added_tokens", "must be an array");
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string field = StrCat("added_tokens[", i, "]");
    const Json& entry = (*list)[i];
    if (!entry.is_object()) check.FailField(field, "must be an object");
    AddedTokenDefinition token;
    const Json* id = FieldChecker::Find(entry, "id");
    if (id == nullptr || !id->is_number_integer() || id->get<int64_t>() < 0 ||
        id->get<int64_t>() >= kMaxTokenId) {
      check.FailField(field + ".id", StrCat("must be an integer in [0, ", kMaxTokenId, ")"));
    }
    token.id = id->get<int32_t>();
    token.content = check.String(entry, "content", field + ".content");
    if (token.content.empty()) check.FailField(field + ".content", "must not be empty");
    token.special = check.Bool(entry, "special", field + ".special", false);
    for (const char* key : {"single_word", "lstrip", "rstrip", "normalized"}) {
      check.ExpectNeutral(entry, key, StrCat(field, ".", key));
    }
    tokens.push_back(std::move(token));
  }
  return tokens;
}

}  // namespace

TokenizerDefinition ParseTokenizerJson(std::string_view json, const std::string& source) {
  TokenizerDefinition definition;
  TokenizerJsonReader reader(source, &definition);
  Json::sax_parse(json.begin(), json.end(), &reader);

  const FieldChecker check(source);
  const Json& root = reader.root();
  if (!root.is_object()) Fail(ErrorCode::kCorrupt, source, ": expected a JSON object");
  CheckModel(check, root);
  // A vocab or merge list of the right type was streamed out of the tree; one still in
  // it has the wrong type.
  const Json& model = root.at("model");
  if (!reader.saw_vocab() || model.contains("vocab")) {
    check.FailField("model.vocab", "must be an object mapping tokens to ids");
  }
  if (!reader.saw_merges() || model.contains("merges")) {
    check.FailField("model.merges", "must be a list of merges");
  }
  CheckPipeline(check, root);
  definition.added_tokens = ReadAddedTokens(check, root);
  return definition;
}

}  // namespace qvl::text
