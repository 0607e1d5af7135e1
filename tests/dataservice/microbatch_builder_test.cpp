// A worker's building of one micro-batch (dataservice/microbatch_builder.h) on files written here:
// tokens and patches packed in sample order with their lengths and grids, the patches exactly the
// resized image's, a sample whose files disagree with the index named (or skipped and reported
// when asked), and the resize policy's text round trip.
#include "dataservice/microbatch_builder.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/thrown_field.h"
#include "core/error.h"
#include "preprocess/image_encode.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using testing::thrown_field;

class MicroBatchBuilder : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tessera_builder_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                        "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
    std::ofstream corpus(dir_ / "corpus.txt");
    for (int i = 0; i < 200; ++i) corpus << "a cat sits on a red mat near the window number " << i % 17 << ".\n";
    corpus.close();
    train_tokenizer((dir_ / "corpus.txt").string(), (dir_ / "tok").string(), 120);
    tokenizer_.emplace(TextTokenizer::load((dir_ / "tok.model").string()));
    settings_.resize = parse_resize_policy("fixed:28", 14);  // 2 x 2 patches of 14 x 14
    settings_.tokenizer = &*tokenizer_;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write_text(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  std::string write_png(const std::string& name, const Image& image) {
    const auto bytes = encode_png(image);
    std::ofstream(dir_ / name, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    return (dir_ / name).string();
  }
  TaskSample sample(std::int64_t id, const std::string& text, std::int64_t text_tokens, const std::string& image) {
    TaskSample s;
    s.id = id;
    s.sample.text_path = write_text("t" + std::to_string(id) + ".txt", text);
    s.sample.tokens.text_tokens = {text_tokens};
    if (!image.empty()) {
      s.sample.image_paths = {image};
      s.sample.tokens.image_tokens = {4};
    }
    return s;
  }

  fs::path dir_;
  std::optional<TextTokenizer> tokenizer_;
  BuildSettings settings_;
};

// A 28 x 28 image (no resize under fixed:28) whose pixel (y, x) is (y, x, y + x).
Image ramp() {
  Image image;
  image.width = image.height = 28;
  for (int y = 0; y < 28; ++y)
    for (int x = 0; x < 28; ++x)
      for (int v : {y, x, y + x}) image.rgb.push_back(static_cast<std::uint8_t>(v));
  return image;
}

TEST_F(MicroBatchBuilder, PacksTokensAndPatchesInSampleOrder) {
  const std::string image = write_png("ramp.png", ramp());
  const std::string t0 = "a cat sits on a red mat", t1 = "near the window";
  const auto n0 = static_cast<std::int64_t>(tokenizer_->encode(t0).size());
  const auto n1 = static_cast<std::int64_t>(tokenizer_->encode(t1).size());
  const std::vector<TaskSample> task{sample(7, t0, n0, image), sample(3, t1, n1, "")};
  const BuiltMicroBatch b = build_microbatch(task, settings_);
  EXPECT_EQ(b.sample_ids, (std::vector<std::int64_t>{7, 3}));
  EXPECT_EQ(b.text_lengths, (std::vector<std::int32_t>{static_cast<std::int32_t>(n0), static_cast<std::int32_t>(n1)}));
  std::vector<std::int32_t> ids = tokenizer_->encode(t0);
  for (std::int32_t id : tokenizer_->encode(t1)) ids.push_back(id);
  EXPECT_EQ(b.token_ids, ids);
  EXPECT_EQ(b.image_sample, (std::vector<std::int32_t>{0}));
  EXPECT_EQ(b.image_rows, (std::vector<std::int32_t>{2}));
  EXPECT_EQ(b.image_cols, (std::vector<std::int32_t>{2}));
  ASSERT_EQ(b.patches.size(), 4u * 14 * 14 * 3);
  // Patch 3 (row 1, col 1), its pixel (2, 5): image pixel (16, 19) = (16, 19, 35).
  const std::size_t at = ((3 * 14 + 2) * 14 + 5) * 3;
  EXPECT_EQ(b.patches[at], 16);
  EXPECT_EQ(b.patches[at + 1], 19);
  EXPECT_EQ(b.patches[at + 2], 35);
}

TEST_F(MicroBatchBuilder, ASampleThatDisagreesWithTheIndexIsNamedOrSkipped) {
  const std::string image = write_png("ramp.png", ramp());
  const std::string text = "a cat sits on a red mat";
  const auto n = static_cast<std::int64_t>(tokenizer_->encode(text).size());
  std::vector<TaskSample> task{sample(1, text, n, image), sample(2, text, n + 1, image)};
  EXPECT_EQ(thrown_field([&] { build_microbatch(task, settings_); }), "sample 2 (" + (dir_ / "t2.txt").string() + ")");
  task[1] = sample(2, text, n, image);
  task[1].sample.tokens.image_tokens = {9};
  EXPECT_EQ(thrown_field([&] { build_microbatch(task, settings_); }), "sample 2 (" + image + ")");
  std::ofstream(dir_ / "broken.png") << "not an image";
  task[1].sample.image_paths = {(dir_ / "broken.png").string()};
  task[1].sample.tokens.image_tokens = {4};
  settings_.skip_bad_samples = true;
  const BuiltMicroBatch b = build_microbatch(task, settings_);
  EXPECT_EQ(b.sample_ids, (std::vector<std::int64_t>{1}));
  ASSERT_EQ(b.skipped, (std::vector<std::int64_t>{2}));
  EXPECT_NE(b.skipped_reasons[0].find("broken.png"), std::string::npos);
}

TEST_F(MicroBatchBuilder, TextWithoutATokenizerIsRefusedEvenWhenSkipping) {
  settings_.tokenizer = nullptr;
  settings_.skip_bad_samples = true;
  const std::vector<TaskSample> task{sample(1, "a cat", 2, "")};
  EXPECT_EQ(thrown_field([&] { build_microbatch(task, settings_); }), "tokenizer");
}

TEST(ResizePolicyText, RoundTripsAndNamesBadText) {
  EXPECT_EQ(resize_policy_text(parse_resize_policy("fixed:336", 14)), "fixed:336");
  EXPECT_EQ(resize_policy_text(parse_resize_policy("native:1344", 14)), "native:1344");
  for (const char* bad : {"square", "fixed:", "fixed:x", "native:-14", "fixed:0"})
    EXPECT_EQ(thrown_field([&] { parse_resize_policy(bad, 14); }), "--resize") << bad;
  EXPECT_EQ(thrown_field([&] { parse_resize_policy("fixed:300", 14); }), "resize.size");
}

}  // namespace
}  // namespace tessera
