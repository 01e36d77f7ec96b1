// Checks the request parsers' tests share: the FieldError a body raises, and the fields
// every text API parses alike.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "base/field_error.h"

namespace qvl::testing {

// The message of the FieldError `parse()` raises ("no error" when it raises none); checks
// its code and field.
template <class Parse>
std::string FieldErrorOf(const Parse& parse, ErrorCode code, const std::string& field) {
  try {
    parse();
  } catch (const FieldError& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_EQ(e.field(), field) << e.what();
    return e.what();
  }
  return "no error";
}

// llama-server's return_progress: asked of the engine for a streamed request only (a whole
// answer has nowhere to show it); a wrong type names the field. `body` is a valid request
// without stream or return_progress; `parse(body)` returns its parsed request.
template <class Parse>
void ExpectReturnProgressOnlyWhenStreamed(nlohmann::json body, const Parse& parse) {
  EXPECT_FALSE(parse(body).generation.report_progress);
  body["return_progress"] = true;
  EXPECT_FALSE(parse(body).return_progress);
  EXPECT_FALSE(parse(body).generation.report_progress);
  body["return_progress"] = "yes";
  EXPECT_EQ(FieldErrorOf([&] { parse(body); }, ErrorCode::kInvalidArgument, "return_progress"),
            "return_progress: expected true or false, got string");
  body["return_progress"] = true;
  body["stream"] = true;
  EXPECT_TRUE(parse(body).return_progress);
  EXPECT_TRUE(parse(body).generation.report_progress);
}

}  // namespace qvl::testing
