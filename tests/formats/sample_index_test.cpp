// The data service's sample index (formats/sample_index.h): paths resolved against the index's
// folder, one count per image file, a text file with its one count, and every mistake named by
// its line and key.
#include "formats/sample_index.h"

#include <string>

#include <gtest/gtest.h>

#include "common/thrown_field.h"

namespace tessera {
namespace {

using testing::thrown_field;

TEST(SampleIndex, PathsAreResolvedAgainstTheIndexFolder) {
  const auto samples = parse_sample_index(
      "{\"text\": \"t/0.txt\", \"text_tokens\": 12, \"image\": [\"i/0.jpg\", \"/abs/1.png\"], \"image_tokens\": [576, 144]}\n"
      "\n"
      "{\"image\": \"i/2.png\", \"image_tokens\": [4]}\n",
      "/data/set", "index");
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].text_path, "/data/set/t/0.txt");
  EXPECT_EQ(samples[0].image_paths, (std::vector<std::string>{"/data/set/i/0.jpg", "/abs/1.png"}));
  EXPECT_EQ(samples[0].tokens.backbone_tokens(), 12 + 576 + 144);
  EXPECT_EQ(samples[1].text_path, "");
  EXPECT_EQ(samples[1].image_paths, (std::vector<std::string>{"/data/set/i/2.png"}));
}

TEST(SampleIndex, MistakesNameTheirLineAndKey) {
  auto field = [](const std::string& line) { return thrown_field([&] { parse_sample_index(line, "", "index"); }); };
  EXPECT_EQ(field("{\"image\": \"a.jpg\", \"image_tokens\": [1, 2]}"), "index:1.image_tokens");
  EXPECT_EQ(field("{\"image\": [\"a.jpg\"], \"text_tokens\": 2}"), "index:1.image_tokens");
  EXPECT_EQ(field("{\"text\": \"a.txt\", \"text_tokens\": [3, 4]}"), "index:1.text_tokens");
  EXPECT_EQ(field("{\"text\": 7, \"text_tokens\": 3}"), "index:1.text");
  EXPECT_EQ(field("{\"text\": \"\", \"text_tokens\": 3}"), "index:1.text");
  EXPECT_EQ(field("{\"txt\": \"a.txt\", \"text_tokens\": 3}"), "index:1.txt");
  EXPECT_EQ(field("{\"text_tokens\": 3}\n{\"text_tokens\": -3}"), "index:2.text_tokens");
  EXPECT_EQ(field(""), "index");
}

}  // namespace
}  // namespace tessera
