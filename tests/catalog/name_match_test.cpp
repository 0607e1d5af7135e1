// Forgiving names: the normalized form, Levenshtein distance against closed forms, exact-first
// matching with ambiguity as an Error, and the nearest-name suggestion on both sides of its bound.
#include "catalog/name_match.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/thrown_field.h"

namespace tessera {
namespace {

using testing::thrown_field;

TEST(NormalizedName, DropsCaseAndSeparatorsButKeepsDots) {
  EXPECT_EQ(normalized_name("Llama-3-70B"), "llama370b");
  EXPECT_EQ(normalized_name("H100_SXM 80GB"), "h100sxm80gb");
  EXPECT_EQ(normalized_name("gpt3-1.7b"), "gpt31.7b");
  EXPECT_NE(normalized_name("gpt3-1.7b"), normalized_name("gpt3-17b"));
  EXPECT_EQ(normalized_name(""), "");
}

TEST(EditDistance, ClosedFormsAndMetricProperties) {
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);  // the textbook example
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("same", "same"), 0u);
  EXPECT_EQ(edit_distance("ab", "ba"), 2u);  // a transposition is two edits in Levenshtein's metric
  const std::vector<std::string> words = {"h100", "h200", "b200", "mi300x", "llama3-70b", ""};
  for (const auto& a : words)
    for (const auto& b : words) {
      EXPECT_EQ(edit_distance(a, b), edit_distance(b, a));
      EXPECT_LE(edit_distance(a, b), std::max(a.size(), b.size()));
      for (const auto& c : words) EXPECT_LE(edit_distance(a, c), edit_distance(a, b) + edit_distance(b, c));
    }
}

TEST(MatchName, ExactFirstThenNormalizedAmbiguityIsAnError) {
  const std::vector<std::string> names = {"a-b", "ab", "llama3-70b"};
  EXPECT_EQ(match_name("a-b", names, "x"), 0u);
  EXPECT_EQ(match_name("ab", names, "x"), 1u);
  EXPECT_EQ(match_name("Llama-3-70B", names, "x"), 2u);
  EXPECT_EQ(match_name("LLAMA3_70B", names, "x"), 2u);
  EXPECT_FALSE(match_name("llama3-8b", names, "x").has_value());
  EXPECT_EQ(thrown_field([&] { match_name("A_B", names, "model"); }), "model");
}

using Names = std::vector<std::string>;

TEST(NearestNames, TyposAndPrefixesWithinTheBound) {
  const Names names = {"llama3-70b", "llama3-8b", "qwen2.5-72b", "mixtral-8x7b", "mixtral-8x22b", "h100-sxm-80gb"};
  EXPECT_EQ(nearest_names("lama3-70b", names), Names{"llama3-70b"});     // one deletion
  EXPECT_EQ(nearest_names("qwen25-72b", names), Names{"qwen2.5-72b"});   // one insertion
  EXPECT_EQ(nearest_names("H100-SXM-80G", names), Names{"h100-sxm-80gb"});
  EXPECT_EQ(nearest_names("h100", names), Names{"h100-sxm-80gb"});       // a prefix
  // Every prefix match, fewest edits first.
  EXPECT_EQ(nearest_names("mixtral", names), (Names{"mixtral-8x7b", "mixtral-8x22b"}));
  EXPECT_EQ(nearest_names("zzzzzz", names), Names{});                    // too far from everything
  EXPECT_EQ(nearest_names("", names), Names{});
  // The bound: a third of the letters (9 / 3 = 3 here), at least two.
  EXPECT_EQ(nearest_names("lxxxa3-70b", names), Names{"llama3-70b"});    // 3 edits of 9 letters
  EXPECT_EQ(nearest_names("lxxxa3-7zb", names), Names{});                // 4 edits
  EXPECT_EQ(nearest_names("h1", {"b2"}), Names{"b2"});                   // 2 edits: the floor
  // Equally near names are all offered, at most kMaxSuggestions.
  EXPECT_EQ(nearest_names("ab", {"ax", "xb", "zz"}), (Names{"ax", "xb"}));
  EXPECT_EQ(nearest_names("a", {"a1", "a2", "a3", "a4"}).size(), kMaxSuggestions);
}

TEST(EitherOf, ReadsAsASentence) {
  EXPECT_EQ(either_of({}), "");
  EXPECT_EQ(either_of({"a"}), "a");
  EXPECT_EQ(either_of({"a", "b"}), "a or b");
  EXPECT_EQ(either_of({"a", "b", "c"}), "a, b or c");
}

TEST(UnknownNameError, OneLineWithFieldHintAndAllowedList) {
  const Error e = unknown_name_error("gpu", "GPU", "h10", "h100-sxm-80gb", "a100-sxm-80gb, h100-sxm-80gb");
  EXPECT_EQ(e.field(), "gpu");
  EXPECT_EQ(e.allowed(), "a100-sxm-80gb, h100-sxm-80gb");
  const std::string text = e.what();
  EXPECT_EQ(text.find('\n'), std::string::npos);
  EXPECT_NE(text.find("unknown GPU 'h10'; did you mean h100-sxm-80gb?"), std::string::npos) << text;
  const std::string bare = unknown_name_error("gpu", "GPU", "zz", "", "a, b").what();
  EXPECT_EQ(bare.find("did you mean"), std::string::npos) << bare;
}

}  // namespace
}  // namespace tessera
